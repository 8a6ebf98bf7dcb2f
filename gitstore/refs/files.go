package refs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/helper/chroot"
	"github.com/go-git/go-billy/v5/helper/polyfill"
	"github.com/go-git/go-billy/v5/memfs"
	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-billy/v5/util"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/gitstore/objects"
)

// Git's file names inside the common git directory.
const (
	packedRefsFile = "packed-refs"
	LockSuffix     = ".lock"
)

const (
	// defaultLockTimeout is how long Update waits for another process's
	// lock file to go away. Git's own core.filesRefLockTimeout is 100ms; we
	// wait longer because git-hegel processes may run concurrently and each
	// lock is held only for a few file operations.
	defaultLockTimeout = 3 * time.Second
	lockBackoffStart   = time.Millisecond
	lockBackoffMax     = 50 * time.Millisecond
)

// Files updates refs with git's own lock protocol on fs, a
// billy.Filesystem rooted at the repository's common git dir (where refs/ and
// packed-refs live). Works on osfs and memfs alike.
//
// The protocol is the one git's files backend uses, so git and git-hegel can
// update the same repository at the same time:
//
//   - a ref is locked by creating <ref>.lock with O_CREAT|O_EXCL; a lock that
//     exists is waited for (up to lockTimeout) and then reported as ErrLocked;
//   - the new value is written to a file beside the lock (fsynced if
//     core.fsync asks for references, as git does) and renamed over the
//     ref, so readers only ever see the old or the new complete file;
//   - packed-refs is rewritten the same way under packed-refs.lock, which is
//     always taken after the ref lock (git's lock order).
//
// go-billy's memfs is not safe for concurrent use (its storage maps are not
// synchronized), so a Files over memfs must only be used from one
// goroutine at a time. osfs has no such restriction.
type Files struct {
	fs billy.Filesystem
	// lockTimeout bounds the wait for a lock file held by someone else.
	// Zero means defaultLockTimeout.
	lockTimeout time.Duration
	// perm is core.sharedRepository, for what is created on disk.
	perm objects.SharedPerm
	// warn reports a dead owner's lock that was removed (nil: silent).
	warn func(string)
	// logs writes reflogs (nil: none, as for a memfs in unit tests).
	logs *Reflogs
	// dur says whether a ref's new value is fsynced (core.fsync's
	// reference component; nil: never). flush, if set, runs before a ref
	// moves: it makes the objects the ref will reach durable under
	// core.fsyncMethod=batch.
	dur   *objects.Durability
	flush func() error
	// owner is the process's lock owner file, linked to each lock (nil:
	// each lock gets a marker file of its own).
	owner *OwnerFile
	// packed is the last packed-refs read, kept while the file is
	// unchanged (files_packed.go).
	packed packedCache
	// brokenWarned holds the broken refs already warned about: a command
	// lists the same prefix several times (broken.go).
	brokenWarned sync.Map
}

var _ Backend = (*Files)(nil)

// Options say how a Files writes; the zero value writes plainly: no
// reflogs, no fsync, no shared permissions, a marker file per lock.
type Options struct {
	// LockTimeout bounds the wait for a lock file held by someone else
	// (zero: 3 seconds).
	LockTimeout time.Duration
	// Perm is core.sharedRepository, for what is created on disk.
	Perm objects.SharedPerm
	// Warn reports a dead owner's lock that was removed (nil: silent).
	Warn func(string)
	// Logs writes the reflogs (nil: none).
	Logs *Reflogs
	// Durability says whether a ref's new value is fsynced (core.fsync's
	// reference component; nil: never). Flush, if set, runs before a ref
	// moves: it makes the objects the ref will reach durable under
	// core.fsyncMethod=batch.
	Durability *objects.Durability
	Flush      func() error
	// Owner is the process's lock owner file, linked to each lock (nil:
	// each lock gets a marker file of its own).
	Owner *OwnerFile
}

