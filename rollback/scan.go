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
	"time"

	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/git-hegel/git-hegel/gitstore"
)

// scanConfig is what the scan needs to know about the repository's
// settings (core.* keys) and the limits git-hegel applies.
type scanConfig struct {
	fileMode   bool  // core.fileMode: the executable bit is tracked
	trustCtime bool  // core.trustctime
	minimal    bool  // core.checkStat=minimal: compare mtime seconds and size only
	symlinks   bool  // core.symlinks
	maxSize    int64 // untracked files larger than this are left out
	workers    int
	// dirs is the directory cache to use and fill (nil: every directory
	// is read).
	dirs *dirCache
	// fsmon is what the fsmonitor hook reported changed since the previous
	// snapshot (fsmonitor.go; nil: every file is lstat'd).
	fsmon *fsmonChanges
	// progress counts the files scanned, hashed and written (nil: none).
	progress gitstore.Progress
}

// prog is the progress to tell, never nil.
func (c scanConfig) prog() gitstore.Progress { return gitstore.OrNoProgress(c.progress) }

// Per-entry verdicts of the scan.
const (
	entryUnseen  uint8 = iota // not found in the working tree: deleted
	entryClean                // stat data matches the index: the index's blob is current
	entryDirty                // must be hashed
	entryIgnored              // not part of a worktree snapshot (stage > 0)
)

// What a dirty entry's file is now (scanResult.dirty).
const (
	dirtyLink uint8 = 1 << iota
	dirtyExec
)

type untrackedFile struct {
	path string
	st   fstat
}

// scanResult is what the working tree looks like next to the index.
type scanResult struct {
	state     []uint8       // per index entry
	dirty     []uint8       // per index entry, for dirty ones: what it is now (dirtyLink, dirtyExec)
	dirtyStat map[int]fstat // stat of the dirty entries' files (few, unlike the entries)
	untracked []untrackedFile
	skipped   []SkippedFile
	nested    []string // repositories inside the working tree, left alone
	// attributes: a .gitattributes file was seen (git may convert files
	// on checkout: convert.go).
	attributes atomic.Bool
}

type scanJob struct {
	dir     string   // "" for the top
	parts   []string // dir's components, for ignore matching
	lo, hi  int      // index entries below dir/
	rules   *ignoreRules
	ignored bool // dir itself is ignored: every untracked file below is too
}

type child struct {
	file   int // index entry of a tracked file, or -1
	lo, hi int // index entries below child/ when it is a tracked directory
}

type scanner struct {
	cfg      scanConfig
	fs       wtFS
	idx      *gitIndex
	idxMtime time.Time

	res scanResult
	mu  sync.Mutex // guards res.untracked, res.skipped, res.nested, res.dirtyStat
}

// What the scan does with a directory entry.
type decision uint8

const (
	skip decision = iota
	trackedFile
	untracked
	subdir
)

// scanBufs is one scan worker's scratch space, reused from one directory
// to the next: a directory's listing, verdicts and stat data are needed
// only while it is scanned, and allocating them afresh for each of a
// 100,000-file tree's 1,000 directories was most of the scan's garbage.
type scanBufs struct {
	kids      []kid
	decisions []decision
	kidOf     []child
	want      []bool
	known     []fstat
	clean     []bool
	ents      []dirent // a listing taken from the directory cache
	sts       []fstat
	cname     []byte // a name, NUL-terminated, for fstatat
	// split is how many goroutines may lstat one directory's entries
	// (1: this goroutine only).
	split int
}

// lstatThreadCost is how many files a goroutine lstats at the least when
// a directory's are shared out (Linux: stat_linux.go), as git's
// preload-index shares out the index (500 entries a thread); a variable
// for the tests.
var lstatThreadCost = 500

// resize returns s with n zeroed elements, reusing its array when it is
// large enough.
func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// scanQueue is the directories left to scan, shared by the workers.
type scanQueue struct {
	mu      sync.Mutex
	cond    sync.Cond
	jobs    []scanJob
	pending int // directories queued or being scanned
	err     error
}

