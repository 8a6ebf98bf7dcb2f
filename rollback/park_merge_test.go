package rollback

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// parkThenCommit parks what stash does to the files of a repository
// committed with base, commits what head does on top, and pops: the
// result and the files after.
func parkThenCommit(t *testing.T, base map[string]string, stash, head, local func(tr *testRepo)) (*testRepo, *UnparkResult, error) {
	t.Helper()
	tr := newDiskRepo(t)
	var paths []string
	for p, c := range base {
		tr.write(p, c)
		paths = append(paths, p)
	}
	tr.write("other.txt", "other\n")
	tr.add(append(paths, "other.txt")...)
	tr.commit("base")
	tr.start("minimal")
	stash(tr)
	pk, err := tr.m.Park(tr.template(KindStash, "", ""), nil)
	if err != nil {
		t.Fatal(err)
	}
	if pk.Tree == "" {
		t.Fatal("nothing parked")
	}
	if err := tr.m.Clean(pk, tr.parkMeta()); err != nil {
		t.Fatal(err)
	}
	head(tr)
	tr.git("add", "-A")
	tr.git("commit", "-q", "--allow-empty", "-m", "later")
	if local != nil {
		local(tr)
	}
	res, err := tr.m.Unpark(pk.Tree, "stash@{0}", nil, tr.parkMeta())
	return tr, res, err
}

func (tr *testRepo) read(p string) string {
	tr.t.Helper()
	b, err := os.ReadFile(filepath.Join(tr.dir, filepath.FromSlash(p)))
	if errors.Is(err, os.ErrNotExist) {
		return "<absent>"
	}
	if err != nil {
		tr.t.Fatal(err)
	}
	return string(b)
}

func conflictsOf(res *UnparkResult) string {
	var out []string
	for _, c := range res.Conflicts {
		out = append(out, c.Kind+" "+c.Path)
	}
	return strings.Join(out, ", ")
}

// TestUnparkMerges: popping a stash after a later commit changed its
// files merges them three ways, as git stash pop does.
func TestUnparkMerges(t *testing.T) {
	five := "1\n2\n3\n4\n5\n"
	bin := "bin\x00ary\n"
	cases := []struct {
		name        string
		base        map[string]string
		stash, head func(tr *testRepo)
		want        map[string]string
		conflicts   string
	}{{
		name:  "only the stash changed it",
		base:  map[string]string{"f": five},
		stash: func(tr *testRepo) { tr.write("f", "1\nS\n3\n4\n5\n") },
		head:  func(tr *testRepo) { tr.write("other.txt", "later\n") },
		want:  map[string]string{"f": "1\nS\n3\n4\n5\n", "other.txt": "later\n"},
	}, {
		name:  "only HEAD changed it",
		base:  map[string]string{"f": five, "g": "g\n"},
		stash: func(tr *testRepo) { tr.write("g", "g parked\n") },
		head:  func(tr *testRepo) { tr.write("f", "1\n2\n3\n4\nH\n") },
		want:  map[string]string{"f": "1\n2\n3\n4\nH\n", "g": "g parked\n"},
	}, {
		name:  "both made the same change",
		base:  map[string]string{"f": five},
		stash: func(tr *testRepo) { tr.write("f", "1\nS\n3\n4\n5\n") },
		head:  func(tr *testRepo) { tr.write("f", "1\nS\n3\n4\n5\n") },
		want:  map[string]string{"f": "1\nS\n3\n4\n5\n"},
	}, {
		name:  "both changed other lines",
		base:  map[string]string{"f": five},
		stash: func(tr *testRepo) { tr.write("f", "S\n2\n3\n4\n5\n") },
		head:  func(tr *testRepo) { tr.write("f", "1\n2\n3\n4\nH\n") },
		want:  map[string]string{"f": "S\n2\n3\n4\nH\n"},
	}, {
		name:      "both changed the same line",
		base:      map[string]string{"f": five},
		stash:     func(tr *testRepo) { tr.write("f", "1\n2\nS\n4\n5\n") },
		head:      func(tr *testRepo) { tr.write("f", "1\n2\nH\n4\n5\n") },
		want:      map[string]string{"f": "1\n2\n<<<<<<< Updated upstream\nH\n=======\nS\n>>>>>>> Stashed changes\n4\n5\n"},
		conflicts: "content f",
	}, {
		name:      "both added it",
		base:      map[string]string{},
		stash:     func(tr *testRepo) { tr.write("n", "stash\n") },
		head:      func(tr *testRepo) { tr.write("n", "head\n") },
		want:      map[string]string{"n": "<<<<<<< Updated upstream\nhead\n=======\nstash\n>>>>>>> Stashed changes\n"},
		conflicts: "add/add n",
	}, {
		name:      "deleted in the stash, modified since",
		base:      map[string]string{"f": five},
		stash:     func(tr *testRepo) { tr.remove("f") },
		head:      func(tr *testRepo) { tr.write("f", "1\n2\nH\n4\n5\n") },
		want:      map[string]string{"f": "1\n2\nH\n4\n5\n"},
		conflicts: "modify/delete f",
	}, {
		name:      "modified in the stash, deleted since",
		base:      map[string]string{"f": five},
		stash:     func(tr *testRepo) { tr.write("f", "1\n2\nS\n4\n5\n") },
		head:      func(tr *testRepo) { tr.remove("f") },
		want:      map[string]string{"f": "1\n2\nS\n4\n5\n"},
		conflicts: "delete/modify f",
	}, {
		name:      "a binary file changed by both",
		base:      map[string]string{"b": bin},
		stash:     func(tr *testRepo) { tr.write("b", bin+"stash") },
		head:      func(tr *testRepo) { tr.write("b", bin+"head") },
		want:      map[string]string{"b": bin + "head"},
		conflicts: "binary b",
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr, res, err := parkThenCommit(t, c.base, c.stash, c.head, nil)
			if err != nil {
				t.Fatal(err)
			}
			for p, want := range c.want {
				if got := tr.read(p); got != want {
					t.Errorf("%s: got %q, want %q", p, got, want)
				}
			}
			if got := conflictsOf(res); got != c.conflicts {
				t.Errorf("conflicts %q, want %q", got, c.conflicts)
			}
			if _, err := os.Stat(filepath.Join(tr.dir, ".git", parkJournalFile)); err == nil {
				t.Error("the journal is left")
			}
			tr.git("fsck", "--strict", "--no-dangling")
		})
	}
}

