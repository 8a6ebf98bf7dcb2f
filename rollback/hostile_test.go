package rollback

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

type rawEnt struct {
	mode string
	name string
	hash plumbing.Hash
}

// rawTree writes a tree object exactly as given: no sorting, no checks.
func (tr *testRepo) rawTree(ents ...rawEnt) plumbing.Hash {
	tr.t.Helper()
	var b []byte
	for _, e := range ents {
		b = append(b, e.mode...)
		b = append(b, ' ')
		b = append(b, e.name...)
		b = append(b, 0)
		b = append(b, e.hash[:]...)
	}
	h := hashObject(plumbing.TreeObject, b)
	if err := tr.m.w.obj.write(plumbing.TreeObject, h, b); err != nil {
		tr.t.Fatal(err)
	}
	return h
}

func (tr *testRepo) blob(s string) plumbing.Hash {
	tr.t.Helper()
	h := hashObject(plumbing.BlobObject, []byte(s))
	if err := tr.m.w.obj.write(plumbing.BlobObject, h, []byte(s)); err != nil {
		tr.t.Fatal(err)
	}
	return h
}

// plant appends a hand-made checkpoint (as if fetched from another
// machine) whose worktree and index trees are given; zero means "as the
// newest checkpoint has it".
func (tr *testRepo) plant(id string, wt, ix plumbing.Hash, version string, mutate func(*Checkpoint)) {
	tr.t.Helper()
	chain, tip, err := tr.chain().read()
	if err != nil || len(chain) == 0 {
		tr.t.Fatalf("no chain: %v", err)
	}
	last := chain[0] // the genuine one
	cp := *last
	cp.ID, cp.Kind = id, KindManual
	cp.Meta = Meta{}
	for k, v := range last.Meta {
		cp.Meta[k] = v
	}
	cp.Meta.Set("message", "planted")
	if wt.IsZero() {
		wt = last.WorkTree
	}
	if ix.IsZero() {
		ix = last.IndexTree
	}
	if mutate != nil {
		mutate(&cp)
	}
	meta, _ := encodeMeta(&cp)
	ents := []rawEnt{{"100644", metaFile, tr.blob(string(meta))}}
	if !ix.IsZero() {
		ents = append(ents, rawEnt{"40000", indexDir, ix})
	}
	ents = append(ents, rawEnt{"100644", versionFile, tr.blob(version)})
	if !wt.IsZero() {
		ents = append(ents, rawEnt{"40000", worktreeDir, wt})
	}
	root := tr.rawTree(ents...)
	cp.Commit = plumbing.ZeroHash
	parents := []plumbing.Hash{tip}
	if h := cp.HeadCommit(); !h.IsZero() {
		parents = append(parents, h)
	}
	c, err := tr.r.CommitTree(root, parents, "planted")
	if err != nil {
		tr.t.Fatal(err)
	}
	if err := tr.r.UpdateRef(RefPrefix+"t1", tip, c); err != nil {
		tr.t.Fatal(err)
	}
}

