package rollback

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-hegel/git-hegel/gitstore"
	gitobjects "github.com/git-hegel/git-hegel/gitstore/objects"
	"github.com/git-hegel/git-hegel/gitstore/refs"
)

// workspace is one repository's working tree, index, HEAD and per-worktree
// git directory, on disk or (for unit tests) in memory.
type workspace struct {
	r      *gitstore.Repo
	fs     wtFS
	obj    *objects
	memory bool // gitstore.NewMemory: index and HEAD live in the go-git storage
	cfg    scanConfig
	rules  *ignoreRules
	// fold: names that differ only in case are one file here
	// (core.ignorecase, or the filesystem found to fold them: folds).
	fold, foldKnown bool
	getenv          func(string) string
	now             func() time.Time
	journal         journalStore
	parkJournal     journalStore      // park_journal.go
	chainOf         func(Meta) string // Options.ChainOf

	lock  *indexLock    // held from the rollback's scan to its index write
	blobs *blobPrefetch // the blobs a restore under way will write
	pass  *restorePass  // the restore under way (convert.go)
	// attrSeen: the last snapshot saw a .gitattributes file.
	attrSeen bool

	// GIT_HEGEL_TRACE_PERFORMANCE=1 times each step on stderr, as
	// GIT_TRACE_PERFORMANCE does for git.
	traceOn   bool
	traceLast time.Time
}

// trace reports the time since the previous step.
func (w *workspace) trace(step string) {
	if !w.traceOn {
		return
	}
	now := time.Now()
	fmt.Fprintf(os.Stderr, "git-hegel: performance: %.6f s: %s\n", now.Sub(w.traceLast).Seconds(), step)
	w.traceLast = now
}

func newWorkspace(r *gitstore.Repo, getenv func(string) string, now func() time.Time) *workspace {
	c := r.Config()
	w := &workspace{
		r:      r,
		obj:    newObjects(r),
		memory: r.WorkTree == "",
		getenv: getenv,
		now:    now,
		fold:   c.Bool("core", "ignorecase", false),
	}
	if v := getenv("GIT_HEGEL_TRACE_PERFORMANCE"); v != "" && v != "0" && v != "false" {
		w.traceOn, w.traceLast = true, time.Now()
	}
	checkStat, _ := c.Get("core", "", "checkstat")
	w.cfg = scanConfig{
		fileMode:   c.Bool("core", "filemode", true),
		trustCtime: c.Bool("core", "trustctime", true),
		minimal:    strings.EqualFold(strings.TrimSpace(checkStat), "minimal"),
		symlinks:   c.Bool("core", "symlinks", true),
	}
	if w.memory {
		w.fs = billyFS{r.WorkTreeFS()}
		w.rules = &ignoreRules{}
		w.journal = &memJournal{}
		w.parkJournal = &memJournal{}
	} else {
		w.fs = osFS{root: r.WorkTree, probeDir: r.GitDir}
		excl, _ := c.Get("core", "", "excludesfile")
		w.rules = &ignoreRules{patterns: globalExcludes(strings.TrimSpace(excl), getenv("HOME"), getenv("XDG_CONFIG_HOME"), r.CommonDir)}
		w.journal = fileJournal{path: filepath.Join(r.GitDir, journalFile), perm: r.Shared()}
		w.parkJournal = fileJournal{path: filepath.Join(r.GitDir, parkJournalFile), perm: r.Shared()}
	}
	return w
}

func (w *workspace) snapshotter() *snapshotter {
	sn := &snapshotter{fs: w.fs, obj: w.obj, cfg: w.cfg, rules: w.rules, trace: w.trace}
	if !w.memory {
		sn.gitDir, sn.perm = w.r.GitDir, w.r.Shared()
		sn.subHead = w.submoduleHeads
		sn.converts = func(attributes bool) bool { return attributes || w.conversionConfigured() }
		sn.cleanHashes = w.cleanHashes
	}
	return sn
}

// readIndex loads the index (an empty one if there is none).
func (w *workspace) readIndex() (*gitIndex, error) {
	if w.memory {
		gi, err := w.r.Storage().Index()
		if err != nil {
			return &gitIndex{Version: 2}, nil
		}
		return fromGoGit(gi), nil
	}
	readAt := time.Now()
	f, err := os.Open(w.r.IndexFile)
	if errors.Is(err, fs.ErrNotExist) {
		return &gitIndex{Version: 2, ident: "none"}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read the index: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("cannot read the index: %w", err)
	}
	// One allocation of the file's size, filled by read(2): no growing
	// buffer, and the names decoded from it alias it (decodeIndex).
	data := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, fmt.Errorf("cannot read the index: %w", err)
	}
	checked := indexChecked(w.r.GitDir, w.r.IndexFile, fi, data, w.r.Shared(), readAt)
	idx, err := decodeIndexChecked(data, checked != nil)
	if err != nil {
		return nil, fmt.Errorf("%w (.git/index); 'git status' may repair it, or 'git reset' rebuilds it", err)
	}
	if checked != nil {
		checked()
	}
	idx.ModTime = fi.ModTime()
	sd, _ := sysStat(fi)
	idx.ident = fmt.Sprintf("%d %d %d", fi.Size(), fi.ModTime().UnixNano(), sd.Ino)
	return idx, nil
}

// indexLock is git's index.lock: while it exists no git command writes
// the index, and the new index is written into it and renamed into place.
// Until then it holds gitstore's owner marker (pid, host, boot), so a
// lock left by a git-hegel that was killed can be recognised and removed
// (git's own stale locks are left alone, as git leaves them).
type indexLock struct {
	path string
}

// ErrIndexLocked reports an index.lock held by another process.
var ErrIndexLocked = errors.New("index is locked")

func (w *workspace) lockPath() string { return w.r.IndexFile + ".lock" }