// scan compares the working tree with the index: one pass over the
// directories (in parallel where the filesystem allows), lstat for tracked
// files, ignore rules for the rest. Nothing is read or hashed yet.
func scan(fsys wtFS, idx *gitIndex, rules *ignoreRules, cfg scanConfig) (*scanResult, error) {
	cfg.progress = gitstore.OrNoProgress(cfg.progress)
	cfg.progress.Start("Scanning files", 0)
	defer cfg.progress.Done()
	s := &scanner{cfg: cfg, fs: fsys, idx: idx, idxMtime: idx.ModTime}
	n := len(idx.Entries)
	s.res.state = make([]uint8, n)
	s.res.dirty = make([]uint8, n)
	s.res.dirtyStat = map[int]fstat{}
	for i := range idx.Entries {
		e := &idx.Entries[i]
		switch {
		case e.stage() != 0:
			s.res.state[i] = entryIgnored
		case e.mode() == filemode.Submodule || e.skipWorktree():
			// Submodules are recorded as the index has them (their
			// checked-out commit is read in snapshot.go); skip-worktree
			// entries have no file by design. Assume-unchanged entries are
			// looked at like any other: their files may hold edits that
			// only a checkpoint would keep.
			s.res.state[i] = entryClean
		}
	}
	workers := cfg.workers
	if workers <= 0 {
		workers = 4 * runtime.GOMAXPROCS(0)
	}
	if !fsys.parallel() {
		workers = 1
	}
	// A fixed set of workers takes the directories from a queue: a
	// goroutine per directory grew a new stack for each (a twentieth of
	// the scan's time on 1,000 directories).
	q := &scanQueue{jobs: []scanJob{{lo: 0, hi: n, rules: rules}}, pending: 1}
	q.cond.L = &q.mu
	split := 1
	if workers > 1 {
		split = runtime.GOMAXPROCS(0)
	}
	if workers == 1 {
		s.work(q, split)
	} else {
		var wg sync.WaitGroup
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.work(q, split)
			}()
		}
		wg.Wait()
	}
	if q.err != nil {
		return nil, q.err
	}
	sort.Slice(s.res.untracked, func(i, j int) bool { return s.res.untracked[i].path < s.res.untracked[j].path })
	sort.Slice(s.res.skipped, func(i, j int) bool { return s.res.skipped[i].Path < s.res.skipped[j].Path })
	sort.Strings(s.res.nested)
	return &s.res, nil
}

// work scans directories from q until none is left or one failed.
func (s *scanner) work(q *scanQueue, split int) {
	buf := &scanBufs{split: split}
	q.mu.Lock()
	defer q.mu.Unlock()
	for {
		for len(q.jobs) == 0 && q.pending > 0 && q.err == nil {
			q.cond.Wait()
		}
		if q.pending == 0 || q.err != nil {
			return
		}
		// Last in, first out: depth first, so the queue stays short.
		j := q.jobs[len(q.jobs)-1]
		q.jobs = q.jobs[:len(q.jobs)-1]
		q.mu.Unlock()
		subs, err := s.dir(j, buf)
		q.mu.Lock()
		if err != nil && q.err == nil {
			q.err = err
		}
		q.jobs = append(q.jobs, subs...)
		q.pending += len(subs) - 1
		if q.pending == 0 || q.err != nil {
			q.cond.Broadcast()
			continue
		}
		// This worker takes one of the new directories; a waiting one is
		// woken for each of the others.
		for k := 1; k < len(subs); k++ {
			q.cond.Signal()
		}
	}
}

// kid is what the index has at one name of a directory: a file (its
// entry, -1 for none) and entries below name/ (lo..hi).
type kid struct {
	name string
	child
}

// kidList is a directory's kids sorted by name, looked up for each
// directory entry: the previous hit's successor first (listings from the
// directory cache are sorted as the kids are, so most lookups stop there),
// else by binary search. A map built per directory took a tenth of a
// snapshot's CPU time on 100,000 files.
type kidList struct {
	kids []kid
	next int
}

func (l *kidList) find(name string) (child, bool) {
	ks := l.kids
	k := l.next
	if k >= len(ks) || ks[k].name != name {
		k = sort.Search(len(ks), func(i int) bool { return ks[i].name >= name })
		if k == len(ks) || ks[k].name != name {
			return child{file: -1}, false
		}
	}
	l.next = k + 1
	return ks[k].child, true
}

