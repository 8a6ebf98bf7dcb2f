package rollback

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// foldFS simulates a case-insensitive filesystem (macOS, Windows) over a
// case-sensitive one: each component of a path names the existing entry
// whose name equals it up to case, as such a filesystem resolves it. It is
// sequential, so what a restore does happens in a fixed order.
type foldFS struct{ osFS }

func (f foldFS) resolve(p string) string {
	if p == "" {
		return p
	}
	var out []string
	for _, c := range strings.Split(p, "/") {
		dir := filepath.Join(append([]string{f.root}, out...)...)
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if strings.EqualFold(e.Name(), c) {
				c = e.Name()
				break
			}
		}
		out = append(out, c)
	}
	return strings.Join(out, "/")
}

func (f foldFS) lstat(p string) (fstat, error)             { return f.osFS.lstat(f.resolve(p)) }
func (f foldFS) readDir(p string) ([]dirent, error)        { return f.osFS.readDir(f.resolve(p)) }
func (f foldFS) readFile(p string) ([]byte, error)         { return f.osFS.readFile(f.resolve(p)) }
func (f foldFS) readlink(p string) (string, error)         { return f.osFS.readlink(f.resolve(p)) }
func (f foldFS) chmod(p string, x bool) (fstat, error)     { return f.osFS.chmod(f.resolve(p), x) }
func (f foldFS) remove(p string) error                     { return f.osFS.remove(f.resolve(p)) }
func (f foldFS) mkdir(p string) error                      { return f.osFS.mkdir(f.resolve(p)) }
func (f foldFS) parallel() bool                            { return false }
func (f foldFS) foldsCase() bool                           { return true }
func (f foldFS) problem(p string, dir bool) (string, bool) { return f.osFS.problem(f.resolve(p), dir) }
func (f foldFS) writeFile(p string, data []byte, exec bool) (fstat, error) {
	return f.osFS.writeFile(f.resolve(p), data, exec)
}
func (f foldFS) symlink(target, p string) (fstat, error) { return f.osFS.symlink(target, f.resolve(p)) }

// scanDirListing hides osFS's (Linux): it would take p unresolved.
func (f foldFS) scanDirListing() {}

func (f foldFS) scanDir(p string, decide func([]dirent) []bool) ([]dirent, []fstat, error) {
	return f.osFS.scanDir(f.resolve(p), decide)
}

// plantFolding plants a checkpoint holding a link X to a directory
// outside the working tree and a file x/evil: on a case-insensitive
// filesystem, writing x/evil after X exists writes outside.
func plantFolding(tr *testRepo) string {
	outside := filepath.Join(filepath.Dir(tr.dir), "outside")
	os.MkdirAll(outside, 0o755)
	wt := tr.rawTree(
		rawEnt{"120000", "X", tr.blob(outside)},
		rawEnt{"100644", "f", tr.blob("1\n")},
		rawEnt{"40000", "x", tr.rawTree(rawEnt{"100644", "evil", tr.blob("written through the link\n")})},
	)
	tr.plant("f01d0001", wt, plumbing.ZeroHash, "1\n", nil)
	return outside
}

// TestCaseFoldingProbed: core.ignorecase is false (a repository copied
// onto a case-insensitive filesystem), but the filesystem folds case; the
// probe finds it and the checkpoint is refused before anything is written.
func TestCaseFoldingProbed(t *testing.T) {
	tr := newDiskRepo(t)
	tr.write("f", "1\n")
	tr.add("f")
	tr.commit("c1")
	tr.start("minimal")
	outside := plantFolding(tr)
	tr.m.w.fs = foldFS{osFS{root: tr.dir, probeDir: filepath.Join(tr.dir, ".git")}}
	before := tr.fingerprint()
	if _, err := tr.rollback(Request{To: "f01d0001"}); !errors.Is(err, ErrUnsafePath) || !strings.Contains(err.Error(), "only in case") {
		t.Fatalf("err = %v", err)
	}
	if got := tr.fingerprint(); got != before {
		t.Fatalf("changed:\n%s", diffLines(before, got))
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatalf("written outside the working tree: %v", ents)
	}
}

// TestCaseFoldingWriteTimeChecks: even when the folding goes unnoticed,
// the restore never writes through the link: links are created after
// every file, and each file's parents are checked (lstat, never followed)
// when it is written. The rollback fails on the clash and undoes itself.
func TestCaseFoldingWriteTimeChecks(t *testing.T) {
	tr := newDiskRepo(t)
	tr.write("f", "1\n")
	tr.add("f")
	tr.commit("c1")
	tr.start("minimal")
	outside := plantFolding(tr)
	tr.m.w.fs = foldFS{osFS{root: tr.dir, probeDir: filepath.Join(tr.dir, ".git")}}
	tr.m.w.fold, tr.m.w.foldKnown = false, true // the folding goes unnoticed
	before := tr.fingerprint()
	_, err := tr.rollback(Request{To: "f01d0001"})
	if err == nil || !strings.Contains(err.Error(), "nothing was changed") {
		t.Fatalf("err = %v", err)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatalf("written outside the working tree: %v", ents)
	}
	if got := tr.fingerprint(); got != before {
		t.Fatalf("changed:\n%s", diffLines(before, got))
	}
}

// TestCaseFoldingProbeOnDisk: the probe on this machine's real filesystem.
func TestCaseFoldingProbeOnDisk(t *testing.T) {
	dir := t.TempDir()
	got := osFS{root: dir, probeDir: dir}.foldsCase()
	os.WriteFile(filepath.Join(dir, "probe"), nil, 0o644)
	_, err := os.Lstat(filepath.Join(dir, "PROBE"))
	if want := err == nil; got != want {
		t.Errorf("foldsCase() = %v, but the filesystem folds: %v", got, want)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("the probe left files: %v", ents)
	}
}
