package gitstore

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/gitstore/refs"
)

// The stash list: one commit chain on StashRef whose tree is
//
//	version               "1\n", as on every git-hegel ref
//	entries/<id>.json     one blob per live stash (no entries/ when empty)
//	files/<id>            the files a stash parked (stash push --files): the
//	                      snapshot tree its entry names, kept reachable
//
// Each commit is one operation; its subject is "stash <op>: <detail>".
// Entries are written once and never rewritten: push adds a name, pop and
// drop remove one, restore adds an old blob back under its old name. So
// push, pop and drop read and write only the entries/ tree (names and
// hashes) and the one blob concerned, whatever the number of stashes.
const (
	StashRef         = plumbing.ReferenceName("refs/hegel/stashes")
	stashEntriesDir  = "entries"
	stashFilesDir    = "files"
	stashBlobSuffix  = ".json"
	stashBlobVersion = 1
	stashAttempts    = 200
)

// Stashes is the git-backed engine.StashStore.
type Stashes struct{ r *Repo }

var _ engine.StashStore = Stashes{}

// Stashes returns the repository's stash store.
func (r *Repo) Stashes() Stashes { return Stashes{r} }

// stashBlob is the stored form of one stash. Field order matters for speed,
// not meaning: the small fields come first and the definition last, so
// listing can stop reading a blob once it has what it shows.
type stashBlob struct {
	Version       int                `json:"version"`
	Message       string             `json:"message"`
	Timestamp     time.Time          `json:"timestamp"`
	Task          string             `json:"task"`
	Worktree      string             `json:"worktree"`
	Files         *engine.StashFiles `json:"files,omitempty"`
	WorkflowState *engine.State      `json:"workflow_state"`
	Workflow      string             `json:"workflow"` // the definition's YAML text
}

// stashTip is the stash list as one commit holds it.
type stashTip struct {
	commit  plumbing.Hash // zero: the ref does not exist yet
	tree    plumbing.Hash
	rest    []object.TreeEntry // root entries besides entries/ and files/ (version, and any a newer build added)
	entries []object.TreeEntry // entries/, in git order: oldest id first
	files   []object.TreeEntry // files/: one tree per stash that parked files, named by its id
}

// load reads the tip of the stash list without reading any entry blob.
func (s Stashes) load() (*stashTip, error) {
	h, err := s.r.refs.Read(StashRef)
	if errors.Is(err, ErrNotFound) {
		return &stashTip{}, nil
	}
	if err != nil {
		return nil, err
	}
	return s.loadAt(h)
}

func (s Stashes) loadAt(h plumbing.Hash) (*stashTip, error) {
	if err := checkSize(s.r.storage, h, "commit "+h.String(), s.r.commitLimit(), "syncMaxCommitSize"); err != nil {
		return nil, fmt.Errorf("%s: %w", StashRef, err)
	}
	c, err := object.GetCommit(s.r.storage, h)
	if err != nil {
		return nil, fmt.Errorf("%s points at %s, which is not a readable commit: %s", StashRef, h, oneLine(err.Error()))
	}
	root, err := s.r.treeEntries(c.TreeHash)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot read tree %s: %s", StashRef, c.TreeHash, oneLine(err.Error()))
	}
	t := &stashTip{commit: h, tree: c.TreeHash}
	version := false
	for _, e := range root {
		switch e.Name {
		case stashEntriesDir:
			if e.Mode != filemode.Dir {
				return nil, fmt.Errorf("%s: %s is not a directory", StashRef, stashEntriesDir)
			}
			sub, err := s.r.treeEntries(e.Hash)
			if err != nil {
				return nil, fmt.Errorf("%s: cannot read %s/: %s", StashRef, stashEntriesDir, oneLine(err.Error()))
			}
			t.entries = sub
			continue
		case stashFilesDir:
			if e.Mode != filemode.Dir {
				return nil, fmt.Errorf("%s: %s is not a directory", StashRef, stashFilesDir)
			}
			sub, err := s.r.treeEntries(e.Hash)
			if err != nil {
				return nil, fmt.Errorf("%s: cannot read %s/: %s", StashRef, stashFilesDir, oneLine(err.Error()))
			}
			t.files = sub
			continue
		case versionFile:
			b, err := s.r.readBlob(e.Hash)
			if err != nil {
				return nil, fmt.Errorf("%s: cannot read %s: %s", StashRef, versionFile, oneLine(err.Error()))
			}
			if got := strings.TrimSpace(string(b)); got != FormatVersion {
				return nil, otherVersion(string(StashRef)+": ", got)
			}
			version = true
		}
		t.rest = append(t.rest, e)
	}
	if !version {
		return nil, fmt.Errorf("%s: %w: no version blob", StashRef, ErrUnknownVersion)
	}
	return t, nil
}

