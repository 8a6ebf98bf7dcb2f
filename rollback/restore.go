package rollback

import (
	"errors"
	"fmt"
	"io/fs"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// Restoring a checkpoint writes the changed files and the index itself
// rather than through go-git's Worktree.Reset/Checkout: Reset moves HEAD
// first, deletes ignored files unless every path is listed, rehashes the
// whole tree and takes no index.lock. Here only the paths that differ
// between the current snapshot and the checkpoint are touched (a tree
// diff that skips equal subtrees), ignored and oversized files are never
// removed, and the index is written once under index.lock with stat data
// reused wherever it is still valid. See docs/rollback.md for figures.

// FileChange is one working-tree path a rollback changes.
type FileChange struct {
	Path string `json:"path"`
	// Op is "create", "modify", "delete", "mode" (executable bit only) or
	// "type" (file, link or submodule replaced by another kind).
	Op   string `json:"op"`
	From string `json:"from_mode,omitempty"` // git's octal mode; "" when absent
	To   string `json:"to_mode,omitempty"`
}

func summarize(wt []change) []FileChange {
	out := make([]FileChange, 0, len(wt))
	for _, c := range wt {
		fc := FileChange{Path: c.path}
		if c.from.mode != 0 {
			fc.From = modeNames[c.from.mode]
		}
		if c.to.mode != 0 {
			fc.To = modeNames[c.to.mode]
		}
		switch {
		case c.from.mode == 0:
			fc.Op = "create"
		case c.to.mode == 0:
			fc.Op = "delete"
		case kindOfMode(c.from.mode) != kindOfMode(c.to.mode):
			fc.Op = "type"
		case c.from.hash == c.to.hash:
			fc.Op = "mode"
		default:
			fc.Op = "modify"
		}
		out = append(out, fc)
	}
	return out
}

func kindOfMode(m filemode.FileMode) fileKind {
	switch m {
	case filemode.Symlink:
		return kindSymlink
	case filemode.Submodule:
		return kindDir
	case 0:
		return kindNone
	}
	return kindFile
}

// diffs computes what restoring target over snap changes, validating every
// part of the checkpoint it will use: tree structure and names (strict
// parse), blobs present, and nothing unsafe in any path it writes.
func (w *workspace) diffs(curWT, curIdx, wantWT, wantIdx plumbing.Hash) (wt, ix []change, err error) {
	trusted := &treeReader{o: w.obj}
	checked := &treeReader{o: w.obj, strict: true, foldCase: w.folds()}
	if wt, err = diffTrees(trusted, checked, curWT, wantWT); err != nil {
		return nil, nil, err
	}
	if curIdx == curWT && wantIdx == wantWT {
		ix = append([]change(nil), wt...) // clean on both sides: the same diff
	} else if ix, err = diffTrees(trusted, checked, curIdx, wantIdx); err != nil {
		return nil, nil, err
	}
	seen := map[plumbing.Hash]bool{}
	for _, list := range [][]change{wt, ix} {
		for _, c := range list {
			if c.to.mode == 0 {
				continue
			}
			if err := checkPath(c.path); err != nil {
				return nil, nil, err
			}
			if c.to.mode == filemode.Submodule || seen[c.to.hash] {
				continue
			}
			seen[c.to.hash] = true
			if !w.obj.has(c.to.hash) {
				return nil, nil, fmt.Errorf("the checkpoint is incomplete: object %s (%s) is missing", c.to.hash, quotePath(c.path))
			}
		}
	}
	return wt, ix, nil
}

// skipWorktree drops the changes to paths the index marks skip-worktree
// (sparse checkouts): their files are absent by design and stay so.
func skipWorktree(wt []change, idx *gitIndex) []change {
	var skip map[string]bool
	for i := range idx.Entries {
		if e := &idx.Entries[i]; e.skipWorktree() {
			if skip == nil {
				skip = map[string]bool{}
			}
			skip[e.Name] = true
		}
	}
	if skip == nil {
		return wt
	}
	out := wt[:0]
	for _, c := range wt {
		if !skip[c.path] {
			out = append(out, c)
		}
	}
	return out
}

// ErrInTheWay reports a file the rollback would have to overwrite or
// remove although no checkpoint holds it (an ignored or oversized file).
var ErrInTheWay = errors.New("a file is in the way")

// restoreWords are the words a refusal uses for the operation that would
// change the files (actor), what needs the path, and why the file there
// is not simply replaced: the words of a rollback, of an undo of agent
// actions (a restore limited to the paths they touched), of a stash pop,
// and of the cleaning after a stash push.
type restoreWords struct {
	actor                        string
	needsDir, needsFile, unsaved string
}

var (
	rollbackWay = restoreWords{
		actor:     "the rollback",
		needsDir:  "the checkpoint needs a directory there",
		needsFile: "it is in no checkpoint, and the rollback needs its directory to be a file",
		unsaved:   "it is in no checkpoint (ignored, or too large to save)",
	}
	undoWay = restoreWords{
		actor:     "the undo",
		needsDir:  "the snapshot needs a directory there",
		needsFile: "it is in no snapshot, and the undo needs its directory to be a file",
		unsaved:   "it is in no snapshot (ignored, or too large to save)",
	}
	unparkWay = restoreWords{
		actor:     "the stash pop",
		needsDir:  "the stash needs a directory there",
		needsFile: "it is not in the stash, and the stash needs its directory to be a file",
		unsaved:   "it is ignored or too large to save, and the stash has a file there",
	}
	parkWay = restoreWords{
		actor:     "the stash push",
		needsDir:  "HEAD has a directory there",
		needsFile: "it would not be parked, and HEAD has a file where its directory is",
		unsaved:   "it is ignored or too large to park, and HEAD has a file there",
	}
)

// conflicts checks, before anything is changed, that the paths the
// rollback writes are free or hold only what the current snapshot has (and
// so the safety checkpoint keeps): an ignored file, an oversized untracked
// file or a nested repository in the way is never overwritten or removed,
// and no file is ever written through a symbolic link.
func (w *workspace) conflicts(wt []change, words restoreWords) error {
	current := make(map[string]bool, len(wt))
	for _, c := range wt {
		if c.from.mode != 0 && c.from.mode != filemode.Submodule {
			current[c.path] = true
		}
	}
	removed := func(p string) bool {
		return current[p] // every current leaf in the diff is removed or rewritten
	}
	okDirs := map[string]bool{"": true}
	// replaced are the parent directories that are a file or link now,
	// which the rollback removes first: nothing is below them once it
	// has (an lstat below a link would look past the working tree).
	replaced := map[string]bool{}
	inTheWay := func(p, why string) error {
		return userErr(ErrInTheWay, "%s %s. Move it away (or delete it) and run the command again; nothing was changed", quotePath(p), why)
	}
	for _, c := range wt {
		if c.to.mode == 0 {
			continue
		}
		below := false
		for _, d := range parentDirs(c.path) {
			if replaced[d] {
				below = true
			}
			if okDirs[d] || below {
				continue
			}
			st, err := w.fs.lstat(d)
			switch {
			case errors.Is(err, fs.ErrNotExist) || isNotDir(err):
			case err != nil:
				return err
			case st.kind == kindDir:
			case removed(d):
				// a file or link the rollback removes first
				replaced[d], below = true, true
			default:
				return inTheWay(d, "is in the way: "+words.needsDir)
			}
			okDirs[d] = true
		}
		if c.from.mode != 0 || below {
			continue
		}
		st, err := w.fs.lstat(c.path)
		switch {
		case errors.Is(err, fs.ErrNotExist) || isNotDir(err):
		case err != nil:
			return err
		case st.kind == kindDir:
			if c.to.mode == filemode.Submodule {
				continue
			}
			if p := w.unknownBelow(c.path, current); p != "" {
				return inTheWay(p, "is in the way: "+words.needsFile)
			}
		default:
			if w.holds(c.path, st, c.to) {
				// exactly what the checkpoint has (an ignored file that
				// it holds from before it was ignored): nothing is lost
				continue
			}
			return inTheWay(c.path, "is in the way: "+words.unsaved)
		}
	}
	return nil
}

// holds reports whether the file at p (lstat st) has the content and mode
// of l.
func (w *workspace) holds(p string, st fstat, l leaf) bool {
	if (st.kind != kindFile && st.kind != kindSymlink) || (st.kind == kindFile && st.size > 64<<20) {
		return false
	}
	sn := w.snapshotter()
	if sn.modeOf(st.kind, st.exec, l.mode) != l.mode {
		return false
	}
	h, err := sn.hashFile(p, st.kind, false)
	return err == nil && h == l.hash
}

// unknownBelow returns a file below dir that the snapshot does not hold.
func (w *workspace) unknownBelow(dir string, current map[string]bool) string {
	ents, err := w.fs.readDir(dir)
	if err != nil {
		return ""
	}
	for _, d := range ents {
		p := dir + "/" + d.name
		if d.kind == kindDir {
			if q := w.unknownBelow(p, current); q != "" {
				return q
			}
			continue
		}
		if !current[p] {
			return p
		}
	}
	return ""
}

// blobPrefetch reads the blobs a restore will write while it does the
// rest (safety checkpoint, journal, removals): inflating packed objects is
// the part of writing files that cannot run in parallel. It keeps at most
// maxBytes of content; what does not fit is read when written.
type blobPrefetch struct {
	mu   sync.Mutex
	data map[plumbing.Hash][]byte
	done chan struct{}
}

const prefetchBytes = 32 << 20

func (w *workspace) prefetchBlobs(wt []change) {
	if w.memory {
		// The memory storage is shared with gitstore, which writes to it
		// meanwhile; and nothing is slow there.
		return
	}
	p := &blobPrefetch{data: map[plumbing.Hash][]byte{}, done: make(chan struct{})}
	w.blobs = p
	go func() {
		defer close(p.done)
		total := 0
		for _, c := range wt {
			if c.to.mode == 0 || c.to.mode == filemode.Submodule || (c.from.mode != 0 && c.from.hash == c.to.hash) {
				continue
			}
			b, err := w.obj.read(plumbing.BlobObject, c.to.hash)
			if err != nil {
				continue // reported when the file is written
			}
			if total += len(b); total > prefetchBytes {
				return
			}
			p.mu.Lock()
			p.data[c.to.hash] = b
			p.mu.Unlock()
		}
	}()
}

// get returns a blob's content, prefetched or read now.
func (p *blobPrefetch) get(o *objects, h plumbing.Hash) ([]byte, error) {
	if p != nil {
		p.mu.Lock()
		b, ok := p.data[h]
		p.mu.Unlock()
		if ok {
			return b, nil
		}
	}
	return o.read(plumbing.BlobObject, h)
}

// stop waits for the prefetch to end and drops what it kept.
func (w *workspace) stopPrefetch() {
	if w.blobs != nil {
		<-w.blobs.done
		w.blobs = nil
	}
}

// written is a file the restore wrote, with its stat data afterwards;
// converted: its bytes came from git's checkout conversion (convert.go).
type written struct {
	leaf      leaf
	st        fstat
	converted bool
}

// applyWorktree makes the working tree match the "to" side of wt. It is
// idempotent: a rollback interrupted midway is finished, or undone, by
// applying the same list (or the reverse one) again, whatever part of it
// was done. Removals come first (deepest directories emptied last), then
// writes in path order, each file created fresh (O_EXCL) under parents
// that are checked to be real directories.
func (w *workspace) applyWorktree(wt []change) (map[string]written, error) {
	// Progress counts a change once it is done: a deletion once its file
	// is removed, a file once written (writeParallel), like git's
	// "Updating files".
	prog := w.cfg.prog()
	prog.Start("Updating files", len(wt))
	defer prog.Done()
	out := make(map[string]written)
	needed := map[string]bool{} // directories the new files go in
	for _, c := range wt {
		if c.to.mode != 0 {
			for _, d := range parentDirs(c.path) {
				needed[d] = true
			}
			if c.to.mode == filemode.Submodule {
				needed[c.path] = true
			}
		}
	}
	emptied := map[string]bool{}
	var removals []change
	for _, c := range wt {
		if c.from.mode == 0 || c.from.mode == filemode.Submodule {
			continue
		}
		if c.to.mode != 0 && c.to.mode != filemode.Submodule && c.from.mode != filemode.Symlink && c.to.mode != filemode.Symlink &&
			c.from.hash == c.to.hash {
			continue // executable bit only: chmod below
		}
		removals = append(removals, c)
		for _, d := range parentDirs(c.path) {
			emptied[d] = true
		}
	}
	if err := w.removeParallel(removals, needed); err != nil {
		return out, err
	}
	dirs := make([]string, 0, len(emptied))
	for d := range emptied {
		if !needed[d] {
			dirs = append(dirs, d)
		}
	}
	sort.Slice(dirs, func(i, j int) bool { return strings.Count(dirs[i], "/") > strings.Count(dirs[j], "/") })
	for _, d := range dirs {
		_ = w.fs.remove(d) // fails, as it should, when something (ignored) is left
	}
	made := map[string]bool{"": true}
	var writes []leaf
	for _, c := range wt {
		if c.to.mode == 0 {
			continue
		}
		if err := w.mkdirs(c.path, made); err != nil {
			return out, err
		}
		if c.to.mode == filemode.Submodule {
			if err := w.fs.mkdir(c.path); err != nil {
				return out, fmt.Errorf("cannot create %s: %w", quotePath(c.path), err)
			}
			prog.Add(1)
			continue
		}
		if c.from.mode != 0 && c.from.mode != filemode.Symlink && c.to.mode != filemode.Symlink && c.from.hash == c.to.hash {
			st, err := w.fs.lstat(c.path)
			if err == nil && st.kind == kindFile {
				if st, err = w.fs.chmod(c.path, c.to.mode == filemode.Executable); err != nil {
					return out, fmt.Errorf("cannot change the mode of %s: %w", quotePath(c.path), err)
				}
				out[c.path] = written{leaf: c.to, st: st}
				prog.Add(1)
				continue
			}
		}
		writes = append(writes, c.to)
	}
	// Symbolic links last: while files are written (in parallel) no link
	// the restore creates exists yet, so none can redirect a file written
	// below a directory whose name it shares on a case-insensitive
	// filesystem (a link "X" and a file "x/f").
	var files, links []leaf
	for _, l := range writes {
		if l.mode == filemode.Symlink && w.cfg.symlinks {
			links = append(links, l)
		} else {
			files = append(files, l)
		}
	}
	// The directories mkdirs has just checked (or made) are known to be
	// real directories for the whole files pass, since no link exists
	// yet that the restore made; the links pass checks again.
	pc := &parentsChecked{dirs: made}
	if err := w.writeAll(files, pc, out); err != nil {
		return out, err
	}
	pc = &parentsChecked{dirs: map[string]bool{}}
	return out, w.writeAll(links, pc, out)
}

// writeAll writes leaves. Paths whose content git must convert (eol,
// filters: convert.go) are written through git, after the .gitattributes
// files being restored, which decide them.
func (w *workspace) writeAll(writes []leaf, pc *parentsChecked, out map[string]written) error {
	candidates := w.conversionCandidates(writes)
	if len(candidates) == 0 {
		return w.writeParallel(writes, pc, out)
	}
	var attrs, rest []leaf
	for _, l := range writes {
		if pathBase(l.path) == ".gitattributes" {
			attrs = append(attrs, l)
		} else {
			rest = append(rest, l)
		}
	}
	if err := w.writeParallel(attrs, pc, out); err != nil {
		return err
	}
	conv, err := w.attrConversions(candidates)
	if err != nil {
		return err
	}
	w.pass.converts = conv
	var raw, converted []leaf
	for _, l := range rest {
		if conv[l.path] {
			converted = append(converted, l)
		} else {
			raw = append(raw, l)
		}
	}
	if err := w.writeParallel(raw, pc, out); err != nil {
		return err
	}
	if err := w.convertAll(converted, pc, out); err != nil {
		return err
	}
	w.cfg.prog().Add(len(converted))
	return nil
}

// writeParallel writes leaves as stored, in parallel where the filesystem
// allows: each goes to its own path under directories that exist by now,
// and reading the blobs (inflating them) overlaps with writing others.
func (w *workspace) writeParallel(writes []leaf, pc *parentsChecked, out map[string]written) error {
	if len(writes) == 0 {
		return nil
	}
	workers := 1
	if w.fs.parallel() {
		workers = min(len(writes), 2*runtime.GOMAXPROCS(0))
	}
	var (
		mu       sync.Mutex
		wg       sync.WaitGroup
		next     = make(chan leaf)
		firstErr error
	)
	for k := 0; k < workers; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for l := range next {
				err := w.checkParents(l.path, pc)
				var st fstat
				if err == nil {
					st, err = w.writeLeaf(l)
				}
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				if err == nil {
					out[l.path] = written{leaf: l, st: st}
				}
				mu.Unlock()
				if err == nil {
					w.cfg.prog().Add(1)
				}
			}
		}()
	}
	for _, l := range writes {
		mu.Lock()
		failed := firstErr != nil
		mu.Unlock()
		if failed {
			break
		}
		next <- l
	}
	close(next)
	wg.Wait()
	return firstErr
}

