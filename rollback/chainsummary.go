package rollback

import (
	"bytes"
	"errors"
	"fmt"
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
// those ids and counts, beside the chain cache:
//
//	hegel chain summary 1\n
//	<ref>\n
//	<tip> <automatic> <manual> <n>\n      the chain at tip, read whole
//	<id>\n                                n times, oldest first
//	+ <parent> <tip> <automatic> <manual> <id>\n
//
// The last lines are appended, one per append that used the summary: the
// chain at tip is the chain at parent and one more checkpoint, id, and
// the bounds count that many. Appending a line creates no file, where
// writing the summary again would (a file created is most of what an
// append costs). A line is used only when its parent is the tip the lines
// before it reached; the others (a line cut short, one written late by an
// append that another process's rewrite of the file overtook) are
// skipped.
//
// A commit names its parents by content, so the chain below a tip never
// changes: what the summary says of a tip stays true, whoever wrote it and
// when. It is used only when the tip it reaches is the ref's at the time
// of the append, its newest id is the newest checkpoint's as read and
// checked from the object database, and the append evicts nothing; the ref
// then moves by compare-and-swap from that tip, as any append's, and only
// an append whose ref moved adds its line. Otherwise (no summary, another
// process moved the ref, a restore cut the chain, eviction due, a chain
// under any other kind of change) the chain is read whole and the summary
// written anew for the new tip.
//
// Like the chain cache, the file is local and disposable, and it is read
// as hostile data: one whose head does not parse is not used. It never
// names a file, an object to restore or a checkpoint's content: what it
// can get wrong is only an id clash among the older checkpoints and, with
// understated counts, an eviction put off until the counts (one more per
// append) reach the bound.

const (
	chainSummaryHeader = "hegel chain summary 1\n"
	maxChainSummary    = 4 << 20
	// maxSummaryID bounds an id the summary keeps; a chain with a longer
	// one (never written by this code) gets no summary.
	maxSummaryID = 64
	// maxSummaryCount bounds the counts a summary may give (a chain is
	// read as too long past 100,000 checkpoints anyway).
	maxSummaryCount = 1 << 20
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

// parseChainSummary parses a summary file for ref: its head, then the
// appended lines that follow on from it.
func parseChainSummary(data []byte, ref string) (*chainSummary, error) {
	if !bytes.HasPrefix(data, []byte(chainSummaryHeader)) {
		return nil, errChainSummary
	}
	lines := strings.Split(string(data[len(chainSummaryHeader):]), "\n")
	// The last element follows the last newline: "" or a line cut short.
	lines = lines[:len(lines)-1]
	if len(lines) < 2 || lines[0] != ref {
		return nil, errChainSummary
	}
	f := strings.Fields(lines[1])
	if len(f) != 4 || len(lines[1]) != len(strings.Join(f, " ")) || !plumbing.IsHash(f[0]) {
		return nil, errChainSummary
	}
	auto, manual, okCounts := summaryCounts(f[1], f[2])
	n, err := strconv.Atoi(f[3])
	if !okCounts || err != nil || n <= 0 || n > len(lines)-2 || auto+manual > n {
		return nil, errChainSummary
	}
	s := &chainSummary{auto: auto, manual: manual, ids: lines[2 : 2+n : 2+n]}
	for _, id := range s.ids {
		if !summaryID(id) {
			return nil, errChainSummary
		}
	}
	tip := f[0]
	for _, l := range lines[2+n:] {
		tip = s.follow(tip, l)
	}
	s.tip = plumbing.NewHash(tip)
	return s, nil
}

// follow applies to s, whose tip is tip (in hex), an appended line when it
// parses and names tip as its parent, and returns the tip reached; any
// other line is skipped.
func (s *chainSummary) follow(tip, line string) string {
	// "+ <parent> <tip> <automatic> <manual> <id>", one space apart.
	rest, ok := strings.CutPrefix(line, "+ "+tip+" ")
	if !ok {
		return tip
	}
	next, rest, _ := strings.Cut(rest, " ")
	a, rest, _ := strings.Cut(rest, " ")
	m, id, _ := strings.Cut(rest, " ")
	auto, manual, ok := summaryCounts(a, m)
	if !ok || !plumbing.IsHash(next) || !summaryID(id) || auto+manual > len(s.ids)+1 {
		return tip
	}
	s.auto, s.manual = auto, manual
	s.ids = append(s.ids, id)
	return next
}

// summaryCounts parses a summary's counts: each at least 0 and at most
// maxSummaryCount, so that no sum or increment of them overflows.
func summaryCounts(a, m string) (auto, manual int, ok bool) {
	auto, err1 := strconv.Atoi(a)
	manual, err2 := strconv.Atoi(m)
	return auto, manual, err1 == nil && err2 == nil && auto >= 0 && manual >= 0 && auto <= maxSummaryCount && manual <= maxSummaryCount
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
	b.WriteString(c.ref + "\n")
	fmt.Fprintf(&b, "%s %d %d %d\n", s.tip, s.auto, s.manual, len(s.ids))
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

// extendSummary appends to the chain's summary the line for cp, appended
// on parent with the counts given. One write of one short line to a file
// opened for appending: appends racing from other processes do not
// interleave within it. Best effort, as saveSummary; a summary the file
// lacks is not created.
func (c *Chain) extendSummary(parent plumbing.Hash, cp *Checkpoint, auto, manual int) {
	f, err := os.OpenFile(c.summaryPath(), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return
	}
	_, _ = fmt.Fprintf(f, "+ %s %s %d %d %s\n", parent, cp.Commit, auto, manual, cp.ID)
	_ = f.Close()
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
	m.w.trace("the chain's summary and newest checkpoint")
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
		return nil, false, errSlowAppend // the chain's own ids say so, or not
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
	m.w.trace("the checkpoint's metadata, root and commit")
	if err := m.r.UpdateRef(c.ref, tip, cp.Commit); err != nil {
		return nil, false, err
	}
	c.extendSummary(tip, cp, auto, manual)
	return cp, true, nil
}
