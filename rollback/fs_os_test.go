package rollback

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// readFileOS and writeFileOS (system calls of their own on Linux) behave
// as os.ReadFile and an exclusive os.OpenFile: contents round-trip, the
// mode follows exec, nothing is written over a file or through a link,
// and a missing file or directory is fs.ErrNotExist.
func TestReadWriteFileOS(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []int{0, 1, 4096, 1 << 20} {
		data := bytes.Repeat([]byte("0123456789abcdef"), n/16+1)[:n]
		p := filepath.Join(dir, "f")
		os.Remove(p)
		st, err := writeFileOS(p, data, 0o666)
		if err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		fi, _ := os.Lstat(p)
		if st.kind != kindFile || st.size != int64(n) || st.exec || !fi.Mode().IsRegular() || fi.Size() != int64(n) {
			t.Errorf("%d bytes: stat %+v, lstat %v %d", n, st, fi.Mode(), fi.Size())
		}
		if runtime.GOOS == "linux" && st.stat != func() statData { s, _ := sysStat(fi); return s }() {
			t.Errorf("%d bytes: stat data %+v differs from lstat's", n, st.stat)
		}
		got, err := readFileOS(p)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%d bytes: read back %d bytes, %v", n, len(got), err)
		}
	}
	exe := filepath.Join(dir, "exe")
	if st, err := writeFileOS(exe, []byte("#!/bin/sh\n"), 0o777); err != nil || (runtime.GOOS != "windows" && !st.exec) {
		t.Errorf("executable: %+v %v", st, err)
	}
	if _, err := writeFileOS(exe, []byte("again"), 0o666); !errors.Is(err, fs.ErrExist) {
		t.Errorf("over an existing file: %v", err)
	}
	if runtime.GOOS != "windows" {
		target := filepath.Join(dir, "target")
		os.WriteFile(target, []byte("keep"), 0o644)
		link := filepath.Join(dir, "link")
		os.Symlink(target, link)
		if _, err := writeFileOS(link, []byte("through"), 0o666); !errors.Is(err, fs.ErrExist) {
			t.Errorf("through a link: %v", err)
		}
		if b, _ := os.ReadFile(target); string(b) != "keep" {
			t.Errorf("the link's target was written: %q", b)
		}
	}
	if _, err := writeFileOS(filepath.Join(dir, "none", "f"), nil, 0o666); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("in a missing directory: %v", err)
	}
	if _, err := readFileOS(filepath.Join(dir, "none")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
	if _, err := readFileOS(filepath.Join(exe, "below")); !isNotDir(err) && !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("below a file: %v", err)
	}
}