// groupEnd returns the end of the run of entries from i (below hi) whose
// names continue with name after their first prefix bytes. The index is
// sorted, so the run is contiguous: a few entries are tried in turn, then
// the end is found by bisection (each entry was compared at every level
// above it).
func groupEnd(es []idxEntry, i, hi, prefix int, name string) int {
	in := func(x int) bool { return strings.HasPrefix(es[x].Name[prefix:], name) }
	end := i + 1
	for stop := min(hi, i+8); end < stop; end++ {
		if !in(end) {
			return end
		}
	}
	if end == hi || !in(end) {
		return end
	}
	return end + sort.Search(hi-end, func(x int) bool { return !in(end + x) })
}

// children groups the index entries below j.dir by their next component,
// into out's array.
func (s *scanner) children(j scanJob, out []kid) []kid {
	out = out[:0]
	prefix := 0
	if j.dir != "" {
		prefix = len(j.dir) + 1
	}
	es := s.idx.Entries
	sorted := true
	add := func(name string) *kid {
		if n := len(out); n > 0 {
			if out[n-1].name == name {
				return &out[n-1]
			}
			if out[n-1].name > name {
				// A file that sorts before a directory of a shorter
				// name ("a.b" before "a/"): the index's order is not
				// the names'.
				sorted = false
			}
		}
		out = append(out, kid{name: name, child: child{file: -1}})
		return &out[len(out)-1]
	}
	for i := j.lo; i < j.hi; {
		rest := es[i].Name[prefix:]
		k := strings.IndexByte(rest, '/')
		if k < 0 {
			c := add(rest)
			if es[i].stage() == 0 || c.file < 0 {
				c.file = i
			}
			i++
			continue
		}
		name := rest[:k+1]
		end := groupEnd(es, i, j.hi, prefix, name)
		c := add(rest[:k])
		c.lo, c.hi = i, end
		i = end
	}
	if sorted {
		return out
	}
	// Sorted by name, keeping the index's order among equal names, and
	// those merged as they would have been had they been adjacent: the
	// file entry the stage-0 one (else the first), the entries below
	// the name's.
	sort.SliceStable(out, func(a, b int) bool { return out[a].name < out[b].name })
	merged := out[:0]
	for _, kd := range out {
		if n := len(merged); n > 0 && merged[n-1].name == kd.name {
			m := &merged[n-1]
			if kd.file >= 0 && (es[kd.file].stage() == 0 || m.file < 0) {
				m.file = kd.file
			}
			if kd.hi > kd.lo {
				m.lo, m.hi = kd.lo, kd.hi
			}
			continue
		}
		merged = append(merged, kd)
	}
	return merged
}

