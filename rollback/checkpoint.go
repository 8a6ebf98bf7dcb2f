package rollback

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/git-hegel/git-hegel/gitstore"
)

// Checkpoint kinds: what a chain's bounds count a checkpoint as.
const (
	// KindEnter is taken automatically; MaxCheckpoints bounds them.
	KindEnter = "enter"
	// KindManual is taken by hand; MaxManual bounds them.
	KindManual = "manual"
	// KindSafety is taken by a restore before it changed anything:
	// restoring it undoes the restore. The newest is never evicted.
	KindSafety = "safety"
)

// RefPrefix is where checkpoint chains live: one commit chain each.
const RefPrefix = "refs/hegel/checkpoints/"

// Names in a checkpoint's root tree (docs/rollback.md, "Storage").
const (
	metaFile     = "checkpoint.json"
	versionFile  = "version"
	indexDir     = "index"
	worktreeDir  = "worktree"
	maxListed    = 1000 // files_changed keeps at most this many paths
	emptyTreeHex = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
)

var emptyTree = plumbing.NewHash(emptyTreeHex)

// Checkpoint is one stored snapshot of the working tree, the index and
// HEAD: its metadata (checkpoint.json) and where it lives. The fields are
// the mechanism's; Meta carries the caller's (which task, node and history
// it belongs to) in the same file, uninterpreted.
type Checkpoint struct {
	// ID is short and derived from the content (ids.go), unique in its
	// chain and stable when the chain is rewritten.
	ID        string    `json:"id"`
	Kind      string    `json:"kind"`
	CreatedAt time.Time `json:"created_at"`
	// Previous is the id of the chain's newest checkpoint when this one
	// was taken ("" for the first, and in checkpoints written before it
	// was recorded). Part of the content an id is derived from, it keeps
	// two checkpoints of the same files taken at the same instant apart.
	Previous string `json:"previous,omitempty"`
	// Branch is HEAD's branch as a full ref name ("" when detached); Head
	// its commit ("" on an unborn branch).
	Branch string `json:"branch,omitempty"`
	Head   string `json:"head,omitempty"`
	// FilesChanged lists the paths that differ from the previous
	// checkpoint's working tree (from HEAD's tree for the first), at most
	// 1000 of FilesChangedCount.
	FilesChanged      []string `json:"files_changed"`
	FilesChangedCount int      `json:"files_changed_count"`
	// Skipped are untracked files left out (too large, or names git
	// cannot store).
	Skipped []SkippedFile `json:"skipped,omitempty"`
	// Moved is set on safety checkpoints: the branches the restore moved
	// besides the one checked out (Branch), with the commits they were at,
	// so that restoring the safety checkpoint puts them back. Their
	// commits are parents of the checkpoint's commit, which keeps them
	// reachable.
	Moved []MovedBranch `json:"moved,omitempty"`
	// ChainBefore is set on safety checkpoints whose restore cut the
	// chain back: the chain's tip before, kept as a parent, so that
	// restoring the safety checkpoint brings the list back.
	ChainBefore string `json:"chain_before,omitempty"`
	// AssumeUnchanged and IntentToAdd list the index entries with those
	// flags (git update-index --assume-unchanged, git add -N); a restore
	// sets them again.
	AssumeUnchanged []string `json:"assume_unchanged,omitempty"`
	IntentToAdd     []string `json:"intent_to_add,omitempty"`
	// Pinned checkpoints are never evicted by the bounds (nor counted by
	// them): the caller's start of a chain. Dropping one by hand still
	// works. It is left out of the id's digest: it decides only what the
	// bounds keep, and ids stay what they were before it existed.
	Pinned bool `json:"pinned,omitempty"`

	// Meta is the caller's part of checkpoint.json.
	Meta Meta `json:"-"`
	// Label describes the checkpoint in its commit's subject
	// ("checkpoint <id>: <label>").
	Label string `json:"-"`
	// Author is who its commit names as its author ("Name <email>").
	Author string `json:"-"`

	changed []string         // files changed, when the caller knows them already
	author  object.Signature // kept when the chain is rewritten

	Commit    plumbing.Hash `json:"-"` // its commit on the chain today (rewritten by eviction)
	Root      plumbing.Hash `json:"-"`
	IndexTree plumbing.Hash `json:"-"` // zero: empty
	WorkTree  plumbing.Hash `json:"-"` // zero: empty
}

// SkippedFile is an untracked file a snapshot left out.
type SkippedFile struct {
	Path   string `json:"path"`
	Size   int64  `json:"size,omitempty"`
	Reason string `json:"reason"`
}

// ownKeys are the JSON names of the mechanism's fields of
// checkpoint.json; every other field is the caller's Meta.
var ownKeys = map[string]bool{
	"id": true, "kind": true, "created_at": true, "previous": true, "branch": true, "head": true,
	"files_changed": true, "files_changed_count": true, "skipped": true, "moved": true,
	"chain_before": true, "assume_unchanged": true, "intent_to_add": true, "pinned": true,
}