// removeParallel removes the old files of changes (removeLeaf), several at
// a time where the filesystem allows: an unlink frees the file's inode and
// blocks, the costliest part of replacing 1,000 files on ext4
// (docs/benchmarks.md, "2026-11-25: rollback scan"). The leaves are
// distinct paths, none inside another, so the order does not matter; of
// the errors met (the workers stop at the first), the one reported is the
// first in path order. A change that removes a file
// for good counts as done for the progress once it is removed.
func (w *workspace) removeParallel(cs []change, needed map[string]bool) error {
	workers := 1
	if w.fs.parallel() {
		workers = min(len(cs), 2*runtime.GOMAXPROCS(0))
	}
	errs := make([]error, len(cs))
	var (
		wg     sync.WaitGroup
		next   atomic.Int64
		failed atomic.Bool
	)
	for k := 0; k < workers; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !failed.Load() {
				i := int(next.Add(1) - 1)
				if i >= len(cs) {
					return
				}
				if errs[i] = w.removeLeaf(cs[i].path, needed); errs[i] != nil {
					failed.Store(true)
					return
				}
				if cs[i].to.mode == 0 {
					w.cfg.prog().Add(1)
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// removeLeaf deletes a file or link. A path already gone is fine; a
// directory there is fine when the restore needs one (an earlier,
// interrupted pass made it).
func (w *workspace) removeLeaf(p string, needed map[string]bool) error {
	st, err := w.fs.lstat(p)
	if errors.Is(err, fs.ErrNotExist) || isNotDir(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if st.kind == kindDir {
		if needed[p] {
			return nil
		}
		if err := w.removeEmptyTree(p); err != nil {
			return fmt.Errorf("cannot remove %s: it is now a directory that is not empty", p)
		}
		return nil
	}
	if err := w.fs.remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("cannot remove %s: %w", p, err)
	}
	return nil
}

// mkdirs creates p's parent directories, refusing to go through anything
// that is not a real directory (a symbolic link could lead outside the
// working tree).
func (w *workspace) mkdirs(p string, made map[string]bool) error {
	for _, d := range parentDirs(p) {
		if made[d] {
			continue
		}
		st, err := w.fs.lstat(d)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if err := w.fs.mkdir(d); err != nil {
				return fmt.Errorf("cannot create directory %s: %w", quotePath(d), err)
			}
		case err != nil:
			return fmt.Errorf("cannot create directory %s: %w", quotePath(d), err)
		case st.kind != kindDir:
			return userErr(ErrInTheWay, "%s is not a directory; nothing was written below it", quotePath(d))
		}
		made[d] = true
	}
	return nil
}

// removeEmptyTree removes directory p if it holds nothing but empty
// directories (git removes such trees too), and fails, removing nothing
// that holds a file, otherwise.
func (w *workspace) removeEmptyTree(p string) error {
	ents, err := w.fs.readDir(p)
	if err != nil {
		return err
	}
	for _, d := range ents {
		if d.kind != kindDir {
			return &fs.PathError{Op: "remove", Path: p, Err: errors.New("directory not empty")}
		}
	}
	for _, d := range ents {
		if err := w.removeEmptyTree(p + "/" + d.name); err != nil {
			return err
		}
	}
	return w.fs.remove(p)
}

// parentsChecked verifies, during the pass that writes a file, that every
// directory above it is a real directory and not a symbolic link (lstat,
// which never follows one; on a case-insensitive filesystem it also finds
// a link whose name differs only in case). Directories are checked once a
// pass: links are created last, after every file (applyWorktree), so none
// that the restore creates can appear under a directory once checked.
type parentsChecked struct {
	mu   sync.Mutex
	dirs map[string]bool
}

func (w *workspace) checkParents(p string, pc *parentsChecked) error {
	for _, d := range parentDirs(p) {
		pc.mu.Lock()
		ok := pc.dirs[d]
		pc.mu.Unlock()
		if ok {
			continue
		}
		st, err := w.fs.lstat(d)
		if err != nil {
			return fmt.Errorf("cannot restore %s: %w", quotePath(p), err)
		}
		if st.kind != kindDir {
			return userErr(ErrInTheWay, "%s is not a directory; nothing was written below it", quotePath(d))
		}
		pc.mu.Lock()
		pc.dirs[d] = true
		pc.mu.Unlock()
	}
	return nil
}

// writeLeaf creates one file or link from its blob, replacing whatever
// file or link is there.
func (w *workspace) writeLeaf(l leaf) (fstat, error) {
	data, err := w.blobs.get(w.obj, l.hash)
	if err != nil {
		return fstat{}, fmt.Errorf("cannot restore %s: %w", quotePath(l.path), err)
	}
	// Created exclusively: the old file was removed before (applyWorktree),
	// so the first try succeeds unless something is in the way, which is
	// then replaced. (An lstat first cost a path walk per file.)
	st, err := w.createLeaf(l, data)
	if errors.Is(err, fs.ErrExist) {
		if st, err := w.fs.lstat(l.path); err == nil {
			if st.kind == kindDir {
				if err := w.removeEmptyTree(l.path); err != nil {
					return fstat{}, fmt.Errorf("cannot restore %s: a directory that is not empty is in the way", quotePath(l.path))
				}
			} else if err := w.fs.remove(l.path); err != nil {
				return fstat{}, fmt.Errorf("cannot restore %s: %w", quotePath(l.path), err)
			}
		}
		st, err = w.createLeaf(l, data)
	}
	if err != nil {
		return fstat{}, fmt.Errorf("cannot restore %s: %w", quotePath(l.path), err)
	}
	return st, nil
}

// createLeaf creates l's file or link, failing (fs.ErrExist) if anything
// is there.
func (w *workspace) createLeaf(l leaf, data []byte) (fstat, error) {
	if l.mode == filemode.Symlink && w.cfg.symlinks {
		return w.fs.symlink(string(data), l.path)
	}
	return w.fs.writeFile(l.path, data, l.mode == filemode.Executable)
}

// emptyBlob is the blob of an empty file: what the index records for an
// intent-to-add entry.
var emptyBlob = plumbing.NewHash("e69de29bb2d1d6434b8b29ae775ad8c2e48c5391")

// newIndex builds the index that matches ix applied to old, with target's
// flags: its assume-unchanged entries get the flag (the others lose it),
// its intent-to-add entries come back, and entries new to the index that
// a sparse checkout leaves out (sparse) get skip-worktree. With only (a
// partial restore), target's flags apply to those paths alone: every
// other entry keeps its flags, and an intent-to-add entry stays. Stat data is
// kept only where it is still known to describe the file: fresh from a
// file the restore just wrote with the entry's content (bytes git itself
// produced, for paths with eol or filter conversions), or copied from an
// old entry with the same content that was not racily clean in the old
// index. Everything else gets zero stat data, which makes git look at the
// file again: slower for it, never wrong.
func (w *workspace) newIndex(old *gitIndex, ix []change, wrote map[string]written, target *Checkpoint, sparse map[string]bool, only []string) *gitIndex {
	changes := make(map[string]*change, len(ix))
	for i := range ix {
		changes[ix[i].path] = &ix[i]
	}
	var mine map[string]bool // nil: every path is the restore's
	if only != nil {
		mine = make(map[string]bool, len(only))
		for _, p := range only {
			mine[p] = true
		}
	}
	restores := func(p string) bool { return mine == nil || mine[p] }
	var assume map[string]bool
	if target != nil && len(target.AssumeUnchanged) > 0 {
		assume = make(map[string]bool, len(target.AssumeUnchanged))
		for _, p := range target.AssumeUnchanged {
			assume[p] = true
		}
	}
	// The new entries are built in old's slice (old is not used again):
	// a second 100,000-entry slice would be 9 MB more at the peak.
	out := &gitIndex{Version: old.Version, Entries: old.Entries[:0]}
	stat := func(e *idxEntry, prev *idxEntry) {
		if wr, ok := wrote[e.Name]; ok {
			if wr.leaf.hash == e.Hash && wr.leaf.mode == filemode.FileMode(e.Mode) && wr.st.hasStat && (wr.converted || !w.converts(e.Name)) {
				e.Stat = wr.st.stat
				e.Stat.Size = uint32(wr.st.size)
				return
			}
			e.Stat = statData{}
			return
		}
		if prev != nil && prev.Hash == e.Hash && normMode(prev.mode()) == filemode.FileMode(e.Mode) && !racyForGit(prev.Stat, old.ModTime) {
			e.Stat = prev.Stat
			return
		}
		e.Stat = statData{}
	}
	for i := range old.Entries {
		prev := old.Entries[i] // a copy: out may overwrite old.Entries[i] below
		if prev.intentToAdd() && prev.stage() == 0 && !restores(prev.Name) {
			out.Entries = append(out.Entries, prev) // not the restore's to drop
			continue
		}
		if prev.stage() != 0 || prev.intentToAdd() {
			continue
		}
		e := prev
		e.Mode = uint32(normMode(prev.mode()))
		if c, ok := changes[prev.Name]; ok {
			delete(changes, prev.Name)
			if c.to.mode == 0 {
				continue
			}
			e.Hash, e.Mode = c.to.hash, uint32(c.to.mode)
		}
		switch {
		case !restores(e.Name):
			// kept as it is
		case assume[e.Name]:
			e.Flags |= flagAssumeValid
		default:
			e.Flags &^= flagAssumeValid
		}
		if !e.skipWorktree() {
			// (skip-worktree entries are not in the working tree by
			// design: their stat data stays as git left it)
			stat(&e, &prev)
		}
		out.Entries = append(out.Entries, e)
	}
	for _, c := range changes {
		if c.to.mode == 0 {
			continue
		}
		e := idxEntry{Name: c.path, Hash: c.to.hash, Mode: uint32(c.to.mode)}
		if assume[e.Name] {
			e.Flags |= flagAssumeValid
		}
		if sparse[c.path] {
			e.ExtFlags |= extSkipWorktree
		} else {
			stat(&e, nil)
		}
		out.Entries = append(out.Entries, e)
	}
	if target != nil && len(target.IntentToAdd) > 0 {
		have := make(map[string]bool, len(target.IntentToAdd))
		for _, p := range target.IntentToAdd {
			have[p] = true
		}
		for i := range out.Entries {
			delete(have, out.Entries[i].Name)
		}
		for _, p := range target.IntentToAdd {
			if !have[p] || !restores(p) {
				continue
			}
			// git add -N records the file's mode and the empty blob; the
			// file itself is in the working tree (the checkpoint holds it).
			st, err := w.fs.lstat(p)
			if err != nil || (st.kind != kindFile && st.kind != kindSymlink) {
				continue
			}
			mode := w.snapshotter().modeOf(st.kind, st.exec, filemode.Regular)
			out.Entries = append(out.Entries, idxEntry{Name: p, Hash: emptyBlob, Mode: uint32(mode), ExtFlags: extIntentToAdd})
		}
	}
	sortEntries(out.Entries)
	return out
}

// indexTree returns the tree of an index's stage-0 entries (in memory; the
// objects are not written).
func (w *workspace) indexTree(idx *gitIndex) (plumbing.Hash, error) {
	leaves := make([]leaf, 0, len(idx.Entries))
	for i := range idx.Entries {
		e := &idx.Entries[i]
		if e.stage() != 0 || e.intentToAdd() {
			continue
		}
		leaves = append(leaves, leaf{e.Name, normMode(e.mode()), e.Hash})
	}
	mem := map[plumbing.Hash][]byte{}
	h, err := buildTree(leaves, mem)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	w.obj.mu.Lock()
	for k, v := range mem {
		w.obj.mem[k] = v
	}
	w.obj.mu.Unlock()
	return h, nil
}
