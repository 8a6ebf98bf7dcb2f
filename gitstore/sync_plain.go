package gitstore

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"github.com/git-hegel/git-hegel/engine"
)

// After a plain `git fetch` (with the refspecs of git hegel remote setup),
// the tracking refs refs/hegel-remotes/<remote>/* hold what arrived, not
// yet checked or merged. The next git-hegel command merges it, with the
// same checks and merge as git hegel fetch. To keep that free when nothing
// arrived, every sync records the tracking refs it left merged, in
// <common git dir>/hegel/merged/<remote>, and a command compares the
// tracking refs with that record (a directory listing and a small file)
// before doing anything else.

const mergedRecordDir = "hegel/merged"

// PlainFetchedRemotes lists the remotes whose fetch refspecs bring
// refs/hegel/* into the tracking namespace (git hegel remote setup, or the
// user's own), sorted. It reads only the configuration.
func (r *Repo) PlainFetchedRemotes() []string {
	var out []string
	for name, vals := range r.cfg.subsectionValues("remote", "fetch") {
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
	rem := &Remote{Name: name}
	s := r.newSyncer(rem, SyncOptions{})
	cur, err := s.trackingState()
	if err != nil {
		return nil, err
	}
	if bytes.Equal(cur, r.mergedRecord(name)) {
		return nil, nil
	}
	if err := s.merge(nil); err != nil {
		return s.rep, err
	}
	s.recordMerged()
	return s.rep, s.refusedErr()
}

// trackingState is the record of the remote's tracking refs as they are:
// "<hash> <name>" lines, sorted, for the namespaces this sync carries.
func (s *syncer) trackingState() ([]byte, error) {
	refs, err := s.r.refs.List(s.trackingPrefix())
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	for _, ref := range refs {
		rel := strings.TrimPrefix(string(ref.Name), s.trackingPrefix())
		h, ok, _ := classify(rel)
		if !ok || !s.o.inScope(h) {
			continue
		}
		fmt.Fprintf(&b, "%s %s\n", ref.Hash, rel)
	}
	return b.Bytes(), nil
}

func (r *Repo) mergedRecord(remote string) []byte {
	b, _ := readFile(r.common, mergedRecordDir+"/"+remote)
	return b
}

// recordMerged notes the tracking refs as merged (refused ones included:
// they are not tried again until they change). Best effort: a missing
// record only makes the next command merge again, which changes nothing.
func (s *syncer) recordMerged() {
	if s.o.Checkpoints {
		// The record covers the default namespaces only.
		s2 := *s
		s2.o.Checkpoints = false
		s = &s2
	}
	b, err := s.trackingState()
	if err != nil {
		return
	}
	if bytes.Equal(b, s.r.mergedRecord(s.rem.Name)) {
		return
	}
	if s.r.common.MkdirAll(mergedRecordDir, 0o755) != nil {
		return
	}
	_ = writeFileAtomic(s.r.common, mergedRecordDir+"/"+s.rem.Name, b)
}
