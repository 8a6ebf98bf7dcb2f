package gitstore

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-billy/v5/util"

	"github.com/git-hegel/git-hegel/engine"
)

func TestTrustRecord(t *testing.T) {
	for name, newRepo := range storeBackends {
		t.Run(name, func(t *testing.T) {
			r := newRepo(t)
			tr := r.Trust()
			if recs, err := tr.TrustedDefinitions(); err != nil || len(recs) != 0 {
				t.Fatalf("empty: %v %v", recs, err)
			}
			id := engine.DefinitionID([]byte("x\n"))
			rec := engine.TrustRecord{ID: id, Task: "t", How: engine.TrustReviewed, At: fixedNow}
			if err := tr.TrustDefinition(rec); err != nil {
				t.Fatal(err)
			}
			if err := tr.TrustDefinition(engine.TrustRecord{ID: "nothex", Task: "t", How: engine.TrustStart, At: fixedNow}); err == nil {
				t.Error("a malformed record was written")
			}
			// A line someone broke by hand is skipped; the rest reads.
			f, err := r.appendCommon(trustFile)
			if err != nil {
				t.Fatal(err)
			}
			f.Write([]byte("garbage line\n"))
			f.Close()
			other := engine.DefinitionID([]byte("y\n"))
			tr.TrustDefinition(engine.TrustRecord{ID: other, Task: "u", How: engine.TrustStart, At: fixedNow.Add(time.Hour)})
			recs, err := tr.TrustedDefinitions()
			if err != nil || len(recs) != 2 || recs[0] != rec || recs[1].ID != other {
				t.Fatalf("records %+v %v", recs, err)
			}
			if got, err := tr.TrustedDefinition(id); err != nil || got == nil || got.Task != "t" {
				t.Errorf("lookup %+v %v", got, err)
			}
			if got, _ := tr.TrustedDefinition(engine.DefinitionID([]byte("z\n"))); got != nil {
				t.Errorf("untrusted found: %+v", got)
			}
			if b, _ := util.ReadFile(r.common, trustFile); string(b[:41]) != id+" " {
				t.Errorf("file %q", b)
			}
		})
	}
}

// TestDefinitionVersions: one version per change of definition along
// the chain, the commit that brought each, and the remote the reflog
// says a fetch brought it from.
// TestTrustTextApart: a text reviewed with git hegel trust and a
// definition with the same bytes are trusted apart: a description written
// to be a definition gains nothing from being trusted as text.
func TestTrustTextApart(t *testing.T) {
	for name, newRepo := range storeBackends {
		t.Run(name, func(t *testing.T) {
			tr := newRepo(t).Trust()
			id := engine.DefinitionID([]byte("start_node: a\n"))
			if err := tr.TrustDefinition(engine.TrustRecord{ID: id, Task: "t", How: engine.TrustText, At: fixedNow}); err != nil {
				t.Fatal(err)
			}
			if r, err := tr.TrustedDefinition(id); err != nil || r != nil {
				t.Fatalf("a text record trusted a definition: %v %v", r, err)
			}
			if r, err := tr.TrustedText(id); err != nil || r == nil || r.How != engine.TrustText {
				t.Fatalf("text record not read back: %v %v", r, err)
			}
			other := engine.DefinitionID([]byte("other\n"))
			if err := tr.TrustDefinition(engine.TrustRecord{ID: other, Task: "t", How: engine.TrustReviewed, At: fixedNow}); err != nil {
				t.Fatal(err)
			}
			if r, err := tr.TrustedText(other); err != nil || r != nil {
				t.Fatalf("a definition record trusted a text: %v %v", r, err)
			}
		})
	}
}

func TestDefinitionVersions(t *testing.T) {
	r := newDiskRepo(t)
	s := r.Tasks()
	task := sampleTask("t")
	old := task.Definition
	rev, err := s.SaveTask(task, "start: minimal at spec")
	if err != nil {
		t.Fatal(err)
	}
	task.Rev = rev
	task.State.Attempt = 2
	if task.Rev, err = s.SaveTask(task, "fail: spec"); err != nil {
		t.Fatal(err)
	}
	// As a fetch brings it: another definition in a commit someone else
	// wrote, the local ref moved with sync's reflog message (git's own
	// update-ref writes the same line).
	newDef := append(append([]byte(nil), old...), "# changed\n"...)
	os.WriteFile(filepath.Join(r.WorkTree, "new.yaml"), newDef, 0o644)
	script := `blob=$(git hash-object -w new.yaml) &&
tree=$( (git ls-tree refs/hegel/tasks/t | grep -v '	workflow.yaml$'; printf '100644 blob %s\tworkflow.yaml\n' "$blob") | git mktree) &&
c=$(echo "next: spec -> spec (routine)" | git commit-tree "$tree" -p refs/hegel/tasks/t) &&
git update-ref -m "fetch origin: fast-forward" refs/hegel/tasks/t "$c" && echo "$c"`
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir, cmd.Env = r.WorkTree, gitEnv(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	theirs := strings.TrimSpace(string(out))
	vs, err := s.DefinitionVersions("t", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 2 || vs[0].ID != engine.DefinitionID(newDef) || vs[1].ID != engine.DefinitionID(old) {
		t.Fatalf("versions %+v", vs)
	}
	if vs[0].Commit != theirs || vs[0].Remote != "origin" || vs[0].Subject != "next: spec -> spec (routine)" || string(vs[0].Data) != string(newDef) {
		t.Errorf("newest %+v", vs[0])
	}
	if vs[1].Remote != "" || vs[1].Subject != "start: minimal at spec" {
		t.Errorf("oldest %+v", vs[1])
	}
	if one, err := s.DefinitionVersions("t", 1); err != nil || len(one) != 1 {
		t.Errorf("max 1: %+v %v", one, err)
	}
}

// A workflow file reviewed before any task ran it is trusted with no task
// (written as "-"); a start always names its task.
func TestTrustRecordWithoutTask(t *testing.T) {
	r := newMemRepo(t)
	tr := r.Trust()
	id := engine.DefinitionID([]byte("file\n"))
	if err := tr.TrustDefinition(engine.TrustRecord{ID: id, How: engine.TrustReviewed, At: fixedNow}); err != nil {
		t.Fatal(err)
	}
	got, err := tr.TrustedDefinition(id)
	if err != nil || got == nil || got.Task != "" || got.How != engine.TrustReviewed {
		t.Fatalf("record %+v %v", got, err)
	}
	if err := tr.TrustDefinition(engine.TrustRecord{ID: engine.DefinitionID([]byte("s\n")), How: engine.TrustStart, At: fixedNow}); err == nil {
		t.Fatal("a start with no task was recorded")
	}
}