// NewFiles returns a Files over fs, a git dir: the common one for refs,
// a worktree's for its HEAD.
func NewFiles(fs billy.Filesystem, o Options) *Files {
	timeout := o.LockTimeout
	if timeout <= 0 {
		timeout = defaultLockTimeout
	}
	return &Files{fs: fs, lockTimeout: timeout, perm: o.Perm, warn: o.Warn, logs: o.Logs,
		dur: o.Durability, flush: o.Flush, owner: o.Owner}
}

// Read returns the hash name points at: the loose ref if there is one, else
// the packed-refs entry, else an error wrapping engine.ErrNotFound.
func (r *Files) Read(name plumbing.ReferenceName) (plumbing.Hash, error) {
	if err := CheckName(name); err != nil {
		return plumbing.ZeroHash, err
	}
	h, ok, err := r.current(name)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if !ok {
		return plumbing.ZeroHash, fmt.Errorf("ref %s: %w", name, engine.ErrNotFound)
	}
	return h, nil
}

// Update moves name from old to new under <name>.lock. old == ZeroHash means
// the ref must not exist; new == ZeroHash deletes it (from packed-refs too).
// The reflog gets the new commit's subject as its message.
func (r *Files) Update(name plumbing.ReferenceName, old, new plumbing.Hash) error {
	return r.UpdateMsg(name, old, new, Reflog{})
}

// Reflog is what an update writes to the ref's reflog.
type Reflog struct {
	Msg string // "": the new commit's subject
	// Restart starts the reflog afresh with this update (the chain was
	// rewritten: nothing before it should stay reachable through the log).
	Restart bool
	// RestartFrom, with Restart, is a commit the new value reaches (a
	// rewritten chain's entry below its tip): the restarted log names it
	// first, so a repair can fall back to it when the tip's commit is
	// lost, and keeps nothing alive that the tip does not.
	RestartFrom plumbing.Hash
}

// UpdateMsg is Update with the reflog's message and options.
func (r *Files) UpdateMsg(name plumbing.ReferenceName, old, new plumbing.Hash, u Reflog) error {
	if err := CheckName(name); err != nil {
		return err
	}
	return r.update(name, old, new, u)
}

// update is Update without the name check, for the one name outside refs/
// git-hegel writes: a detached HEAD in a worktree's git dir.
func (r *Files) update(name plumbing.ReferenceName, old, new plumbing.Hash, u Reflog) error {
	return r.updateWith(name, old, new, u, false)
}

