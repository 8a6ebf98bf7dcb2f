package gitstore

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/git-hegel/git-hegel/engine"
)

// After a plain `git fetch` (with the refspecs of git hegel remote setup),
// the tracking refs refs/hegel-remotes/<remote>/* hold what arrived, not
// yet checked or merged. The next git-hegel command merges it, with the
// same checks and merge as git hegel fetch.
//
// That check runs before every command, so it must cost next to nothing
// when nothing arrived. Every sync records, in <common git dir>/hegel/
// merged/<remote>, the tracking refs it left merged and, taken before
// they were read, the modification times of their directories and of
// packed-refs. git writes a ref by renaming a file into its directory, so
// a fetch that changed any tracking ref changed one of those times: a
// command stats a few directories and reads a small file, and compares
// the refs themselves only when a time moved, or when it is not older
// than the record itself: with timestamps as coarse as the filesystem's
// (a second, two on FAT), a change in that same tick would not show, so
// such a "racy" time proves nothing, as for git's index.

const mergedRecordDir = "hegel/merged"

// PlainFetchedRemotes lists the remotes whose fetch refspecs bring
// refs/hegel/* into the tracking namespace (git hegel remote setup, or the
// user's own), sorted. It reads only the configuration.
func (r *Repo) PlainFetchedRemotes() []string {
	var out []string
	for name, vals := range r.cfg.SubsectionValues("remote", "fetch") {
		for _, v := range vals {
			if strings.Contains(v, ":"+trackingRoot+name+"/") {
				out = append(out, name)
				break
			}
		}
	}
	sort.Strings(out)
	return out
}

// MergePlainFetched merges the tracking refs of remote when they differ
// from what was last merged, and returns the report (nil when there was
// nothing to do). Checkpoints are left to git hegel fetch --checkpoints.
func (r *Repo) MergePlainFetched(name string) (*engine.SyncReport, error) {
	rec := r.readMergedRecord(name)
	if r.unchanged(name, rec) {
		return nil, nil
	}
	s := r.newSyncer(&Remote{Name: name}, SyncOptions{})
	stamp := r.trackingStamp(name)
	cur, err := s.trackingState()
	if err != nil {
		return nil, err
	}
	if rec != nil && bytes.Equal(cur, rec.refs) {
		// Nothing new after all (a racy time, or a ref rewritten with its
		// old value): record the times, so the next command stats only.
		r.writeMergedRecord(name, stamp, cur)
		return nil, nil
	}
	if err := s.merge(nil); err != nil {
		return s.rep, err
	}
	s.recordMerged()
	return s.rep, s.refusedErr()
}

// mergedRecord is a parsed record: the stamp lines and the refs.
type mergedRecord struct {
	stamp   []byte
	refs    []byte
	written time.Time
}

func (r *Repo) readMergedRecord(remote string) *mergedRecord {
	p := mergedRecordDir + "/" + remote
	var b []byte
	var fi os.FileInfo
	if r.CommonDir != "" {
		// os directly: this runs before every command, and the bound
		// filesystem checks each path component for links first.
		f, err := os.Open(filepath.Join(r.CommonDir, filepath.FromSlash(p)))
		if err != nil {
			return nil
		}
		defer f.Close()
		if fi, err = f.Stat(); err != nil {
			return nil
		}
		if b, err = io.ReadAll(f); err != nil {
			return nil
		}
	} else {
		var err error
		if b, err = readFile(r.common, p); err != nil {
			return nil
		}
		if fi, err = r.common.Stat(p); err != nil {
			return nil
		}
	}
	stamp, refs, ok := bytes.Cut(b, []byte("--\n"))
	if !ok {
		return nil
	}
	return &mergedRecord{stamp: stamp, refs: refs, written: fi.ModTime()}
}

// unchanged reports, from file times alone, that nothing touched the
// remote's tracking refs since rec was written.
func (r *Repo) unchanged(remote string, rec *mergedRecord) bool {
	if rec == nil || r.CommonDir == "" {
		return false
	}
	for _, line := range strings.Split(strings.TrimSpace(string(rec.stamp)), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			return false
		}
		mtime, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			return false
		}
		fi, err := os.Stat(filepath.Join(r.CommonDir, filepath.FromSlash(f[0])))
		var now, size int64
		if err == nil {
			now, size = fi.ModTime().UnixNano(), fi.Size()
		} else if !os.IsNotExist(err) {
			return false
		}
		if f[0] != "packed-refs" {
			size = 0 // a directory's size says nothing portable
		}
		if now != mtime || strconv.FormatInt(size, 10) != f[2] {
			return false
		}
		if now != 0 && !time.Unix(0, now).Before(rec.written) {
			return false // racy
		}
	}
	return true
}

// trackingStamp is the times of packed-refs and of every directory of the
// remote's tracking refs, as "<path> <mtime ns> <size>" lines.
func (r *Repo) trackingStamp(remote string) []byte {
	if r.CommonDir == "" {
		return nil
	}
	var b bytes.Buffer
	stat := func(rel string, dir bool) {
		fi, err := os.Stat(filepath.Join(r.CommonDir, filepath.FromSlash(rel)))
		var mtime, size int64
		if err == nil {
			mtime = fi.ModTime().UnixNano()
			if !dir {
				size = fi.Size()
			}
		}
		fmt.Fprintf(&b, "%s %d %d\n", rel, mtime, size)
	}
	stat("packed-refs", false)
	var walk func(rel string)
	walk = func(rel string) {
		stat(rel, true)
		ents, err := os.ReadDir(filepath.Join(r.CommonDir, filepath.FromSlash(rel)))
		if err != nil {
			return
		}
		for _, e := range ents {
			if e.IsDir() {
				walk(rel + "/" + e.Name())
			}
		}
	}
	walk(strings.TrimSuffix(trackingRoot+remote, "/"))
	return b.Bytes()
}

// trackingState is the record of the remote's tracking refs as they are:
// "<hash> <name>" lines, sorted, for the namespaces this sync carries.
func (s *syncer) trackingState() ([]byte, error) {
	refs, err := s.r.readRefs(s.trackingPrefix())
	if err != nil {
		return nil, err
	}
	// Written by hand, not with fmt: with 10,000 tasks it is 10,000 lines
	// every sync.
	b := make([]byte, 0, len(refs)*64)
	for _, ref := range refs {
		rel := strings.TrimPrefix(string(ref.Name), s.trackingPrefix())
		h, ok, _ := classify(rel)
		if !ok || !s.o.inScope(h) {
			continue
		}
		b = hex.AppendEncode(b, ref.Hash[:])
		b = append(b, ' ')
		b = append(b, rel...)
		b = append(b, '\n')
	}
	return b, nil
}

// recordMerged notes the tracking refs as merged (refused ones included:
// they are not tried again until they change). The times are taken before
// the refs are read, so a change in between shows next time.
func (s *syncer) recordMerged() {
	if s.o.Checkpoints {
		// The record covers the default namespaces only.
		s2 := *s
		s2.o.Checkpoints = false
		s = &s2
	}
	stamp := s.r.trackingStamp(s.rem.Name)
	b, err := s.trackingState()
	if err != nil {
		return
	}
	s.r.writeMergedRecord(s.rem.Name, stamp, b)
}

// writeMergedRecord writes the record. It is a cache: a lost or torn one
// only makes the next command compare the refs again, so there is no
// fsync.
func (r *Repo) writeMergedRecord(remote string, stamp, refs []byte) {
	_ = r.writeCommon(mergedRecordDir+"/"+remote, append(append(append([]byte{}, stamp...), "--\n"...), refs...), false)
}
