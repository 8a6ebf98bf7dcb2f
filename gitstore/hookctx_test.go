package gitstore

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/git-hegel/git-hegel/engine"
)

// An untrusted task's hook cache stays good until the trust record
// changes, so the hook does not open the repository on every call for
// it; any change to the record (trust granted, a line removed by hand)
// makes the next hook build it again.
func TestHookCacheUntrustedCurrentUntilTrustChanges(t *testing.T) {
	r, _ := stashDiskRepo(t)
	common := r.CommonDir
	if (&HookCache{Task: "t"}).Current(common) != true {
		t.Fatal("a built-in's cache (no stamp) is current whatever the record says")
	}
	trusted := &HookCache{Task: "t", TrustStamp: TrustStamp(common)}
	c := &HookCache{Task: "t", Untrusted: true, TrustStamp: TrustStamp(common)}
	if c.TrustStamp != "none" || !c.Current(common) {
		t.Fatalf("no record yet: stamp %q, current %v", c.TrustStamp, c.Current(common))
	}
	if (&HookCache{Task: "t", Untrusted: true}).Current(common) {
		t.Error("an untrusted cache without a stamp (an older build's) is current")
	}
	rec := engine.TrustRecord{ID: engine.DefinitionID([]byte("x\n")), Task: "t", How: engine.TrustReviewed, At: fixedNow}
	if err := r.Trust().TrustDefinition(rec); err != nil {
		t.Fatal(err)
	}
	if c.Current(common) {
		t.Fatal("the record was created, the untrusted cache still current")
	}
	if trusted.Current(common) {
		t.Fatal("the record changed, a trusted cache (not a built-in's) still current")
	}
	c.TrustStamp = TrustStamp(common)
	if !c.Current(common) {
		t.Fatal("unchanged record, cache not current")
	}
	rec.ID = engine.DefinitionID([]byte("y\n"))
	if err := r.Trust().TrustDefinition(rec); err != nil {
		t.Fatal(err)
	}
	if c.Current(common) {
		t.Fatal("a trust appended, the untrusted cache still current")
	}
	c.TrustStamp = TrustStamp(common)
	if err := os.Remove(filepath.Join(common, filepath.FromSlash(TrustFile))); err != nil {
		t.Fatal(err)
	}
	if c.Current(common) {
		t.Fatal("the record deleted, the untrusted cache still current")
	}
}

// A record saved whole over the old one (an editor's save, sed -i) with
// the same size within one tick of the file clock is a change too: a
// line trusting another definition in place of one of the same length.
func TestTrustStampRecordReplacedSameSize(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no inode numbers")
	}
	r, _ := stashDiskRepo(t)
	common := r.CommonDir
	rec := engine.TrustRecord{ID: engine.DefinitionID([]byte("x\n")), Task: "t", How: engine.TrustReviewed, At: fixedNow}
	if err := r.Trust().TrustDefinition(rec); err != nil {
		t.Fatal(err)
	}
	c := &HookCache{Task: "t", Untrusted: true, TrustStamp: TrustStamp(common)}
	path := filepath.Join(common, filepath.FromSlash(TrustFile))
	old, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	other := engine.DefinitionID([]byte("y\n"))
	b = []byte(strings.Replace(string(b), rec.ID, other, 1))
	tmp := path + ".new"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(tmp, old.ModTime(), old.ModTime()); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	if now, err := os.Stat(path); err != nil || now.Size() != old.Size() || !now.ModTime().Equal(old.ModTime()) {
		t.Fatalf("the replacement is not of the same size and time: %v", err)
	}
	if c.Current(common) {
		t.Fatal("the record was replaced by another of the same size and time, the untrusted cache still current")
	}
}

// The record moved elsewhere and replaced by a link to it is a change:
// the link may lead where the record is no longer read (outside the git
// dir every command then finds no trust), though the file it leads to is
// the one stamped.
func TestTrustStampRecordReplacedByLink(t *testing.T) {
	r, _ := stashDiskRepo(t)
	common := r.CommonDir
	rec := engine.TrustRecord{ID: engine.DefinitionID([]byte("x\n")), Task: "t", How: engine.TrustReviewed, At: fixedNow}
	if err := r.Trust().TrustDefinition(rec); err != nil {
		t.Fatal(err)
	}
	c := &HookCache{Task: "t", TrustStamp: TrustStamp(common)}
	path := filepath.Join(common, filepath.FromSlash(TrustFile))
	moved := filepath.Join(t.TempDir(), "trusted")
	if err := os.Rename(path, moved); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(moved, path); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	if c.Current(common) {
		t.Fatal("the record was replaced by a link, the trusted cache still current")
	}
	c.TrustStamp = TrustStamp(common)
	if !c.Current(common) {
		t.Fatal("unchanged link, cache not current")
	}
	// Trust added through the link changes the stamp too.
	rec.ID = engine.DefinitionID([]byte("y\n"))
	f, err := os.OpenFile(moved, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(rec.ID + " 2026-11-29T00:00:00Z trust t\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if c.Current(common) {
		t.Fatal("the linked record grew, the cache still current")
	}
}
