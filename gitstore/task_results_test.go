package gitstore

import (
	"errors"
	"testing"

	"github.com/git-hegel/git-hegel/engine"
)

// The step runner's entries: written with a save (Task.Put), carried over
// by later saves, replaced one by one, read singly and as a directory,
// and refused outside results/ and inputs/.
func TestTaskResultEntries(t *testing.T) {
	for name, newRepo := range storeBackends {
		t.Run(name, func(t *testing.T) {
			r := newRepo(t)
			ts := r.Tasks()
			task := sampleTask("res")
			rev, err := ts.SaveTask(task, "start")
			if err != nil {
				t.Fatal(err)
			}
			if got, err := ts.ReadTaskDir("res", "results"); err != nil || len(got) != 0 {
				t.Fatalf("no results yet: %q, %v", got, err)
			}
			if _, err := ts.ReadTaskFile("res", "results/a"); !errors.Is(err, ErrNotFound) {
				t.Fatalf("missing result: %v, want ErrNotFound", err)
			}
			task.Rev, task.Put = rev, map[string][]byte{"results/a": []byte("one\n"), "results/b": []byte("two\n"), "inputs/prompt": []byte("p\n")}
			if rev, err = ts.SaveTask(task, "run: a"); err != nil {
				t.Fatal(err)
			}
			// A save without Put keeps them; one with Put replaces only its own.
			task.Rev, task.Put = rev, nil
			if rev, err = ts.SaveTask(task, "describe"); err != nil {
				t.Fatal(err)
			}
			task.Rev, task.Put = rev, map[string][]byte{"results/a": []byte("again\n")}
			if _, err = ts.SaveTask(task, "run: a again"); err != nil {
				t.Fatal(err)
			}
			got, err := ts.ReadTaskDir("res", "results")
			if err != nil || len(got) != 2 || string(got["a"]) != "again\n" || string(got["b"]) != "two\n" {
				t.Errorf("ReadTaskDir = %q, %v", got, err)
			}
			if b, err := ts.ReadTaskFile("res", "inputs/prompt"); err != nil || string(b) != "p\n" {
				t.Errorf("inputs/prompt = %q, %v", b, err)
			}
			if b, err := ts.ReadTaskFile("res", "results/b"); err != nil || string(b) != "two\n" {
				t.Errorf("results/b = %q, %v", b, err)
			}
			for _, bad := range []string{"state.json", "results/x/y", "events/a", "results/"} {
				bt := sampleTask("res")
				if cur, err := ts.LoadTask("res"); err == nil {
					bt.Rev = cur.Rev
				}
				bt.Put = map[string][]byte{bad: []byte("x")}
				if _, err := ts.SaveTask(bt, "bad"); err == nil {
					t.Errorf("Put %q: no error", bad)
				}
			}
			if _, err := ts.ReadTaskDir("nosuch", "results"); !errors.Is(err, ErrNotFound) {
				t.Errorf("unknown task: %v", err)
			}
			var _ engine.TaskDirReader = ts
		})
	}
}