// TestHostileCheckpointsAreRefused plants checkpoints that try to write
// outside the working tree, into .git, or through links; each is refused
// before any file is written.
func TestHostileCheckpointsAreRefused(t *testing.T) {
	tr := newDiskRepo(t)
	tr.write(".gitignore", "ignored-link\n")
	tr.write("f", "1\n")
	tr.add(".gitignore", "f")
	tr.commit("c1")
	outside := filepath.Join(filepath.Dir(tr.dir), "outside")
	os.MkdirAll(outside, 0o755)
	tr.start("minimal")

	evil := tr.blob("pwned\n")
	fileF := tr.blob("1\n")
	gi := tr.blob("ignored-link\n")
	base := func(extra ...rawEnt) []rawEnt {
		return append([]rawEnt{{"100644", ".gitignore", gi}, {"100644", "f", fileF}}, extra...)
	}
	sub := func(name string) plumbing.Hash { return tr.rawTree(rawEnt{"100644", name, evil}) }
	cases := []struct {
		name string
		wt   []rawEnt
		ix   []rawEnt
		want string
	}{
		{name: "dotdot", wt: base(rawEnt{"40000", "..", sub("evil")})},
		{name: "dot", wt: base(rawEnt{"40000", ".", sub("evil")})},
		{name: "dotgit", wt: []rawEnt{{"40000", ".git", tr.rawTree(rawEnt{"40000", "hooks", sub("post-checkout")})}, {"100644", ".gitignore", gi}, {"100644", "f", fileF}}},
		{name: "dotgit upper case", wt: []rawEnt{{"40000", ".GIT", sub("config")}, {"100644", ".gitignore", gi}, {"100644", "f", fileF}}},
		{name: "dotgit ntfs", wt: []rawEnt{{"40000", ".git. ", sub("config")}, {"100644", ".gitignore", gi}, {"100644", "f", fileF}}},
		{name: "dotgit short name", wt: base(rawEnt{"40000", "git~1", sub("config")})},
		{name: "dotgit hfs", wt: []rawEnt{{"40000", ".g\u200cit", sub("config")}, {"100644", ".gitignore", gi}, {"100644", "f", fileF}}},
		{name: "nested dotgit", wt: base(rawEnt{"40000", "sub", tr.rawTree(rawEnt{"40000", ".git", sub("config")})})},
		{name: "absolute", wt: base(rawEnt{"100644", "/tmp/evil", evil})},
		{name: "slash in name", wt: base(rawEnt{"100644", "../../evil", evil})},
		{name: "empty name", wt: base(rawEnt{"100644", "", evil})},
		{name: "link then dir of the same name", wt: base(
			rawEnt{"120000", "x", tr.blob(outside)},
			rawEnt{"40000", "x", sub("evil")})},
		{name: "unsorted", wt: []rawEnt{{"100644", "f", fileF}, {"100644", ".gitignore", gi}}},
		{name: "bad mode", wt: base(rawEnt{"100666", "m", evil})},
		{name: "gitmodules link", wt: []rawEnt{{"100644", ".gitignore", gi}, {"120000", ".gitmodules", tr.blob(outside)}, {"100644", "f", fileF}}},
		{name: "session file", wt: base(rawEnt{"40000", ".hegel", sub("state.json")})},
		{name: "missing blob", wt: base(rawEnt{"100644", "z", plumbing.NewHash("1234567890123456789012345678901234567890")}), want: "missing"},
		{name: "index reaches into .git", wt: base(), ix: []rawEnt{{"40000", ".git", sub("config")}, {"100644", ".gitignore", gi}, {"100644", "f", fileF}}},
	}
	before := tr.capture()
	for i, c := range cases {
		id := fmt.Sprintf("%08x", 0xa0000000+i)
		var ix plumbing.Hash
		if c.ix != nil {
			ix = tr.rawTree(c.ix...)
		}
		tr.plant(id, tr.rawTree(c.wt...), ix, "1\n", nil)
		_, err := tr.rollback(Request{To: id})
		switch {
		case err == nil:
			t.Errorf("%s: rollback accepted a hostile checkpoint", c.name)
		case c.want != "" && !strings.Contains(err.Error(), c.want):
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		case c.want == "" && !errors.Is(err, ErrUnsafePath):
			t.Errorf("%s: err = %v, want ErrUnsafePath", c.name, err)
		}
		tr.expectState(before, c.name)
		if ents, _ := os.ReadDir(outside); len(ents) != 0 {
			t.Fatalf("%s: something was written outside the working tree", c.name)
		}
		if _, err := os.Stat(filepath.Join(tr.dir, ".git", "hooks", "post-checkout")); err == nil {
			t.Fatalf("%s: a hook was written", c.name)
		}
		if j, _ := tr.m.Interrupted(); j != nil {
			t.Fatalf("%s: journal left", c.name)
		}
	}

	// A link in the working tree that no checkpoint holds (ignored) is in
	// the way of a directory the checkpoint wants: refused, nothing goes
	// through it.
	tr.symlink(outside, "ignored-link")
	tr.plant("bbbb1111", tr.rawTree(base(rawEnt{"40000", "ignored-link", sub("evil")})...), plumbing.ZeroHash, "1\n", nil)
	if _, err := tr.rollback(Request{To: "bbbb1111"}); !errors.Is(err, ErrInTheWay) {
		t.Errorf("through an ignored link: err = %v", err)
	}
	// An untracked link the safety checkpoint keeps is replaced by a real
	// directory: still nothing outside.
	tr.symlink(outside, "untracked-link")
	tr.plant("cccc2222", tr.rawTree(base(rawEnt{"40000", "untracked-link", sub("evil")})...), plumbing.ZeroHash, "1\n", nil)
	tr.mustRollback(Request{To: "cccc2222"})
	if st, err := os.Lstat(filepath.Join(tr.dir, "untracked-link")); err != nil || !st.IsDir() {
		t.Errorf("untracked-link is not a directory now: %v", err)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatal("something was written outside the working tree")
	}
	tr.mustRollback(Request{Undo: true})
	if target, err := os.Readlink(filepath.Join(tr.dir, "untracked-link")); err != nil || target != outside {
		t.Errorf("undo did not bring the link back: %q %v", target, err)
	}

	// A version this build does not know, and a missing HEAD commit.
	tr.plant("dddd3333", plumbing.ZeroHash, plumbing.ZeroHash, "2\n", nil)
	if _, err := tr.chain().List(); err == nil || !strings.Contains(err.Error(), "upgrade") {
		t.Errorf("unknown version: %v", err)
	}
}

