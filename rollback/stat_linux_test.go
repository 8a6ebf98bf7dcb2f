package rollback

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// scanDirOS reads directories with getdents64 itself: it must list what
// os.ReadDir lists, with the same kinds, for directories that take
// several reads (more names than one buffer holds) and every kind of
// entry, and lstat exactly the entries decide asks for.
func TestScanDirOSListsWhatReadDirLists(t *testing.T) {
	for _, n := range []int{0, 3, 2500} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			dir := t.TempDir()
			for i := 0; i < n; i++ {
				name := fmt.Sprintf("file-%05d-%s.txt", i, strings.Repeat("x", i%40))
				if i%7 == 0 {
					name = fmt.Sprintf("é-ünïcode-%d", i)
				}
				if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if n > 0 {
				os.Mkdir(filepath.Join(dir, "sub"), 0o755)
				os.Symlink("sub", filepath.Join(dir, "link"))
				if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
					t.Fatal(err)
				}
				os.WriteFile(filepath.Join(dir, "exec"), []byte("#!/bin/sh\n"), 0o755)
			}
			want, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			got, sts, err := scanDirOS(dir, func(ds []dirent) []bool {
				w := make([]bool, len(ds))
				for i, d := range ds {
					w[i] = d.kind != kindDir
				}
				return w
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("%d entries, os.ReadDir has %d", len(got), len(want))
			}
			byName := map[string]int{}
			for i, d := range got {
				byName[d.name] = i
			}
			for _, w := range want {
				i, ok := byName[w.Name()]
				if !ok {
					t.Fatalf("%q missing", w.Name())
				}
				if got[i].kind != kindOf(w.Type()) {
					t.Errorf("%q: kind %v, want %v", w.Name(), got[i].kind, kindOf(w.Type()))
				}
				switch {
				case got[i].kind == kindDir:
					if sts[i].hasStat {
						t.Errorf("%q: a directory was lstat'ed, though not asked for", w.Name())
					}
				case !sts[i].hasStat:
					t.Errorf("%q: not lstat'ed", w.Name())
				default:
					fi, _ := os.Lstat(filepath.Join(dir, w.Name()))
					if sts[i].size != fi.Size() || sts[i].exec != (fi.Mode()&0o100 != 0) {
						t.Errorf("%q: size %d exec %v, lstat says %d %v", w.Name(), sts[i].size, sts[i].exec, fi.Size(), fi.Mode())
					}
				}
			}
		})
	}
}

// A directory that is gone, or a file where one was, is reported as
// os.Open would: the scan treats both as a directory that vanished.
func TestScanDirOSMissingDirectory(t *testing.T) {
	dir := t.TempDir()
	never := func([]dirent) []bool { t.Fatal("decide called"); return nil }
	if _, _, err := scanDirOS(filepath.Join(dir, "gone"), never); !os.IsNotExist(err) {
		t.Errorf("missing directory: %v", err)
	}
	f := filepath.Join(dir, "file")
	os.WriteFile(f, nil, 0o644)
	if _, _, err := scanDirOS(f, never); !isNotDir(err) {
		t.Errorf("a file: %v", err)
	}
}
