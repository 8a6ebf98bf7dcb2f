package rollback

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	gitobjects "github.com/git-hegel/git-hegel/gitstore/objects"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// snapshot is the working tree and the index captured as two trees.
type snapshot struct {
	idx       *gitIndex
	indexTree plumbing.Hash
	worktree  plumbing.Hash
	skipped   []SkippedFile
	nested    []string
	stored    bool // objects written (false: hashed only, for a preview)
	// The index entries flagged assume-unchanged and intent-to-add.
	assumeUnchanged, intentToAdd []string
	attributes                   bool // a .gitattributes file was seen
	// dirsUnread counts the directories whose listing came from the
	// directory cache.
	dirsUnread int64
	// dirsTaken counts the working tree's directories taken from the
	// working tree cache (wttree.go), not built.
	dirsTaken int
}

// hashed is a file's blob and mode once read.
type hashed struct {
	hash   plumbing.Hash
	mode   filemode.FileMode
	gone   bool // vanished before it could be read
	cached bool // from the stat cache, not read
}

// ErrUnmerged reports an index with unresolved conflicts: a tree cannot
// hold its several versions of one path.
var ErrUnmerged = errors.New("the index has unmerged paths")

type snapshotter struct {
	fs    wtFS
	obj   *objects
	cfg   scanConfig
	rules *ignoreRules
	trace func(step string)
	// gitDir holds the stat cache (statcache.go); "" in memory.
	gitDir string
	perm   gitobjects.SharedPerm // core.sharedRepository, for the stat cache
	// dirCache: a stored snapshot's scan uses and keeps the directory
	// cache (dircache.go).
	dirCache bool
	// fsmon is the user's fsmonitor hook, asked by the scans that use the
	// directory cache (fsmonitor.go); nil: none.
	fsmon *fsmonitor
	// subHead reads the commits submodules have checked out (submodule.go).
	subHead func(*gitIndex) map[int]plumbing.Hash
	// converts reports whether git may convert files between the
	// repository and the working tree (attributes: a .gitattributes file
	// was seen); cleanHashes has git hash files as it would store them.
	// Nil in memory.
	converts    func(attributes bool) bool
	cleanHashes func(paths []string) (map[string]plumbing.Hash, error)
}

