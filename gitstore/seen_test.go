package gitstore

import (
	"fmt"
	"strings"
	"testing"

	"github.com/go-git/go-billy/v5/util"

	"github.com/git-hegel/git-hegel/engine"
)

func TestSeenRecord(t *testing.T) {
	for name, newRepo := range storeBackends {
		t.Run(name, func(t *testing.T) {
			r := newRepo(t)
			s := r.Tasks()
			if got := s.SeenArtifacts("t"); len(got) != 0 {
				t.Fatalf("no record: %v", got)
			}
			a, b := engine.BlobID([]byte("a")), engine.BlobID([]byte("b"))
			if err := s.RecordSeen("t", []string{a}); err != nil {
				t.Fatal(err)
			}
			if err := s.RecordSeen("u", []string{b, a}); err != nil {
				t.Fatal(err)
			}
			if got := s.SeenArtifacts("t"); len(got) != 1 || !got[a] {
				t.Errorf("t: %v", got)
			}
			if got := s.SeenArtifacts("u"); len(got) != 2 || !got[a] || !got[b] {
				t.Errorf("u: %v", got)
			}
			want := seenHeader + "\n" + a + " t\n" + b + " u\n" + a + " u\n"
			if got, _ := util.ReadFile(r.common, seenFile); string(got) != want {
				t.Errorf("file:\n%s\nwant\n%s", got, want)
			}
			// Nothing new: nothing written (the file is left alone).
			util.WriteFile(r.common, seenFile, []byte(want+"garbage line\n"), 0o666)
			if err := s.RecordSeen("t", []string{a}); err != nil {
				t.Fatal(err)
			}
			if got, _ := util.ReadFile(r.common, seenFile); !strings.HasSuffix(string(got), "garbage line\n") {
				t.Errorf("rewritten for nothing new:\n%s", got)
			}
			// What would not parse, or could write a line of its own, is
			// refused before anything is written.
			for _, bad := range [][2]string{{"t", a + "\n" + b + " x"}, {"t", "../../x"}, {"t", strings.ToUpper(a)}, {"../t", a}, {"t x", a}} {
				if err := s.RecordSeen(bad[0], []string{bad[1]}); err == nil {
					t.Errorf("recorded %q for %q", bad[1], bad[0])
				}
			}
			if got := s.SeenArtifacts("x"); len(got) != 0 {
				t.Errorf("x: %v", got)
			}
		})
	}
}

// A damaged record (no header, another version, too big, binary) reads
// as empty and is replaced by the next write; lines that do not parse
// are skipped.
func TestSeenRecordDamaged(t *testing.T) {
	r := newDiskRepo(t)
	s := r.Tasks()
	a := engine.BlobID([]byte("a"))
	for _, damaged := range []string{
		a + " t\n",
		"hegel-seen 2\n" + a + " t\n",
		"\x00\xff\xfe" + seenHeader + "\n",
		seenHeader + "\n" + a + " t\n" + strings.Repeat("x", maxSeenBytes),
	} {
		util.WriteFile(r.common, seenFile, []byte(damaged), 0o666)
		if got := s.SeenArtifacts("t"); len(got) != 0 {
			t.Errorf("%.40q: read %v", damaged, got)
		}
	}
	util.WriteFile(r.common, seenFile, []byte(seenHeader+"\nnot a line\n"+a+" t\n"+a+"\n"+a+" bad/name\n"), 0o666)
	if got := s.SeenArtifacts("t"); len(got) != 1 || !got[a] {
		t.Errorf("with bad lines: %v", got)
	}
	util.WriteFile(r.common, seenFile, []byte("\x00garbage"), 0o666)
	if err := s.RecordSeen("t", []string{a}); err != nil {
		t.Fatal(err)
	}
	if got, _ := util.ReadFile(r.common, seenFile); string(got) != seenHeader+"\n"+a+" t\n" {
		t.Errorf("after a write over a damaged record: %q", got)
	}
}

// The record keeps the newest maxSeenEntries lines.
func TestSeenRecordBounded(t *testing.T) {
	r := newMemRepo(t)
	s := r.Tasks()
	var all []string
	for i := 0; i < maxSeenEntries+10; i++ {
		all = append(all, engine.BlobID([]byte(fmt.Sprint(i))))
	}
	first := all[:10]
	if err := s.RecordSeen("t", all[:maxSeenEntries]); err != nil {
		t.Fatal(err)
	}
	for _, id := range all[maxSeenEntries:] {
		if err := s.RecordSeen("t", []string{id}); err != nil {
			t.Fatal(err)
		}
	}
	got := s.SeenArtifacts("t")
	if len(got) != maxSeenEntries {
		t.Fatalf("%d entries kept", len(got))
	}
	for _, id := range first {
		if got[id] {
			t.Errorf("oldest entry %s kept", id)
		}
	}
	if !got[engine.BlobID([]byte(fmt.Sprint(maxSeenEntries+9)))] {
		t.Error("newest entry dropped")
	}
}

// BenchmarkSeenArtifacts reads a full record (maxSeenEntries lines, of
// 50 tasks) from disk, as approve and every show that finds nothing new
// do.
func BenchmarkSeenArtifacts(b *testing.B) {
	r, _ := stashDiskRepo(b)
	s := r.Tasks()
	for i := 0; i < maxSeenEntries; i++ {
		if err := s.RecordSeen(fmt.Sprintf("some-task-%d", i%50), []string{engine.BlobID([]byte(fmt.Sprint(i)))}); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if len(s.SeenArtifacts("some-task-7")) != maxSeenEntries/50 {
			b.Fatal("short read")
		}
	}
}