func (s *scanner) dir(j scanJob, buf *scanBufs) ([]scanJob, error) {
	buf.kids = s.children(j, buf.kids)
	kids := kidList{kids: buf.kids}
	tracked := j.hi > j.lo
	var (
		rules     = j.rules
		nested    bool
		decisions []decision
		kidOf     []child // per entry: what the index has there (file -1: no file)
		// With the fsmonitor, for entries nothing was reported about: the
		// stat data the stat cache holds (known), or that the file was
		// clean at the previous snapshot (clean); neither is lstat'd.
		known   []fstat
		clean   []bool
		watched = s.cfg.fsmon != nil && !s.cfg.fsmon.covers(j.dir)
	)
	ignored := func(name string, isDir bool) bool {
		if j.ignored {
			return true
		}
		parts := make([]string, len(j.parts)+1)
		copy(parts, j.parts)
		parts[len(j.parts)] = name
		return rules.ignored(parts, isDir)
	}
	decide := func(ents []dirent) []bool {
		buf.want = resize(buf.want, len(ents))
		buf.decisions = resize(buf.decisions, len(ents))
		buf.kidOf = resize(buf.kidOf, len(ents))
		want := buf.want
		decisions, kidOf = buf.decisions, buf.kidOf
		// First whether this is another repository, and the .gitignore
		// whose patterns apply to everything here.
		for _, d := range ents {
			if d.name == ".git" && j.dir != "" && !tracked {
				nested = true
				return want
			}
			if d.name == ".gitattributes" {
				s.res.attributes.Store(true)
			}
			if d.name == ".gitignore" && d.kind == kindFile && !j.ignored {
				if b, err := s.fs.readFile(join(j.dir, d.name)); err == nil {
					rules = rules.with(parsePatterns(b, j.parts))
				}
			}
		}
		for i, d := range ents {
			c, isKid := kids.find(d.name)
			if !isKid {
				c = child{file: -1}
			}
			kidOf[i] = c
			switch {
			case d.name == ".git":
			case strings.HasPrefix(d.name, "state.json") && reservedPath(join(j.dir, d.name)):
			case isKid && c.file >= 0 && d.kind != kindDir:
				if s.res.state[c.file] == entryUnseen {
					decisions[i] = trackedFile
				}
			case d.kind == kindDir:
				decisions[i] = subdir
			case d.kind == kindFile || d.kind == kindSymlink:
				if !ignored(d.name, false) {
					decisions[i] = untracked
				}
			}
			want[i] = decisions[i] == trackedFile || decisions[i] == untracked
			if want[i] && watched {
				want[i] = !s.unchanged(j.dir, d.name, decisions[i] == trackedFile, c, i, buf, &known, &clean, len(ents))
			}
		}
		return want
	}
	var (
		ds  []dirent
		sts []fstat
		err error
	)
	if lf, ok := s.fs.(listingFS); ok && s.cfg.dirs != nil {
		ds, sts, _, err = lf.scanDirListing(j.dir, s.cfg.dirs, decide, buf)
	} else {
		ds, sts, err = s.fs.scanDir(j.dir, decide)
	}
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || isNotDir(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("cannot scan directory %s: %w", displayDir(j.dir), err)
	}
	if nested {
		s.mu.Lock()
		s.res.nested = append(s.res.nested, j.dir)
		s.mu.Unlock()
		return nil, nil
	}
	var subs []scanJob
	looked := 0
	defer func() { s.cfg.progress.Add(looked) }()
	for i, d := range ds {
		c := kidOf[i]
		switch decisions[i] {
		case trackedFile:
			looked++
			st := sts[i]
			if known != nil && known[i].hasStat {
				st = known[i]
			}
			e := &s.idx.Entries[c.file]
			switch {
			case clean != nil && clean[i]:
				s.res.state[c.file] = entryClean
			case st.kind == kindFile || st.kind == kindSymlink:
				// An intent-to-add entry's blob is the empty one, whatever
				// its stat data says: its file is always read.
				if s.matches(e, st) && !e.intentToAdd() {
					s.res.state[c.file] = entryClean
				} else {
					s.res.state[c.file] = entryDirty
					if st.kind == kindSymlink {
						s.res.dirty[c.file] |= dirtyLink
					}
					if st.exec {
						s.res.dirty[c.file] |= dirtyExec
					}
					s.mu.Lock()
					s.res.dirtyStat[c.file] = st
					s.mu.Unlock()
				}
			case st.kind == kindDir:
				// Replaced by a directory since the listing: treat it as
				// untracked content on the next scan; here, deleted.
			}
		case untracked:
			looked++
			st := sts[i]
			if known != nil && known[i].hasStat {
				st = known[i]
			}
			if st.kind != kindFile && st.kind != kindSymlink {
				continue
			}
			p := join(j.dir, d.name)
			if err := checkPath(p); err != nil {
				s.skip(SkippedFile{Path: p, Reason: "git cannot store this name"})
				continue
			}
			if st.kind == kindFile && s.cfg.maxSize > 0 && st.size > s.cfg.maxSize {
				s.skip(SkippedFile{Path: p, Size: st.size, Reason: "too large"})
				continue
			}
			s.mu.Lock()
			s.res.untracked = append(s.res.untracked, untrackedFile{path: p, st: st})
			s.mu.Unlock()
		case subdir:
			if d.kind != kindDir {
				continue
			}
			sub := scanJob{dir: join(j.dir, d.name), rules: rules, ignored: j.ignored}
			sub.parts = append(append(make([]string, 0, len(j.parts)+1), j.parts...), d.name)
			if c.hi > c.lo {
				sub.lo, sub.hi = c.lo, c.hi
			}
			if c.file >= 0 && s.idx.Entries[c.file].mode() == filemode.Submodule {
				continue // a submodule's checkout: not ours to look into
			}
			if !sub.ignored && ignored(d.name, true) {
				if sub.hi == sub.lo {
					continue // an ignored directory with nothing tracked in it
				}
				sub.ignored = true
			}
			if checkName(d.name) != nil {
				continue
			}
			subs = append(subs, sub)
		}
	}
	return subs, nil
}