// take snapshots the working tree and idx. With store, every blob and tree
// is written to the repository; without, they are only hashed (the trees
// stay in memory for diffs), which is what a preview needs.
func (sn *snapshotter) take(idx *gitIndex, store bool) (*snapshot, error) {
	var unmerged []string
	for i := range idx.Entries {
		if e := &idx.Entries[i]; e.stage() != 0 && (len(unmerged) == 0 || unmerged[len(unmerged)-1] != e.Name) {
			unmerged = append(unmerged, e.Name)
		}
	}
	if len(unmerged) > 0 {
		return nil, userErr(ErrUnmerged, "The index has unmerged paths (%s): resolve and 'git add' them, or abort the merge, first", listSome(unmerged, 3, quotePath))
	}
	cfg := sn.cfg
	var fsmonToken string
	if _, ok := sn.fs.(listingFS); ok && sn.dirCache && store && sn.gitDir != "" {
		cfg.dirs = newDirCache(sn.gitDir, time.Now())
		if sn.fsmon != nil {
			// Asked before the scan: whatever changes after the hook
			// answered is reported to the next snapshot.
			var why string
			fsmonToken, cfg.fsmon, why = sn.fsmon.begin(sn.gitDir, idx, cfg)
			if why != "" {
				sn.trace("fsmonitor not used: " + why)
			}
			// No token is valid until this snapshot's stat cache is.
			os.Remove(filepath.Join(sn.gitDir, fsmonFile))
		}
	}
	// The stat cache is read while the scan runs (a file of the files the
	// last snapshot hashed; the scan does not need it).
	var cache *statCache
	var cacheLoaded chan struct{}
	if cfg.fsmon != nil && cfg.fsmon.cache != nil {
		cache = cfg.fsmon.cache // loaded and checked against the token's record already
	} else {
		cacheLoaded = make(chan struct{})
		go func() {
			defer close(cacheLoaded)
			cache = loadStatCache(sn.gitDir)
		}()
	}
	res, err := scan(sn.fs, idx, sn.rules, cfg)
	if cacheLoaded != nil {
		<-cacheLoaded
	}
	if err != nil {
		return nil, err
	}
	if cfg.fsmon != nil {
		sn.trace(fmt.Sprintf("fsmonitor (%d paths reported, %d files not lstat'd)", len(cfg.fsmon.paths), cfg.fsmon.skipped))
	}
	if cfg.dirs != nil {
		cfg.dirs.save(sn.gitDir, sn.perm, time.Now())
		sn.trace(fmt.Sprintf("directory cache (%d directories, %d of them not read)", len(cfg.dirs.next), cfg.dirs.reused.Load()))
	}
	if store {
		// Blobs and trees go into one batch: a pack when there are many
		// (gitobjects.Batch), stored before take returns.
		sn.obj.beginBatch()
		defer sn.obj.abortBatch()
	}
	sn.trace(fmt.Sprintf("scan (%d entries)", len(idx.Entries)))
	type item struct {
		path  string
		st    fstat
		entry int // index entry, or -1-k for untracked file k
		base  filemode.FileMode
	}
	var items []item
	for i, s := range res.state {
		if s == entryDirty {
			e := &idx.Entries[i]
			items = append(items, item{e.Name, res.dirtyStat[i], i, normMode(e.mode())})
		}
	}
	for k, u := range res.untracked {
		items = append(items, item{u.path, u.st, -1 - k, filemode.Regular})
	}
	prog := sn.cfg.prog()
	if store {
		prog.Start("Writing objects", len(items))
	} else {
		prog.Start("Hashing files", len(items))
	}
	var reused atomic.Int64
	results := make([]hashed, len(items))
	workers := 1
	if sn.fs.parallel() {
		workers = min(4*runtime.GOMAXPROCS(0), max(1, len(items)))
	}
	var (
		wg       sync.WaitGroup
		next     = make(chan int)
		errOnce  sync.Once
		firstErr error
	)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range next {
				prog.Add(1)
				it := items[k]
				mode := sn.modeOf(it.st.kind, it.st.exec, it.base)
				if h, ok := cache.lookup(it.path, it.st, sn.cfg); ok && (!store || sn.obj.stored(h)) {
					results[k] = hashed{hash: h, mode: mode, cached: true}
					reused.Add(1)
					continue
				}
				h, err := sn.hashFile(it.path, it.st.kind, store)
				if errors.Is(err, fs.ErrNotExist) {
					results[k].gone = true
					continue
				}
				if err != nil {
					errOnce.Do(func() { firstErr = err })
					continue
				}
				results[k] = hashed{hash: h, mode: mode}
			}
		}()
	}
	for k := range items {
		next <- k
	}
	close(next)
	wg.Wait()
	prog.Done()
	if firstErr != nil {
		return nil, firstErr
	}
	if sn.converts != nil {
		var paths []string
		var ks []int
		for k, it := range items {
			if it.entry >= 0 && sn.compareClean(&idx.Entries[it.entry], it.st, results[k]) {
				paths, ks = append(paths, it.path), append(ks, k)
			}
		}
		if len(paths) > 0 && sn.converts(res.attributes.Load()) {
			// A file that vanished or cannot be read now leaves git
			// nothing to hash: the files then stay as read (changed).
			clean, err := sn.cleanHashes(paths)
			if err != nil {
				sn.trace("clean conversion failed: " + err.Error())
			}
			for i, k := range ks {
				if e := &idx.Entries[items[k].entry]; clean[paths[i]] == e.Hash {
					results[k].hash = e.Hash // unchanged, as git sees it: the index's blob
				}
			}
			sn.trace(fmt.Sprintf("clean conversion (%d files)", len(paths)))
		}
	}
	if store && sn.gitDir != "" {
		next := make(map[string]statCacheEntry, len(items))
		complete := true
		for k, it := range items {
			if !results[k].gone && it.st.hasStat {
				next[it.path] = statCacheEntry{stat: it.st.stat, flags: statFlags(it.st), hash: results[k].hash}
			} else if !results[k].gone {
				complete = false
			}
		}
		// Every file found in the cache as it was, and no other: the
		// file already holds what it would be rewritten with (a hit is
		// never racy, so it need not be written anew to settle).
		unchanged := cache != nil && int(reused.Load()) == len(items) && len(next) == len(cache.entries)
		// Written while the trees are built; done before take returns.
		saved := make(chan struct{})
		defer func() { <-saved }()
		go func() {
			defer close(saved)
			ident := ""
			if unchanged {
				ident = cache.ident
			} else {
				ident = saveStatCache(sn.gitDir, sn.perm, next)
			}
			if fsmonToken != "" && ident != "" && complete {
				saveFsmonRecord(sn.gitDir, sn.perm, fsmonRecord{hook: sn.fsmon.hook, token: fsmonToken,
					index: idx.ident, statCache: ident, settings: scanSettings(cfg)})
			}
		}()
	}
	sn.trace(fmt.Sprintf("hash (%d files, %d of them unchanged since the last snapshot)", len(items), reused.Load()))
	dirty := make(map[int]hashed, len(items))
	var untracked []leaf
	for k, it := range items {
		if it.entry >= 0 {
			dirty[it.entry] = results[k]
		} else if !results[k].gone {
			untracked = append(untracked, leaf{path: it.path, mode: results[k].mode, hash: results[k].hash})
		}
	}

	// Both trees are built straight from the index entries: the index
	// tree from the stage-0 entries (intent-to-add ones are not in it, as
	// with git write-tree), the working tree from the same entries with
	// the scan's verdicts applied, merged with the untracked files. Only
	// an order of int32s is allocated, not 100,000 leaves. A stored
	// snapshot of an index whose tree the last one built takes it from
	// the index tree cache (indextree.go) instead.
	var cachedIndexTree plumbing.Hash
	if store && sn.gitDir != "" {
		if t, ok := loadIndexTree(sn.gitDir, idx.sum); ok && sn.obj.stored(t) {
			cachedIndexTree = t
		}
	}
	var inIndex []int32
	if cachedIndexTree.IsZero() {
		inIndex = make([]int32, 0, len(idx.Entries))
		for i := range idx.Entries {
			if !idx.Entries[i].intentToAdd() {
				inIndex = append(inIndex, int32(i))
			}
		}
	}
	indexLeaf := func(k int) leaf {
		e := &idx.Entries[inIndex[k]]
		return leaf{e.Name, normMode(e.mode()), e.Hash}
	}
	// A submodule is recorded at the commit it has checked out.
	var subHeads map[int]plumbing.Hash
	if sn.subHead != nil {
		subHeads = sn.subHead(idx)
	}
	// wt lists the working tree's leaves in path order: i >= 0 is index
	// entry i (clean, or dirty with its new content), -1-k untracked[k].
	// A stored snapshot also lists, in the same order, the leaves that do
	// not come straight from the index, for the working tree cache
	// (wttree.go).
	useWtCache := store && sn.gitDir != "" && !idx.sum.IsZero()
	var specials []wtSpecial
	var intentToAdd, assumeUnchanged []string
	wt := make([]int32, 0, len(idx.Entries)+len(untracked))
	u := 0
	for i := range idx.Entries {
		e := &idx.Entries[i]
		name := e.Name
		switch {
		case e.stage() != 0:
		case e.intentToAdd():
			intentToAdd = append(intentToAdd, name)
		case e.assumeValid():
			assumeUnchanged = append(assumeUnchanged, name)
		}
		keep := false
		switch res.state[i] {
		case entryClean:
			keep = !e.intentToAdd()
		case entryDirty:
			keep = !dirty[i].gone
		}
		for u < len(untracked) && untracked[u].path < name {
			wt = append(wt, int32(-1-u))
			if useWtCache {
				specials = append(specials, wtSpecial{untracked[u].path, specialUntracked, untracked[u].mode, untracked[u].hash})
			}
			u++
		}
		if !keep {
			if useWtCache && res.state[i] != entryIgnored {
				specials = append(specials, wtSpecial{path: name, kind: specialLeftOut})
			}
			continue
		}
		wt = append(wt, int32(i))
		if !useWtCache {
			continue
		}
		if h, ok := subHeads[i]; ok {
			specials = append(specials, wtSpecial{name, specialSubmodule, filemode.Submodule, h})
		} else if res.state[i] == entryDirty {
			specials = append(specials, wtSpecial{name, specialChanged, dirty[i].mode, dirty[i].hash})
		}
	}
	for ; u < len(untracked); u++ {
		wt = append(wt, int32(-1-u))
		if useWtCache {
			specials = append(specials, wtSpecial{untracked[u].path, specialUntracked, untracked[u].mode, untracked[u].hash})
		}
	}
	wtLeaf := func(k int) leaf {
		i := int(wt[k])
		if i < 0 {
			return untracked[-1-i]
		}
		e := &idx.Entries[i]
		if h, ok := subHeads[i]; ok {
			return leaf{e.Name, filemode.Submodule, h}
		}
		if res.state[i] == entryDirty {
			h := dirty[i]
			return leaf{e.Name, h.mode, h.hash}
		}
		return leaf{e.Name, normMode(e.mode()), e.Hash}
	}

	mem := map[plumbing.Hash][]byte{}
	snap := &snapshot{idx: idx, skipped: res.skipped, nested: res.nested, stored: store, attributes: res.attributes.Load()}
	if cfg.dirs != nil {
		snap.dirsUnread = cfg.dirs.reused.Load()
	}
	snap.intentToAdd, snap.assumeUnchanged = intentToAdd, assumeUnchanged
	indexPath := func(k int) string { return idx.Entries[inIndex[k]].Name }
	wtPath := func(k int) string {
		if i := int(wt[k]); i >= 0 {
			return idx.Entries[i].Name
		}
		return untracked[-1-int(wt[k])].path
	}
	// The two trees are built at the same time (each into its own map):
	// on 100,000 files each takes some 15 ms of hashing and encoding.
	var (
		idxMem, wtMem = mem, map[plumbing.Hash][]byte{}
		idxErr, wtErr error
		built         sync.WaitGroup
	)
	var wtReuse *wtTreeReuse
	if useWtCache {
		wtReuse = newWtTreeReuse(sn.gitDir, idx.sum, specials, sn.obj.stored)
	}
	built.Add(1)
	go func() {
		defer built.Done()
		var reuse *gitobjects.TreeReuse
		if wtReuse != nil {
			reuse = wtReuse.treeReuse()
		}
		snap.worktree, wtErr = gitobjects.BuildTreeReusing(len(wt), wtPath, func(k int) (filemode.FileMode, plumbing.Hash) {
			l := wtLeaf(k)
			return l.mode, l.hash
		}, wtMem, reuse)
	}()
	if cachedIndexTree.IsZero() {
		snap.indexTree, idxErr = buildTreeOf(len(inIndex), indexPath, indexLeaf, idxMem)
	} else {
		snap.indexTree = cachedIndexTree
	}
	built.Wait()
	if idxErr != nil {
		return nil, fmt.Errorf("cannot record the index: %w", idxErr)
	}
	if wtErr != nil {
		return nil, fmt.Errorf("cannot record the working tree: %w", wtErr)
	}
	for h, b := range wtMem {
		mem[h] = b
	}
	sn.obj.mu.Lock()
	for h, b := range mem {
		sn.obj.mem[h] = b
	}
	sn.obj.mu.Unlock()
	if wtReuse != nil {
		snap.dirsTaken = len(wtReuse.taken)
	}
	var from []string
	if !cachedIndexTree.IsZero() {
		from = append(from, "the index's from the index tree cache")
	}
	if wtReuse != nil {
		from = append(from, fmt.Sprintf("%d of the working tree's directories built, %d taken from its cache", len(wtReuse.built), len(wtReuse.taken)))
	}
	if len(from) > 0 {
		sn.trace("build trees (" + strings.Join(from, "; ") + ")")
	} else {
		sn.trace("build trees")
	}
	if store {
		if err := sn.obj.flushTrees(snap.indexTree); err != nil {
			return nil, err
		}
		if err := sn.obj.flushTrees(snap.worktree); err != nil {
			return nil, err
		}
		if err := sn.obj.finishBatch(); err != nil {
			return nil, err
		}
		if cachedIndexTree.IsZero() {
			saveIndexTree(sn.gitDir, sn.perm, idx.sum, snap.indexTree)
		}
		if wtReuse != nil && len(wtReuse.built) > 0 {
			// Nothing built: the whole tree came from the cache, which
			// stays as it is.
			saveWtTree(sn.gitDir, sn.perm, idx.sum, wtReuse.dirs())
		}
		sn.trace("write trees")
	}
	return snap, nil
}