// updateWith is update; with broken, name must be a broken ref (its
// loose file holds no value), which new replaces whatever old says.
func (r *Files) updateWith(name plumbing.ReferenceName, old, new plumbing.Hash, u Reflog, broken bool) error {
	refPath := r.refPath(name)

	// A ref cannot live below another ref (refs/a/b while refs/a is a loose
	// ref). Check before MkdirAll: memfs would otherwise silently create a
	// file below a file, and osfs would fail with ENOTDIR.
	if blocker := r.looseAncestor(name); blocker != "" {
		if !new.IsZero() {
			return fmt.Errorf("cannot create ref %s: ref %s exists", name, blocker)
		}
		return compareOld(name, old, plumbing.ZeroHash, false)
	}
	if err := r.mkdirAll(filepath.Dir(refPath)); err != nil {
		return fmt.Errorf("update ref %s: %w", name, err)
	}
	lockPath := refPath + LockSuffix
	if err := r.acquireLock(name, lockPath); err != nil {
		return err
	}
	locked, exists := true, false
	unlock := func() {
		if locked {
			locked = false
			_ = r.fs.Remove(lockPath)
			if !exists {
				// Do not leave the directories the lock needed behind.
				r.removeEmptyParents(refPath)
			}
		}
	}
	defer unlock()

	cur, exists, err := r.current(name)
	switch {
	case broken && errors.Is(err, ErrBroken):
		// Replaced whole: packed-refs' entry of the name, which the
		// broken file hid, goes too, so it cannot show through.
		exists = true
		if err := r.deleteLocked(name, refPath); err != nil {
			return err
		}
		if new.IsZero() {
			if err := r.logDelete(name, plumbing.ZeroHash, u); err != nil {
				return err
			}
			exists = false
			unlock()
			return nil
		}
		exists = false
	case broken && err == nil:
		return fmt.Errorf("update ref %s: %w: it is no longer broken", name, engine.ErrConflict)
	case err != nil:
		exists = true // unknown: leave the directories alone
		return fmt.Errorf("update ref %s: %w", name, err)
	default:
		if err := compareOld(name, old, cur, exists); err != nil {
			return err
		}
	}

	if new.IsZero() {
		if !exists {
			return nil // old was zero too: the ref must not exist, and it does not.
		}
		if err := r.deleteLocked(name, refPath); err != nil {
			return err
		}
		if err := r.logDelete(name, cur, u); err != nil {
			return err
		}
		exists = false
		unlock()
		return nil
	}

	if !exists {
		if err := r.makeAvailable(name, refPath); err != nil {
			return err
		}
	}
	if r.flush != nil {
		if err := r.flush(); err != nil {
			return fmt.Errorf("update ref %s: %w", name, err)
		}
	}
	// Logged first, under the lock, as git's files backend does: an entry
	// whose update then fails is less bad than an update with no entry.
	if err := r.log(name, cur, new, u); err != nil {
		return fmt.Errorf("update ref %s: %w", name, err)
	}
	if err := r.writeValue(refPath, []byte(new.String()+"\n")); err != nil {
		return fmt.Errorf("update ref %s: %w", name, err)
	}
	exists = true
	return nil
}

// List returns the refs whose names start with prefix, loose and packed
// (a loose ref hides the packed entry of the same name), sorted by name.
func (r *Files) List(prefix string) ([]Ref, error) {
	var broken []BrokenRef
	out, err := r.list(prefix, &broken)
	for _, b := range broken {
		r.warnBroken(b)
	}
	return out, err
}

// list is List; the broken refs it leaves out are appended to broken.
func (r *Files) list(prefix string, broken *[]BrokenRef) ([]Ref, error) {
	found := map[plumbing.ReferenceName]plumbing.Hash{}

	// Loose refs first, then packed-refs: git deletes a packed ref by
	// rewriting packed-refs before removing the loose file, and pack-refs
	// writes packed-refs before pruning loose files, so this order never
	// resurrects a deleted ref nor misses a packed one.
	start := "refs"
	if strings.HasPrefix(prefix, "refs/") {
		start = prefix[:strings.LastIndex(prefix, "/")]
	} else if !strings.HasPrefix("refs/", prefix) {
		return nil, nil // cannot match anything below refs/
	}
	if err := r.walkLoose(start, prefix, found, broken); err != nil {
		return nil, err
	}

	packed, err := r.readPacked()
	if err != nil {
		return nil, err
	}
	loose := make([]Ref, 0, len(found))
	for n, h := range found {
		loose = append(loose, Ref{Name: n, Hash: h})
	}
	if len(loose) == 0 && packed.sorted {
		// Nothing to merge (a sorted file names each ref once): with the
		// refs packed, the usual case.
		return packed.under(prefix), nil
	}
	slices.SortFunc(loose, compareRefs)
	// A broken or symbolic loose file hid its name's packed entry (a
	// zero value in found): neither is listed.
	return slices.DeleteFunc(mergeRefs(loose, packed.under(prefix)), func(r Ref) bool { return r.Hash.IsZero() }), nil
}

func compareRefs(a, b Ref) int { return strings.Compare(string(a.Name), string(b.Name)) }

