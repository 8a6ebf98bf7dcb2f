package gitstore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// TestRepairCheckpointsFromTheReflog: a checkpoint chain whose tip commit
// is missing goes back to the tip its reflog recorded before, whether the
// reflog was extended (a checkpoint appended) or restarted (the chain cut
// to its bound); only what the lost tip added is lost.
func TestRepairCheckpointsFromTheReflog(t *testing.T) {
	for _, restarted := range []bool{false, true} {
		r := newDiskRepo(t)
		ref := CheckpointRefPrefix + "t"
		var commits []plumbing.Hash
		prev := plumbing.ZeroHash
		for i := 0; i < 3; i++ {
			tree, err := r.writeTree(map[string][]byte{"checkpoint.json": []byte(`{"id": "x` + string(rune('0'+i)) + `"}`), "version": []byte("1\n")})
			if err != nil {
				t.Fatal(err)
			}
			var parents []plumbing.Hash
			if !prev.IsZero() {
				parents = append(parents, prev)
			}
			c, err := r.CommitTree(tree, parents, "checkpoint x: enter spec")
			if err != nil {
				t.Fatal(err)
			}
			if i == 2 && restarted {
				// The chain was cut to its bound: a rewritten chain's log
				// starts afresh at the entry below its tip.
				err = r.RewriteChainRef(ref, prev, c, prev, "")
			} else {
				err = r.UpdateRef(ref, prev, c)
			}
			if err != nil {
				t.Fatal(err)
			}
			commits, prev = append(commits, c), c
		}
		tip := commits[2].String()
		if err := os.Remove(filepath.Join(r.CommonDir, "objects", tip[:2], tip[2:])); err != nil {
			t.Fatal(err)
		}
		// The next command, which has not seen the commit.
		r, err := Open(r.WorkTree, func(string) string { return "" })
		if err != nil {
			t.Fatal(err)
		}
		r.Now = func() time.Time { return fixedNow }
		rep, err := r.RepairRef(ref, fixedNow)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Moved || rep.Restored != commits[1].String() || rep.LostCount != 1 || !strings.Contains(rep.Lost[0], tip[:12]) {
			t.Errorf("restarted=%v: %+v", restarted, rep)
		}
		if got, err := r.ReadRef(ref); err != nil || got != commits[1] {
			t.Errorf("restarted=%v: the ref is at %s (%v), want %s", restarted, got, err, commits[1])
		}
		if ps, _, err := r.CheckRefs(); err != nil || len(ps) != 0 {
			t.Errorf("restarted=%v: after the repair: %v %+v", restarted, err, ps)
		}
	}
}
