package gitstore

import (
	"bytes"
	"fmt"
	"io"
	"strings"

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
	var buf bytes.Buffer
	buf.WriteString(stashesMadeHeader + "\n")
	for _, b := range list {
		buf.WriteString(b + "\n")
	}
	if err := s.r.writeCommon(stashesMadeFile, buf.Bytes(), false); err != nil {
		return err
	}
	s.r.stashesMadeMu.Lock()
	if s.r.stashesMade != nil {
		s.r.stashesMade[rev] = true
	}
	s.r.stashesMadeMu.Unlock()
	return nil
}
