package rollback

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-hegel/git-hegel/gitstore"
)

// The chain summary lets an append to a long chain that is appended to
// often (the agent actions: before and after every tool call, up to 400
// kept) cost the same whatever the chain's length. An append needs of the
// older checkpoints only their ids (the new id must clash with none) and
// how many the bounds count (whether the append evicts); it reads the
// newest checkpoint anyway, as the new one's previous. The summary keeps
// those ids and counts for the chain at one tip, beside the chain cache:
//
//	hegel chain summary 1\n
//	<ref>\n
//	<tip>\n
//	<automatic> <manual>\n
//	<id>\n per checkpoint, oldest first
//
// A commit names its parents by content, so the chain below a tip never
// changes: a summary written for the ref's tip is the chain's, whoever
// wrote it and when. It is used only when it names the ref's tip at the
// time of the append, its newest id is the newest checkpoint's as read
// and checked from the object database, and the append evicts nothing;
// the ref then moves by compare-and-swap from that tip, as any append's.
// Otherwise (no summary, another process moved the ref, a restore cut the
// chain, eviction due, a chain under any other kind of change) the chain
// is read whole and the summary written again for the new tip.
//
// Like the chain cache, the file is local and disposable, and it is read
// as hostile data: one that does not parse is not used. It never names a
// file, an object to restore or a checkpoint's content: what it can get
// wrong is only an id clash among the older checkpoints and, with
// understated counts, an eviction put off until the counts (one more per
// append) reach the bound.

const (
	chainSummaryHeader = "hegel chain summary 1\n"
	maxChainSummary    = 4 << 20
	// maxSummaryID bounds an id the summary keeps; a chain with a longer
	// one (never written by this code) gets no summary.
	maxSummaryID = 64
)

// chainSummary is what an append needs of the chain at tip.
type chainSummary struct {
	tip          plumbing.Hash
	auto, manual int      // as boundCounts counts them
	ids          []string // oldest first
}

func (c *Chain) summaryPath() string {
	return filepath.Join(c.m.r.CommonDir, filepath.FromSlash(gitstore.ChainSummaryFile(c.ref)))
}

// summarized reports whether the chain keeps a summary: those with a
// chain cache, on disk.
func (c *Chain) summarized() bool { return c.m.ChainCache && !c.m.w.memory }

// loadSummary reads the chain's summary (nil: none, or unusable).
func (c *Chain) loadSummary() *chainSummary {
	data, err := os.ReadFile(c.summaryPath())
	if err != nil || len(data) > maxChainSummary {
		return nil
	}
	s, err := parseChainSummary(data, c.ref)
	if err != nil {
		return nil
	}
	return s
}

var errChainSummary = errors.New("unusable chain summary")

// parseChainSummary parses a summary file for ref.
func parseChainSummary(data []byte, ref string) (*chainSummary, error) {
	if !bytes.HasPrefix(data, []byte(chainSummaryHeader)) || len(data) == 0 || data[len(data)-1] != '\n' {
		return nil, errChainSummary
	}
	lines := strings.Split(string(data[len(chainSummaryHeader):len(data)-1]), "\n")
	if len(lines) < 3 || lines[0] != ref || !plumbing.IsHash(lines[1]) {
		return nil, errChainSummary
	}
	a, m, ok := strings.Cut(lines[2], " ")
	auto, err1 := strconv.Atoi(a)
	manual, err2 := strconv.Atoi(m)
	ids := lines[3:]
	if !ok || err1 != nil || err2 != nil || auto < 0 || manual < 0 || auto+manual > len(ids) || len(ids) == 0 {
		return nil, errChainSummary
	}
	for _, id := range ids {
		if !summaryID(id) {
			return nil, errChainSummary
		}
	}
	return &chainSummary{tip: plumbing.NewHash(lines[1]), auto: auto, manual: manual, ids: ids}, nil
}

// summaryID reports whether a summary can keep id: lowercase hex digits,
// as contentID gives them.
func summaryID(id string) bool {
	if id == "" || len(id) > maxSummaryID {
		return false
	}
	for i := 0; i < len(id); i++ {
		if b := id[i]; (b < '0' || b > '9') && (b < 'a' || b > 'f') {
			return false
		}
	}
	return true
}

