package gitstore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-billy/v5/util"

	"github.com/git-hegel/git-hegel/engine"
)

// The lock index answers with the states of the tasks that lock files,
// follows every move of a task's ref, and reads again only the tasks
// whose ref moved.
func TestLockIndex(t *testing.T) {
	for name, newRepo := range storeBackends {
		t.Run(name, func(t *testing.T) {
			r := newRepo(t)
			tasks := r.Tasks()
			for _, n := range []string{"a", "b", "c"} {
				if _, err := tasks.SaveTask(sampleTask(n), "start"); err != nil {
					t.Fatal(err)
				}
			}
			locked := func() string {
				t.Helper()
				sts, err := tasks.LockStates()
				if err != nil {
					t.Fatal(err)
				}
				var names []string
				for _, st := range sts {
					names = append(names, st.Task+":"+st.FilesLocked[0].Path)
				}
				return strings.Join(names, ",")
			}
			if got := locked(); got != "" {
				t.Fatalf("no locks yet: %q", got)
			}
			b, err := tasks.LoadTask("b")
			if err != nil {
				t.Fatal(err)
			}
			b.State.FilesLocked = []engine.FileLock{{Path: "src/x.go", By: "Ann", At: fixedNow}}
			if b.Rev, err = tasks.SaveTask(b, "lock"); err != nil {
				t.Fatal(err)
			}
			if got := locked(); got != "b:src/x.go" {
				t.Fatalf("after b's lock: %q", got)
			}
			// A line whose state no longer parses is not taken as "no
			// lock": the whole index is built again.
			idx, err := util.ReadFile(r.common, lockIndexFile)
			if err != nil {
				t.Fatal(err)
			}
			cut := strings.Replace(string(idx), `"files_locked"`, `"files_lo`, 1)
			if err := util.WriteFile(r.common, lockIndexFile, []byte(cut[:strings.Index(cut, `"files_lo`)+9]+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if got := locked(); got != "b:src/x.go" {
				t.Fatalf("after the index was damaged: %q", got)
			}
			idx, err = util.ReadFile(r.common, lockIndexFile)
			if err != nil || !strings.HasPrefix(string(idx), lockIndexHeader+"\na\t") || strings.Count(string(idx), "\n") != 4 {
				t.Fatalf("index %q %v", idx, err)
			}
			// An entry for a commit the ref no longer holds is read again:
			// an index naming a lock the task has not is never believed.
			b.State.FilesLocked = nil
			if b.Rev, err = tasks.SaveTask(b, "unlock"); err != nil {
				t.Fatal(err)
			}
			if got := locked(); got != "" {
				t.Fatalf("after the unlock: %q", got)
			}
			// A damaged index is built again.
			if err := util.WriteFile(r.common, lockIndexFile, []byte("garbage\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if got := locked(); got != "" {
				t.Fatalf("damaged index: %q", got)
			}
		})
	}
}

// A locking task that cannot be read for a moment (its commit's object
// gone while git repacks, a read error) is not written down as a task
// without locks: once it can be read, its lock counts again.
func TestLockIndexUnreadableTask(t *testing.T) {
	r := newDiskRepo(t)
	task := sampleTask("b")
	task.State.FilesLocked = []engine.FileLock{{Path: "src/x.go", By: "Ann", At: fixedNow}}
	rev, err := r.Tasks().SaveTask(task, "lock")
	if err != nil {
		t.Fatal(err)
	}
	locks := func() int {
		t.Helper()
		fresh, err := Open(r.WorkTree, func(string) string { return "" })
		if err != nil {
			t.Fatal(err)
		}
		sts, err := fresh.Tasks().LockStates()
		if err != nil {
			t.Fatal(err)
		}
		return len(sts)
	}
	obj := filepath.Join(r.CommonDir, "objects", rev[:2], rev[2:])
	if err := os.Remove(filepath.Join(r.CommonDir, filepath.FromSlash(taskCachePath("b")))); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(obj, obj+".away"); err != nil {
		t.Fatal(err)
	}
	if n := locks(); n != 0 {
		t.Fatalf("an unreadable task gave %d lock states", n)
	}
	if err := os.Rename(obj+".away", obj); err != nil {
		t.Fatal(err)
	}
	if n := locks(); n != 1 {
		t.Fatalf("once readable again, the task's lock is missed: %d lock states", n)
	}
}
