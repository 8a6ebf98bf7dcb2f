package rollback

import (
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/engine/text"
	"github.com/git-hegel/git-hegel/gitstore"
)

// Checkpoint kinds.
const (
	KindEnter  = "enter"  // taken when the node was entered (start, next, prev, restart)
	KindManual = "manual" // git hegel checkpoint
	KindSafety = "safety" // taken by a rollback before it changed anything
)

// RefPrefix is where checkpoints live: one commit chain per task.
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

// Checkpoint is one stored snapshot: its metadata (checkpoint.json) and
// where it lives.
type Checkpoint struct {
	ID         string    `json:"id"`
	Task       string    `json:"task"`
	WorkflowID string    `json:"workflow_id"`
	Node       string    `json:"node"`
	Kind       string    `json:"kind"`
	Message    string    `json:"message,omitempty"`
	CreatedAt  time.Time `json:"created_at"`
	// Branch is HEAD's branch as a full ref name ("" when detached); Head
	// its commit ("" on an unborn branch).
	Branch  string   `json:"branch,omitempty"`
	Head    string   `json:"head,omitempty"`
	History []string `json:"history"`
	// FilesChanged lists the paths that differ from the previous
	// checkpoint's working tree (from HEAD's tree for the first), at most
	// 1000 of FilesChangedCount.
	FilesChanged      []string `json:"files_changed"`
	FilesChangedCount int      `json:"files_changed_count"`
	// Skipped are untracked files left out (too large, or names git
	// cannot store).
	Skipped []skippedFile `json:"skipped,omitempty"`
	// RollbackTo is set on safety checkpoints: the node the rollback went
	// back to.
	RollbackTo string `json:"rollback_to,omitempty"`
	// Moved is set on safety checkpoints: the branches the rollback moved
	// besides the one checked out (Branch), with the commits they were at,
	// so that undoing it puts them back. Their commits are parents of the
	// checkpoint's commit, which keeps them reachable.
	Moved []MovedBranch `json:"moved,omitempty"`
	// ChainBefore is set on safety checkpoints whose rollback dropped the
	// checkpoints taken after its target: the chain's tip before, kept as
	// a parent, so that undoing the rollback brings them back.
	ChainBefore string `json:"chain_before,omitempty"`
	// AssumeUnchanged and IntentToAdd list the index entries with those
	// flags (git update-index --assume-unchanged, git add -N); a restore
	// sets them again.
	AssumeUnchanged []string `json:"assume_unchanged,omitempty"`
	IntentToAdd     []string `json:"intent_to_add,omitempty"`

	changed []string // files changed, when the caller knows them already

	Commit    plumbing.Hash `json:"-"` // its commit on the chain today (rewritten by eviction)
	Root      plumbing.Hash `json:"-"`
	IndexTree plumbing.Hash `json:"-"` // zero: empty
	WorkTree  plumbing.Hash `json:"-"` // zero: empty
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

func (c *Checkpoint) describe() string {
	switch c.Kind {
	case KindSafety:
		if c.RollbackTo != "" {
			return fmt.Sprintf("safety at %s (before rolling back to %s)", c.Node, c.RollbackTo)
		}
		return "safety at " + c.Node
	case KindManual:
		if c.Message != "" {
			return c.Node + ": " + firstLine(c.Message)
		}
		return "at " + c.Node
	}
	return "enter " + c.Node
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
	// out of a checkpoint).
	Warn func(msg string)
	// Note reports what happened besides the operation asked for (a
	// checkpoint evicted by the bound), one line each.
	Note func(msg string)
	// QuotePath renders a path in warnings (default: quotePath, git's
	// quoting with core.quotePath on).
	QuotePath func(string) string
	// Progress is told how far checkpoints and rollbacks have got: files
	// scanned, objects written, files updated (nil: nobody watches).
	Progress gitstore.Progress
}

// Manager takes, lists and restores the checkpoints of one repository.
type Manager struct {
	r     *gitstore.Repo
	w     *workspace
	now   func() time.Time
	warn  func(string)
	note  func(string)
	quote func(string) string

	// MaxCheckpoints bounds the automatic checkpoints of each task: those
	// taken on entering a node and the safety checkpoints of earlier
	// rollbacks (hegel.maxCheckpoints, default 5, at least 1). The newest
	// safety checkpoint is kept besides: the last rollback stays undoable.
	MaxCheckpoints int
	// MaxManual bounds the checkpoints taken by hand
	// (hegel.maxManualCheckpoints, default 20, at least 1); they are kept
	// until dropped or evicted by this bound.
	MaxManual int
	// MaxFileSize leaves larger untracked files out of checkpoints
	// (hegel.checkpointMaxFileSize, default 10 MiB; 0 or less: no limit).
	MaxFileSize int64
	// Auto enables the checkpoints taken when a node is entered
	// (hegel.checkpoints, default on).
	Auto bool

	warned map[plumbing.Hash]bool // damaged checkpoints already reported
}

// Defaults for the hegel.* settings.
const (
	DefaultMaxCheckpoints = 5
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
	if o.Note == nil {
		o.Note = func(string) {}
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
		note:           o.Note,
		quote:          o.QuotePath,
		MaxCheckpoints: int(c.Int("hegel", "maxcheckpoints", DefaultMaxCheckpoints)),
		MaxManual:      int(c.Int("hegel", "maxmanualcheckpoints", DefaultMaxManual)),
		MaxFileSize:    c.Int("hegel", "checkpointmaxfilesize", DefaultMaxFileSize),
		Auto:           c.Bool("hegel", "checkpoints", true),
	}
	m.w.cfg.progress = gitstore.OrNoProgress(o.Progress)
	return m
}

// Close releases the files the manager keeps open.
func (m *Manager) Close() { m.w.obj.close() }

func (m *Manager) bounds() (auto, manual int) {
	return max(m.MaxCheckpoints, 1), max(m.MaxManual, 1)
}

// bound applies the FIFO bounds to chain (oldest first) and reports each
// checkpoint it evicts, one line each.
func (m *Manager) bound(chain []*Checkpoint) []*Checkpoint {
	auto, manual := m.bounds()
	kept, evicted := evictOldest(chain, auto, manual)
	for _, c := range evicted {
		m.note(evictionLine(c))
	}
	return kept
}

func evictionLine(c *Checkpoint) string {
	line := fmt.Sprintf("Evicted oldest snapshot (FIFO): checkpoint %s at %s", c.ID, c.Node)
	switch {
	case c.Kind == KindManual && c.Message != "":
		line += fmt.Sprintf(" (taken by hand: %q)", firstLine(c.Message))
	case c.Kind == KindManual:
		line += " (taken by hand)"
	case c.Kind == KindSafety:
		line += " (safety checkpoint of an earlier rollback)"
	}
	return line
}

func (m *Manager) snapshotter() *snapshotter {
	sn := m.w.snapshotter()
	sn.cfg.maxSize = m.MaxFileSize
	return sn
}

// AutoCheckpoint takes the checkpoint for a node just entered; it is the engine's
// Checkpoint hook. It does nothing when hegel.checkpoints is off.
func (m *Manager) AutoCheckpoint(st *engine.State) error {
	if !m.Auto {
		return nil
	}
	_, _, err := m.Take(st, KindEnter, "")
	return err
}

// Take snapshots the working tree and the index for task st at its current
// node. created is false when nothing changed since the newest checkpoint
// at the same node (that one is returned).
func (m *Manager) Take(st *engine.State, kind, message string) (cp *Checkpoint, created bool, err error) {
	if j, err := m.journal(); err != nil {
		return nil, false, err
	} else if j != nil {
		return nil, false, userErr(ErrInterrupted, "%s", interruptedMessage(j))
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
	cp = m.newCheckpoint(st, kind, message, h, snap)
	cp, created, err = m.appendCheckpoint(cp, true)
	m.w.trace("store the checkpoint")
	return cp, created, err
}

func (m *Manager) newCheckpoint(st *engine.State, kind, message string, h head, snap *snapshot) *Checkpoint {
	cp := &Checkpoint{
		Task: st.Task, WorkflowID: st.WorkflowID, Node: st.CurrentNode, Kind: kind,
		Message: strings.TrimSpace(message), CreatedAt: m.now().UTC(),
		Branch: string(h.Ref), History: append([]string(nil), st.History...),
		Skipped:   snap.skipped,
		IndexTree: snap.indexTree, WorkTree: snap.worktree,
		AssumeUnchanged: snap.assumeUnchanged, IntentToAdd: snap.intentToAdd,
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

// warnSkipped prints one line about the files a checkpoint left out.
func (m *Manager) warnSkipped(skipped []skippedFile) {
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
			text.Plural(len(big), "untracked file", "untracked files"), humanSize(m.MaxFileSize), listSome(big, 3, m.quote)))
	}
	if len(bad) > 0 {
		m.warn(fmt.Sprintf("%s whose names git cannot store left out of the checkpoint: %s",
			text.Plural(len(bad), "untracked file", "untracked files"), listSome(bad, 3, m.quote)))
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
	return text.Plural(int(n), "byte", "bytes")
}

// sameAs reports whether cp would store exactly what old stores.
func sameAs(old, cp *Checkpoint) bool {
	return old.Node == cp.Node && old.Branch == cp.Branch && old.Head == cp.Head &&
		old.IndexTree == cp.IndexTree && old.WorkTree == cp.WorkTree && old.WorkflowID == cp.WorkflowID &&
		slices.Equal(old.AssumeUnchanged, cp.AssumeUnchanged) && slices.Equal(old.IntentToAdd, cp.IntentToAdd)
}

// appendCheckpoint adds cp at the end of its task's chain, with
// compare-and-swap and retry. With evict, the chain is then cut to the
// bound. A checkpoint identical to the newest is not stored again (safety
// checkpoints always are: an undo needs one).
func (m *Manager) appendCheckpoint(cp *Checkpoint, evict bool) (*Checkpoint, bool, error) {
	for attempt := 0; attempt < 20; attempt++ {
		chain, tip, err := m.chain(cp.Task)
		if err != nil {
			return nil, false, err
		}
		var prev *Checkpoint
		if len(chain) > 0 {
			prev = chain[len(chain)-1]
		}
		labelled := cp.Kind == KindManual && cp.Message != ""
		if prev != nil && cp.Kind != KindSafety && !labelled && sameAs(prev, cp) {
			// (A checkpoint made by hand with a message is always kept:
			// the label is the point. It shares every tree with prev.)
			return prev, false, nil
		}
		if prev != nil && cp.Kind == KindEnter && len(cp.History) == 1 && prev.WorkflowID != cp.WorkflowID {
			// A finished task's name was reused: the old run's
			// checkpoints mean nothing to the new one.
			chain, prev = nil, nil
		}
		m.filesChanged(prev, cp)
		cp.ID = uniqueID(chain, cp, prev)
		if err := m.writeRoot(cp); err != nil {
			return nil, false, err
		}
		next := append(append([]*Checkpoint(nil), chain...), cp)
		var evicted []*Checkpoint
		if evict {
			auto, manual := m.bounds()
			next, evicted = evictOldest(next, auto, manual)
		}
		err = m.writeChain(cp.Task, tip, next)
		if errors.Is(err, gitstore.ErrConflict) {
			continue
		}
		if err != nil {
			return nil, false, err
		}
		for _, c := range evicted {
			m.note(evictionLine(c))
		}
		return cp, true, nil
	}
	return nil, false, fmt.Errorf("the checkpoints of task %s kept changing; try again", cp.Task)
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

// uniqueID derives a short id from what the checkpoint holds, so scripts
// with a fixed clock get stable ids, salted until it is unique in chain.
func uniqueID(chain []*Checkpoint, cp, prev *Checkpoint) string {
	prevID := ""
	if prev != nil {
		prevID = prev.ID
	}
	for salt := 0; ; salt++ {
		h := sha1.New()
		fmt.Fprintf(h, "%s\n%s\n%s\n%s\n%s\n%s\n%s\n%s\n%s\n%s\n%s\n%d",
			cp.Task, cp.WorkflowID, cp.Node, cp.Kind, cp.Message, cp.CreatedAt.Format(time.RFC3339Nano),
			cp.Head, cp.IndexTree, cp.WorkTree, prevID, cp.RollbackTo, salt)
		id := hex.EncodeToString(h.Sum(nil))[:8]
		clash := false
		for _, c := range chain {
			if strings.HasPrefix(c.ID, id) || strings.HasPrefix(id, c.ID) {
				clash = true
			}
		}
		if !clash {
			return id
		}
	}
}

// evictOldest applies the FIFO bounds to chain (oldest first): at most
// maxAuto checkpoints taken on entering nodes or by earlier rollbacks, at
// most maxManual taken by hand, the oldest of each evicted first. The
// newest safety checkpoint is never evicted nor counted: the last rollback
// must stay undoable, and undoing it must not cost a checkpoint. Older
// safety checkpoints go before the ones taken on entering nodes (those
// are what rollbacks go back to; repeated undos and redos bring older
// safety checkpoints back and would otherwise push them out).
func evictOldest(chain []*Checkpoint, maxAuto, maxManual int) (kept, evicted []*Checkpoint) {
	newestSafety := -1
	for i := len(chain) - 1; i >= 0; i-- {
		if chain[i].Kind == KindSafety {
			newestSafety = i
			break
		}
	}
	auto, manual := 0, 0
	for i, c := range chain {
		switch {
		case i == newestSafety:
		case c.Kind == KindManual:
			manual++
		default:
			auto++
		}
	}
	drop := make([]bool, len(chain))
	for pass := 0; pass < 2; pass++ {
		for i, c := range chain {
			switch {
			case i == newestSafety || drop[i]:
			case c.Kind == KindManual:
				if pass == 0 && manual > maxManual {
					manual--
					drop[i] = true
				}
			case auto > maxAuto && (pass == 1 || c.Kind == KindSafety):
				auto--
				drop[i] = true
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

// writeRoot stores cp's root tree: version, checkpoint.json, index/ and
// worktree/ (the last two left out when empty).
func (m *Manager) writeRoot(cp *Checkpoint) error {
	meta, err := json.MarshalIndent(cp, "", "  ")
	if err != nil {
		return err
	}
	meta = append(meta, '\n')
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
		if err := m.w.obj.write(plumbing.BlobObject, hashObject(plumbing.BlobObject, b), b); err != nil {
			return err
		}
	}
	mem := map[plumbing.Hash][]byte{}
	root, err := buildTree(leaves, mem)
	if err != nil {
		return err
	}
	if err := m.w.obj.write(plumbing.TreeObject, root, mem[root]); err != nil {
		return err
	}
	cp.Root = root
	return nil
}

func commitMessage(cp *Checkpoint) string {
	return fmt.Sprintf("checkpoint %s: %s", cp.ID, cp.describe())
}

// writeChain stores chain (oldest first) as the task's commit chain and
// moves the ref from tip with compare-and-swap. Each commit's first parent
// is the previous checkpoint and its last the HEAD commit it recorded, so
// that commit stays reachable. Commits whose parents are unchanged are
// reused; the rest are rewritten, which is how evicted checkpoints become
// unreachable for git gc.
func (m *Manager) writeChain(task string, tip plumbing.Hash, chain []*Checkpoint) error {
	prev, err := m.buildChain(chain, plumbing.ZeroHash)
	if err != nil {
		return err
	}
	if prev == tip {
		return nil
	}
	for _, cp := range chain {
		if cp.Commit == tip {
			return m.r.UpdateRef(RefPrefix+task, tip, prev)
		}
	}
	// The old tip is not in the new chain (eviction rewrote it): the
	// reflog starts afresh, or its entries would keep the evicted
	// snapshots reachable for git gc until they expired.
	return m.r.RewriteRef(RefPrefix+task, tip, prev, "")
}

// buildChain writes the commits of chain (oldest first) and returns the
// newest. extra, if set, becomes a middle parent of the newest commit
// (MergeChains uses it to keep the remote's tip an ancestor).
func (m *Manager) buildChain(chain []*Checkpoint, extra plumbing.Hash) (plumbing.Hash, error) {
	var prev plumbing.Hash
	for i, cp := range chain {
		var parents []plumbing.Hash
		if !prev.IsZero() {
			parents = append(parents, prev)
		}
		if i == len(chain)-1 && !extra.IsZero() && !prev.IsZero() && extra != prev {
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
		if cp.Commit.IsZero() || !m.sameParents(cp.Commit, parents) {
			c, err := m.r.CommitTree(cp.Root, parents, commitMessage(cp))
			if err != nil {
				return plumbing.ZeroHash, fmt.Errorf("cannot store checkpoint %s: %w", cp.ID, err)
			}
			cp.Commit = c
		}
		prev = cp.Commit
	}
	return prev, nil
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

func (m *Manager) commit(h plumbing.Hash) (*object.Commit, error) {
	m.w.obj.mu.Lock()
	defer m.w.obj.mu.Unlock()
	return object.GetCommit(m.w.obj.s, h)
}

// ErrNoCheckpoint reports a checkpoint that does not exist.
var ErrNoCheckpoint = errors.New("no such checkpoint")

// chain reads a task's checkpoints, oldest first, and the ref's commit.
func (m *Manager) chain(task string) ([]*Checkpoint, plumbing.Hash, error) {
	tip, err := m.r.ReadRef(RefPrefix + task)
	if errors.Is(err, gitstore.ErrNotFound) {
		return nil, plumbing.ZeroHash, nil
	}
	if err != nil {
		return nil, plumbing.ZeroHash, err
	}
	out, err := m.chainAt(task, tip)
	return out, tip, err
}

// chainAt reads the checkpoints of the chain ending at tip, oldest first.
func (m *Manager) chainAt(task string, tip plumbing.Hash) ([]*Checkpoint, error) {
	var out []*Checkpoint
	for h := tip; !h.IsZero(); {
		if len(out) > 100000 {
			return nil, fmt.Errorf("%s%s: the chain is too long", RefPrefix, task)
		}
		cp, parent, err := m.readCheckpoint(h)
		var bad *damagedCheckpoint
		if errors.As(err, &bad) {
			// One damaged entry (it may have come from another clone)
			// must not hide the others: say so, and go on below it.
			m.skipDamaged(task, bad)
			h = bad.prev
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s%s: %w", RefPrefix, task, err)
		}
		out = append(out, cp)
		h = parent
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}

// readCheckpoint parses one checkpoint commit and returns it and the
// previous checkpoint's commit (zero for the oldest).
func (m *Manager) readCheckpoint(h plumbing.Hash) (*Checkpoint, plumbing.Hash, error) {
	c, err := m.commit(h)
	if err != nil {
		return nil, plumbing.ZeroHash, fmt.Errorf("checkpoint commit %s is not readable: %v", h, err)
	}
	data, err := m.w.obj.read(plumbing.TreeObject, c.TreeHash)
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
			if meta, err = m.w.obj.read(plumbing.BlobObject, e.Hash); err != nil {
				return nil, plumbing.ZeroHash, err
			}
		case e.Name == versionFile && e.Mode == filemode.Regular:
			if ver, err = m.w.obj.read(plumbing.BlobObject, e.Hash); err != nil {
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
	if err := json.Unmarshal(meta, cp); err != nil || cp.ID == "" || cp.Node == "" {
		return nil, plumbing.ZeroHash, m.damaged(c, "", "damaged "+metaFile)
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
// parents to keep them reachable: the branches a rollback moved, and the
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

// List returns a task's checkpoints, newest first.
func (m *Manager) List(task string) ([]*Checkpoint, error) {
	chain, _, err := m.chain(task)
	if err != nil {
		return nil, err
	}
	for i, j := 0, len(chain)-1; i < j; i, j = i+1, j-1 {
		chain[i], chain[j] = chain[j], chain[i]
	}
	return chain, nil
}

// Find selects a checkpoint of task by id (or a unique prefix of at least
// four characters) or else by node: the newest checkpoint taken when that
// node was entered, or failing that the newest one at that node.
func (m *Manager) Find(task, sel string) (*Checkpoint, error) {
	chain, _, err := m.chain(task)
	if err != nil {
		return nil, err
	}
	if cp, err := findID(chain, sel); cp != nil || err != nil {
		return cp, err
	}
	if cp := newestAt(chain, sel, true); cp != nil {
		return cp, nil
	}
	if cp := newestAt(chain, sel, false); cp != nil {
		return cp, nil
	}
	return nil, userErr(ErrNoCheckpoint, "Task %s has no checkpoint '%s'. Run 'git hegel checkpoint list' to see them", task, sel)
}

func findID(chain []*Checkpoint, sel string) (*Checkpoint, error) {
	if len(sel) < 4 || !isHex(sel) {
		return nil, nil
	}
	var found []*Checkpoint
	for _, c := range chain {
		if strings.HasPrefix(c.ID, strings.ToLower(sel)) {
			found = append(found, c)
		}
	}
	switch len(found) {
	case 0:
		return nil, nil
	case 1:
		return found[0], nil
	}
	return nil, fmt.Errorf("checkpoint id '%s' is ambiguous; give more characters", sel)
}

func isHex(s string) bool {
	for _, r := range s {
		if !strings.ContainsRune("0123456789abcdefABCDEF", r) {
			return false
		}
	}
	return true
}

// newestAt returns the newest checkpoint at node (only those taken on
// entering it, with enterOnly).
func newestAt(chain []*Checkpoint, node string, enterOnly bool) *Checkpoint {
	for i := len(chain) - 1; i >= 0; i-- {
		c := chain[i]
		if c.Node == node && (!enterOnly || c.Kind == KindEnter) {
			return c
		}
	}
	return nil
}

// FindID selects a checkpoint of task by id or unique id prefix (at least
// four characters); node names are not accepted.
func (m *Manager) FindID(task, sel string) (*Checkpoint, error) {
	chain, _, err := m.chain(task)
	if err != nil {
		return nil, err
	}
	cp, err := findID(chain, sel)
	if err != nil {
		return nil, err
	}
	if cp == nil {
		return nil, userErr(ErrNoCheckpoint, "Task %s has no checkpoint '%s'. Run 'git hegel checkpoint list' to see them", task, sel)
	}
	return cp, nil
}

// Drop removes checkpoint id from task's list (compare-and-swap, retried):
// the chain is rewritten without it, so its snapshot becomes unreachable
// and git gc reclaims it.
func (m *Manager) Drop(task, id string) error {
	if j, err := m.journal(); err != nil {
		return err
	} else if j != nil {
		return userErr(ErrInterrupted, "%s", interruptedMessage(j))
	}
	for attempt := 0; attempt < 20; attempt++ {
		chain, tip, err := m.chain(task)
		if err != nil {
			return err
		}
		next := without(chain, id)
		if len(next) == len(chain) {
			return userErr(ErrNoCheckpoint, "Task %s has no checkpoint '%s' any more", task, id)
		}
		if len(next) == 0 {
			err = m.r.UpdateRef(RefPrefix+task, tip, plumbing.ZeroHash)
		} else {
			err = m.writeChain(task, tip, next)
		}
		if !errors.Is(err, gitstore.ErrConflict) {
			return err
		}
	}
	return fmt.Errorf("the checkpoints of task %s kept changing; try again", task)
}