// unchanged reports whether the fsmonitor says the file name in dir, not
// reported, needs no lstat: it fills known[i] with the stat data the stat
// cache holds for it, or sets clean[i] for a tracked file the previous
// snapshot found clean (the stat cache holds every file that snapshot
// hashed). Racy stat data, and intent-to-add entries, are lstat'd.
func (s *scanner) unchanged(dir, name string, tracked bool, c child, i int, buf *scanBufs, known *[]fstat, clean *[]bool, n int) bool {
	fm := s.cfg.fsmon
	p := join(dir, name)
	if fm.paths[p] {
		return false
	}
	st, inCache, ok := fm.cached(p)
	switch {
	case ok:
		if *known == nil {
			buf.known = resize(buf.known, n)
			*known = buf.known
		}
		(*known)[i] = st
	case inCache || !tracked:
		return false
	default:
		e := &s.idx.Entries[c.file]
		if e.intentToAdd() || racy(e.Stat, s.idxMtime) {
			return false
		}
		if *clean == nil {
			buf.clean = resize(buf.clean, n)
			*clean = buf.clean
		}
		(*clean)[i] = true
	}
	atomic.AddInt64(&fm.skipped, 1)
	return true
}

func (s *scanner) skip(f SkippedFile) {
	s.mu.Lock()
	s.res.skipped = append(s.res.skipped, f)
	s.mu.Unlock()
}

// matches reports whether the file's stat data says it still holds the
// index entry's blob, by git's rules (read-cache.c: ce_match_stat). An
// entry whose mtime is not older than the index file is "racily clean": the
// file may have changed within the same tick after it was hashed, so it is
// hashed again.
func (s *scanner) matches(e *idxEntry, st fstat) bool {
	if !st.hasStat {
		return false
	}
	switch e.mode() {
	case filemode.Regular, filemode.Executable, filemode.Deprecated:
		if st.kind != kindFile {
			return false
		}
		if s.cfg.fileMode && st.exec != (e.mode() == filemode.Executable) {
			return false
		}
	case filemode.Symlink:
		if st.kind != kindSymlink && (s.cfg.symlinks || st.kind != kindFile) {
			return false
		}
	default:
		return false
	}
	a, b := e.Stat, st.stat
	if a.MtimeSec != b.MtimeSec || a.Size != b.Size {
		return false
	}
	if !s.cfg.minimal {
		if a.MtimeNsec != b.MtimeNsec || a.Ino != b.Ino || a.UID != b.UID || a.GID != b.GID {
			return false
		}
		if s.cfg.trustCtime && a.CtimeSec != b.CtimeSec {
			return false
		}
	}
	if racy(a, s.idxMtime) {
		return false
	}
	return true
}

// racy reports whether stat data recorded in an index written at t could
// describe a file modified after it was hashed (mtime not older than t).
// With no index time (memory storage) every entry is racy.
func racy(sd statData, t time.Time) bool {
	if t.IsZero() {
		return true
	}
	ts, tn := uint32(t.Unix()), uint32(t.Nanosecond())
	return sd.MtimeSec > ts || (sd.MtimeSec == ts && sd.MtimeNsec >= tn)
}

// racyForGit is racy as a git built without nanosecond timestamps judges
// it (the common build): an entry modified in the second the index was
// written is racy. Stat data carried from the old index into a new one
// must pass this test: in the old index git would have compared such a
// file's content, but in the new one (written a second later) it would
// trust the stat data, and miss a same-size edit made in that second.
func racyForGit(sd statData, t time.Time) bool {
	return t.IsZero() || sd.MtimeSec >= uint32(t.Unix())
}

func displayDir(d string) string {
	if d == "" {
		return "."
	}
	return d
}

func isNotDir(err error) bool {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return strings.Contains(pe.Err.Error(), "not a directory")
	}
	return false
}