// compareClean reports whether a tracked file whose bytes differ from its
// index entry's blob must be compared as git stores it (through its clean
// conversion: CRLF line endings, a clean filter) before it counts as
// changed. git does so (read-cache.c: ie_modified) when only the file's
// times or inode changed, not its size or type: a file touched, rewritten
// with the same content, or written in the same instant as the index
// (racily clean). A file whose size changed is changed, as git says. A
// file taken from the stat cache was compared when it was read.
func (sn *snapshotter) compareClean(e *idxEntry, st fstat, h hashed) bool {
	if h.gone || h.cached || h.hash == e.Hash || e.intentToAdd() || st.kind != kindFile {
		return false
	}
	if h.mode != normMode(e.mode()) || (e.mode() != filemode.Regular && e.mode() != filemode.Executable) {
		return false
	}
	return e.Stat.Size == 0 || int64(e.Stat.Size) == st.size&0xffffffff
}

// hashFile reads a file (or a link's target) and returns its blob name,
// writing the blob when store is set.
func (sn *snapshotter) hashFile(p string, kind fileKind, store bool) (plumbing.Hash, error) {
	var data []byte
	var err error
	if kind == kindSymlink {
		var t string
		t, err = sn.fs.readlink(p)
		data = []byte(t)
	} else {
		data, err = sn.fs.readFile(p)
	}
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || isNotDir(err) {
			return plumbing.ZeroHash, fs.ErrNotExist
		}
		return plumbing.ZeroHash, fmt.Errorf("cannot read %s: %w", p, err)
	}
	h := hashObject(plumbing.BlobObject, data)
	if store {
		if err := sn.obj.write(plumbing.BlobObject, h, data); err != nil {
			return plumbing.ZeroHash, err
		}
	}
	return h, nil
}

