package gitstore

import (
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

func TestTaskCacheNeverServesStaleState(t *testing.T) {
	for name, newRepo := range storeBackends {
		t.Run(name, func(t *testing.T) {
			r := newRepo(t)
			s := r.Tasks()
			first := sampleTask("c")
			rev1, err := s.SaveTask(first, "start")
			if err != nil {
				t.Fatal(err)
			}
			got, _ := s.LoadTask("c")
			got.State.CurrentNode = "plan"
			rev2, err := s.SaveTask(got, "next")
			if err != nil {
				t.Fatal(err)
			}
			// The cache now describes rev2. Move the ref back behind our
			// back, as git update-ref or a fetch would: the cache must miss.
			if err := r.UpdateRef("refs/hegel/tasks/c", plumbing.NewHash(rev2), plumbing.NewHash(rev1)); err != nil {
				t.Fatal(err)
			}
			back, err := s.LoadTask("c")
			if err != nil || back.Rev != rev1 || back.State.CurrentNode != "spec" {
				t.Fatalf("after the ref moved: %+v %v", back, err)
			}
			// A damaged cache file is a miss, not an error.
			f, _ := r.common.Create(taskCachePath("c"))
			f.Write([]byte(taskCacheMagic + "commit " + rev1 + "\n"))
			f.Close()
			if again, err := s.LoadTask("c"); err != nil || again.State.CurrentNode != "spec" {
				t.Fatalf("with a torn cache file: %+v %v", again, err)
			}
		})
	}
}

func TestTaskCacheIsUsedOnAHit(t *testing.T) {
	r := newDiskRepo(t)
	s := r.Tasks()
	rev, err := s.SaveTask(sampleTask("c"), "start")
	if err != nil {
		t.Fatal(err)
	}
	b, err := readFile(r.common, taskCachePath("c"))
	if err != nil || !strings.Contains(string(b), "commit "+rev+"\n") {
		t.Fatalf("cache after save: %s %v", b, err)
	}
	// Remove the task's objects: a hit must not need them. (A fresh Repo,
	// so nothing is remembered in memory either.)
	runGit(t, r.WorkTree, "update-ref", "-d", "refs/hegel/tasks/c")
	runGit(t, r.WorkTree, "reflog", "expire", "--expire=now", "--all")
	runGit(t, r.WorkTree, "gc", "-q", "--prune=now")
	if err := r.UpdateRef("refs/hegel/tasks/c", plumbing.ZeroHash, plumbing.NewHash(rev)); err != nil {
		t.Fatal(err)
	}
	fresh, err := Open(r.WorkTree, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	got, err := fresh.Tasks().LoadTask("c")
	if err != nil || got.Rev != rev || got.State.Task != "c" {
		t.Fatalf("load from the cache alone: %+v %v", got, err)
	}
}

func TestTaskCacheRefusesWhatItCannotTrust(t *testing.T) {
	r := newDiskRepo(t)
	s := r.Tasks()
	rev, err := s.SaveTask(sampleTask("c"), "start")
	if err != nil {
		t.Fatal(err)
	}
	good, err := readFile(r.common, taskCachePath("c"))
	if err != nil {
		t.Fatal(err)
	}
	c, ok := parseTaskCache(good)
	if !ok || c.commit.String() != rev || c.extras == nil {
		t.Fatalf("a cache written by SaveTask does not parse: %+v %v\n%s", c, ok, good)
	}
	// One changed byte (a torn or interleaved write), a tail left by a
	// longer earlier write, a missing end: all misses.
	flipped := append([]byte(nil), good...)
	i := strings.Index(string(flipped), `"current_node": "`) + len(`"current_node": "`)
	flipped[i] ^= 1
	for name, b := range map[string][]byte{
		"changed byte": flipped,
		"old tail":     append(append([]byte(nil), good...), "tail\n"...),
		"truncated":    good[:len(good)/2],
		"empty":        nil,
	} {
		if _, ok := parseTaskCache(b); ok {
			t.Errorf("%s: parsed", name)
		}
	}
}