// encodeMeta is checkpoint.json for c.
func encodeMeta(c *Checkpoint) ([]byte, error) {
	b, err := marshalFlat(c, withRaw(c.Meta, c.rawNames))
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// HeadCommit is the commit HEAD was at (zero on an unborn branch).
func (c *Checkpoint) HeadCommit() plumbing.Hash {
	if c.Head == "" {
		return plumbing.ZeroHash
	}
	return plumbing.NewHash(c.Head)
}

// BranchName is the short branch name, or "" when HEAD was detached.
func (c *Checkpoint) BranchName() string {
	return plumbing.ReferenceName(c.Branch).Short()
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// Options configure a Manager.
type Options struct {
	// Getenv reads the environment (HOME, XDG_CONFIG_HOME, GIT_COMMITTER_*).
	Getenv func(string) string
	// Now is the clock; tests and scripts fix it.
	Now func() time.Time
	// Warn reports problems that do not fail the operation (files left
	// out of a checkpoint, a damaged checkpoint skipped).
	Warn func(msg string)
	// Evicted is told of each checkpoint a chain's bound evicts.
	Evicted func(cp *Checkpoint)
	// Check validates the caller's Meta of a checkpoint read from a
	// chain; a checkpoint it refuses is skipped as damaged, with its
	// message.
	Check func(cp *Checkpoint) error
	// ChainOf names the chain of a journal written before journals named
	// it, from the caller's record (nil: unknown, and the locks on that
	// chain's ref are left alone).
	ChainOf func(record Meta) string
	// QuotePath renders a path in warnings (default: quotePath, git's
	// quoting with core.quotePath on).
	QuotePath func(string) string
	// Progress is told how far snapshots and restores have got: files
	// scanned, objects written, files updated (nil: nobody watches).
	Progress gitstore.Progress
}

// Manager takes, lists and restores the checkpoints of one repository.
type Manager struct {
	r       *gitstore.Repo
	w       *workspace
	now     func() time.Time
	warn    func(string)
	evicted func(*Checkpoint)
	check   func(*Checkpoint) error
	quote   func(string) string

	// MaxCheckpoints bounds the automatic checkpoints of each chain: those
	// of KindEnter and the safety checkpoints of earlier restores
	// (hegel.maxCheckpoints, default 15, at least 1). The newest safety
	// checkpoint is kept besides: the last restore stays undoable; so are
	// pinned checkpoints, and those that record nothing new.
	MaxCheckpoints int
	// MaxManual bounds the checkpoints taken by hand
	// (hegel.maxManualCheckpoints, default 20, at least 1); they are kept
	// until dropped or evicted by this bound.
	MaxManual int
	// EvictBatch, when above 0, evicts that many more automatic
	// checkpoints once MaxCheckpoints is passed. Evicting the oldest
	// rewrites every commit after it, so a long chain appended to on every
	// agent tool call pays that rewrite once per EvictBatch appends
	// instead of on each; the chain never holds more than the bound.
	EvictBatch int
	// MaxFileSize leaves larger untracked files out of snapshots
	// (hegel.checkpointMaxFileSize, default 10 MiB; 0 or less: no limit).
	MaxFileSize int64

	// ChainCache keeps a cache of each chain's objects read
	// (chaincache.go): for chains appended to often and kept long.
	ChainCache bool
	// DirCache has the snapshots' scans keep a cache of the directories'
	// listings (dircache.go) and read only the directories changed since:
	// for snapshots taken often of one working tree. core.untrackedCache
	// set to false turns it off.
	DirCache bool

	memo   *chainMemo             // the chain cache's objects, when ChainCache
	warned map[plumbing.Hash]bool // damaged checkpoints already reported
	taken  *takenRecord           // the local record of what this clone took
}

// Defaults for the hegel.* settings.
const (
	// DefaultMaxCheckpoints covers one pass through the longest built-in
	// workflow (pipeline: 12 nodes that take a checkpoint), with room for
	// a loop back; a test in cmd/git-hegel/worktree keeps it so.
	DefaultMaxCheckpoints = 15
	DefaultMaxManual      = 20
	DefaultMaxFileSize    = 10 << 20
)

// New returns a Manager for r, configured from git config.
func New(r *gitstore.Repo, o Options) *Manager {
	if o.Getenv == nil {
		o.Getenv = func(string) string { return "" }
	}
	if o.Now == nil {
		o.Now = r.Now
		if o.Now == nil {
			o.Now = time.Now
		}
	}
	if o.Warn == nil {
		o.Warn = func(string) {}
	}
	if o.Evicted == nil {
		o.Evicted = func(*Checkpoint) {}
	}
	if o.Check == nil {
		o.Check = func(*Checkpoint) error { return nil }
	}
	if o.QuotePath == nil {
		o.QuotePath = quotePath
	}
	c := r.Config()
	m := &Manager{
		r:              r,
		w:              newWorkspace(r, o.Getenv, o.Now),
		now:            o.Now,
		warn:           o.Warn,
		evicted:        o.Evicted,
		check:          o.Check,
		quote:          o.QuotePath,
		MaxCheckpoints: int(c.Int("hegel", "maxcheckpoints", DefaultMaxCheckpoints)),
		MaxManual:      int(c.Int("hegel", "maxmanualcheckpoints", DefaultMaxManual)),
		MaxFileSize:    c.Int("hegel", "checkpointmaxfilesize", DefaultMaxFileSize),
	}
	m.w.cfg.progress = gitstore.OrNoProgress(o.Progress)
	m.w.chainOf = o.ChainOf
	return m
}

// Close releases the files the manager keeps open.
func (m *Manager) Close() { m.w.obj.close() }

func (m *Manager) bounds() (auto, manual int) {
	return max(m.MaxCheckpoints, 1), max(m.MaxManual, 1)
}

// bound applies the FIFO bounds to chain (oldest first) and reports each
// checkpoint it evicts.
func (m *Manager) bound(chain []*Checkpoint) []*Checkpoint {
	auto, manual := m.bounds()
	kept, evicted := evictOldest(chain, auto, manual)
	for _, c := range evicted {
		m.evicted(c)
	}
	return kept
}

func (m *Manager) snapshotter() *snapshotter {
	sn := m.w.snapshotter()
	sn.cfg.maxSize = m.MaxFileSize
	// core.untrackedCache=false says the filesystem's directory mtimes
	// are not to be trusted (or git's cache not wanted): ours is off too.
	sn.dirCache = m.DirCache && m.r.Config().Bool("core", "untrackedcache", true)
	// core.fsmonitor is the user's own setting (git runs the same hook
	// for git status); nothing read from the repository's files or a
	// fetch names it. With core.ignoreCase the hook may spell a path
	// otherwise than the index: not asked.
	if c := m.r.Config(); sn.dirCache && !c.Bool("core", "ignorecase", false) {
		sn.fsmon = fsmonitorFor(func(section, key string) (string, bool) { return c.Get(section, "", key) }, m.r.WorkTree)
	}
	return sn
}

// Template describes a checkpoint to take: its kind and what the caller
// records with it.
type Template struct {
	Kind  string
	Label string // the commit subject says "checkpoint <id>: <Label>"
	Meta  Meta
	// Same reports whether the chain's newest checkpoint stands for this
	// one when both hold the same files, index and HEAD: then nothing new
	// is stored, and the newest is returned. Nil: a new one is always
	// stored.
	Same func(newest *Checkpoint) bool
	// Fresh reports whether the chain starts over with this checkpoint
	// (what the newest belongs to is over). Nil: never.
	Fresh func(newest *Checkpoint) bool
	// Pinned keeps the checkpoint through every eviction (see
	// Checkpoint.Pinned).
	Pinned bool
}

// Chain is one commit chain of checkpoints, oldest at the root, under one
// ref (refs/hegel/checkpoints/<task> for a task's checkpoints). Name
// names it in messages ("task t").
type Chain struct {
	m    *Manager
	ref  string
	name string
}

// Chain returns the chain at ref (its name names it in messages).
func (m *Manager) Chain(ref, name string) *Chain { return &Chain{m: m, ref: ref, name: name} }

// Ref is where the chain lives.
func (c *Chain) Ref() string { return c.ref }

// Take snapshots the working tree, the index and HEAD and appends the
// snapshot to the chain, whose bounds then apply. created is false when
// t.Same says the newest checkpoint stands for it (that one is returned).
func (c *Chain) Take(t Template) (cp *Checkpoint, created bool, err error) {
	m := c.m
	if err := m.refuseJournal(); err != nil {
		return nil, false, err
	}
	m.w.trace("checkpoint")
	idx, err := m.w.readIndex()
	if err != nil {
		return nil, false, err
	}
	h, err := m.w.readHead()
	if err != nil {
		return nil, false, err
	}
	m.w.trace("read index")
	snap, err := m.snapshotter().take(idx, true)
	if err != nil {
		return nil, false, err
	}
	m.warnSkipped(snap.skipped)
	cp = m.newCheckpoint(t, h, snap)
	cp, created, err = c.append(cp, true, t.Same, t.Fresh)
	m.w.trace("store the checkpoint")
	return cp, created, err
}

func (m *Manager) newCheckpoint(t Template, h head, snap *snapshot) *Checkpoint {
	cp := &Checkpoint{
		Kind: t.Kind, Label: t.Label, Meta: Meta{}, CreatedAt: m.now().UTC(), Pinned: t.Pinned,
		Branch:    string(h.Ref),
		Skipped:   snap.skipped,
		IndexTree: snap.indexTree, WorkTree: snap.worktree,
		AssumeUnchanged: snap.assumeUnchanged, IntentToAdd: snap.intentToAdd,
	}
	for k, v := range t.Meta {
		cp.Meta[k] = v
	}
	if !h.Commit.IsZero() {
		cp.Head = h.Commit.String()
	}
	if cp.IndexTree == emptyTree {
		cp.IndexTree = plumbing.ZeroHash
	}
	if cp.WorkTree == emptyTree {
		cp.WorkTree = plumbing.ZeroHash
	}
	return cp
}

// warnSkipped prints one line about the files a snapshot left out.
func (m *Manager) warnSkipped(skipped []SkippedFile) {
	if len(skipped) == 0 {
		return
	}
	var big, bad []string
	for _, s := range skipped {
		if s.Reason == "too large" {
			big = append(big, s.Path)
		} else {
			bad = append(bad, s.Path)
		}
	}
	if len(big) > 0 {
		m.warn(fmt.Sprintf("%s over hegel.checkpointMaxFileSize (%s) left out of the checkpoint: %s",
			plural(len(big), "untracked file", "untracked files"), humanSize(m.MaxFileSize), listSome(big, 3, m.quote)))
	}
	if len(bad) > 0 {
		m.warn(fmt.Sprintf("%s whose names git cannot store left out of the checkpoint: %s",
			plural(len(bad), "untracked file", "untracked files"), listSome(bad, 3, m.quote)))
	}
}

func humanSize(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return plural(int(n), "byte", "bytes")
}

// sameSnapshot reports whether cp holds exactly the files, index and HEAD
// old holds.
func sameSnapshot(old, cp *Checkpoint) bool {
	return old.Branch == cp.Branch && old.Head == cp.Head &&
		old.IndexTree == cp.IndexTree && old.WorkTree == cp.WorkTree &&
		slices.Equal(old.AssumeUnchanged, cp.AssumeUnchanged) && slices.Equal(old.IntentToAdd, cp.IntentToAdd)
}

// append adds cp at the end of the chain, with compare-and-swap and retry.
// With evict, the chain is then cut to the bounds. same and fresh are the
// Template's.
func (c *Chain) append(cp *Checkpoint, evict bool, same, fresh func(*Checkpoint) bool) (*Checkpoint, bool, error) {
	m := c.m
	for attempt := 0; attempt < 20; attempt++ {
		cp.Commit = plumbing.ZeroHash // written again below its new parent
		got, created, err := c.appendFast(cp, evict, same, fresh)
		if errors.Is(err, gitstore.ErrConflict) {
			continue
		}
		if !errors.Is(err, errSlowAppend) {
			return got, created, err
		}
		cp.Commit = plumbing.ZeroHash
		chain, tip, err := c.read()
		if err != nil {
			return nil, false, err
		}
		var prev *Checkpoint
		if len(chain) > 0 {
			prev = chain[len(chain)-1]
		}
		if prev != nil && same != nil && sameSnapshot(prev, cp) && same(prev) {
			return prev, false, nil
		}
		if prev != nil && fresh != nil && fresh(prev) {
			chain, prev = nil, nil
		}
		m.filesChanged(prev, cp)
		cp.Previous = ""
		if prev != nil {
			cp.Previous = prev.ID
		}
		digest := cp.digest()
		if cp.ID, err = contentID(digest, chainIDs(chain)); err != nil {
			return nil, false, err
		}
		// Recorded before the chain names it: every checkpoint this clone
		// puts in a chain is in the record.
		if err := m.record().add(digest); err != nil {
			return nil, false, err
		}
		if err := m.writeRoot(cp); err != nil {
			return nil, false, err
		}
		next := append(append([]*Checkpoint(nil), chain...), cp)
		var evicted []*Checkpoint
		if evict {
			auto, manual := m.bounds()
			next, evicted = evictOldest(next, auto, manual)
			if len(evicted) > 0 && m.EvictBatch > 0 && auto > m.EvictBatch {
				var more []*Checkpoint
				next, more = evictOldest(next, auto-m.EvictBatch, manual)
				evicted = append(evicted, more...)
			}
		}
		err = c.write(tip, next)
		if errors.Is(err, gitstore.ErrConflict) {
			continue
		}
		if err != nil {
			return nil, false, err
		}
		c.saveCache(next[len(next)-1].Commit, next)
		if c.summarized() {
			c.saveSummary(summarizeChain(next[len(next)-1].Commit, next))
		}
		for _, e := range evicted {
			m.evicted(e)
		}
		return cp, true, nil
	}
	return nil, false, fmt.Errorf("the checkpoints of %s kept changing; try again", c.name)
}

// filesChanged fills FilesChanged from a diff with the previous
// checkpoint's working tree (or HEAD's tree). It is informative only, so
// an unreadable tree leaves it empty.
func (m *Manager) filesChanged(prev, cp *Checkpoint) {
	if cp.changed != nil {
		cp.FilesChangedCount = len(cp.changed)
		cp.FilesChanged = cp.changed[:min(len(cp.changed), maxListed)]
		return
	}
	var base plumbing.Hash
	if prev != nil {
		base = prev.WorkTree
	} else if h := cp.HeadCommit(); !h.IsZero() {
		if c, err := m.commit(h); err == nil {
			base = c.TreeHash
		}
	}
	r := &treeReader{o: m.w.obj}
	diff, err := diffTrees(r, r, base, cp.WorkTree)
	if err != nil {
		return
	}
	cp.FilesChangedCount = len(diff)
	cp.FilesChanged = make([]string, 0, min(len(diff), maxListed))
	for i := 0; i < len(diff) && i < maxListed; i++ {
		cp.FilesChanged = append(cp.FilesChanged, diff[i].path)
	}
}

// evictOldest applies the FIFO bounds to chain (oldest first): at most
// maxAuto checkpoints taken automatically or by earlier restores, at most
// maxManual taken by hand, the oldest of each evicted first. The newest
// safety checkpoint is never evicted nor counted: the last restore must
// stay undoable, and undoing it must not cost a checkpoint. Pinned
// checkpoints are neither evicted nor counted either. An automatic
// checkpoint that holds what the one before it holds records nothing new:
// it is not counted, and goes when the one it repeats goes. Older safety
// checkpoints go before the automatic ones (those are what restores go
// back to; repeated undos and redos bring older safety checkpoints back
// and would otherwise push them out).
func evictOldest(chain []*Checkpoint, maxAuto, maxManual int) (kept, evicted []*Checkpoint) {
	newestSafety, repeats, auto, manual := boundCounts(chain)
	drop := make([]bool, len(chain))
	for pass := 0; pass < 2; pass++ {
		for i, c := range chain {
			switch {
			case i == newestSafety || drop[i] || c.Pinned || repeats[i]:
			case c.Kind == KindManual:
				if pass == 0 && manual > maxManual {
					manual--
					drop[i] = true
				}
			case auto > maxAuto && (pass == 1 || c.Kind == KindSafety):
				auto--
				drop[i] = true
				for j := i + 1; j < len(chain) && repeats[j]; j++ {
					drop[j] = true
				}
			}
		}
	}
	for i, c := range chain {
		if drop[i] {
			evicted = append(evicted, c)
		} else {
			kept = append(kept, c)
		}
	}
	return kept, evicted
}

// boundCounts is how evictOldest sees chain: the index of its newest
// safety checkpoint (-1: none), which checkpoints repeat the one before
// them, and how many automatic and manual checkpoints the bounds count.
func boundCounts(chain []*Checkpoint) (newestSafety int, repeats []bool, auto, manual int) {
	newestSafety = -1
	for i := len(chain) - 1; i >= 0; i-- {
		if chain[i].Kind == KindSafety {
			newestSafety = i
			break
		}
	}
	// repeats[i]: chain[i] records nothing new over chain[i-1].
	repeats = make([]bool, len(chain))
	for i, c := range chain {
		repeats[i] = i > 0 && c.Kind == KindEnter && !c.Pinned && i != newestSafety && sameSnapshot(chain[i-1], c)
		switch {
		case i == newestSafety || c.Pinned || repeats[i]:
		case c.Kind == KindManual:
			manual++
		default:
			auto++
		}
	}
	return newestSafety, repeats, auto, manual
}

// writeRoot stores cp's root tree: version, checkpoint.json, index/ and
// worktree/ (the last two left out when empty).
func (m *Manager) writeRoot(cp *Checkpoint) error {
	meta, err := encodeMeta(cp)
	if err != nil {
		return err
	}
	ver := []byte(gitstore.FormatVersion + "\n")
	leaves := []leaf{{path: metaFile, mode: filemode.Regular, hash: hashObject(plumbing.BlobObject, meta)}}
	if !cp.IndexTree.IsZero() {
		leaves = append(leaves, leaf{path: indexDir, mode: filemode.Dir, hash: cp.IndexTree})
	}
	leaves = append(leaves, leaf{path: versionFile, mode: filemode.Regular, hash: hashObject(plumbing.BlobObject, ver)})
	if !cp.WorkTree.IsZero() {
		leaves = append(leaves, leaf{path: worktreeDir, mode: filemode.Dir, hash: cp.WorkTree})
	}
	for _, b := range [][]byte{meta, ver} {
		h := hashObject(plumbing.BlobObject, b)
		if err := m.w.obj.write(plumbing.BlobObject, h, b); err != nil {
			return err
		}
		m.remember(plumbing.BlobObject, h, b)
	}
	mem := map[plumbing.Hash][]byte{}
	root, err := buildTree(leaves, mem)
	if err != nil {
		return err
	}
	if err := m.w.obj.write(plumbing.TreeObject, root, mem[root]); err != nil {
		return err
	}
	m.remember(plumbing.TreeObject, root, mem[root])
	cp.Root = root
	return nil
}

func commitMessage(cp *Checkpoint) string {
	return fmt.Sprintf("checkpoint %s: %s", cp.ID, cp.Label)
}

// labelOf is the label in a checkpoint commit's subject.
func labelOf(msg, id string) string {
	subject, _, _ := strings.Cut(msg, "\n")
	return strings.TrimPrefix(subject, "checkpoint "+id+": ")
}

// write stores chain (oldest first) as the chain's commits and moves the
// ref from tip with compare-and-swap. Each commit's first parent is the
// previous checkpoint and its last the HEAD commit it recorded, so that
// commit stays reachable. Commits whose parents are unchanged are reused;
// the rest are rewritten, which is how evicted checkpoints become
// unreachable for git gc.
func (c *Chain) write(tip plumbing.Hash, chain []*Checkpoint) error {
	m := c.m
	prev, err := m.buildChain(chain, plumbing.ZeroHash)
	if err != nil {
		return err
	}
	if prev == tip {
		return nil
	}
	for _, cp := range chain {
		if cp.Commit == tip {
			return m.r.UpdateRef(c.ref, tip, prev)
		}
	}
	// The old tip is not in the new chain (eviction rewrote it): the
	// reflog starts afresh, or its entries would keep the evicted
	// snapshots reachable for git gc until they expired. It names the
	// checkpoint below the tip first, which the tip reaches anyway:
	// doctor falls back to it if the tip's commit is ever lost.
	below := plumbing.ZeroHash
	if n := len(chain); n >= 2 {
		below = chain[n-2].Commit
	}
	return m.r.RewriteChainRef(c.ref, tip, prev, below, "")
}

// buildChain writes the commits of chain (oldest first) and returns the
// newest. extra, if set, becomes a middle parent of the newest commit
// (Merge uses it to keep the remote's tip an ancestor). A rewritten
// commit keeps its author.
func (m *Manager) buildChain(chain []*Checkpoint, extra plumbing.Hash) (plumbing.Hash, error) {
	var prev plumbing.Hash
	for i, cp := range chain {
		x := plumbing.ZeroHash
		if i == len(chain)-1 {
			x = extra
		}
		parents := cp.parents(prev, x)
		if cp.Commit.IsZero() || !m.sameParents(cp.Commit, parents) {
			if err := m.commitCheckpoint(cp, parents); err != nil {
				return plumbing.ZeroHash, err
			}
		}
		prev = cp.Commit
	}
	return prev, nil
}

// parents are the parents of cp's commit below prev (the previous
// checkpoint's commit, zero for the oldest), with extra (if set) as a
// middle parent: prev, extra, the commits cp keeps reachable, and last
// the HEAD commit it recorded.
func (cp *Checkpoint) parents(prev, extra plumbing.Hash) []plumbing.Hash {
	var parents []plumbing.Hash
	if !prev.IsZero() {
		parents = append(parents, prev)
	}
	if !extra.IsZero() && !prev.IsZero() && extra != prev {
		parents = append(parents, extra)
	}
	h := cp.HeadCommit()
	for _, x := range cp.keptCommits() {
		if x != prev && x != h && !slices.Contains(parents, x) {
			parents = append(parents, x)
		}
	}
	if !h.IsZero() && h != prev {
		parents = append(parents, h)
	}
	return parents
}

// commitCheckpoint writes cp's commit with parents (keeping the author of
// a rewritten one) and sets cp.Commit.
func (m *Manager) commitCheckpoint(cp *Checkpoint, parents []plumbing.Hash) error {
	var c plumbing.Hash
	var err error
	if cp.author.Name != "" {
		c, err = m.r.CommitTreeBy(cp.Root, parents, commitMessage(cp), cp.author)
	} else {
		c, err = m.r.CommitTree(cp.Root, parents, commitMessage(cp))
	}
	if err != nil {
		return fmt.Errorf("cannot store checkpoint %s: %w", cp.ID, err)
	}
	cp.Commit = c
	return nil
}

func (m *Manager) sameParents(c plumbing.Hash, parents []plumbing.Hash) bool {
	co, err := m.commit(c)
	if err != nil || len(co.ParentHashes) != len(parents) {
		return false
	}
	for i := range parents {
		if co.ParentHashes[i] != parents[i] {
			return false
		}
	}
	return true
}

// commit reads and decodes commit h through the object layer, which
// looks at the pack directories again when a concurrent repack moved the
// object (go-git's storer keeps the pack list it opened with, so a
// checkpoint just packed by a concurrent `git repack` reads as missing
// there).
func (m *Manager) commit(h plumbing.Hash) (*object.Commit, error) {
	var data []byte
	if o, ok := m.memoObject(h); ok && o.t == plumbing.CommitObject {
		data = o.data
	} else {
		var err error
		if data, err = m.w.obj.db.Read(plumbing.CommitObject, h); err != nil {
			return nil, err
		}
		m.remember(plumbing.CommitObject, h, data)
	}
	mo := &plumbing.MemoryObject{}
	mo.SetType(plumbing.CommitObject)
	if _, err := mo.Write(data); err != nil {
		return nil, err
	}
	c := &object.Commit{}
	if err := c.Decode(mo); err != nil {
		return nil, fmt.Errorf("commit %s: %w", h, err)
	}
	return c, nil
}

// ErrNoCheckpoint reports a checkpoint that is not in the chain.
var ErrNoCheckpoint = errors.New("no such checkpoint")

// read reads the chain's checkpoints, oldest first, and the ref's commit.
func (c *Chain) read() ([]*Checkpoint, plumbing.Hash, error) {
	tip, err := c.m.r.ReadRef(c.ref)
	if errors.Is(err, gitstore.ErrNotFound) {
		return nil, plumbing.ZeroHash, nil
	}
	if err != nil {
		return nil, plumbing.ZeroHash, err
	}
	c.loadCache()
	out, err := c.at(tip)
	if err == nil && c.m.memo != nil && c.m.memo.tip != tip {
		c.saveCache(tip, out)
	}
	return out, tip, err
}

// at reads the checkpoints of the chain ending at tip, oldest first.
func (c *Chain) at(tip plumbing.Hash) ([]*Checkpoint, error) {
	var out []*Checkpoint
	for h := tip; !h.IsZero(); {
		if len(out) > 100000 {
			return nil, fmt.Errorf("%s: the chain is too long", c.ref)
		}
		cp, parent, err := c.m.readCheckpoint(h)
		var bad *damagedCheckpoint
		if errors.As(err, &bad) {
			// One damaged entry (it may have come from another clone)
			// must not hide the others: say so, and go on below it.
			c.m.skipDamaged(c.name, bad)
			h = bad.prev
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.ref, err)
		}
		out = append(out, cp)
		h = parent
	}
	slices.Reverse(out)
	return out, nil
}

// readCheckpoint parses one checkpoint commit and returns it and the
// previous checkpoint's commit (zero for the oldest).
func (m *Manager) readCheckpoint(h plumbing.Hash) (*Checkpoint, plumbing.Hash, error) {
	c, err := m.commit(h)
	if err != nil {
		return nil, plumbing.ZeroHash, fmt.Errorf("checkpoint commit %s is not readable: %v", h, err)
	}
	data, err := m.readObject(plumbing.TreeObject, c.TreeHash)
	if err != nil {
		return nil, plumbing.ZeroHash, err
	}
	ents, err := parseTree(data, true)
	if err != nil {
		return nil, plumbing.ZeroHash, fmt.Errorf("checkpoint %s: %w", h, err)
	}
	cp := &Checkpoint{Commit: h, Root: c.TreeHash}
	var meta, ver []byte
	for _, e := range ents {
		switch {
		case e.Name == metaFile && e.Mode == filemode.Regular:
			if meta, err = m.readObject(plumbing.BlobObject, e.Hash); err != nil {
				return nil, plumbing.ZeroHash, err
			}
		case e.Name == versionFile && e.Mode == filemode.Regular:
			if ver, err = m.readObject(plumbing.BlobObject, e.Hash); err != nil {
				return nil, plumbing.ZeroHash, err
			}
		case e.Name == indexDir && e.Mode == filemode.Dir:
			cp.IndexTree = e.Hash
		case e.Name == worktreeDir && e.Mode == filemode.Dir:
			cp.WorkTree = e.Hash
		}
	}
	if v := strings.TrimSpace(string(ver)); v != gitstore.FormatVersion {
		// Not skipped: a newer git-hegel's chain must not be rewritten
		// without its entries.
		if ver == nil {
			return nil, plumbing.ZeroHash, fmt.Errorf("checkpoint %s: %w: no version blob", h, gitstore.ErrUnknownVersion)
		}
		return nil, plumbing.ZeroHash, fmt.Errorf("checkpoint %s: %w %q (this git-hegel understands %q; upgrade it)", h, gitstore.ErrUnknownVersion, v, gitstore.FormatVersion)
	}
	if cp.Meta, err = unmarshalFlat(meta, cp, ownKeys); err != nil || cp.ID == "" {
		return nil, plumbing.ZeroHash, m.damaged(c, "", "damaged "+metaFile)
	}
	if err := cp.restoreRaw(cp.Meta); err != nil {
		return nil, plumbing.ZeroHash, m.damaged(c, cp.ID, "damaged "+metaFile+": "+err.Error())
	}
	cp.Label, cp.author = labelOf(c.Message, cp.ID), c.Author
	cp.Author = c.Author.Name + " <" + c.Author.Email + ">"
	if err := m.check(cp); err != nil {
		return nil, plumbing.ZeroHash, m.damaged(c, "", err.Error())
	}
	if cp.Head != "" && !plumbing.IsHash(cp.Head) {
		return nil, plumbing.ZeroHash, m.damaged(c, cp.ID, fmt.Sprintf("bad head %q", cp.Head))
	}
	if cp.Branch != "" && !strings.HasPrefix(cp.Branch, "refs/") {
		return nil, plumbing.ZeroHash, m.damaged(c, cp.ID, fmt.Sprintf("bad branch %q", cp.Branch))
	}
	if err := headIsParent(cp, c); err != nil {
		return nil, plumbing.ZeroHash, m.damaged(c, cp.ID, err.Error())
	}
	for _, b := range cp.Moved {
		if err := validBranch(b.Ref); err != nil || (b.Commit != "" && !plumbing.IsHash(b.Commit)) {
			return nil, plumbing.ZeroHash, m.damaged(c, cp.ID, fmt.Sprintf("bad moved branch %q", b.Ref))
		}
	}
	if cp.ChainBefore != "" && !plumbing.IsHash(cp.ChainBefore) {
		return nil, plumbing.ZeroHash, m.damaged(c, cp.ID, fmt.Sprintf("bad chain_before %q", cp.ChainBefore))
	}
	parents := c.ParentHashes
	if cp.Head != "" && len(parents) > 0 && parents[len(parents)-1] == cp.HeadCommit() {
		parents = parents[:len(parents)-1]
	}
	// The commits a safety checkpoint keeps reachable are parents too,
	// never equal to the previous checkpoint (buildChain): when the first
	// parent is one of them, the checkpoint is the oldest.
	var prev plumbing.Hash
	if len(parents) > 0 && !slices.Contains(cp.keptCommits(), parents[0]) {
		prev = parents[0]
	}
	return cp, prev, nil
}

// keptCommits are the commits besides HEAD's that cp's commit has as
// parents to keep them reachable: the branches a restore moved, and the
// chain it cut.
func (c *Checkpoint) keptCommits() []plumbing.Hash {
	var out []plumbing.Hash
	if c.ChainBefore != "" {
		out = append(out, plumbing.NewHash(c.ChainBefore))
	}
	for _, b := range c.Moved {
		if h := b.commit(); !h.IsZero() {
			out = append(out, h)
		}
	}
	return out
}

// List returns the chain's checkpoints, oldest first.
func (c *Chain) List() ([]*Checkpoint, error) {
	chain, _, err := c.read()
	return chain, err
}

// Newest returns the chain's newest checkpoint, reading that one only
// (nil when the chain is empty, or its tip is damaged).
func (c *Chain) Newest() (*Checkpoint, error) {
	tip, err := c.m.r.ReadRef(c.ref)
	if errors.Is(err, gitstore.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	cp, _, err := c.m.readCheckpoint(tip)
	var bad *damagedCheckpoint
	if errors.As(err, &bad) {
		return nil, nil
	}
	return cp, err
}

// Drop removes checkpoint id from the chain (compare-and-swap, retried):
// the chain is rewritten without it, so its snapshot becomes unreachable
// and git gc reclaims it.
func (c *Chain) Drop(id string) error {
	if err := c.m.refuseJournal(); err != nil {
		return err
	}
	for attempt := 0; attempt < 20; attempt++ {
		chain, tip, err := c.read()
		if err != nil {
			return err
		}
		next := without(chain, id)
		if len(next) == len(chain) {
			return userErr(ErrNoCheckpoint, "%s has no checkpoint '%s' any more", capitalized(c.name), id)
		}
		if len(next) == 0 {
			err = c.m.r.UpdateRef(c.ref, tip, plumbing.ZeroHash)
		} else {
			err = c.write(tip, next)
		}
		if !errors.Is(err, gitstore.ErrConflict) {
			return err
		}
	}
	return fmt.Errorf("the checkpoints of %s kept changing; try again", c.name)
}

func without(chain []*Checkpoint, id string) []*Checkpoint {
	out := make([]*Checkpoint, 0, len(chain))
	for _, c := range chain {
		if c.ID != id {
			out = append(out, c)
		}
	}
	return out
}

func capitalized(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