func stashName(id string) string { return id + stashBlobSuffix }

func stashID(name string) string { return strings.TrimSuffix(name, stashBlobSuffix) }

// find returns the position of id among the entries, or -1.
func (t *stashTip) find(id string) int {
	name := stashName(id)
	i := sort.Search(len(t.entries), func(i int) bool { return t.entries[i].Name >= name })
	if i < len(t.entries) && t.entries[i].Name == name {
		return i
	}
	return -1
}

// newest returns the newest well-formed id, or "".
func (t *stashTip) newest() string {
	for i := len(t.entries) - 1; i >= 0; i-- {
		if id := stashID(t.entries[i].Name); engine.ValidStashID(id) {
			return id
		}
	}
	return ""
}

// without returns the entries minus position i, in a new slice.
func (t *stashTip) without(i int) []object.TreeEntry {
	out := make([]object.TreeEntry, 0, len(t.entries)-1)
	out = append(out, t.entries[:i]...)
	return append(out, t.entries[i+1:]...)
}

// with returns the entries plus a blob named id, in a new slice.
func (t *stashTip) with(id string, blob plumbing.Hash) []object.TreeEntry {
	e := object.TreeEntry{Name: stashName(id), Mode: filemode.Regular, Hash: blob}
	i := sort.Search(len(t.entries), func(i int) bool { return t.entries[i].Name >= e.Name })
	out := make([]object.TreeEntry, 0, len(t.entries)+1)
	out = append(out, t.entries[:i]...)
	out = append(out, e)
	return append(out, t.entries[i:]...)
}

// filesWith returns files/ plus (or, with tree zero, minus) the tree of
// stash id, in a new slice.
func (t *stashTip) filesWith(id string, tree plumbing.Hash) []object.TreeEntry {
	out := make([]object.TreeEntry, 0, len(t.files)+1)
	for _, e := range t.files {
		if e.Name != id {
			out = append(out, e)
		}
	}
	if !tree.IsZero() {
		out = append(out, object.TreeEntry{Name: id, Mode: filemode.Dir, Hash: tree})
		sortTreeEntries(out)
	}
	return out
}

// filesKept returns files/ restricted to the stashes in entries.
func filesKept(files, entries []object.TreeEntry) []object.TreeEntry {
	if len(files) == 0 {
		return nil
	}
	live := make(map[string]bool, len(entries))
	for _, e := range entries {
		live[stashID(e.Name)] = true
	}
	var out []object.TreeEntry
	for _, e := range files {
		if live[e.Name] {
			out = append(out, e)
		}
	}
	return out
}

// commit writes entries (and the files trees of those that have one) as
// the new stash list on top of t, with compare-and-swap on t's commit. An
// unchanged tree writes nothing.
func (s Stashes) commit(t *stashTip, entries []object.TreeEntry, subject string) error {
	return s.commitFiles(t, entries, filesKept(t.files, entries), subject)
}