// summarizeChain is the summary of chain (oldest first) at tip; nil when an id
// cannot be kept.
func summarizeChain(tip plumbing.Hash, chain []*Checkpoint) *chainSummary {
	if len(chain) == 0 {
		return nil
	}
	ids := chainIDs(chain)
	for _, id := range ids {
		if !summaryID(id) {
			return nil
		}
	}
	_, _, auto, manual := boundCounts(chain)
	return &chainSummary{tip: tip, auto: auto, manual: manual, ids: ids}
}

// saveSummary writes s as the chain's summary, or removes the file when s
// is nil. Best effort: without a summary the next append reads the chain
// whole.
func (c *Chain) saveSummary(s *chainSummary) {
	p := c.summaryPath()
	if s == nil {
		_ = os.Remove(p)
		return
	}
	var b bytes.Buffer
	b.Grow(len(chainSummaryHeader) + len(c.ref) + 64 + len(s.ids)*(idLen+1))
	b.WriteString(chainSummaryHeader)
	b.WriteString(c.ref + "\n" + s.tip.String() + "\n" + strconv.Itoa(s.auto) + " " + strconv.Itoa(s.manual) + "\n")
	for _, id := range s.ids {
		b.WriteString(id + "\n")
	}
	perm := c.m.r.Shared()
	if err := perm.WriteFile(p, b.Bytes(), false); err != nil {
		if perm.MkdirAll(filepath.Dir(p)) == nil {
			_ = perm.WriteFile(p, b.Bytes(), false)
		}
	}
}

// errSlowAppend sends an append to the path that reads the chain whole.
var errSlowAppend = errors.New("the chain must be read whole")

// appendFast appends cp to the chain without reading the older
// checkpoints, from the chain's summary: only an automatic or manual
// checkpoint (not pinned) whose append evicts nothing, on a chain whose
// summary names the ref's tip. It returns errSlowAppend when it cannot
// (nothing written but, perhaps, objects no ref names), gitstore's
// ErrConflict when the ref moved under it.
func (c *Chain) appendFast(cp *Checkpoint, evict bool, same, fresh func(*Checkpoint) bool) (*Checkpoint, bool, error) {
	m := c.m
	if !c.summarized() || cp.Pinned || (cp.Kind != KindEnter && cp.Kind != KindManual) {
		return nil, false, errSlowAppend
	}
	tip, err := m.r.ReadRef(c.ref)
	if err != nil {
		return nil, false, errSlowAppend // none yet, or unreadable: the slow path says why
	}
	s := c.loadSummary()
	if s == nil || s.tip != tip {
		return nil, false, errSlowAppend
	}
	// The newest is read and checked as the slow path reads every
	// checkpoint; a damaged one is for the slow path to skip and report.
	prev, _, err := m.readCheckpoint(tip)
	if err != nil || prev.ID != s.ids[len(s.ids)-1] {
		return nil, false, errSlowAppend
	}
	if same != nil && sameSnapshot(prev, cp) && same(prev) {
		return prev, false, nil
	}
	if fresh != nil && fresh(prev) {
		return nil, false, errSlowAppend
	}
	auto, manual := s.auto, s.manual
	switch {
	case cp.Kind == KindManual:
		manual++
	case !sameSnapshot(prev, cp): // a repeat of the newest is not counted
		auto++
	}
	if maxAuto, maxManual := m.bounds(); evict && (auto > maxAuto || manual > maxManual) {
		return nil, false, errSlowAppend
	}
	m.filesChanged(prev, cp)
	cp.Previous = prev.ID
	digest := cp.digest()
	if cp.ID, err = contentID(digest, s.ids); err != nil {
		return nil, false, err
	}
	if err := m.record().add(digest); err != nil {
		return nil, false, err
	}
	if err := m.writeRoot(cp); err != nil {
		return nil, false, err
	}
	if err := m.commitCheckpoint(cp, cp.parents(tip, plumbing.ZeroHash)); err != nil {
		return nil, false, err
	}
	if err := m.r.UpdateRef(c.ref, tip, cp.Commit); err != nil {
		return nil, false, err
	}
	ids := append(s.ids[:len(s.ids):len(s.ids)], cp.ID)
	c.saveSummary(&chainSummary{tip: cp.Commit, auto: auto, manual: manual, ids: ids})
	return cp, true, nil
}