// TestUnparkRefusesLocalChanges: an uncommitted change, staged or not,
// to a path the stash changed and a later commit changed too refuses the
// pop with nothing changed, naming the path.
func TestUnparkRefusesLocalChanges(t *testing.T) {
	for _, staged := range []bool{false, true} {
		var before string
		tr, _, err := parkThenCommit(t, map[string]string{"f": "1\n2\n3\n"},
			func(tr *testRepo) { tr.write("f", "S\n2\n3\n") },
			func(tr *testRepo) { tr.write("f", "1\n2\nH\n") },
			func(tr *testRepo) {
				tr.write("f", "local\n")
				if staged {
					tr.add("f")
					tr.write("f", "1\n2\nH\n")
				}
				before = tr.fingerprint()
			})
		what := "local"
		if staged {
			what = "staged"
		}
		if !errors.Is(err, ErrLocalChanges) || !strings.Contains(err.Error(), "your "+what+" changes to f would be overwritten") {
			t.Fatalf("staged %v: %v", staged, err)
		}
		if got := tr.fingerprint(); got != before {
			t.Fatalf("a refused pop changed something:\n%s", diffLines(before, got))
		}
	}
}

// TestStashKeepsSettings: git-hegel's and the agents' settings, and the
// paths of hegel.stash.keep, are neither parked nor cleaned, and a parked
// tree that holds them never writes them.
func TestStashKeepsSettings(t *testing.T) {
	tr := newDiskRepo(t)
	tr.write("a.txt", "a\n")
	tr.write(".claude/settings.json", "{}\n")
	tr.add("a.txt", ".claude/settings.json")
	tr.commit("base")
	tr.start("minimal")
	tr.write("a.txt", "a parked\n")
	tr.write(".claude/settings.json", "{\"hooks\": 1}\n")
	tr.write(".hegel/workflows/mine.yaml", "mine\n")
	tr.write(".mcp.json", "{}\n")
	tr.write("notes/todo.txt", "mine\n")
	tr.write("x.local.json", "mine\n")
	keep, err := NewStashKeep([]string{"notes/", "*.local.json"})
	if err != nil {
		t.Fatal(err)
	}
	pk, err := tr.m.Park(tr.template(KindStash, "", ""), keep)
	if err != nil {
		t.Fatal(err)
	}
	if pk.Count != 1 || strings.Join(pk.Kept, " ") != ".claude/settings.json .hegel/workflows/mine.yaml .mcp.json notes/todo.txt x.local.json" {
		t.Fatalf("parked %d, kept %v", pk.Count, pk.Kept)
	}
	if err := tr.m.Clean(pk, tr.parkMeta()); err != nil {
		t.Fatal(err)
	}
	if st := tr.status(); st != " M .claude/settings.json\n?? .hegel/workflows/mine.yaml\n?? .mcp.json\n?? notes/todo.txt\n?? x.local.json\n" {
		t.Errorf("after cleaning:\n%s", st)
	}
	if tr.read(".claude/settings.json") != "{\"hooks\": 1}\n" {
		t.Error("the agent's settings were cleaned")
	}
	// The parked tree has none of them; nor does a pop write them.
	tr.write(".claude/settings.json", "{}\n")
	res, err := tr.m.Unpark(pk.Tree, "stash@{0}", keep, tr.parkMeta())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Kept) != 0 || tr.read("a.txt") != "a parked\n" || tr.read(".claude/settings.json") != "{}\n" {
		t.Errorf("popped: kept %v, a.txt %q", res.Kept, tr.read("a.txt"))
	}
}