func TestHostileMissingHeadCommit(t *testing.T) {
	tr := newDiskRepo(t)
	tr.write("f", "1\n")
	tr.add("f")
	tr.commit("c1")
	tr.start("minimal")
	tr.plant("eeee4444", plumbing.ZeroHash, plumbing.ZeroHash, "1\n", func(cp *Checkpoint) {
		cp.Head = "1234567890123456789012345678901234567890"
	})
	before := tr.capture()
	if _, err := tr.rollback(Request{To: "eeee4444"}); err == nil || !strings.Contains(err.Error(), "HEAD commit") {
		t.Errorf("err = %v", err)
	}
	tr.expectState(before, "missing head")
}

func TestCaseFoldingCollision(t *testing.T) {
	tr := newDiskRepo(t)
	tr.git("config", "core.ignorecase", "true")
	tr.reopen()
	tr.write("f", "1\n")
	tr.add("f")
	tr.commit("c1")
	tr.start("minimal")
	evil := tr.blob("x\n")
	wt := tr.rawTree(rawEnt{"120000", "A", tr.blob("/tmp")}, rawEnt{"40000", "a", tr.rawTree(rawEnt{"100644", "x", evil})}, rawEnt{"100644", "f", tr.blob("1\n")})
	tr.plant("ffff5555", wt, plumbing.ZeroHash, "1\n", nil)
	if _, err := tr.rollback(Request{To: "ffff5555"}); !errors.Is(err, ErrUnsafePath) {
		t.Errorf("err = %v", err)
	}
}

func TestCheckName(t *testing.T) {
	bad := []string{"", ".", "..", ".git", ".Git", ".GIT", ".git.", ".git ", ".git . .", "git~1", "GIT~1", ".git::$INDEX_ALLOCATION",
		".g\u200dit", "\ufeff.git", "a/b", "a\x00b"}
	for _, n := range bad {
		if checkName(n) == nil {
			t.Errorf("%q accepted", n)
		}
	}
	good := []string{"git", ".github", ".gitignore", ".gitmodules", "a..b", "...", "git~2", ".git2", "x.git"}
	for _, n := range good {
		if err := checkName(n); err != nil {
			t.Errorf("%q refused: %v", n, err)
		}
	}
	for p, want := range map[string]bool{".hegel/state.json": true, "x/.hegel/state.json.lock": true, ".hegel/workflows/a.yaml": false, "state.json": false} {
		if reservedPath(p) != want {
			t.Errorf("reservedPath(%q) = %v", p, !want)
		}
	}
}