func (w *workspace) lockIndex() error {
	if w.memory || w.lock != nil {
		return nil
	}
	p := w.lockPath()
	for attempt := 0; ; attempt++ {
		err := w.r.CreateLock(p)
		if errors.Is(err, fs.ErrExist) && attempt == 0 && w.removeStaleLock() {
			continue
		}
		if errors.Is(err, fs.ErrExist) {
			return userErr(ErrIndexLocked, "cannot lock the index: %s", refs.LockError(p))
		}
		if err != nil {
			return fmt.Errorf("cannot lock the index: %w", err)
		}
		w.lock = &indexLock{path: p}
		return nil
	}
}

// removeStaleLock removes an index.lock that a git-hegel process which no
// longer runs left behind (with a warning), and reports whether it did.
func (w *workspace) removeStaleLock() bool {
	if w.memory {
		return false
	}
	// The new index is written beside the lock, to index.lock.hegel-<pid>:
	// one a killed process left is removed once no process has that pid.
	if leftovers, _ := filepath.Glob(w.lockPath() + ".hegel-*"); len(leftovers) > 0 {
		for _, l := range leftovers {
			if pid, err := strconv.Atoi(l[strings.LastIndexByte(l, '-')+1:]); err == nil && !pidAlive(pid) {
				os.Remove(l)
			}
		}
	}
	return w.r.BreakDeadLock(w.lockPath())
}

// unlockIndex drops the lock without changing the index.
func (w *workspace) unlockIndex() {
	if w.lock == nil {
		return
	}
	os.Remove(w.lock.path)
	w.lock = nil
}

// indexChanged reports whether the index file is no longer the one idx was
// read from.
func (w *workspace) indexChanged(idx *gitIndex) bool {
	if w.memory {
		return false
	}
	return indexIdent(filepath.Join(w.r.GitDir, "index")) != idx.ident
}

func indexIdent(p string) string {
	fi, err := os.Stat(p)
	if err != nil {
		return "none"
	}
	sd, _ := sysStat(fi)
	return fmt.Sprintf("%d %d %d", fi.Size(), fi.ModTime().UnixNano(), sd.Ino)
}

// writeIndex writes idx while the lock is held and renames it into place.
// Unlike git, which writes the new index into index.lock itself, it goes
// to a temporary file beside it: index.lock keeps its marker to the end, so
// a process killed while writing leaves a lock that is known to be its own.
func (w *workspace) writeIndex(idx *gitIndex) error {
	if w.memory {
		return w.r.Storage().SetIndex(toGoGit(idx))
	}
	if w.lock == nil {
		if err := w.lockIndex(); err != nil {
			return err
		}
	}
	tmp := w.lockPath() + ".hegel-" + strconv.Itoa(os.Getpid())
	f, err := w.r.Shared().OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
	if err != nil {
		return fmt.Errorf("cannot write the index: %w", err)
	}
	err = encodeIndex(f, idx)
	if err == nil {
		err = w.r.SyncFile(gitobjects.FsyncIndex, f) // core.fsync's index component, as git
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, w.r.IndexFile)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("cannot write the index: %w", err)
	}
	w.unlockIndex()
	return nil
}

// head is where HEAD points: a branch (Ref set) or a detached commit.
type head struct {
	Ref    plumbing.ReferenceName // "" when detached
	Commit plumbing.Hash          // zero on an unborn branch
}

func (h head) name() string {
	if h.Ref == "" {
		return "HEAD"
	}
	return h.Ref.Short()
}

func (w *workspace) readHead() (head, error) {
	ref, err := w.r.Storage().Reference(plumbing.HEAD)
	if err != nil {
		return head{}, fmt.Errorf("cannot read HEAD: %w", err)
	}
	if ref.Type() != plumbing.SymbolicReference {
		return head{Commit: ref.Hash()}, nil
	}
	h := head{Ref: ref.Target()}
	c, err := w.r.ReadRef(string(h.Ref))
	if err != nil && !errors.Is(err, gitstore.ErrNotFound) {
		return head{}, fmt.Errorf("cannot read %s: %w", h.Ref, err)
	}
	h.Commit = c
	return h, nil
}

// folds reports whether names that differ only in case are the same
// file in the working tree: core.ignorecase says so, or the filesystem,
// probed once (core.ignorecase may be wrong: a repository copied or
// mounted elsewhere keeps the value git found when it was created).
func (w *workspace) folds() bool {
	if !w.foldKnown {
		w.fold = w.fold || w.fs.foldsCase()
		w.foldKnown = true
	}
	return w.fold
}

// reflog appends to a ref's log through gitstore's reflog writer, which
// follows core.logAllRefUpdates as git does; a failure only costs the
// log entry (the move itself has happened).
func (w *workspace) reflog(ref string, from, to plumbing.Hash, msg string) {
	if w.memory {
		return
	}
	_ = w.r.AppendReflog(ref, from, to, msg)
}

// operationInProgress names a git operation whose state a rollback would
// break (git reset --hard discards it; git-hegel refuses instead).
func (w *workspace) operationInProgress() string {
	if w.memory {
		return ""
	}
	for _, p := range []struct{ file, what string }{
		{"MERGE_HEAD", "a merge"}, {"CHERRY_PICK_HEAD", "a cherry-pick"}, {"REVERT_HEAD", "a revert"},
		{"rebase-merge", "a rebase"}, {"rebase-apply", "a rebase or am"}, {"sequencer", "a cherry-pick or revert"},
	} {
		if _, err := os.Lstat(filepath.Join(w.r.GitDir, p.file)); err == nil {
			return p.what
		}
	}
	return ""
}

func pidAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if pid == os.Getpid() {
		return true
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	return p.Signal(syscall.Signal(0)) == nil
}