// mergeRefs merges two lists sorted by name; a loose ref hides the packed
// entry of the same name (and a name packed twice counts once).
func mergeRefs(loose, packed []Ref) []Ref {
	out := make([]Ref, 0, len(loose)+len(packed))
	i, j := 0, 0
	for i < len(loose) || j < len(packed) {
		var next Ref
		switch {
		case j == len(packed) || i < len(loose) && loose[i].Name < packed[j].Name:
			next, i = loose[i], i+1
		case i == len(loose) || packed[j].Name < loose[i].Name:
			next, j = packed[j], j+1
		default: // the same name: the loose ref
			next, i, j = loose[i], i+1, j+1
		}
		if k := len(out); k > 0 && out[k-1].Name == next.Name {
			continue
		}
		out = append(out, next)
	}
	return out
}

func (r *Files) walkLoose(dir, prefix string, found map[plumbing.ReferenceName]plumbing.Hash, broken *[]BrokenRef) error {
	direct := r.plainDir(dir)
	entries, err := r.readDir(dir, direct)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || isNotDir(err) {
			return nil // no such directory, or a ref file where the prefix expected a directory
		}
		return fmt.Errorf("list refs: read directory %s: %w", r.display(dir), err)
	}
	for _, e := range entries {
		full := dir + "/" + e.Name()
		if e.IsDir() {
			// Only descend where something below could match prefix.
			if strings.HasPrefix(full+"/", prefix) || strings.HasPrefix(prefix, full+"/") {
				if err := r.walkLoose(full, prefix, found, broken); err != nil {
					return err
				}
			}
			continue
		}
		if strings.HasSuffix(e.Name(), LockSuffix) || !strings.HasPrefix(full, prefix) {
			continue
		}
		name := plumbing.ReferenceName(full)
		if CheckName(name) != nil {
			continue // git ignores files whose names are not ref names
		}
		h, ok, err := r.readLooseEntry(full, e.Type(), direct)
		if errors.Is(err, ErrBroken) || errors.Is(err, errSymbolic) {
			if errors.Is(err, ErrBroken) {
				*broken = append(*broken, BrokenRef{Name: name, Err: err})
			}
			found[name] = plumbing.ZeroHash // hides the name's packed entry
			continue
		}
		if err != nil {
			return fmt.Errorf("list refs: %w", err)
		}
		if ok {
			found[name] = h
		}
	}
	return nil
}

// current reads name's value under git's precedence: loose, then packed.
func (r *Files) current(name plumbing.ReferenceName) (plumbing.Hash, bool, error) {
	h, ok, err := r.readLoose(r.refPath(name))
	if err != nil || ok {
		return h, ok, err
	}
	packed, err := r.readPacked()
	if err != nil {
		return plumbing.ZeroHash, false, err
	}
	if e, ok := packed.find(name); ok {
		return e.hash, true, nil
	}
	return plumbing.ZeroHash, false, nil
}

// readLoose reads the loose ref file at p. A missing file (or a directory in
// its place) is ok == false; anything but "<hex>\n" is an error naming p.
func (r *Files) readLoose(p string) (plumbing.Hash, bool, error) {
	f, err := r.fs.Open(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || isNotDir(err) || r.isDir(p) {
			return plumbing.ZeroHash, false, nil
		}
		return plumbing.ZeroHash, false, fmt.Errorf("read ref file %s: %w", r.display(p), err)
	}
	data, err := io.ReadAll(io.LimitReader(f, 4096))
	_ = f.Close()
	if err != nil {
		if r.isDir(p) {
			return plumbing.ZeroHash, false, nil
		}
		return plumbing.ZeroHash, false, fmt.Errorf("read ref file %s: %w", r.display(p), err)
	}
	return r.parseLoose(p, data)
}

// parseLoose parses the content of the loose ref file at p.
func (r *Files) parseLoose(p string, data []byte) (plumbing.Hash, bool, error) {
	if bytes.HasPrefix(data, []byte("ref:")) {
		return plumbing.ZeroHash, false, &symbolicError{fmt.Sprintf("ref file %s is a symbolic ref (%q); only direct refs are supported",
			r.display(p), strings.TrimSpace(string(data)))}
	}
	h, ok := objects.ParseHex(strings.TrimRight(string(data), " \t\r\n"))
	if !ok {
		if len(data) == 0 {
			return plumbing.ZeroHash, false, &brokenError{fmt.Sprintf("ref file %s is empty", r.display(p))}
		}
		return plumbing.ZeroHash, false, &brokenError{fmt.Sprintf("ref file %s is malformed: %q", r.display(p), truncate(data, 80))}
	}
	return h, true, nil
}

