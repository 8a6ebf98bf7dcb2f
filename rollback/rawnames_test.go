package rollback

import (
	"encoding/json"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// A checkpoint whose names are not valid UTF-8 reads back with the same
// names and the same digest; a "raw" field that does not match what the
// field shows is refused.
func TestRawNamesRoundTrip(t *testing.T) {
	cp := &Checkpoint{ID: "0123abcd", Kind: KindManual, Branch: "refs/heads/br\xe9",
		FilesChanged: []string{"ok.txt", "caf\xe9"}, IntentToAdd: []string{"\xffx"},
		AssumeUnchanged: []string{"a\xfe"}, Skipped: []SkippedFile{{Path: "big\xff", Size: 9, Reason: "too large"}},
		Moved: []MovedBranch{{Ref: "refs/heads/m\xe9"}}, Meta: Meta{"node": json.RawMessage(`"spec"`)}}
	want := cp.digest()
	b, err := encodeMeta(cp)
	if err != nil {
		t.Fatal(err)
	}
	got := &Checkpoint{}
	if got.Meta, err = unmarshalFlat(b, got, ownKeys); err != nil {
		t.Fatal(err)
	}
	if err := got.restoreRaw(got.Meta); err != nil {
		t.Fatal(err)
	}
	if got.Branch != cp.Branch || got.FilesChanged[1] != "caf\xe9" || got.IntentToAdd[0] != "\xffx" ||
		got.AssumeUnchanged[0] != "a\xfe" || got.Skipped[0].Path != "big\xff" || got.Moved[0].Ref != "refs/heads/m\xe9" {
		t.Fatalf("names changed: %+v", got)
	}
	if _, left := got.Meta[rawKey]; left || got.digest() != want {
		t.Fatalf("digest %s, want %s (meta %s)", got.digest(), want, got.Meta.canonical())
	}

	for _, raw := range []string{
		`{"branch": "cmVmcy9oZWFkcy9vdGhlcg=="}`, // refs/heads/other: valid UTF-8, not what the field shows
		`{"files_changed.0": "/w=="}`,            // the field is ok.txt
		`{"files_changed.9": "/w=="}`,            // no such element
		`{"nope": "/w=="}`,
		`{"branch": "not base64!"}`,
		`[1]`,
	} {
		c := &Checkpoint{Branch: jsonText(cp.Branch), FilesChanged: []string{"ok.txt"}}
		if err := c.restoreRaw(Meta{rawKey: json.RawMessage(raw)}); err == nil {
			t.Errorf("raw %s accepted: branch %q", raw, c.Branch)
		}
	}
}

// SetNames and GetNames keep names that are not valid UTF-8 exactly, and
// a "_raw" entry that does not match the listed name is not used.
func TestMetaNames(t *testing.T) {
	m := Meta{}
	m.SetNames("paths", []string{"a.txt", "caf\xe9", "\xff\xfe"})
	var got []string
	if !m.GetNames("paths", &got) || len(got) != 3 || got[0] != "a.txt" || got[1] != "caf\xe9" || got[2] != "\xff\xfe" {
		t.Fatalf("GetNames = %q", got)
	}
	m.SetNames("paths", []string{"a.txt"})
	if _, ok := m["paths_raw"]; ok {
		t.Fatal("a stale _raw field was kept")
	}
	m = Meta{"paths": json.RawMessage(`["a.txt","x\ufffd"]`), "paths_raw": json.RawMessage(`{"0":"/w==","1":"eP8=","2":"/w=="}`)}
	if !m.GetNames("paths", &got) || got[0] != "a.txt" || got[1] != "x\xff" {
		t.Fatalf("GetNames = %q", got)
	}
}

// The journals of a rollback and of a stash keep their branch names and
// paths exactly, so an interrupted one is finished on the same names.
func TestJournalsKeepRawNames(t *testing.T) {
	tr := newDiskRepo(t)
	j := &Journal{Version: journalVersion, Step: "started", HeadRef: "refs/heads/br\xe9", HeadToRef: "refs/heads/to\xe9",
		Moves: []journalMove{{Ref: "refs/heads/m\xff", From: "a", To: "b"}}, Only: []string{"ok", "caf\xe9"},
		Record: Meta{"node": json.RawMessage(`"spec"`)}}
	if err := tr.m.w.saveJournal(j); err != nil {
		t.Fatal(err)
	}
	got, err := tr.m.w.loadJournal()
	if err != nil {
		t.Fatal(err)
	}
	if got.HeadRef != j.HeadRef || got.HeadToRef != j.HeadToRef || got.Moves[0].Ref != j.Moves[0].Ref || got.Only[1] != "caf\xe9" || got.Only[0] != "ok" {
		t.Errorf("rollback journal read back as %+v", got)
	}
	if _, left := got.Record[rawKey]; left || got.Record.String("node") != "spec" {
		t.Errorf("record %v", got.Record)
	}

	pj := &ParkJournal{Op: ParkClean, HeadRef: "refs/heads/br\xe9",
		From: parkSide{AssumeUnchanged: []string{"a\xfe"}, IntentToAdd: []string{"ok", "\xffx"}},
		To:   parkSide{AssumeUnchanged: []string{"a\xfe"}}, Record: Meta{}}
	if err := tr.m.saveParkJournal(pj); err != nil {
		t.Fatal(err)
	}
	pgot, err := tr.m.loadParkJournal()
	if err != nil {
		t.Fatal(err)
	}
	if pgot.HeadRef != pj.HeadRef || pgot.From.AssumeUnchanged[0] != "a\xfe" || pgot.From.IntentToAdd[1] != "\xffx" || pgot.To.AssumeUnchanged[0] != "a\xfe" {
		t.Errorf("stash journal read back as %+v", pgot)
	}
}

// A planted checkpoint whose "raw" field does not match the name it
// shows (an attempt to make a branch named in UTF-8 read back as another)
// is damaged: it is left out of the list, and the others are still read.
func TestForgedRawFieldIsDamaged(t *testing.T) {
	tr := newDiskRepo(t)
	tr.write("f", "1\n")
	tr.add("f")
	tr.commit("c1")
	tr.start("minimal")
	before := len(tr.list())
	tr.plant("abcdef01", plumbing.ZeroHash, plumbing.ZeroHash, "1\n", func(cp *Checkpoint) {
		cp.Meta.Set(rawKey, map[string]string{"branch": "cmVmcy9oZWFkcy9ldmls"}) // refs/heads/evil
	})
	list := tr.list()
	if len(list) != before {
		t.Fatalf("%d checkpoints listed, want the %d genuine ones", len(list), before)
	}
	for _, cp := range list {
		if cp.ID == "abcdef01" || cp.Branch == "refs/heads/evil" {
			t.Fatalf("the forged checkpoint was read: %+v", cp)
		}
	}
}