func TestNewStashKeep(t *testing.T) {
	k, err := NewStashKeep([]string{"docs/private", "*.secret", "tmp/[ab]?.txt"})
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]bool{
		".hegel/workflows/x.yaml": true, ".claude/settings.json": true, ".mcp.json": true, ".cursor": true,
		"CLAUDE.md": false, "AGENTS.md": false, ".hegelx": false, "src/.claude/x": false,
		".Claude/settings.json": true, ".HEGEL/hooks": true, ".claude./x": true, ".MCP.json": true,
		"docs/private": true, "docs/private/a": true, "docs/privateer": false,
		"a.secret": true, "deep/dir/b.secret": true, "a.secret.txt": false,
		"tmp/a1.txt": true, "tmp/c1.txt": false, "tmp/a12.txt": false,
	} {
		if got := k.Match(p); got != want {
			t.Errorf("Match(%q) = %v", p, got)
		}
	}
	for _, bad := range []string{"", "/etc", "../x", "a/../b", ":(glob)x", "[ab", "a\\b"} {
		if _, err := NewStashKeep([]string{bad}); err == nil || !strings.Contains(err.Error(), "bad config value '"+bad+"' for 'hegel.stash.keep'") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// TestMergedUnparkJournal: the journal of a pop that merged names a
// state whose merged files are stored, so a pop cut short can be carried
// to its end or undone from it.
func TestMergedUnparkJournal(t *testing.T) {
	tr := newDiskRepo(t)
	tr.write("f", "1\n2\n3\n4\n5\n")
	tr.add("f")
	tr.commit("base")
	tr.start("minimal")
	tr.write("f", "S\n2\n3\n4\n5\n")
	pk, err := tr.m.Park(tr.template(KindStash, "", ""), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.m.Clean(pk, tr.parkMeta()); err != nil {
		t.Fatal(err)
	}
	tr.write("f", "1\n2\n3\n4\nH\n")
	tr.git("commit", "-q", "-am", "later")
	pre, preFP := tr.snapshot(), tr.fingerprint()
	if _, err := tr.m.Unpark(pk.Tree, "stash@{0}", nil, tr.parkMeta()); err != nil {
		t.Fatal(err)
	}
	post, postFP := tr.snapshot(), tr.fingerprint()
	if tr.read("f") != "S\n2\n3\n4\nH\n" {
		t.Fatalf("merged %q", tr.read("f"))
	}
	head := strings.TrimSpace(tr.git("rev-parse", "HEAD"))
	cut := func() {
		j := &ParkJournal{Op: ParkUnpark, Record: tr.parkMeta(), HeadRef: "refs/heads/main", Head: head,
			From: parkSide{WorkTree: hexOf(orEmpty(pre.worktree)), IndexTree: hexOf(orEmpty(pre.indexTree))},
			To:   parkSide{WorkTree: hexOf(orEmpty(post.worktree)), IndexTree: hexOf(orEmpty(post.indexTree))}}
		if err := tr.m.saveParkJournal(j); err != nil {
			t.Fatal(err)
		}
		tr.dieWithLock()
	}
	// Cut short before the file was written: carried on, it is merged.
	tr.git("checkout", "-q", "--", "f")
	cut()
	j, _ := tr.m.InterruptedParking()
	if err := tr.m.FinishParking(j, "the stash pop"); err != nil {
		t.Fatal(err)
	}
	if got := tr.fingerprint(); got != postFP {
		t.Fatalf("finished:\n%s", diffLines(postFP, got))
	}
	// Cut short after: undone, it is as before the pop.
	tr.m = newTestManager(tr)
	cut()
	j, _ = tr.m.InterruptedParking()
	if err := tr.m.UndoParking(j, "the stash pop"); err != nil {
		t.Fatal(err)
	}
	if got := tr.fingerprint(); got != preFP {
		t.Fatalf("undone:\n%s", diffLines(preFP, got))
	}
	tr.git("fsck", "--strict", "--no-dangling")
}
