package refs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/memfs"
	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-billy/v5/util"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/gitstore/objects"
)

// refsFileBackends are the filesystems Files-specific tests run on.
func refsFileBackends() map[string]func(t *testing.T) *Files {
	return map[string]func(t *testing.T) *Files{
		"osfs": func(t *testing.T) *Files {
			return &Files{fs: osfs.New(refsNewGitDir(t), osfs.WithBoundOS()), lockTimeout: 100 * time.Millisecond}
		},
		"memfs": func(t *testing.T) *Files {
			return &Files{fs: memfs.New(), lockTimeout: 100 * time.Millisecond}
		},
	}
}

func refsWriteFile(t *testing.T, fs billy.Filesystem, name, content string) {
	t.Helper()
	if err := fs.MkdirAll(filepath.Dir(name), 0o777); err != nil {
		t.Fatal(err)
	}
	f, err := fs.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte(content)); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func refsReadFile(t *testing.T, fs billy.Filesystem, name string) string {
	t.Helper()
	data, err := util.ReadFile(fs, name)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func refsExists(fs billy.Filesystem, name string) bool {
	_, err := fs.Stat(name)
	return err == nil
}

// refsLockFiles returns every *.lock file below the filesystem's root.
func refsLockFiles(t *testing.T, fs billy.Filesystem) []string {
	t.Helper()
	var locks []string
	var walk func(dir string)
	walk = func(dir string) {
		entries, err := fs.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range entries {
			p := fs.Join(dir, e.Name())
			if e.IsDir() {
				walk(p)
			} else if strings.HasSuffix(e.Name(), ".lock") {
				locks = append(locks, p)
			}
		}
	}
	walk("refs")
	if refsExists(fs, "packed-refs.lock") {
		locks = append(locks, "packed-refs.lock")
	}
	return locks
}

func TestFileRefsReadMalformed(t *testing.T) {
	h := refsTestHash(1)
	for fsName, newRefs := range refsFileBackends() {
		t.Run(fsName, func(t *testing.T) {
			cases := []struct {
				name, content, wantErr string
			}{
				{"refs/hegel/empty", "", "is empty"},
				{"refs/hegel/sym", "ref: refs/heads/main\n", "symbolic"},
				{"refs/hegel/junk", "not a hash\n", "malformed"},
				{"refs/hegel/short", h.String()[:39] + "\n", "malformed"},
				{"refs/hegel/long", h.String() + "0\n", "malformed"},
				{"refs/hegel/trailing", h.String() + " junk\n", "malformed"},
			}
			for _, c := range cases {
				r := newRefs(t)
				refsWriteFile(t, r.fs, c.name, c.content)
				_, err := r.Read(plumbing.ReferenceName(c.name))
				if err == nil || errors.Is(err, engine.ErrNotFound) || !strings.Contains(err.Error(), c.wantErr) ||
					!strings.Contains(err.Error(), filepath.FromSlash(c.name)) {
					t.Errorf("Read(%s) with %q: error %v, want one containing %q and the file name", c.name, c.content, err, c.wantErr)
				}
				// A listing leaves it out with one warning, and hides the
				// packed value of the name too (as git's files backend
				// does, the loose file is the ref).
				refsWriteFile(t, r.fs, "packed-refs", "# pack-refs with: peeled fully-peeled sorted \n"+h.String()+" "+c.name+"\n"+h.String()+" refs/hegel/zz\n")
				var warned []string
				r.warn = func(s string) { warned = append(warned, s) }
				for range 2 {
					if got, err := r.List("refs/hegel/"); err != nil || len(got) != 1 || got[0].Name != "refs/hegel/zz" {
						t.Errorf("List with malformed %s: %v, %v; want only refs/hegel/zz", c.name, got, err)
					}
				}
				// A symbolic ref is no damage (origin/HEAD): left out
				// without a word.
				b, err := r.ListBroken("refs/hegel/")
				if c.wantErr == "symbolic" {
					if len(warned) != 0 || len(b) != 0 || err != nil {
						t.Errorf("symbolic %s: warned %q, broken %v, %v", c.name, warned, b, err)
					}
				} else {
					if len(warned) != 1 || !strings.Contains(warned[0], "ignoring broken ref "+c.name) {
						t.Errorf("warnings for %s: %q", c.name, warned)
					}
					if err != nil || len(b) != 1 || b[0].Name != plumbing.ReferenceName(c.name) || !errors.Is(b[0].Err, ErrBroken) {
						t.Errorf("ListBroken with malformed %s: %v, %v", c.name, b, err)
					}
				}
				err = r.Update(plumbing.ReferenceName(c.name), plumbing.ZeroHash, h)
				if err == nil || errors.Is(err, engine.ErrConflict) {
					t.Errorf("Update over malformed %s: error %v, want a read error", c.name, err)
				}
				if got := refsReadFile(t, r.fs, c.name); got != c.content {
					t.Errorf("Update over malformed %s changed it to %q", c.name, got)
				}
				if locks := refsLockFiles(t, r.fs); len(locks) != 0 {
					t.Errorf("lock files left behind: %v", locks)
				}
			}

			// git accepts a hash without the newline, and upper-case hex.
			r := newRefs(t)
			refsWriteFile(t, r.fs, "refs/hegel/nonl", h.String())
			refsWriteFile(t, r.fs, "refs/hegel/upper", strings.ToUpper(h.String())+"\n")
			for _, n := range []plumbing.ReferenceName{"refs/hegel/nonl", "refs/hegel/upper"} {
				if got, err := r.Read(n); err != nil || got != h {
					t.Errorf("Read(%s) = %s, %v; want %s", n, got, err, h)
				}
			}

			// A malformed packed-refs is an error that names it.
			r = newRefs(t)
			refsWriteFile(t, r.fs, "packed-refs", "# pack-refs with: peeled \nnonsense\n")
			if _, err := r.Read("refs/hegel/x"); err == nil || !strings.Contains(err.Error(), "packed-refs") {
				t.Errorf("Read with malformed packed-refs: %v", err)
			}
		})
	}
}

func TestFileRefsPackedRefs(t *testing.T) {
	h := make([]plumbing.Hash, 10)
	for i := range h {
		h[i] = refsTestHash(100 + i)
	}
	header := "# pack-refs with: peeled fully-peeled sorted \n"
	lineA := h[1].String() + " refs/hegel/a\n"
	lineB := h[2].String() + " refs/hegel/b\n^" + h[3].String() + "\n"
	lineC := h[4].String() + " refs/hegel/c\n"
	lineP := h[9].String() + " refs/hegel/p\n"
	lineQ := h[9].String() + " refs/hegel/q/r\n"
	lineTag := h[5].String() + " refs/tags/v1\n^" + h[6].String() + "\n"

	for fsName, newRefs := range refsFileBackends() {
		t.Run(fsName, func(t *testing.T) {
			r := newRefs(t)
			refsWriteFile(t, r.fs, "packed-refs", header+lineA+lineB+lineC+lineP+lineQ+lineTag)
			refsWriteFile(t, r.fs, "refs/hegel/c", h[7].String()+"\n") // loose wins

			read := func(name plumbing.ReferenceName, want plumbing.Hash) {
				t.Helper()
				got, err := r.Read(name)
				if want.IsZero() {
					if !errors.Is(err, engine.ErrNotFound) {
						t.Fatalf("Read(%s) = %s, %v; want engine.ErrNotFound", name, got, err)
					}
					return
				}
				if err != nil || got != want {
					t.Fatalf("Read(%s) = %s, %v; want %s", name, got, err, want)
				}
			}
			read("refs/hegel/a", h[1])
			read("refs/hegel/b", h[2]) // the ref, not its peeled value
			read("refs/hegel/c", h[7])
			read("refs/tags/v1", h[5])

			list, err := r.List("refs/hegel/")
			if err != nil {
				t.Fatal(err)
			}
			want := []Ref{{"refs/hegel/a", h[1]}, {"refs/hegel/b", h[2]}, {"refs/hegel/c", h[7]}, {"refs/hegel/p", h[9]}, {"refs/hegel/q/r", h[9]}}
			if fmt.Sprint(list) != fmt.Sprint(want) {
				t.Fatalf("List = %v, want %v", list, want)
			}

			// Packed ancestors and descendants block creation.
			if err := r.Update("refs/hegel/p/x", plumbing.ZeroHash, h[0]); err == nil {
				t.Error("created refs/hegel/p/x below the packed ref refs/hegel/p")
			}
			if err := r.Update("refs/hegel/q", plumbing.ZeroHash, h[0]); err == nil {
				t.Error("created refs/hegel/q above the packed ref refs/hegel/q/r")
			}

			// Updating a packed ref writes a loose one.
			if err := r.Update("refs/hegel/a", h[1], h[8]); err != nil {
				t.Fatal(err)
			}
			read("refs/hegel/a", h[8])
			if got := refsReadFile(t, r.fs, "refs/hegel/a"); got != h[8].String()+"\n" {
				t.Fatalf("loose refs/hegel/a = %q", got)
			}
			if err := r.Update("refs/hegel/b", h[3], h[0]); !errors.Is(err, engine.ErrConflict) {
				t.Fatalf("Update with the peeled value as old: %v, want engine.ErrConflict", err)
			}

			// Deleting a packed-only ref drops its line and its peeled line,
			// and nothing else.
			if err := r.Update("refs/hegel/b", h[2], plumbing.ZeroHash); err != nil {
				t.Fatal(err)
			}
			read("refs/hegel/b", plumbing.ZeroHash)
			if got, want := refsReadFile(t, r.fs, "packed-refs"), header+lineA+lineC+lineP+lineQ+lineTag; got != want {
				t.Fatalf("packed-refs after deleting b:\n%s\nwant:\n%s", got, want)
			}

			// Deleting a ref both loose and packed must not resurrect the
			// packed value.
			if err := r.Update("refs/hegel/a", h[8], plumbing.ZeroHash); err != nil {
				t.Fatal(err)
			}
			read("refs/hegel/a", plumbing.ZeroHash)
			if err := r.Update("refs/hegel/c", h[4], plumbing.ZeroHash); !errors.Is(err, engine.ErrConflict) {
				t.Fatalf("delete c with its packed (hidden) value: %v, want engine.ErrConflict", err)
			}
			if err := r.Update("refs/hegel/c", h[7], plumbing.ZeroHash); err != nil {
				t.Fatal(err)
			}
			read("refs/hegel/c", plumbing.ZeroHash)
			if got, want := refsReadFile(t, r.fs, "packed-refs"), header+lineP+lineQ+lineTag; got != want {
				t.Fatalf("packed-refs after deleting a and c:\n%s\nwant:\n%s", got, want)
			}
			if refsExists(r.fs, "refs/hegel/a") || refsExists(r.fs, "refs/hegel/c") {
				t.Fatal("loose files left after delete")
			}
			if locks := refsLockFiles(t, r.fs); len(locks) != 0 {
				t.Fatalf("lock files left behind: %v", locks)
			}
			list, err = r.List("refs/")
			if err != nil {
				t.Fatal(err)
			}
			want = []Ref{{"refs/hegel/p", h[9]}, {"refs/hegel/q/r", h[9]}, {"refs/tags/v1", h[5]}}
			if fmt.Sprint(list) != fmt.Sprint(want) {
				t.Fatalf("List = %v, want %v", list, want)
			}
		})
	}
}

func TestFileRefsLocked(t *testing.T) {
	h1, h2 := refsTestHash(1), refsTestHash(2)
	for fsName, newRefs := range refsFileBackends() {
		t.Run(fsName, func(t *testing.T) {
			r := newRefs(t)
			const name = "refs/hegel/x"
			if err := r.Update(name, plumbing.ZeroHash, h1); err != nil {
				t.Fatal(err)
			}
			lockPath := filepath.FromSlash(name + ".lock")
			refsWriteFile(t, r.fs, lockPath, "someone else's")

			for _, c := range []struct {
				name     plumbing.ReferenceName
				old, new plumbing.Hash
			}{{name, h1, h2}, {name, h1, plumbing.ZeroHash}, {name, h2, h1}} {
				start := time.Now()
				err := r.Update(c.name, c.old, c.new)
				if !errors.Is(err, ErrLocked) {
					t.Fatalf("Update with the lock held: %v, want ErrLocked", err)
				}
				if el := time.Since(start); el < r.lockTimeout {
					t.Errorf("gave up after %v, before the %v timeout", el, r.lockTimeout)
				}
				msg := err.Error()
				abs := r.fs.Join(r.fs.Root(), lockPath)
				if !strings.Contains(msg, abs) || !strings.Contains(msg, "remove") || !strings.Contains(msg, "git process") {
					t.Errorf("message does not tell the user what to do about %s: %s", abs, msg)
				}
			}
			if got, err := r.Read(name); err != nil || got != h1 {
				t.Fatalf("ref changed under a held lock: %s, %v", got, err)
			}
			// The other process's lock is not ours to remove.
			if got := refsReadFile(t, r.fs, lockPath); got != "someone else's" {
				t.Fatalf("lock file changed: %q", got)
			}
			// A lock on a ref that does not exist yet blocks its creation.
			refsWriteFile(t, r.fs, "refs/hegel/new.lock", "")
			if err := r.Update("refs/hegel/new", plumbing.ZeroHash, h1); !errors.Is(err, ErrLocked) {
				t.Fatalf("create with the lock held: %v, want ErrLocked", err)
			}
			if refsExists(r.fs, "refs/hegel/new") {
				t.Fatal("ref created under a held lock")
			}

			// A held packed-refs.lock blocks deleting a packed ref; the ref
			// lock is released and nothing changes.
			refsWriteFile(t, r.fs, "packed-refs", h2.String()+" refs/hegel/packed\n")
			refsWriteFile(t, r.fs, "packed-refs.lock", "")
			if err := r.Update("refs/hegel/packed", h2, plumbing.ZeroHash); !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "packed-refs.lock") {
				t.Fatalf("delete with packed-refs.lock held: %v, want ErrLocked naming packed-refs.lock", err)
			}
			if got, err := r.Read("refs/hegel/packed"); err != nil || got != h2 {
				t.Fatalf("packed ref after failed delete: %s, %v", got, err)
			}
			if refsExists(r.fs, "refs/hegel/packed.lock") {
				t.Fatal("ref lock left behind after failing on packed-refs.lock")
			}
			// Updating (not deleting) a packed ref does not need packed-refs.lock.
			if err := r.Update("refs/hegel/packed", h2, h1); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestFileRefsLockReleasedWhileWaiting(t *testing.T) {
	r := &Files{fs: osfs.New(refsNewGitDir(t), osfs.WithBoundOS()), lockTimeout: 5 * time.Second}
	h1, h2 := refsTestHash(1), refsTestHash(2)
	if err := r.Update("refs/hegel/w", plumbing.ZeroHash, h1); err != nil {
		t.Fatal(err)
	}
	refsWriteFile(t, r.fs, "refs/hegel/w.lock", "")
	start := time.Now()
	go func() {
		time.Sleep(50 * time.Millisecond)
		_ = r.fs.Remove("refs/hegel/w.lock")
	}()
	if err := r.Update("refs/hegel/w", h1, h2); err != nil {
		t.Fatalf("Update after the lock went away: %v", err)
	}
	if el := time.Since(start); el < 50*time.Millisecond {
		t.Fatalf("Update did not wait for the lock (%v)", el)
	}
	if got, _ := r.Read("refs/hegel/w"); got != h2 {
		t.Fatalf("Read = %s, want %s", got, h2)
	}
}

func TestFileRefsDefaultTimeout(t *testing.T) {
	if r := NewFiles(memfs.New(), Options{}); r.lockTimeout != defaultLockTimeout {
		t.Fatalf("NewFiles lock timeout = %v, want %v", r.lockTimeout, defaultLockTimeout)
	}
	r := &Files{fs: memfs.New()} // zero timeout means the default
	refsWriteFile(t, r.fs, "refs/hegel/z.lock", "")
	start := time.Now()
	if err := r.Update("refs/hegel/z", plumbing.ZeroHash, refsTestHash(1)); !errors.Is(err, ErrLocked) {
		t.Fatal(err)
	}
	if el := time.Since(start); el < defaultLockTimeout || el > 10*time.Second {
		t.Fatalf("zero lockTimeout waited %v, want about %v", el, defaultLockTimeout)
	}
}

func TestFileRefsDirectories(t *testing.T) {
	h1 := refsTestHash(1)
	for fsName, newRefs := range refsFileBackends() {
		t.Run(fsName, func(t *testing.T) {
			r := newRefs(t)
			// Deleting removes the emptied directories, but not refs/hegel.
			if err := r.Update("refs/hegel/x/y/z", plumbing.ZeroHash, h1); err != nil {
				t.Fatal(err)
			}
			if err := r.Update("refs/hegel/x/y/z", h1, plumbing.ZeroHash); err != nil {
				t.Fatal(err)
			}
			if refsExists(r.fs, "refs/hegel/x") {
				t.Error("refs/hegel/x left behind after deleting its only ref")
			}
			if !refsExists(r.fs, "refs/hegel") {
				t.Error("refs/hegel removed")
			}
			// Failed updates leave no directories either.
			if err := r.Update("refs/hegel/n1/n2/n3", h1, plumbing.ZeroHash); !errors.Is(err, engine.ErrConflict) {
				t.Fatal(err)
			}
			if refsExists(r.fs, "refs/hegel/n1") {
				t.Error("a failed delete left refs/hegel/n1 behind")
			}
			// Stale empty directories where the ref goes are removed.
			if err := r.fs.MkdirAll("refs/hegel/q/r/s", 0o777); err != nil {
				t.Fatal(err)
			}
			if err := r.Update("refs/hegel/q", plumbing.ZeroHash, h1); err != nil {
				t.Fatalf("create over empty directories: %v", err)
			}
			// A lock file below the name blocks it (someone is creating
			// refs/hegel/w/v).
			refsWriteFile(t, r.fs, "refs/hegel/w/v.lock", "")
			if err := r.Update("refs/hegel/w", plumbing.ZeroHash, h1); err == nil || !strings.Contains(err.Error(), "v.lock") {
				t.Fatalf("create over a directory holding a lock: %v", err)
			}
			if got, err := r.List(""); err != nil || len(got) != 1 || got[0].Name != "refs/hegel/q" {
				t.Fatalf("List = %v, %v; want only refs/hegel/q (lock files are not refs)", got, err)
			}
			if locks := refsLockFiles(t, r.fs); len(locks) != 1 {
				t.Fatalf("lock files: %v, want only the one made by hand", locks)
			}
		})
	}
}

func TestFileRefsFilesystems(t *testing.T) {
	dir := refsNewGitDir(t)
	bound := &Files{fs: osfs.New(dir, osfs.WithBoundOS())}
	f, err := bound.fs.Create("probe")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, ok := f.(interface{ Sync() error }); !ok {
		t.Error("BoundOS files do not expose Sync")
	}
	chrootFS := &Files{fs: osfs.New(dir)}
	if p, ok := chrootFS.osPath("refs/hegel/x.lock"); !ok || p != filepath.Join(dir, "refs/hegel/x.lock") {
		t.Errorf("ChrootOS osPath = %q, %v", p, ok)
	}
	if p, ok := bound.osPath("refs/hegel/x.lock"); !ok || p != filepath.Join(dir, "refs/hegel/x.lock") {
		t.Errorf("BoundOS osPath = %q, %v", p, ok)
	}
	if err := chrootFS.writeValue("probe2", []byte("data")); err != nil {
		t.Errorf("writeValue on ChrootOS: %v", err)
	}
	mem := &Files{fs: memfs.New()}
	if !mem.isMemfs() || bound.isMemfs() || chrootFS.isMemfs() {
		t.Error("isMemfs is wrong")
	}
	if _, ok := mem.osPath("x"); ok {
		t.Error("memfs has an OS path")
	}
}

// refsMakeCommits writes n chained commits (on the empty tree) into the
// repository at gitDir and returns their hashes, oldest first.
func refsMakeCommits(t testing.TB, gitDir string, n int) []plumbing.Hash {
	t.Helper()
	st := filesystem.NewStorage(osfs.New(gitDir), cache.NewObjectLRUDefault())
	put := func(o interface {
		Encode(plumbing.EncodedObject) error
	}) plumbing.Hash {
		obj := st.NewEncodedObject()
		if err := o.Encode(obj); err != nil {
			t.Fatal(err)
		}
		h, err := st.SetEncodedObject(obj)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	tree := put(&object.Tree{})
	var out []plumbing.Hash
	for i := range n {
		sig := object.Signature{Name: "Test", Email: "test@example.com", When: time.Unix(1700000000+int64(i), 0).UTC()}
		c := &object.Commit{Author: sig, Committer: sig, Message: fmt.Sprintf("step %d\n", i), TreeHash: tree}
		if i > 0 {
			c.ParentHashes = []plumbing.Hash{out[i-1]}
		}
		out = append(out, put(c))
	}
	return out
}

func TestFileRefsGitInterop(t *testing.T) {
	if !refsHaveGit() {
		t.Skip("git not on PATH")
	}
	gitDir := refsNewGitDir(t)
	work := filepath.Dir(gitDir)
	c := refsMakeCommits(t, gitDir, 8)
	r := &Files{fs: osfs.New(gitDir, osfs.WithBoundOS()), lockTimeout: 100 * time.Millisecond}
	gitRev := func(name string) string {
		t.Helper()
		out, err := refsGitErr(work, "rev-parse", "--verify", "-q", name)
		if err != nil {
			return ""
		}
		return out
	}
	forEachRef := func() string {
		t.Helper()
		return refsGit(t, work, "for-each-ref", "--format=%(objectname) %(refname)", "refs/hegel/")
	}
	ourList := func() string {
		t.Helper()
		refs, err := r.List("refs/hegel/")
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for _, ref := range refs {
			lines = append(lines, ref.Hash.String()+" "+string(ref.Name))
		}
		return strings.Join(lines, "\n")
	}
	mustUpdate := func(name plumbing.ReferenceName, old, new plumbing.Hash) {
		t.Helper()
		if err := r.Update(name, old, new); err != nil {
			t.Fatalf("Update(%s): %v", name, err)
		}
	}

	// Our creates are git's refs.
	mustUpdate("refs/hegel/a", plumbing.ZeroHash, c[0])
	mustUpdate("refs/hegel/b", plumbing.ZeroHash, c[1])
	mustUpdate("refs/hegel/c/d", plumbing.ZeroHash, c[2])
	if got := gitRev("refs/hegel/a"); got != c[0].String() {
		t.Fatalf("git rev-parse refs/hegel/a = %q, want %s", got, c[0])
	}
	if got, want := forEachRef(), ourList(); got != want {
		t.Fatalf("git for-each-ref:\n%s\nours:\n%s", got, want)
	}

	// git's updates are ours, and our CAS with the stale value fails.
	refsGit(t, work, "update-ref", "refs/hegel/a", c[3].String(), c[0].String())
	if got, err := r.Read("refs/hegel/a"); err != nil || got != c[3] {
		t.Fatalf("Read after git update-ref = %s, %v; want %s", got, err, c[3])
	}
	if err := r.Update("refs/hegel/a", c[0], c[4]); !errors.Is(err, engine.ErrConflict) {
		t.Fatalf("stale CAS: %v, want engine.ErrConflict", err)
	}
	if got := gitRev("refs/hegel/a"); got != c[3].String() {
		t.Fatalf("git sees %s after a failed CAS, want %s", got, c[3])
	}
	// A ref git created is readable and deletable.
	refsGit(t, work, "update-ref", "refs/hegel/by-git", c[5].String())
	mustUpdate("refs/hegel/by-git", c[5], plumbing.ZeroHash)
	if got := gitRev("refs/hegel/by-git"); got != "" {
		t.Fatalf("git still sees deleted refs/hegel/by-git at %s", got)
	}

	// After pack-refs, with an annotated tag for a peeled line.
	refsGit(t, work, "tag", "-a", "-m", "v1", "v1", c[1].String())
	refsGit(t, work, "pack-refs", "--all")
	for _, n := range []string{"refs/hegel/a", "refs/hegel/b", "refs/hegel/c/d"} {
		if _, err := os.Stat(filepath.Join(gitDir, n)); !os.IsNotExist(err) {
			t.Fatalf("pack-refs left loose %s (%v)", n, err)
		}
	}
	packed, err := os.ReadFile(filepath.Join(gitDir, "packed-refs"))
	if err != nil || !strings.Contains(string(packed), "\n^") {
		t.Fatalf("packed-refs has no peeled line: %q, %v", packed, err)
	}
	if got, want := forEachRef(), ourList(); got != want {
		t.Fatalf("after pack-refs, git for-each-ref:\n%s\nours:\n%s", got, want)
	}
	tag, err := r.Read("refs/tags/v1")
	if err != nil || tag.String() != gitRev("refs/tags/v1") {
		t.Fatalf("Read(refs/tags/v1) = %s, %v; want the tag object %s", tag, err, gitRev("refs/tags/v1"))
	}
	mustUpdate("refs/hegel/b", c[1], c[6])
	if got := gitRev("refs/hegel/b"); got != c[6].String() {
		t.Fatalf("git rev-parse refs/hegel/b = %q, want %s", got, c[6])
	}
	mustUpdate("refs/hegel/c/d", c[2], plumbing.ZeroHash)
	if out := forEachRef(); strings.Contains(out, "refs/hegel/c/d") {
		t.Fatalf("git for-each-ref still lists the deleted ref:\n%s", out)
	}
	packed, _ = os.ReadFile(filepath.Join(gitDir, "packed-refs"))
	if strings.Contains(string(packed), "refs/hegel/c/d") {
		t.Fatalf("packed-refs still has the deleted ref:\n%s", packed)
	}
	if !strings.Contains(string(packed), "refs/tags/v1\n^") {
		t.Fatalf("packed-refs lost the tag's peeled line:\n%s", packed)
	}
	if got := gitRev("refs/tags/v1^{commit}"); got != c[1].String() {
		t.Fatalf("tag peels to %q, want %s", got, c[1])
	}
	// git can still write where we deleted, and we can read it back.
	refsGit(t, work, "update-ref", "refs/hegel/c/d", c[7].String(), "")
	if got, err := r.Read("refs/hegel/c/d"); err != nil || got != c[7] {
		t.Fatalf("Read after git re-created c/d = %s, %v", got, err)
	}

	// A lock file held by someone else (git, say): ErrLocked, nothing changes.
	lockFile := filepath.Join(gitDir, "refs", "hegel", "a.lock")
	if err := os.WriteFile(lockFile, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := r.Update("refs/hegel/a", c[3], c[4]); !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), lockFile) {
		t.Fatalf("Update with %s held: %v, want ErrLocked naming it", lockFile, err)
	}
	if time.Since(start) < r.lockTimeout {
		t.Fatal("did not wait for the lock timeout")
	}
	if got := gitRev("refs/hegel/a"); got != c[3].String() {
		t.Fatalf("ref changed under a held lock: %s", got)
	}
	// git honours the same lock.
	if _, err := refsGitErr(work, "update-ref", "refs/hegel/a", c[4].String(), c[3].String()); err == nil {
		t.Fatal("git update-ref ignored the lock file")
	}
	if err := os.Remove(lockFile); err != nil {
		t.Fatal(err)
	}
	mustUpdate("refs/hegel/a", c[3], c[4])

	if got, want := forEachRef(), ourList(); got != want {
		t.Fatalf("at the end, git for-each-ref:\n%s\nours:\n%s", got, want)
	}
	if out, err := refsGitErr(work, "fsck", "--strict", "--no-progress"); err != nil {
		t.Fatalf("git fsck --strict: %v\n%s", err, out)
	}
	if locks := refsLockFiles(t, r.fs); len(locks) != 0 {
		t.Fatalf("lock files left behind: %v", locks)
	}
}

// refsIncrement moves name from counter n to n+1 (creating it at 1),
// retrying on engine.ErrConflict. It returns how many conflicts it retried.
func refsIncrement(b Backend, name plumbing.ReferenceName) (conflicts int, err error) {
	for attempt := 0; attempt < 100000; attempt++ {
		old, err := b.Read(name)
		n := 0
		switch {
		case errors.Is(err, engine.ErrNotFound):
			old = plumbing.ZeroHash
		case err != nil:
			return conflicts, err
		default:
			var ok bool
			if n, ok = refsCounterOf(old); !ok {
				return conflicts, fmt.Errorf("%s holds %s, not a counter", name, old)
			}
		}
		err = b.Update(name, old, refsCounterHash(n+1))
		if err == nil {
			return conflicts, nil
		}
		if !errors.Is(err, engine.ErrConflict) {
			return conflicts, err
		}
		conflicts++
	}
	return conflicts, errors.New("gave up after 100000 conflicts")
}

// refsWatch reads name until stop returns true and reports anything a
// reader must never see: an error other than engine.ErrNotFound before the ref
// exists, the ref vanishing, the counter going backwards, or (when rawPath
// is set) the ref file empty or partial.
func refsWatch(b Backend, name plumbing.ReferenceName, rawPath string, stop func() bool) (reads int, problems []string) {
	last := -1
	report := func(format string, args ...any) {
		if len(problems) < 20 {
			problems = append(problems, fmt.Sprintf(format, args...))
		}
	}
	for !stop() {
		reads++
		if rawPath != "" {
			data, err := os.ReadFile(rawPath)
			switch {
			case err == nil:
				if _, ok := objects.ParseHex(strings.TrimSuffix(string(data), "\n")); !ok || len(data) != 41 {
					report("raw read of %s saw %q", rawPath, data)
				}
			case !errors.Is(err, os.ErrNotExist):
				report("raw read of %s: %v", rawPath, err)
			}
		}
		h, err := b.Read(name)
		switch {
		case errors.Is(err, engine.ErrNotFound):
			if last >= 0 {
				report("ref vanished after counter %d: %v", last, err)
			}
		case err != nil:
			report("Read: %v", err)
		default:
			n, ok := refsCounterOf(h)
			if !ok {
				report("Read returned %s, not a counter", h)
			} else if n < last {
				report("counter went back from %d to %d", last, n)
			} else {
				last = n
			}
		}
	}
	return reads, problems
}

func TestFileRefsConcurrentIncrements(t *testing.T) {
	gitDir := refsNewGitDir(t)
	const name = plumbing.ReferenceName("refs/hegel/counter")
	refsRunConcurrentIncrements(t, name, filepath.Join(gitDir, "refs", "hegel", "counter"), func() Backend {
		// One Files per goroutine, as if each were its own process.
		return &Files{fs: osfs.New(gitDir, osfs.WithBoundOS()), lockTimeout: 10 * time.Second}
	})
}

func TestStorerRefsConcurrentIncrements(t *testing.T) {
	b := &Memory{s: memory.NewStorage()}
	refsRunConcurrentIncrements(t, "refs/hegel/counter", "", func() Backend { return b })
}

func refsRunConcurrentIncrements(t *testing.T, name plumbing.ReferenceName, rawPath string, newBackend func() Backend) {
	const workers, perWorker = 8, 50
	var done atomic.Bool
	var successes, conflicts atomic.Int64
	var readerProblems []string
	var reads int
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		reads, readerProblems = refsWatch(newBackend(), name, rawPath, done.Load)
	}()

	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := newBackend()
			for range perWorker {
				c, err := refsIncrement(b, name)
				conflicts.Add(int64(c))
				if err != nil {
					errs <- err
					return
				}
				successes.Add(1)
			}
		}()
	}
	wg.Wait()
	done.Store(true)
	<-readerDone
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := successes.Load(); got != workers*perWorker {
		t.Fatalf("%d successful updates, want %d", got, workers*perWorker)
	}
	h, err := newBackend().Read(name)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := refsCounterOf(h); n != workers*perWorker {
		t.Fatalf("counter = %d after %d successful increments: updates were lost", n, workers*perWorker)
	}
	for _, p := range readerProblems {
		t.Error("reader:", p)
	}
	t.Logf("%d increments, %d conflicts retried, %d reads", successes.Load(), conflicts.Load(), reads)
}

// TestFileRefsConcurrentCreateDelete has goroutines create and delete refs
// in one directory, so the directory is removed and recreated under their
// feet (git's raceproof file creation).
func TestFileRefsConcurrentCreateDelete(t *testing.T) {
	gitDir := refsNewGitDir(t)
	const workers, rounds = 8, 50
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := &Files{fs: osfs.New(gitDir, osfs.WithBoundOS()), lockTimeout: 10 * time.Second}
			name := plumbing.ReferenceName(fmt.Sprintf("refs/hegel/churn/shared/w%d", w))
			h := refsTestHash(w)
			for i := range rounds {
				if err := r.Update(name, plumbing.ZeroHash, h); err != nil {
					errs <- fmt.Errorf("round %d create: %w", i, err)
					return
				}
				if got, err := r.Read(name); err != nil || got != h {
					errs <- fmt.Errorf("round %d read: %s, %v", i, got, err)
					return
				}
				if err := r.Update(name, h, plumbing.ZeroHash); err != nil {
					errs <- fmt.Errorf("round %d delete: %w", i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	r := &Files{fs: osfs.New(gitDir, osfs.WithBoundOS())}
	if refs, err := r.List(""); err != nil || len(refs) != 0 {
		t.Fatalf("List = %v, %v; want nothing left", refs, err)
	}
	if locks := refsLockFiles(t, r.fs); len(locks) != 0 {
		t.Fatalf("lock files left behind: %v", locks)
	}
}

// TestFileRefsConcurrentWithGit increments one ref from our goroutines and
// from real `git update-ref` processes at once: both sides honour the same
// lock files, so no update is lost.
func TestFileRefsConcurrentWithGit(t *testing.T) {
	if !refsHaveGit() {
		t.Skip("git not on PATH")
	}
	const ours, oursEach, gits, gitsEach = 4, 25, 2, 10
	const total = ours*oursEach + gits*gitsEach
	gitDir := refsNewGitDir(t)
	work := filepath.Dir(gitDir)
	commits := refsMakeCommits(t, gitDir, total+1)
	index := map[plumbing.Hash]int{}
	for i, c := range commits {
		index[c] = i
	}
	const name = "refs/hegel/mixed"
	r0 := &Files{fs: osfs.New(gitDir, osfs.WithBoundOS())}
	if err := r0.Update(name, plumbing.ZeroHash, commits[0]); err != nil {
		t.Fatal(err)
	}

	var wg sync.WaitGroup
	errs := make(chan error, ours+gits)
	var gitRetries atomic.Int64
	for range ours {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := &Files{fs: osfs.New(gitDir, osfs.WithBoundOS()), lockTimeout: 10 * time.Second}
			for done := 0; done < oursEach; {
				cur, err := r.Read(name)
				if err != nil {
					errs <- err
					return
				}
				i, ok := index[cur]
				if !ok || i >= total {
					errs <- fmt.Errorf("ref at unexpected %s", cur)
					return
				}
				err = r.Update(name, cur, commits[i+1])
				switch {
				case err == nil:
					done++
				case errors.Is(err, engine.ErrConflict):
				default:
					errs <- err
					return
				}
			}
		}()
	}
	for range gits {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for done, attempts := 0, 0; done < gitsEach; attempts++ {
				if attempts > 5000 {
					errs <- errors.New("git update-ref never succeeded")
					return
				}
				out, err := refsGitErr(work, "rev-parse", "--verify", name)
				if err != nil {
					errs <- err
					return
				}
				i, ok := index[plumbing.NewHash(out)]
				if !ok || i >= total {
					errs <- fmt.Errorf("git sees the ref at unexpected %q", out)
					return
				}
				// Fails if someone moved the ref first or holds its lock.
				if _, err := refsGitErr(work, "update-ref", name, commits[i+1].String(), out); err != nil {
					gitRetries.Add(1)
					continue
				}
				done++
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	got, err := r0.Read(name)
	if err != nil {
		t.Fatal(err)
	}
	if index[got] != total {
		t.Fatalf("ref at step %d after %d successful updates: updates were lost", index[got], total)
	}
	if out, err := refsGitErr(work, "fsck", "--strict", "--no-progress"); err != nil {
		t.Fatalf("git fsck --strict: %v\n%s", err, out)
	}
	t.Logf("%d updates; git retried %d times", total, gitRetries.Load())
}

// A broken ref is replaced whole by ReplaceBroken (git's update-ref
// refuses it): its packed entry goes too; a ref that reads is refused.
func TestFileRefsReplaceBroken(t *testing.T) {
	h, h2 := refsTestHash(1), refsTestHash(2)
	for fsName, newRefs := range refsFileBackends() {
		t.Run(fsName, func(t *testing.T) {
			const name = plumbing.ReferenceName("refs/hegel/tasks/t")
			r := newRefs(t)
			refsWriteFile(t, r.fs, "packed-refs", "# pack-refs with: peeled fully-peeled sorted \n"+h.String()+" "+string(name)+"\n")
			refsWriteFile(t, r.fs, string(name), "")
			if err := r.ReplaceBroken(name, h2, Reflog{Msg: "doctor"}); err != nil {
				t.Fatal(err)
			}
			if got, err := r.Read(name); err != nil || got != h2 {
				t.Errorf("after ReplaceBroken: %s, %v; want %s", got, err, h2)
			}
			if err := r.ReplaceBroken(name, h, Reflog{}); !errors.Is(err, engine.ErrConflict) {
				t.Errorf("ReplaceBroken of a ref that reads: %v, want a conflict", err)
			}
			if got, _ := r.Read(name); got != h2 {
				t.Errorf("a refused ReplaceBroken moved the ref to %s", got)
			}
			// Deleting: the packed value the broken file hid does not
			// come back.
			refsWriteFile(t, r.fs, string(name), "junk\n")
			if err := r.ReplaceBroken(name, plumbing.ZeroHash, Reflog{}); err != nil {
				t.Fatal(err)
			}
			if _, err := r.Read(name); !errors.Is(err, engine.ErrNotFound) {
				t.Errorf("after deleting the broken ref: %v, want not found", err)
			}
			if locks := refsLockFiles(t, r.fs); len(locks) != 0 {
				t.Errorf("lock files left behind: %v", locks)
			}
		})
	}
}
