package refstest

import (
	"crypto/sha1"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/gitstore/refs"
)

// testHash returns a distinct, deterministic object name; the contract
// needs no object to exist.
func testHash(i int) plumbing.Hash {
	return plumbing.Hash(sha1.Sum([]byte(fmt.Sprintf("refs-test-%d", i))))
}

// Run checks the behaviour every refs.Backend must share: reads of
// missing refs are engine.ErrNotFound, naming the ref; every update is
// compare-and-swap (a zero old value: the ref must not exist; a zero new
// value: delete it), and one that loses is engine.ErrConflict and changes
// nothing; lists are sorted and honour the prefix exactly; names git
// would refuse are refs.refs.ErrBadRefName, and a ref cannot live above or
// below another, as in git's files backend.
func Run(t *testing.T, newBackend func(t *testing.T) refs.Backend) {
	h1, h2, h3 := testHash(1), testHash(2), testHash(3)
	const name = plumbing.ReferenceName("refs/hegel/doc")

	mustRead := func(t *testing.T, b refs.Backend, name plumbing.ReferenceName, want plumbing.Hash) {
		t.Helper()
		got, err := b.Read(name)
		if err != nil {
			t.Fatalf("Read(%s): %v", name, err)
		}
		if got != want {
			t.Fatalf("Read(%s) = %s, want %s", name, got, want)
		}
	}
	mustMissing := func(t *testing.T, b refs.Backend, name plumbing.ReferenceName) {
		t.Helper()
		_, err := b.Read(name)
		if !errors.Is(err, engine.ErrNotFound) {
			t.Fatalf("Read(%s) error = %v, want engine.ErrNotFound", name, err)
		}
		if !strings.Contains(err.Error(), string(name)) {
			t.Errorf("error %q does not name the ref", err)
		}
	}
	mustUpdate := func(t *testing.T, b refs.Backend, name plumbing.ReferenceName, old, new plumbing.Hash) {
		t.Helper()
		if err := b.Update(name, old, new); err != nil {
			t.Fatalf("Update(%s, %s, %s): %v", name, old, new, err)
		}
	}
	mustConflict := func(t *testing.T, b refs.Backend, name plumbing.ReferenceName, old, new plumbing.Hash) {
		t.Helper()
		before, err := b.List("")
		if err != nil {
			t.Fatal(err)
		}
		err = b.Update(name, old, new)
		if !errors.Is(err, engine.ErrConflict) {
			t.Fatalf("Update(%s, %s, %s) error = %v, want engine.ErrConflict", name, old, new, err)
		}
		if !strings.Contains(err.Error(), string(name)) {
			t.Errorf("error %q does not name the ref", err)
		}
		after, err := b.List("")
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(before, after) {
			t.Fatalf("a conflicting update changed the refs:\nbefore %v\nafter  %v", before, after)
		}
	}

	t.Run("ReadMissing", func(t *testing.T) {
		b := newBackend(t)
		mustMissing(t, b, name)
		mustMissing(t, b, "refs/hegel/deep/er/name")
	})

	t.Run("Create", func(t *testing.T) {
		b := newBackend(t)
		mustUpdate(t, b, name, plumbing.ZeroHash, h1)
		mustRead(t, b, name, h1)
		mustUpdate(t, b, "refs/hegel/a/b/c", plumbing.ZeroHash, h2)
		mustRead(t, b, "refs/hegel/a/b/c", h2)
	})

	t.Run("CreateWhenExists", func(t *testing.T) {
		b := newBackend(t)
		mustUpdate(t, b, name, plumbing.ZeroHash, h1)
		mustConflict(t, b, name, plumbing.ZeroHash, h2)
		mustRead(t, b, name, h1)
	})

	t.Run("UpdateRightOld", func(t *testing.T) {
		b := newBackend(t)
		mustUpdate(t, b, name, plumbing.ZeroHash, h1)
		mustUpdate(t, b, name, h1, h2)
		mustRead(t, b, name, h2)
		mustUpdate(t, b, name, h2, h2) // a no-op move is fine
		mustRead(t, b, name, h2)
	})

	t.Run("UpdateWrongOld", func(t *testing.T) {
		b := newBackend(t)
		mustUpdate(t, b, name, plumbing.ZeroHash, h1)
		mustConflict(t, b, name, h2, h3)
		mustRead(t, b, name, h1)
	})

	t.Run("UpdateMissing", func(t *testing.T) {
		b := newBackend(t)
		mustConflict(t, b, name, h1, h2)
		mustMissing(t, b, name)
	})

	t.Run("Delete", func(t *testing.T) {
		b := newBackend(t)
		mustUpdate(t, b, name, plumbing.ZeroHash, h1)
		mustUpdate(t, b, "refs/hegel/keep", plumbing.ZeroHash, h3)
		mustConflict(t, b, name, h2, plumbing.ZeroHash) // wrong old
		mustRead(t, b, name, h1)
		mustUpdate(t, b, name, h1, plumbing.ZeroHash)
		mustMissing(t, b, name)
		mustRead(t, b, "refs/hegel/keep", h3)
		// It can be created again.
		mustUpdate(t, b, name, plumbing.ZeroHash, h2)
		mustRead(t, b, name, h2)
	})

	t.Run("DeleteMissing", func(t *testing.T) {
		b := newBackend(t)
		mustConflict(t, b, name, h1, plumbing.ZeroHash)
		mustMissing(t, b, name)
		// old == new == zero asserts absence.
		mustUpdate(t, b, name, plumbing.ZeroHash, plumbing.ZeroHash)
		mustMissing(t, b, name)
		mustUpdate(t, b, name, plumbing.ZeroHash, h1)
		mustConflict(t, b, name, plumbing.ZeroHash, plumbing.ZeroHash)
		mustRead(t, b, name, h1)
	})

	t.Run("DeleteNested", func(t *testing.T) {
		b := newBackend(t)
		mustUpdate(t, b, "refs/hegel/x/y/z", plumbing.ZeroHash, h1)
		mustUpdate(t, b, "refs/hegel/x/y/z", h1, plumbing.ZeroHash)
		mustMissing(t, b, "refs/hegel/x/y/z")
		// With the directories gone (or empty), refs/hegel/x is free again.
		mustUpdate(t, b, "refs/hegel/x", plumbing.ZeroHash, h2)
		mustRead(t, b, "refs/hegel/x", h2)
	})

	t.Run("List", func(t *testing.T) {
		b := newBackend(t)
		want := map[plumbing.ReferenceName]plumbing.Hash{
			"refs/hegel/c":     testHash(10),
			"refs/hegel/a/y":   testHash(11),
			"refs/hegel/b":     testHash(12),
			"refs/hegel/a/x":   testHash(13),
			"refs/hegel/ab":    testHash(14),
			"refs/hegel/a-b":   testHash(15),
			"refs/other/z":     testHash(16),
			"refs/hegel/c.txt": testHash(17),
		}
		for n, h := range want {
			mustUpdate(t, b, n, plumbing.ZeroHash, h)
		}
		list := func(prefix string) []string {
			t.Helper()
			got, err := b.List(prefix)
			if err != nil {
				t.Fatalf("List(%q): %v", prefix, err)
			}
			var names []string
			for _, r := range got {
				if want[r.Name] != r.Hash {
					t.Errorf("List(%q): %s = %s, want %s", prefix, r.Name, r.Hash, want[r.Name])
				}
				names = append(names, string(r.Name))
			}
			return names
		}
		check := func(prefix string, names ...string) {
			t.Helper()
			if got := list(prefix); !reflect.DeepEqual(got, names) {
				t.Errorf("List(%q) = %q, want %q", prefix, got, names)
			}
		}
		check("refs/hegel/", "refs/hegel/a-b", "refs/hegel/a/x", "refs/hegel/a/y",
			"refs/hegel/ab", "refs/hegel/b", "refs/hegel/c", "refs/hegel/c.txt")
		check("refs/hegel/a/", "refs/hegel/a/x", "refs/hegel/a/y")
		check("refs/hegel/a", "refs/hegel/a-b", "refs/hegel/a/x", "refs/hegel/a/y", "refs/hegel/ab")
		check("refs/hegel/c", "refs/hegel/c", "refs/hegel/c.txt")
		check("refs/hegel/b", "refs/hegel/b")
		check("refs/other/", "refs/other/z")
		check("refs/nope/")
		check("refs/hegel/c/")
		check("refs/hegel/zz")
		check("HEAD")
		if got := list("refs/"); len(got) != len(want) {
			t.Errorf("List(refs/) = %q, want all %d refs", got, len(want))
		}
		if got := list(""); len(got) != len(want) {
			t.Errorf("List(\"\") = %q, want all %d refs", got, len(want))
		}
	})

	t.Run("BadNames", func(t *testing.T) {
		b := newBackend(t)
		bad := []string{
			"refs/hegel/a..b", "refs/hegel/x.lock", "refs/hegel/x.lock/y", "refs/hegel/.x",
			"refs/hegel/a/.b", "HEAD", "refs/hegel/a b", "refs/hegel/a/", "refs/hegel//a",
			"refs/hegel/a@{1}", "refs/hegel/a~1", "refs/hegel/a^", "refs/hegel/a:b",
			"refs/hegel/a?", "refs/hegel/a*", "refs/hegel/a[b", `refs/hegel/a\b`,
			"refs/hegel/a\x01b", "refs/hegel/a\x7fb", "refs/hegel/a\tb", "refs/hegel/a\nb",
			"refs/hegel/a.", "refs/", "refs", "", "heads/main", "hegel/x", "/refs/hegel/x",
			"@",
		}
		for _, n := range bad {
			name := plumbing.ReferenceName(n)
			if err := b.Update(name, plumbing.ZeroHash, h1); !errors.Is(err, refs.ErrBadRefName) {
				t.Errorf("Update(%q) error = %v, want refs.ErrBadRefName", n, err)
			} else if !strings.Contains(err.Error(), fmt.Sprintf("%q", n)) {
				t.Errorf("Update(%q) error %q does not name the ref", n, err)
			}
			if _, err := b.Read(name); !errors.Is(err, refs.ErrBadRefName) {
				t.Errorf("Read(%q) error = %v, want refs.ErrBadRefName", n, err)
			}
		}
		if got, err := b.List(""); err != nil || len(got) != 0 {
			t.Errorf("after bad names, List = %v, %v; want nothing written", got, err)
		}
		// Names close to the bad ones are fine.
		for _, n := range []string{"refs/hegel/a.b", "refs/hegel/x.locked", "refs/hegel/a@b", "refs/hegel/x-y_z", "refs/hegel/ünï"} {
			mustUpdate(t, b, plumbing.ReferenceName(n), plumbing.ZeroHash, h1)
			mustRead(t, b, plumbing.ReferenceName(n), h1)
		}
	})

	t.Run("DirectoryFileConflict", func(t *testing.T) {
		b := newBackend(t)
		mustUpdate(t, b, "refs/hegel/d", plumbing.ZeroHash, h1)
		if err := b.Update("refs/hegel/d/e", plumbing.ZeroHash, h2); err == nil {
			t.Fatal("created refs/hegel/d/e below the ref refs/hegel/d")
		}
		mustUpdate(t, b, "refs/hegel/f/g", plumbing.ZeroHash, h1)
		if err := b.Update("refs/hegel/f", plumbing.ZeroHash, h2); err == nil {
			t.Fatal("created refs/hegel/f above the ref refs/hegel/f/g")
		}
		mustRead(t, b, "refs/hegel/d", h1)
		mustRead(t, b, "refs/hegel/f/g", h1)
		mustMissing(t, b, "refs/hegel/d/e")
		mustMissing(t, b, "refs/hegel/f")
		// Deleting or asserting the absence of an impossible ref is fine.
		mustConflict(t, b, "refs/hegel/d/e", h1, plumbing.ZeroHash)
		mustUpdate(t, b, "refs/hegel/d/e", plumbing.ZeroHash, plumbing.ZeroHash)
	})

	t.Run("SimilarNames", func(t *testing.T) {
		// memfs's Rename moves every path that merely starts with the
		// source: renaming refs/hegel/a.lock used to delete refs/hegel/a.lockX.
		b := newBackend(t)
		mustUpdate(t, b, "refs/hegel/a.lockX", plumbing.ZeroHash, h1)
		mustUpdate(t, b, "refs/hegel/a.lock2/b", plumbing.ZeroHash, h2)
		mustUpdate(t, b, "refs/hegel/a", plumbing.ZeroHash, h3)
		mustUpdate(t, b, "refs/hegel/a", h3, h1)
		mustRead(t, b, "refs/hegel/a.lockX", h1)
		mustRead(t, b, "refs/hegel/a.lock2/b", h2)
		mustRead(t, b, "refs/hegel/a", h1)
	})
}