func (s Stashes) commitFiles(t *stashTip, entries, files []object.TreeEntry, subject string) error {
	root := append([]object.TreeEntry(nil), t.rest...)
	if t.commit.IsZero() {
		v, err := s.r.writeBlob([]byte(FormatVersion + "\n"))
		if err != nil {
			return err
		}
		root = append(root, object.TreeEntry{Name: versionFile, Mode: filemode.Regular, Hash: v})
	}
	if len(entries) > 0 {
		sortTreeEntries(entries) // already sorted unless a foreign entry is a directory
		h, err := s.r.storeTree(entries)
		if err != nil {
			return err
		}
		root = append(root, object.TreeEntry{Name: stashEntriesDir, Mode: filemode.Dir, Hash: h})
	}
	if len(files) > 0 {
		h, err := s.r.storeTree(files)
		if err != nil {
			return err
		}
		root = append(root, object.TreeEntry{Name: stashFilesDir, Mode: filemode.Dir, Hash: h})
	}
	sortTreeEntries(root)
	tree, err := s.r.storeTree(root)
	if err != nil {
		return err
	}
	if tree == t.tree {
		return nil
	}
	var parents []plumbing.Hash
	if !t.commit.IsZero() {
		parents = append(parents, t.commit)
	}
	c, err := s.r.writeCommit(tree, parents, subject)
	if err != nil {
		return err
	}
	return s.r.refs.UpdateMsg(StashRef, t.commit, c, refs.Reflog{Msg: subject})
}

func (r *Repo) storeTree(entries []object.TreeEntry) (plumbing.Hash, error) {
	return r.objects.Write(plumbing.TreeObject, encodeTreeAsIs(entries))
}

// update applies fn to the current stash list and commits the result,
// reloading and reapplying fn whenever another process committed first.
func (s Stashes) update(fn func(t *stashTip) ([]object.TreeEntry, string, error)) error {
	return s.updateFiles(func(t *stashTip) ([]object.TreeEntry, []object.TreeEntry, string, error) {
		entries, subject, err := fn(t)
		return entries, filesKept(t.files, entries), subject, err
	})
}

// updateFiles is update for an operation that also changes files/.
func (s Stashes) updateFiles(fn func(t *stashTip) (entries, files []object.TreeEntry, subject string, err error)) error {
	for i := 0; i < stashAttempts; i++ {
		t, err := s.load()
		if err != nil {
			return err
		}
		entries, files, subject, err := fn(t)
		if err != nil {
			return err
		}
		err = s.commitFiles(t, entries, files, subject)
		if err == nil {
			return nil
		}
		if !errors.Is(err, ErrConflict) {
			return describeRefError(StashRef, err)
		}
		// Jittered exponential backoff (1ms doubling to 64ms) so that
		// many writers spread out instead of colliding again.
		time.Sleep(time.Duration(rand.Int64N(int64(time.Millisecond) << min(i, 6))))
	}
	return fmt.Errorf("%s kept changing while this command ran; try again", StashRef)
}

func stashSubject(op engine.StashOp, detail string) string {
	return "stash " + string(op) + ": " + oneLine(detail)
}

// PushStash implements engine.StashStore.
func (s Stashes) PushStash(st *engine.Stash, detail string) error {
	if !utf8.Valid(st.Definition) {
		return errors.New("cannot stash: the workflow definition is not valid UTF-8")
	}
	b, err := encodeJSON(stashBlob{
		Version:       stashBlobVersion,
		Message:       st.Message,
		Timestamp:     st.Timestamp,
		Task:          st.Task,
		Worktree:      st.Worktree,
		Files:         st.Files,
		WorkflowState: st.State,
		Workflow:      string(st.Definition),
	})
	if err != nil {
		return err
	}
	blob, err := s.r.writeBlob(b)
	if err != nil {
		return err
	}
	files, err := filesTree(st.Files)
	if err != nil {
		return err
	}
	err = s.updateFiles(func(t *stashTip) ([]object.TreeEntry, []object.TreeEntry, string, error) {
		st.ID = engine.NextStashID(st.Timestamp, t.newest())
		entries := t.with(st.ID, blob)
		return entries, (&stashTip{files: filesKept(t.files, entries)}).filesWith(st.ID, files), stashSubject(engine.StashOpPush, detail), nil
	})
	if err != nil {
		return err
	}
	st.Rev = blob.String()
	if err := s.recordMade(st.Rev); err != nil {
		// The stash is pushed; popping it here will ask for its texts to
		// be trusted, as another clone's would.
		s.r.warnf(fmt.Sprintf("could not note that stash %s was made here: %s", st.ID, oneLine(err.Error())))
	}
	return nil
}

