package rollback

import "testing"

// TestEvictBatch: once the bound is passed, EvictBatch more of the oldest
// go at once, so the chain is rewritten once per batch; it never holds
// more than the bound, and the newest are the ones kept.
func TestEvictBatch(t *testing.T) {
	tr := newDiskRepo(t)
	m := cachedManager(tr) // bound 6
	m.EvictBatch = 2
	var lengths []int
	var last *Checkpoint
	for i := 1; i <= 12; i++ {
		last = takeOn(tr, m, i)
		cps, err := m.Chain(cachedRef, "the cached chain").List()
		if err != nil {
			t.Fatal(err)
		}
		if len(cps) > 6 {
			t.Fatalf("after %d appends the chain holds %d, over the bound of 6", i, len(cps))
		}
		if cps[len(cps)-1].ID != last.ID {
			t.Fatalf("after %d appends the newest is %s, want %s", i, cps[len(cps)-1].ID, last.ID)
		}
		lengths = append(lengths, len(cps))
	}
	// 1..6 grow; the 7th passes the bound: one evicted for it, two more
	// for the batch (4 left); then 5, 6, and the 10th evicts again.
	want := []int{1, 2, 3, 4, 5, 6, 4, 5, 6, 4, 5, 6}
	for i := range want {
		if lengths[i] != want[i] {
			t.Fatalf("chain lengths %v, want %v", lengths, want)
		}
	}
	if got := chainDump(tr); got == "" {
		t.Fatal("the chain does not read without the cache")
	}
}
