package rollback

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// summaryStep is one change to a chain, made the same way on two
// repositories.
type summaryStep struct {
	kind    string // KindEnter or KindManual; "drop" drops the oldest
	content string // f.txt's content before it ("": unchanged)
}

// takeStep makes step on tr's cached chain with m.
func takeStep(tr *testRepo, m *Manager, i int, st summaryStep) {
	tr.t.Helper()
	c := m.Chain(cachedRef, "the cached chain")
	tr.now = tr.now.Add(time.Second)
	if st.kind == "drop" {
		cps, err := c.List()
		if err != nil {
			tr.t.Fatal(err)
		}
		if err := c.Drop(cps[0].ID); err != nil {
			tr.t.Fatal(err)
		}
		return
	}
	if st.content != "" {
		tr.write("f.txt", st.content)
	}
	if _, _, err := c.Take(Template{Kind: st.kind, Label: "step " + strconv.Itoa(i)}); err != nil {
		tr.t.Fatalf("step %d: %v", i, err)
	}
}

// checkSummary fails when the chain's summary names the ref's tip but
// not the chain read whole: its ids, or the counts the bounds see.
func checkSummary(tr *testRepo, m *Manager) (current bool) {
	tr.t.Helper()
	c := m.Chain(cachedRef, "the cached chain")
	s := c.loadSummary()
	tip := strings.TrimSpace(tr.git("rev-parse", cachedRef))
	if s == nil || s.tip.String() != tip {
		return false
	}
	cps, err := newTestManager(tr).Chain(cachedRef, "").List()
	if err != nil {
		tr.t.Fatal(err)
	}
	want := summarizeChain(s.tip, cps)
	if !slices.Equal(s.ids, want.ids) || s.auto != want.auto || s.manual != want.manual {
		tr.t.Errorf("the summary for the tip says ids %v, %d automatic, %d manual; the chain: %v, %d, %d",
			s.ids, s.auto, s.manual, want.ids, want.auto, want.manual)
	}
	return true
}

// cacheLags reports whether the chain cache file was written for
// another tip than the ref's (or not at all): the last append did not
// read the chain whole.
func cacheLags(tr *testRepo, m *Manager) bool {
	data, err := os.ReadFile(m.Chain(cachedRef, "").cachePath())
	if err != nil {
		return true
	}
	memo, err := parseChainCache(data, cachedRef)
	return err != nil || memo.tip.String() != strings.TrimSpace(tr.git("rev-parse", cachedRef))
}