// modeOf is the mode git would record for a file: with core.fileMode off
// the index's executable bit is kept, and with core.symlinks off a link the
// index knows stays a link.
func (sn *snapshotter) modeOf(kind fileKind, exec bool, base filemode.FileMode) filemode.FileMode {
	switch {
	case kind == kindSymlink:
		return filemode.Symlink
	case !sn.cfg.symlinks && base == filemode.Symlink:
		return filemode.Symlink
	case !sn.cfg.fileMode:
		if base == filemode.Executable {
			return filemode.Executable
		}
		return filemode.Regular
	case exec:
		return filemode.Executable
	}
	return filemode.Regular
}

// normMode maps the modes old gits wrote (100664) to the ones fsck accepts.
func normMode(m filemode.FileMode) filemode.FileMode {
	switch m {
	case filemode.Executable, filemode.Symlink, filemode.Submodule:
		return m
	}
	return filemode.Regular
}

// listSome names the first n paths, quoted, and counts the rest.
func listSome(paths []string, n int, quote func(string) string) string {
	named := make([]string, 0, min(n, len(paths)))
	for _, p := range paths[:min(n, len(paths))] {
		named = append(named, quote(p))
	}
	if len(paths) <= n {
		return strings.Join(named, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(named, ", "), len(paths)-n)
}
