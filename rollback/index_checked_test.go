package rollback

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestIndexChecked: a read of an index checks its checksum and, once the
// file has settled, records it; a read of the same version of the file
// skips the hash; a version written since is checked again, and so is one
// whose record is for another checksum or index file.
func TestIndexChecked(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no stat data: every read is checked")
	}
	defer func(d time.Duration) { indexCheckedRacy = d }(indexCheckedRacy)
	tr := newDiskRepo(t)
	tr.write("a/b", "b\n")
	tr.write("c", "c\n")
	tr.add(".")
	tr.commit("c1")
	record := filepath.Join(tr.r.GitDir, indexCheckedFile)
	index := tr.r.IndexFile
	read := func() error { _, err := tr.m.w.readIndex(); return err }

	// Just written, the file is racy: checked, not recorded.
	indexCheckedRacy = time.Hour
	if err := read(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(record); err == nil {
		t.Fatal("a racy version was recorded")
	}
	// Settled: recorded.
	indexCheckedRacy = 0
	if err := read(); err != nil {
		t.Fatal(err)
	}
	rec, err := os.ReadFile(record)
	if err != nil {
		t.Fatalf("no record after a checked read: %v", err)
	}
	if !strings.HasPrefix(string(rec), "hegel index checked 1 ") || !strings.HasSuffix(string(rec), "\n") ||
		!strings.Contains(string(rec), index) {
		t.Fatalf("record %q", rec)
	}

	// Damage the middle of the file, at the same size and inode, with
	// another mtime (and so ctime): the read checks it and refuses it.
	data, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	bad := append([]byte(nil), data...)
	bad[len(bad)/2] ^= 0x40
	if err := os.WriteFile(index, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-time.Minute)
	os.Chtimes(index, past, past)
	if err := read(); err == nil || !errors.Is(err, errIndexFormat) || !strings.Contains(err.Error(), "checksum") {
		t.Fatalf("damaged index read: %v", err)
	}

	// A record that names this very version of the damaged file (as if it
	// had been checked whole) makes the read skip the hash: the damage is
	// not seen. That is the one thing the record trusts.
	fi, err := os.Stat(index)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	mark := indexChecked(tr.r.GitDir, index, fi, bad, tr.r.Shared(), now)
	if mark == nil {
		t.Fatal("the record of another version matched")
	}
	mark()
	if err := read(); err != nil && strings.Contains(err.Error(), "checksum") {
		t.Fatalf("read with a matching record still hashed: %v", err)
	}
	// Another checksum or another index file: checked again.
	other := append(append([]byte(nil), bad[:len(bad)-1]...), bad[len(bad)-1]^1)
	if indexChecked(tr.r.GitDir, index, fi, other, tr.r.Shared(), now) == nil {
		t.Fatal("record matched a file of another checksum")
	}
	if indexChecked(tr.r.GitDir, index+"2", fi, bad, tr.r.Shared(), now) == nil {
		t.Fatal("record matched another index file")
	}
	// git writes the index anew: a new version, checked and recorded.
	if err := os.WriteFile(index, data, 0o644); err != nil {
		t.Fatal(err)
	}
	tr.git("update-index", "--refresh")
	if err := read(); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(record); string(got) == string(rec) {
		t.Fatal("record not rewritten for the new version")
	}
}