// packedRefs is a parsed packed-refs file. lines keeps the file verbatim
// (without newlines) so a rewrite changes nothing but the removed entry.
type packedRefs struct {
	lines   []string
	entries []packedEntry
	// sorted: entries are in byte order of their names (as git writes
	// them), so find can search.
	sorted bool
}

type packedEntry struct {
	name plumbing.ReferenceName
	hash plumbing.Hash
	line int // index in lines; a "^peeled" line may follow
}

func (p *packedRefs) find(name plumbing.ReferenceName) (packedEntry, bool) {
	if p.sorted {
		i, ok := slices.BinarySearchFunc(p.entries, name, func(e packedEntry, n plumbing.ReferenceName) int {
			return strings.Compare(string(e.name), string(n))
		})
		if ok {
			return p.entries[i], true
		}
		return packedEntry{}, false
	}
	for _, e := range p.entries {
		if e.name == name {
			return e, true
		}
	}
	return packedEntry{}, false
}

// readPackedFile parses packed-refs; a missing file is an empty one.
func (r *Files) readPackedFile() (*packedRefs, error) {
	f, err := r.fs.Open(packedRefsFile)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return &packedRefs{sorted: true}, nil
		}
		return nil, fmt.Errorf("read %s: %w", r.display(packedRefsFile), err)
	}
	defer f.Close()
	var size int64
	if fi, err := r.fs.Stat(packedRefsFile); err == nil {
		size = fi.Size() // a hint: the file is read to its end
	}
	return parsePackedSized(f, size, r.display(packedRefsFile))
}

// maxPackedLine bounds one line of packed-refs (a ref name git accepts is
// far shorter).
const maxPackedLine = 1 << 20

// parsePacked parses packed-refs. The file is read at once and its lines
// are slices of one string: with 20,000 refs packed, a string and a
// growing slice per line cost most of a sync's own work.
func parsePacked(rd io.Reader, display string) (*packedRefs, error) {
	return parsePackedSized(rd, 0, display)
}

// parsePackedSized is parsePacked of a file of about size bytes.
func parsePackedSized(rd io.Reader, size int64, display string) (*packedRefs, error) {
	var sb strings.Builder
	sb.Grow(int(min(max(size, 0), 1<<30)) + 1)
	if _, err := io.Copy(&sb, rd); err != nil {
		return nil, fmt.Errorf("read %s: %w", display, err)
	}
	text := sb.String()
	n := strings.Count(text, "\n") + 1
	p := &packedRefs{sorted: true, lines: make([]string, 0, n), entries: make([]packedEntry, 0, n)}
	for len(text) > 0 {
		line, rest, _ := strings.Cut(text, "\n")
		text = rest
		if len(line) > maxPackedLine {
			return nil, fmt.Errorf("read %s: line %d is too long", display, len(p.lines)+1)
		}
		line = strings.TrimSuffix(line, "\r")
		n := len(p.lines)
		p.lines = append(p.lines, line)
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
			// The "# pack-refs with: ..." header, or a blank line.
		case strings.HasPrefix(line, "^"):
			if _, ok := objects.ParseHex(line[1:]); !ok || n == 0 {
				return nil, fmt.Errorf("%s line %d is malformed: %q", display, n+1, line)
			}
		default:
			hexPart, name, ok := strings.Cut(line, " ")
			h, hexOK := objects.ParseHex(hexPart)
			if !ok || !hexOK || name == "" {
				return nil, fmt.Errorf("%s line %d is malformed: %q", display, n+1, line)
			}
			if k := len(p.entries); k > 0 && string(p.entries[k-1].name) >= name {
				p.sorted = false
			}
			p.entries = append(p.entries, packedEntry{name: plumbing.ReferenceName(name), hash: h, line: n})
		}
	}
	return p, nil
}

