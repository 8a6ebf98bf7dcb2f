package gitstore

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/git-hegel/git-hegel/engine"
)

// The stashes this clone pushed: stashes sync as a union of every
// clone's entries, and a task restored from another clone's entry holds
// that clone's words (its description, last failure, step results),
// which must reach an agent as a fetch's do (engine.StashOrigin). The
// record is one local file in the common git dir, part of nothing that
// syncs, holding the blob id of each entry pushed here (the entry's
// content, so an entry of the same id written elsewhere does not match):
//
//	<common git dir>/hegel/stashes-made
//	hegel-stashes-made 1
//	<blob id>
//
// newest last, bounded to maxStashesMade lines. A damaged or missing
// record reads as empty: a stash of this clone's then counts as
// another's, and its texts wait for 'git hegel trust', the safe side.
const stashesMadeFile = "hegel/stashes-made"

const (
	stashesMadeHeader = "hegel-stashes-made 1"
	maxStashesMade    = 1000
	maxStashesMadeLen = 64 << 10
)

var _ engine.StashOrigin = Stashes{}

func (r *Repo) readStashesMade() []string {
	f, err := r.common.Open(stashesMadeFile)
	if errors.Is(err, fs.ErrNotExist) {
		// Written once, so the reflog is read once (best effort: the
		// next read finds the same).
		list := r.stashesPushedBefore()
		if len(list) > 0 {
			_ = r.writeCommon(stashesMadeFile, stashesMadeText(list), false)
		}
		return list
	}
	if err != nil {
		return nil
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxStashesMadeLen+1))
	if err != nil || len(b) > maxStashesMadeLen {
		return nil
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) == 0 || lines[0] != stashesMadeHeader {
		return nil
	}
	var out []string
	for _, l := range lines[1:] {
		if len(l) == 40 && lowerHex(l) {
			out = append(out, l)
		}
	}
	return out
}

// MadeHere implements engine.StashOrigin. The record is read once per
// process: stash list asks for every entry.
func (s Stashes) MadeHere(rev string) bool {
	s.r.stashesMadeMu.Lock()
	defer s.r.stashesMadeMu.Unlock()
	if s.r.stashesMade == nil {
		s.r.stashesMade = map[string]bool{}
		for _, b := range s.r.readStashesMade() {
			s.r.stashesMade[b] = true
		}
	}
	return rev != "" && s.r.stashesMade[rev]
}

// recordMade adds rev, the blob of an entry pushed here, to the record.
func (s Stashes) recordMade(rev string) error {
	if len(rev) != 40 || !lowerHex(rev) {
		return fmt.Errorf("not a blob id: %q", rev)
	}
	list := append(s.r.readStashesMade(), rev)
	if n := len(list) - maxStashesMade; n > 0 {
		list = list[n:]
	}
	if err := s.r.writeCommon(stashesMadeFile, stashesMadeText(list), false); err != nil {
		return err
	}
	s.r.stashesMadeMu.Lock()
	if s.r.stashesMade != nil {
		s.r.stashesMade[rev] = true
	}
	s.r.stashesMadeMu.Unlock()
	return nil
}

func stashesMadeText(list []string) []byte {
	var buf bytes.Buffer
	buf.WriteString(stashesMadeHeader + "\n")
	for _, b := range list {
		buf.WriteString(b + "\n")
	}
	return buf.Bytes()
}

// stashesPushedBefore is the record of a clone that has none yet: one a
// git-hegel without the record pushed its stashes in, and upgraded. Its
// own pushes are in its reflog of the stash list, which no fetch writes:
// a line "stash push: ..." whose commit sits straight on the line's old
// value and was committed when the line was written (a command here
// writes both at once; a fast-forward that an older git-hegel logged
// under the fetched commit's subject was written when the fetch ran).
// The entries such a commit added were pushed here, except by a sync
// of a build before 2026-11-28, which saved the remote's version of a
// task that both sides had changed as a stash entry ("stash push: ...
// (task changed on both sides)"). A record that exists, even empty or
// damaged, is never filled in this way.
func (r *Repo) stashesPushedBefore() []string {
	var out []string
	seen := map[plumbing.Hash]bool{}
	s := Stashes{r}
	for _, e := range r.readReflog(StashRef) {
		if !strings.HasPrefix(e.Msg, stashSubject(engine.StashOpPush, "")) || e.New.IsZero() ||
			strings.HasSuffix(e.Msg, "(task changed on both sides)") {
			continue
		}
		c, err := object.GetCommit(r.storage, e.New)
		if err != nil || len(c.ParentHashes) == 0 && !e.Old.IsZero() ||
			len(c.ParentHashes) > 0 && c.ParentHashes[0] != e.Old {
			continue
		}
		if d := e.When.Unix() - c.Committer.When.Unix(); d < 0 || d > 1 {
			continue
		}
		before := map[plumbing.Hash]bool{}
		if !e.Old.IsZero() {
			t, err := s.loadAt(e.Old)
			if err != nil {
				continue
			}
			for _, ent := range t.entries {
				before[ent.Hash] = true
			}
		}
		t, err := s.loadAt(e.New)
		if err != nil {
			continue
		}
		for _, ent := range t.entries {
			if !before[ent.Hash] && !seen[ent.Hash] {
				seen[ent.Hash] = true
				out = append(out, ent.Hash.String())
			}
		}
	}
	if n := len(out) - maxStashesMade; n > 0 {
		out = out[n:]
	}
	return out
}