// TestChainSummaryAppendsTheSameChain: appends on the chain's summary
// (automatic and manual snapshots, repeats of the newest, past the bound
// with batched eviction, after a drop, after another process appended)
// make commit for commit the chain that appends reading the chain whole
// make, and the summary stays that of the chain.
func TestChainSummaryAppendsTheSameChain(t *testing.T) {
	var steps []summaryStep
	for i := 0; i < 30; i++ {
		st := summaryStep{kind: KindEnter, content: "version " + strconv.Itoa(i) + "\n"}
		switch {
		case i == 17:
			st.kind = "drop"
		case i%7 == 3:
			st.content = "" // a repeat of the newest: not counted
		case i%5 == 4:
			st.kind = KindManual
		}
		steps = append(steps, st)
	}
	setup := func() *testRepo {
		tr := newDiskRepo(t)
		tr.write("f.txt", "base\n")
		tr.add("f.txt")
		tr.commit("base")
		return tr
	}
	fast, slow := setup(), setup()
	mf, ms := cachedManager(fast), cachedManager(slow)
	for _, m := range []*Manager{mf, ms} {
		m.MaxManual = 3
		m.EvictBatch = 2
	}
	fastAppends := 0
	for i, st := range steps {
		if i == 11 {
			// Another process, without the cache, appends to both: the
			// summary no longer names the tip.
			for _, tr := range []*testRepo{fast, slow} {
				other := newTestManager(tr)
				other.MaxCheckpoints, other.MaxManual, other.EvictBatch = 6, 3, 2
				takeStep(tr, other, 100, summaryStep{kind: KindEnter, content: "other\n"})
				other.Close()
			}
			if checkSummary(fast, mf) {
				t.Fatal("setup: the summary still names the tip")
			}
		}
		// The slow repository never has a summary to append on.
		os.Remove(ms.Chain(cachedRef, "").summaryPath())
		takeStep(fast, mf, i, st)
		takeStep(slow, ms, i, st)
		if st.kind != "drop" && i > 0 && cacheLags(fast, mf) {
			fastAppends++
		}
		if st.kind != "drop" && i > 0 && cacheLags(slow, ms) {
			t.Fatalf("step %d: the chain was not read whole", i)
		}
		f, s := chainDump(fast), chainDump(slow)
		if f != s {
			t.Fatalf("step %d: appends on the summary give\n%s\nappends reading the chain give\n%s", i, f, s)
		}
		if ft, st := fast.git("rev-parse", cachedRef), slow.git("rev-parse", cachedRef); ft != st {
			t.Fatalf("step %d: tips %s and %s", i, ft, st)
		}
		checkSummary(fast, mf)
		if n := strings.Count(f, "\n"); n > 6+3+5 {
			t.Fatalf("step %d: %d snapshots, over the bounds", i, n)
		}
	}
	if fastAppends < 10 {
		t.Errorf("only %d of %d appends used the summary", fastAppends, len(steps))
	}
	fast.git("fsck", "--strict", "--no-dangling")
}