// deleteLocked removes name, whose lock the caller holds. As git's files
// backend does, it takes packed-refs.lock before reading packed-refs and
// keeps it until the loose file is gone: a concurrent git pack-refs could
// otherwise copy the loose value into packed-refs after this read and
// before the unlink, resurrecting the ref. The packed entry goes first, so
// no reader ever sees the packed value come back.
func (r *Files) deleteLocked(name plumbing.ReferenceName, refPath string) error {
	lockPath := packedRefsFile + LockSuffix
	if err := r.acquireLock(name, lockPath); err != nil {
		return err
	}
	defer func() { _ = r.fs.Remove(lockPath) }()
	packed, err := r.readPackedLocked()
	if err != nil {
		return fmt.Errorf("delete ref %s: %w", name, err)
	}
	if e, ok := packed.find(name); ok {
		var buf bytes.Buffer
		for i := 0; i < len(packed.lines); i++ {
			if i == e.line {
				for i+1 < len(packed.lines) && strings.HasPrefix(packed.lines[i+1], "^") {
					i++
				}
				continue
			}
			buf.WriteString(packed.lines[i])
			buf.WriteByte('\n')
		}
		if err := r.writeValue(packedRefsFile, buf.Bytes()); err != nil {
			return fmt.Errorf("delete ref %s: %w", name, err)
		}
	}
	if err := r.fs.Remove(refPath); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("delete ref %s: remove %s: %w", name, r.display(refPath), err)
	}
	return nil
}

// acquireLock creates lockPath (relative to the git dir) exclusively,
// holding this process's owner marker (lockfile.go), waiting with jittered
// exponential backoff while someone else holds it. A lock whose marker
// proves its owner dead is removed with a warning instead of waited for.
func (r *Files) acquireLock(name plumbing.ReferenceName, lockPath string) error {
	timeout := r.lockTimeout
	if timeout <= 0 {
		timeout = defaultLockTimeout
	}
	if p, ok := r.osPath(lockPath); ok {
		if err := AcquireLock(p, r.perm, timeout, r.warn, r.owner); err != nil {
			if errors.Is(err, ErrLocked) {
				return fmt.Errorf("cannot lock ref %s: %w", name, err)
			}
			return fmt.Errorf("cannot lock ref %s: create %s: %w", name, r.display(lockPath), err)
		}
		return nil
	}
	// memfs (unit tests): O_EXCL, with the marker written in.
	deadline := time.Now().Add(timeout)
	backoff := lockBackoffStart
	for {
		f, err := r.fs.OpenFile(lockPath, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o666)
		if err == nil {
			_, err = f.Write(thisOwner().Marker())
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				_ = r.fs.Remove(lockPath)
				return fmt.Errorf("cannot lock ref %s: %w", name, err)
			}
			return nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("cannot lock ref %s: create %s: %w", name, r.display(lockPath), err)
		}
		left := time.Until(deadline)
		if left <= 0 {
			return fmt.Errorf("cannot lock ref %s: %w: %s exists; if no other git process is running, "+
				"one crashed earlier: remove it and try again", name, ErrLocked, r.display(lockPath))
		}
		time.Sleep(min(jitter(backoff), left))
		backoff = min(backoff*2, lockBackoffMax)
	}
}

// looseAncestor returns the name of a loose ref that is an ancestor of name
// (refs/a for refs/a/b), or "".
func (r *Files) looseAncestor(name plumbing.ReferenceName) string {
	s := string(name)
	for i := len("refs/"); i < len(s); i++ {
		if s[i] != '/' {
			continue
		}
		fi, err := r.fs.Stat(filepath.FromSlash(s[:i]))
		if err == nil && !fi.IsDir() {
			return s[:i]
		}
	}
	return ""
}

