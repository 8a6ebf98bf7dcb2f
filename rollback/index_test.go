package rollback

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
)

func sampleIndex(version uint32) *gitIndex {
	idx := &gitIndex{Version: version}
	names := []string{"a", "a.b", "a/b", "a/c/d", "b", strings.Repeat("long/", 900) + "x", "z"}
	for i, n := range names {
		e := idxEntry{Name: n, Mode: uint32(filemode.Regular)}
		e.Hash[0], e.Hash[19] = byte(i+1), byte(i*7)
		e.Stat = statData{CtimeSec: 1700000000 + uint32(i), CtimeNsec: 5, MtimeSec: 1700000100, MtimeNsec: uint32(i), Dev: 3, Ino: uint32(100 + i), UID: 1000, GID: 100, Size: uint32(10 * i)}
		if i == 2 && version >= 3 {
			e.ExtFlags = extSkipWorktree
		}
		if i == 3 && version >= 3 {
			e.ExtFlags = extIntentToAdd
		}
		if i == 4 {
			e.Mode = uint32(filemode.Symlink)
		}
		idx.Entries = append(idx.Entries, e)
	}
	sortEntries(idx.Entries)
	return idx
}

// TestIndexCodecAgreesWithGoGit round-trips through go-git's encoder and
// decoder, the reference implementation.
func TestIndexCodecAgreesWithGoGit(t *testing.T) {
	for _, v := range []uint32{2, 3, 4} {
		idx := sampleIndex(v)
		var ours bytes.Buffer
		if err := encodeIndex(&ours, idx); err != nil {
			t.Fatal(err)
		}
		var gi index.Index
		if err := index.NewDecoder(bytes.NewReader(ours.Bytes())).Decode(&gi); err != nil {
			t.Fatalf("v%d: go-git cannot read our index: %v", v, err)
		}
		if got := fromGoGit(&gi); !reflect.DeepEqual(got.Entries, idx.Entries) {
			t.Errorf("v%d: go-git read back different entries", v)
		}
		var theirs bytes.Buffer
		if err := index.NewEncoder(&theirs).Encode(toGoGit(idx)); err != nil {
			t.Fatal(err)
		}
		back, err := decodeIndex(theirs.Bytes())
		if err != nil {
			t.Fatalf("v%d: cannot read go-git's index: %v", v, err)
		}
		if !reflect.DeepEqual(back.Entries, idx.Entries) {
			t.Errorf("v%d: we read go-git's index differently", v)
		}
		// go-git writes no extension; ours adds the cache-tree.
		od, err := decodeIndex(ours.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		tb := theirs.Bytes()
		if v != 4 && !bytes.Equal(ours.Bytes()[:od.extOff], tb[:len(tb)-20]) {
			t.Errorf("v%d: encodings differ", v)
		}
	}
}

func TestIndexDecodeRefusesDamage(t *testing.T) {
	var buf bytes.Buffer
	encodeIndex(&buf, sampleIndex(2))
	good := buf.Bytes()
	for name, b := range map[string][]byte{
		"short":    good[:20],
		"checksum": append(append([]byte(nil), good[:len(good)-1]...), good[len(good)-1]^1),
	} {
		if _, err := decodeIndex(b); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
}

// TestIndexWrittenForGit: an index we write is one git reads, and its
// stat data lets git see clean files as clean without hashing.
func TestIndexWrittenForGit(t *testing.T) {
	tr := newDiskRepo(t)
	for i := 0; i < 20; i++ {
		tr.write(filepath.Join("d", strings.Repeat("n", i+1)), strings.Repeat("x", i))
	}
	tr.add(".")
	tr.commit("c1")
	tr.start("minimal")
	tr.write("d/n", "changed\n")
	tr.now = tr.now.Add(time.Minute)
	tr.next()
	tr.write("d/nn", "also\n")
	time.Sleep(20 * time.Millisecond)
	tr.mustRollback(Request{Node: "plan"})
	if s := tr.git("status", "--porcelain"); s != " M d/n\n" {
		t.Errorf("status %q", s)
	}
	// git must not have needed to refresh anything but the restored files.
	tr.git("update-index", "-q", "--really-refresh")
	tr.git("fsck", "--strict", "--no-dangling")
	b, _ := os.ReadFile(filepath.Join(tr.dir, ".git", "index"))
	if _, err := decodeIndex(b); err != nil {
		t.Fatal(err)
	}
	_ = plumbing.ZeroHash
}

func TestVarint(t *testing.T) {
	for _, v := range []uint64{0, 1, 127, 128, 255, 16383, 16384, 1 << 20, 1<<40 + 3} {
		var b [16]byte
		n := putVarint(b[:], v)
		got, w := decodeVarint(b[:n])
		if got != v || w != n {
			t.Errorf("%d: got %d (%d bytes of %d)", v, got, w, n)
		}
	}
}