// TestChainSummaryConcurrentAppends: appends racing on one chain each
// land once, in some order, by compare-and-swap; the summary, when it
// names the tip, is the chain's.
func TestChainSummaryConcurrentAppends(t *testing.T) {
	tr := newDiskRepo(t)
	tr.write("f.txt", "base\n")
	tr.add("f.txt")
	tr.commit("base")
	takeOn(tr, cachedManager(tr), 0)
	takeOn(tr, cachedManager(tr), 1) // the summary names the tip
	if !checkSummary(tr, cachedManager(tr)) {
		t.Fatal("setup: no summary for the tip")
	}
	const n = 4
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		m := cachedManager(tr)
		m.MaxCheckpoints = 100
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k < 3; k++ {
				_, _, errs[i] = m.Chain(cachedRef, "").Take(Template{Kind: KindEnter, Label: "racer " + strconv.Itoa(i)})
				if errs[i] != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	cps, err := newTestManager(tr).Chain(cachedRef, "").List()
	if err != nil {
		t.Fatal(err)
	}
	if len(cps) != 2+n*3 {
		t.Fatalf("%d snapshots, want %d", len(cps), 2+n*3)
	}
	for i := 1; i < len(cps); i++ {
		if cps[i].Previous != cps[i-1].ID {
			t.Fatalf("snapshot %d follows %q, the one before it is %q", i, cps[i].Previous, cps[i-1].ID)
		}
	}
	checkSummary(tr, cachedManager(tr))
	tr.git("fsck", "--strict", "--no-dangling")
}

// TestChainSummaryHostile: a summary that does not parse, names another
// ref or tip, or whose newest id is not the chain's, is not used: the
// append reads the chain whole and links to the real newest.
func TestChainSummaryHostile(t *testing.T) {
	// After two appends the summary is a head for the first (read whole:
	// the chain was empty) and a line for the second.
	edit := func(i, field int, v string) func(string) string {
		return func(s string) string {
			lines := strings.Split(s, "\n")
			if i < 0 {
				i += len(lines)
			}
			f := strings.Fields(lines[i])
			f[field] = v
			lines[i] = strings.Join(f, " ")
			return strings.Join(lines, "\n")
		}
	}
	cases := map[string]func(s string) string{
		"garbage":     func(string) string { return "not a summary\x00" },
		"other ref":   func(s string) string { return strings.Replace(s, cachedRef+"\n", RefPrefix+"other\n", 1) },
		"bad count":   edit(2, 1, "-5"),
		"many counts": func(s string) string { return edit(2, 2, "9")(edit(2, 1, "9")(s)) },
		"more ids":    edit(2, 3, "2"),
		"bad id":      func(s string) string { return strings.Replace(s, "\n+ ", "/../x\n+ ", 1) },
		"other tip":   edit(2, 0, strings.Repeat("0", 39)+"1"),
		"newest id":   edit(-2, 5, "abcdef01"),
		"line parent": edit(-2, 1, strings.Repeat("0", 39)+"1"),
		"line cut":    func(s string) string { return s[:len(s)-3] },
		"line counts": edit(-2, 3, "7"),
		"overflow":    func(s string) string { return edit(-2, 4, "1")(edit(-2, 3, "9223372036854775807")(s)) },
		"huge counts": func(s string) string { return edit(2, 2, "9223372036854775807")(edit(2, 1, "1")(s)) },
	}
	for name, damage := range cases {
		t.Run(name, func(t *testing.T) {
			tr := newDiskRepo(t)
			tr.write("f.txt", "base\n")
			tr.add("f.txt")
			tr.commit("base")
			m := cachedManager(tr)
			takeOn(tr, m, 0)
			last := takeOn(tr, m, 1)
			path := m.Chain(cachedRef, "").summaryPath()
			good := string(mustRead(t, path))
			bad := damage(good)
			if bad == good {
				t.Fatal("setup: the summary is unchanged")
			}
			if s, err := parseChainSummary([]byte(bad), cachedRef); err == nil && s.tip.String() == strings.TrimSpace(tr.git("rev-parse", cachedRef)) && name != "newest id" {
				t.Fatal("the damaged summary parses for the tip")
			}
			if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
				t.Fatal(err)
			}
			m2 := cachedManager(tr)
			m2.ChainCache = true
			cp := takeOn(tr, m2, 2)
			if cp.Previous != last.ID {
				t.Errorf("the new snapshot follows %q, want %q", cp.Previous, last.ID)
			}
			if cacheLags(tr, m2) {
				t.Error("the append did not read the chain whole")
			}
			if !checkSummary(tr, m2) {
				t.Error("no summary written for the new tip")
			}
		})
	}
}

// TestChainSummaryLines: the appended lines that follow on from the tip
// reached so far are applied in order; a line written late (its parent
// is another tip), one cut short or garbled, is skipped without stopping
// the ones after it.
func TestChainSummaryLines(t *testing.T) {
	h := func(c byte) string { return strings.Repeat(string(c), 40) }
	data := chainSummaryHeader + cachedRef + "\n" +
		h('a') + " 1 0 1\n" + "0a0a0a0a\n" +
		"+ " + h('9') + " " + h('8') + " 2 0 98989898\n" + // late: another parent
		"+ " + h('a') + " " + h('b') + " 2 0 0b0b0b0b\n" +
		"+ " + h('b') + " " + h('c') + " 2 1\n" + // garbled
		"+  " + h('b') + " " + h('c') + " 2 1 0c0c0c0c\n" + // not as written
		"+ " + h('b') + " " + h('c') + " 2 1 0c0c0c0c\n" +
		"+ " + h('c') + " " + h('d') + " 3 1 0d0d" // cut short
	s, err := parseChainSummary([]byte(data), cachedRef)
	if err != nil {
		t.Fatal(err)
	}
	if s.tip.String() != h('c') || s.auto != 2 || s.manual != 1 || strings.Join(s.ids, " ") != "0a0a0a0a 0b0b0b0b 0c0c0c0c" {
		t.Fatalf("tip %s, %d automatic, %d manual, ids %v", s.tip, s.auto, s.manual, s.ids)
	}
}