// makeAvailable checks, under name's lock and before creating it, that no
// packed ref is an ancestor or descendant of name and that no loose refs
// live below it. Empty directories left where the ref file goes are removed,
// as git does.
func (r *Files) makeAvailable(name plumbing.ReferenceName, refPath string) error {
	packed, err := r.readPacked()
	if err != nil {
		return fmt.Errorf("update ref %s: %w", name, err)
	}
	if en, ok := packed.conflict(name); ok {
		return fmt.Errorf("cannot create ref %s: ref %s exists", name, en)
	}
	if !r.isDir(refPath) {
		return nil
	}
	if blocker := r.firstFile(refPath); blocker != "" {
		return fmt.Errorf("cannot create ref %s: %s exists below it", name, r.display(blocker))
	}
	if err := r.removeEmptyTree(refPath); err != nil {
		return fmt.Errorf("cannot create ref %s: there is a directory in its place: %w", name, err)
	}
	return nil
}

// firstFile returns the first non-directory below dir, or "".
func (r *Files) firstFile(dir string) string {
	entries, err := r.fs.ReadDir(dir)
	if err != nil {
		return ""
	}
	for _, e := range entries {
		p := r.fs.Join(dir, e.Name())
		if !e.IsDir() {
			return p
		}
		if f := r.firstFile(p); f != "" {
			return f
		}
	}
	return ""
}

func (r *Files) removeEmptyTree(dir string) error {
	entries, err := r.fs.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := r.removeEmptyTree(r.fs.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return r.fs.Remove(dir)
}

// removeEmptyParents removes the now-empty directories above p, keeping the
// first two levels (refs/<category>/), like git's try_remove_empty_parents.
// Failing because a directory is not empty (or is being used) is expected.
func (r *Files) removeEmptyParents(p string) {
	parts := strings.Split(filepath.ToSlash(p), "/")
	keep := 2 // refs/hegel
	if parts[0] == "logs" {
		keep = 3 // logs/refs/hegel
	}
	for n := len(parts) - 1; n > keep; n-- {
		dir := filepath.FromSlash(path.Join(parts[:n]...))
		if err := r.fs.Remove(dir); err != nil {
			return
		}
	}
}

func (r *Files) refPath(name plumbing.ReferenceName) string {
	return filepath.FromSlash(string(name))
}

func (r *Files) isDir(p string) bool {
	fi, err := r.fs.Stat(p)
	return err == nil && fi.IsDir()
}

// display returns p as an absolute path on the filesystem, for messages.
func (r *Files) display(p string) string {
	return r.fs.Join(r.fs.Root(), filepath.FromSlash(p))
}

// writeValue replaces the file at p (relative to the git dir) with data
// atomically: a temporary file beside it (its name ends in ".lock", so
// git's ref walks skip it), written, fsynced when core.fsync includes
// references, and renamed over p. The caller holds
// p's lock, which keeps its owner marker to the end.
func (r *Files) writeValue(p string, data []byte) error {
	if osp, ok := r.osPath(p); ok {
		tmp := lockTemp(osp + LockSuffix)
		f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		if err != nil {
			return fmt.Errorf("create %s: %w", tmp, err)
		}
		_, err = f.Write(data)
		if err == nil {
			err = r.dur.Sync(objects.FsyncReference, f)
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = r.perm.Adjust(tmp)
		}
		if err == nil {
			err = os.Rename(tmp, osp)
		}
		if err != nil {
			os.Remove(tmp)
			return fmt.Errorf("write %s: %w", r.display(p), err)
		}
		return nil
	}
	tmp := p + ".hegel-tmp" + LockSuffix
	f, err := r.fs.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o666)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = r.replace(tmp, p)
	}
	if err != nil {
		_ = r.fs.Remove(tmp)
	}
	return err
}