// RemoveStash implements engine.StashStore.
func (s Stashes) RemoveStash(id string, op engine.StashOp, detail string) error {
	return s.update(func(t *stashTip) ([]object.TreeEntry, string, error) {
		i := t.find(id)
		if i < 0 {
			return nil, "", fmt.Errorf("stash %s: %w", id, ErrNotFound)
		}
		return t.without(i), stashSubject(op, detail), nil
	})
}

// ClearStashes implements engine.StashStore.
func (s Stashes) ClearStashes(ids []string) (int, error) {
	drop := make(map[string]bool, len(ids))
	for _, id := range ids {
		drop[stashName(id)] = true
	}
	n := 0
	err := s.update(func(t *stashTip) ([]object.TreeEntry, string, error) {
		keep := make([]object.TreeEntry, 0, len(t.entries))
		for _, e := range t.entries {
			if !drop[e.Name] {
				keep = append(keep, e)
			}
		}
		n = len(t.entries) - len(keep)
		return keep, stashSubject(engine.StashOpClear, plural(n, "stash", "stashes")), nil
	})
	return n, err
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// RestoreStash implements engine.StashStore.
func (s Stashes) RestoreStash(d *engine.DroppedStash, detail string) error {
	if !plumbing.IsHash(d.Rev) {
		return fmt.Errorf("cannot restore stash %s: no blob recorded for it", d.ID)
	}
	blob := plumbing.NewHash(d.Rev)
	full := s.readEntry(object.TreeEntry{Name: stashName(d.ID), Mode: filemode.Regular, Hash: blob}, true)
	files, err := filesTree(full.Files)
	if err != nil {
		return err
	}
	if !files.IsZero() {
		if _, err := object.GetTree(s.r.storage, files); err != nil {
			return fmt.Errorf("cannot restore stash %s: the files it parked are gone (%s)", d.ID, files)
		}
	}
	return s.updateFiles(func(t *stashTip) ([]object.TreeEntry, []object.TreeEntry, string, error) {
		if t.find(d.ID) >= 0 {
			return nil, nil, "", fmt.Errorf("stash %s: %w", d.ID, engine.ErrExists)
		}
		entries := t.with(d.ID, blob)
		return entries, (&stashTip{files: filesKept(t.files, entries)}).filesWith(d.ID, files), stashSubject(engine.StashOpRestore, detail), nil
	})
}

// filesTree returns the tree a stash's parked files are in (zero: none).
func filesTree(f *engine.StashFiles) (plumbing.Hash, error) {
	if f == nil || f.Tree == "" {
		return plumbing.ZeroHash, nil
	}
	if !plumbing.IsHash(f.Tree) {
		return plumbing.ZeroHash, fmt.Errorf("stash files: %q is not an object id", f.Tree)
	}
	return plumbing.NewHash(f.Tree), nil
}

// StashIDs implements engine.StashStore.
func (s Stashes) StashIDs() ([]string, error) {
	t, err := s.load()
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(t.entries))
	for i, e := range t.entries {
		ids[len(ids)-1-i] = stashID(e.Name)
	}
	return ids, nil
}

// LoadStash implements engine.StashStore: it reads and checks the whole
// blob.
func (s Stashes) LoadStash(id string) (*engine.Stash, error) {
	t, err := s.load()
	if err != nil {
		return nil, err
	}
	i := t.find(id)
	if i < 0 {
		return nil, fmt.Errorf("stash %s: %w", id, ErrNotFound)
	}
	return s.readEntry(t.entries[i], true), nil
}