// replace renames from over to.
//
// go-billy's memfs Rename also moves every file whose path merely starts
// with from: renaming refs/hegel/a.lock deletes a ref named
// refs/hegel/a.lockX. memfs is single-goroutine anyway (see Files), so
// there the lock's content is copied and the lock removed instead.
func (r *Files) replace(from, to string) error {
	if !r.isMemfs() {
		return r.fs.Rename(from, to)
	}
	data, err := util.ReadFile(r.fs, from)
	if err != nil {
		return err
	}
	f, err := r.fs.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o666)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return r.fs.Remove(from)
}

func (r *Files) isMemfs() bool {
	_, ok := r.underlying().(*memfs.Memory)
	return ok
}

// underlying returns the filesystem below a chroot helper (and its
// polyfill), or nil.
func (r *Files) underlying() billy.Basic {
	h, ok := r.fs.(*chroot.ChrootHelper)
	if !ok {
		return nil
	}
	u := h.Underlying()
	if pf, ok := u.(*polyfill.Polyfill); ok {
		return pf.Basic
	}
	return u
}

// osPath returns the OS path of p when r.fs is an OS filesystem (osfs,
// bound or chroot).
func (r *Files) osPath(p string) (string, bool) {
	switch r.fs.(type) {
	case *osfs.BoundOS:
		return filepath.Join(r.fs.Root(), p), true
	}
	if _, ok := r.underlying().(*osfs.ChrootOS); ok {
		return filepath.Join(r.fs.Root(), p), true
	}
	return "", false
}

func compareOld(name plumbing.ReferenceName, old, cur plumbing.Hash, exists bool) error {
	switch {
	case old.IsZero() && exists:
		return fmt.Errorf("update ref %s: %w: expected it not to exist, but it points at %s", name, engine.ErrConflict, cur)
	case !old.IsZero() && !exists:
		return fmt.Errorf("update ref %s: %w: expected %s, but it does not exist", name, engine.ErrConflict, old)
	case !old.IsZero() && cur != old:
		return fmt.Errorf("update ref %s: %w: expected %s, but it points at %s", name, engine.ErrConflict, old, cur)
	}
	return nil
}

func isNotDir(err error) bool {
	return errors.Is(err, syscall.ENOTDIR)
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}

// CheckName accepts the names git's check-ref-format accepts under
// refs/, which is stricter than go-git's ReferenceName.Validate.
func CheckName(name plumbing.ReferenceName) error {
	s := string(name)
	bad := func(why string) error {
		return fmt.Errorf("%w %q: %s", ErrBadRefName, s, why)
	}
	if !strings.HasPrefix(s, "refs/") {
		return bad("must start with refs/")
	}
	if err := name.Validate(); err != nil {
		return bad(err.Error())
	}
	if strings.HasSuffix(s, "/") {
		return bad("must not end with /")
	}
	if strings.HasSuffix(s, ".") {
		return bad("must not end with .")
	}
	for _, seq := range []string{"//", "..", "@{"} {
		if strings.Contains(s, seq) {
			return bad(fmt.Sprintf("must not contain %q", seq))
		}
	}
	for _, c := range s {
		if c < 0x20 || c == 0x7f {
			return bad("must not contain control characters")
		}
		if strings.ContainsRune(" ~^:?*[\\", c) {
			return bad(fmt.Sprintf("must not contain %q", c))
		}
	}
	for _, comp := range strings.Split(s, "/") {
		switch {
		case comp == "":
			return bad("must not contain an empty component")
		case strings.HasPrefix(comp, "."):
			return bad("no component may start with .")
		case strings.HasSuffix(comp, LockSuffix):
			return bad("no component may end with .lock")
		}
	}
	return nil
}

// mkdirAll creates dir and its parents (with the shared permissions),
// retrying when a concurrent delete prunes an empty parent between two
// steps (git's raceproof_create_file does the same).
func (r *Files) mkdirAll(dir string) error {
	if p, ok := r.osPath(dir); ok {
		return r.perm.MkdirAll(p)
	}
	var err error
	for i := 0; i < 10; i++ {
		if err = r.fs.MkdirAll(dir, 0o777); err == nil || !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return err
}
