package gitstore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	gitstorer "github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/engine/text"
	"github.com/git-hegel/git-hegel/engine/workflow"
	"github.com/git-hegel/git-hegel/gitstore/gitdir"
	"github.com/git-hegel/git-hegel/gitstore/objects"
)

// RefusedError reports remote refs that were left out because their data
// failed a check. Everything else was fetched, merged and (for sync and
// push) pushed; the refused refs' local and tracking refs did not move,
// and none of their objects entered the repository.
type RefusedError struct {
	Remote string
	Refs   []engine.RefIssue
}

func (e *RefusedError) Error() string {
	if len(e.Refs) == 0 {
		return "nothing refused"
	}
	msg := RefusedLine(e.Remote, e.Refs[0])
	if n := len(e.Refs) - 1; n == 1 {
		msg += " (and 1 more ref)"
	} else if n > 1 {
		msg += fmt.Sprintf(" (and %d more refs)", n)
	}
	return msg
}

// RefusedLine is the one line that says why a remote ref was refused.
func RefusedLine(remote string, r engine.RefIssue) string {
	line := fmt.Sprintf("Rejected %s from %s: %s", r.Ref, remote, r.Reason)
	if r.RemovedTracking != "" {
		line += fmt.Sprintf("; removed %s, which git fetch had written (the objects it brought stay until 'git prune --expire=now')", r.RemovedTracking)
	}
	return line
}

// validator checks fetched refs before anything is merged: every commit,
// tree and blob the local repository did not have is checked once.
type validator struct {
	s           gitstorer.EncodedObjectStorer
	g           *graph
	docLimit    int64
	checkLimit  int64
	commitLimit int64
	goodTrees   map[plumbing.Hash]bool
	goodBlobs   map[plumbing.Hash]bool
}

func newValidator(s gitstorer.EncodedObjectStorer, g *graph, cfg *gitdir.Config) *validator {
	return &validator{
		s:           s,
		g:           g,
		docLimit:    cfg.Int("hegel", "syncmaxblobsize", defaultDocBlobLimit),
		checkLimit:  cfg.Int("hegel", "syncmaxcheckpointblobsize", defaultCheckpointBlobLimit),
		commitLimit: cfg.Int("hegel", "syncmaxcommitsize", defaultCommitLimit),
		goodTrees:   map[plumbing.Hash]bool{},
		goodBlobs:   map[plumbing.Hash]bool{},
	}
}

// validate checks what tip brings that known (the local ref, the last
// validated tracking value) does not already have: each new commit, the
// trees and blobs below them, then the tip's content for its kind. It
// returns the objects tip brings (for git's checks, and to store only
// those of accepted refs).
func (v *validator) validate(ref hegelRef, tip plumbing.Hash, known []plumbing.Hash) ([]plumbing.Hash, error) {
	o, err := v.s.EncodedObject(plumbing.AnyObject, tip)
	if err != nil {
		return nil, fmt.Errorf("it points at %s, which was not sent", tip)
	}
	if o.Type() != plumbing.CommitObject {
		return nil, fmt.Errorf("it points at a %s, not a commit", o.Type())
	}
	// The walk reads only commit headers, and refuses a commit over the
	// limit before reading any of it.
	v.g.maxCommit = v.commitLimit
	news, err := v.g.newCommits([]plumbing.Hash{tip}, known)
	v.g.maxCommit = 0
	if err != nil {
		return nil, err
	}
	if len(news) == 0 {
		return nil, nil // nothing we do not have already
	}
	for _, n := range news {
		if err := v.checkCommit(n.hash); err != nil {
			return nil, err
		}
	}
	limit := func(path string) int64 {
		if ref.holdsFiles(path) {
			return v.checkLimit
		}
		return v.docLimit
	}
	w := newObjectWalk(v.s)
	w.onTree = func(path string, h plumbing.Hash, ents []rawEntry) error {
		if v.goodTrees[h] {
			return nil
		}
		if strings.Count(path, "/") >= maxTreeDepth {
			return fmt.Errorf("%s: trees nested deeper than %d", path, maxTreeDepth)
		}
		if err := checkTree(ents, ref.holdsFiles(path)); err != nil {
			if path == "" {
				return fmt.Errorf("tree %s: %w", h, err)
			}
			return fmt.Errorf("%s/: %w", path, err)
		}
		v.goodTrees[h] = true
		return nil
	}
	w.onBlob = func(path string, e *rawEntry) error {
		if v.goodBlobs[e.hash] {
			return nil
		}
		size, err := v.s.EncodedObjectSize(e.hash)
		if err != nil {
			return fmt.Errorf("%s: blob %s was not sent", path, e.hash)
		}
		if lim := limit(path); size > lim {
			key := limitKey(ref)
			if ref.holdsFiles(path) {
				key = "syncMaxCheckpointBlobSize"
			}
			return fmt.Errorf("%s: a blob of %d bytes exceeds the %s limit (git config hegel.%s)", path, size, byteSize(lim), key)
		}
		v.goodBlobs[e.hash] = true
		return nil
	}
	if err := w.addCommits(v.g, news, boundaryOf(news)); err != nil {
		return nil, err
	}
	return w.out, v.checkContent(ref, news[0].hash, w.known)
}

// checkContent checks the document at commit tip for its kind. Blobs in
// known came from the local repository and are not read again.
func (v *validator) checkContent(ref hegelRef, tip plumbing.Hash, known map[plumbing.Hash]bool) error {
	n, err := v.g.node(tip)
	if err != nil {
		return err
	}
	root, err := readTree(v.s, n.tree)
	if err != nil {
		return err
	}
	files := map[string]*rawEntry{}
	for i := range root {
		files[root[i].name] = &root[i]
	}
	read := func(name string) ([]byte, error) {
		e := files[name]
		if e == nil {
			return nil, fmt.Errorf("no %s in its tree", name)
		}
		if e.fm != filemode.Regular {
			return nil, fmt.Errorf("%s is not a file", name)
		}
		return v.readBlob(e.hash)
	}
	ver, err := read(versionFile)
	if err != nil {
		return err
	}
	if got := strings.TrimSpace(string(ver)); got != FormatVersion {
		return fmt.Errorf("unknown format version %q (this git-hegel understands %q; upgrade it)", truncate([]byte(got), 20), FormatVersion)
	}
	switch ref.ns.content {
	case contentTask:
		raw, err := read(stateFile)
		if err != nil {
			return err
		}
		var st engine.State
		if err := json.Unmarshal(raw, &st); err != nil {
			return fmt.Errorf("%s: invalid JSON: %s", stateFile, strings.TrimPrefix(err.Error(), "json: "))
		}
		switch {
		case st.Task != ref.task():
			return fmt.Errorf("%s names task %q", stateFile, truncate([]byte(st.Task), 40))
		case st.Workflow == "" || st.Mode == "" || st.CurrentNode == "":
			return fmt.Errorf("%s has no workflow, mode or current_node", stateFile)
		}
		def, err := read(workflowFile)
		if err != nil {
			return err
		}
		if !utf8.Valid(def) {
			return fmt.Errorf("%s is not UTF-8", workflowFile)
		}
		wf, err := workflow.Parse(st.Workflow, workflowFile, def)
		if err != nil {
			return fmt.Errorf("invalid workflow definition: %s", oneLine(err.Error()))
		}
		// A state no git-hegel command would write is refused like any
		// other damage (engine.ValidateState's rules).
		if err := engine.ValidateState(&st, wf); err != nil {
			return fmt.Errorf("%s: %s", stateFile, oneLine(err.Error()))
		}
		if err := v.checkSubmitted(files, &st); err != nil {
			return err
		}
	case contentStashEntries:
		e := files[stashEntriesDir]
		if e == nil {
			return nil // no stashes
		}
		if !e.isDir() {
			return fmt.Errorf("%s is not a directory", stashEntriesDir)
		}
		ents, err := readTree(v.s, e.hash)
		if err != nil {
			return err
		}
		for i := range ents {
			x := &ents[i]
			id := stashID(x.name)
			if !strings.HasSuffix(x.name, stashBlobSuffix) || !engine.ValidStashID(id) || x.fm != filemode.Regular {
				return fmt.Errorf("%s/%s is not a stash entry", stashEntriesDir, truncate([]byte(x.name), 60))
			}
			if known[x.hash] {
				continue
			}
			data, err := v.readBlob(x.hash)
			if err != nil {
				return err
			}
			if _, err := decodeStashBlob(data); err != nil {
				return fmt.Errorf("%s/%s: %s", stashEntriesDir, x.name, oneLine(err.Error()))
			}
		}
		if f := files[stashFilesDir]; f != nil {
			if !f.isDir() {
				return fmt.Errorf("%s is not a directory", stashFilesDir)
			}
			ents, err := readTree(v.s, f.hash)
			if err != nil {
				return err
			}
			for i := range ents {
				if x := &ents[i]; !x.isDir() || !engine.ValidStashID(x.name) {
					return fmt.Errorf("%s/%s is not a stash's files", stashFilesDir, truncate([]byte(x.name), 60))
				}
			}
		}
	}
	return nil
}

// checkSubmitted checks state.json's index of submitted artifacts
// against the tree: each entry's copy is there, a file, with the blob id
// the index gives. show, approvals and their warnings go by the index,
// artifact prints the copy: a remote that changed one without the other
// would show a reviewer one content, record an approval of it, and print
// another, with no warning that it changed.
func (v *validator) checkSubmitted(files map[string]*rawEntry, st *engine.State) error {
	if len(st.Submitted) == 0 {
		return nil
	}
	dir, _, _ := strings.Cut(engine.SubmittedPath("", ""), "/") // "submitted"
	var nodes map[string]*rawEntry
	if e := files[dir]; e != nil && e.isDir() {
		ents, err := readTree(v.s, e.hash)
		if err != nil {
			return err
		}
		nodes = map[string]*rawEntry{}
		for i := range ents {
			nodes[ents[i].name] = &ents[i]
		}
	}
	for _, node := range slices.Sorted(maps.Keys(st.Submitted)) {
		var copies map[string]*rawEntry
		if e := nodes[node]; e != nil && e.isDir() {
			ents, err := readTree(v.s, e.hash)
			if err != nil {
				return err
			}
			copies = map[string]*rawEntry{}
			for i := range ents {
				copies[ents[i].name] = &ents[i]
			}
		}
		for _, s := range st.Submitted[node] {
			p := engine.SubmittedPath(node, s.Name())
			c := copies[s.Name()]
			switch {
			case c == nil || c.fm != filemode.Regular:
				return fmt.Errorf("%s indexes %s, which its tree does not hold as a file", stateFile, p)
			case c.hash.String() != s.Blob:
				return fmt.Errorf("%s gives %s as blob %s, but its tree holds blob %s there", stateFile, p, s.Blob, c.hash)
			}
		}
	}
	return nil
}

func (v *validator) readBlob(h plumbing.Hash) ([]byte, error) {
	if err := checkSize(v.s, h, "blob "+h.String(), v.docLimit, "syncMaxBlobSize"); err != nil {
		return nil, err
	}
	o, err := v.s.EncodedObject(plumbing.BlobObject, h)
	if err != nil {
		return nil, fmt.Errorf("blob %s is missing", h)
	}
	return readObject(o)
}

var identRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[^<>\n]*[^<>\n ] <[^<>\n]*> (0|[1-9][0-9]*) [+-][0-9]{4}$`)
})

// checkCommit applies the rules git fsck --strict applies to a commit's
// header, so that nothing merged can make fsck fail.
func (v *validator) checkCommit(h plumbing.Hash) error {
	if err := checkSize(v.s, h, "commit "+h.String(), v.commitLimit, "syncMaxCommitSize"); err != nil {
		return err
	}
	o, err := v.s.EncodedObject(plumbing.CommitObject, h)
	if err != nil {
		return fmt.Errorf("commit %s is missing", h)
	}
	data, err := readCommitHeader(o)
	if err != nil {
		return fmt.Errorf("commit %s: %s", h, oneLine(err.Error()))
	}
	bad := func(why string) error { return fmt.Errorf("commit %s: %s", h, why) }
	want := "tree"
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return bad("unterminated header")
		}
		line := string(data[:i])
		data = data[i+1:]
		if line == "" {
			break
		}
		key, val, ok := strings.Cut(line, " ")
		if !ok && !strings.HasPrefix(line, " ") {
			return bad(fmt.Sprintf("malformed header line %q", truncate([]byte(line), 40)))
		}
		switch want {
		case "tree":
			if key != "tree" {
				return bad("no tree line")
			}
			if _, ok := objects.ParseHex(val); !ok {
				return bad("bad tree line")
			}
			want = "parent"
		case "parent":
			if key == "parent" {
				if _, ok := objects.ParseHex(val); !ok {
					return bad("bad parent line")
				}
				continue
			}
			if key != "author" || !identRe().MatchString(val) {
				return bad("bad or missing author")
			}
			want = "committer"
		case "committer":
			if key != "committer" || !identRe().MatchString(val) {
				return bad("bad or missing committer")
			}
			want = "rest"
		default:
			if key == "tree" || key == "parent" || key == "author" || key == "committer" {
				return bad("repeated " + key + " line")
			}
		}
	}
	if want != "rest" {
		return bad("incomplete header")
	}
	return nil
}

// Canonical tree entry modes. fsck --strict refuses any other spelling.
var (
	docModes        = map[string]bool{"100644": true, "40000": true}
	checkpointModes = map[string]bool{"100644": true, "100755": true, "120000": true, "40000": true, "160000": true}
)

// checkTree applies git fsck's tree rules plus git-hegel's path rules:
// no empty, ".", "..", "/" or NUL names, no .git in any spelling a
// filesystem may fold onto it, canonical modes, git's order, no
// duplicates. Document refs (tasks, stashes, history) hold only files and
// directories; checkpoints may also hold executables, symbolic links and
// submodules.
func checkTree(ents []rawEntry, checkpoint bool) error {
	modes := docModes
	if checkpoint {
		modes = checkpointModes
	}
	for i := range ents {
		e := &ents[i]
		if err := checkEntryName(e.name); err != nil {
			return err
		}
		if !modes[string(e.mode)] {
			return fmt.Errorf("entry %q has mode %s", e.name, e.mode)
		}
		if i > 0 && compareEntries(&ents[i-1], e) >= 0 {
			return fmt.Errorf("entries out of order or repeated at %q", e.name)
		}
	}
	// A file and a directory of the same name sort apart ("a", "a-b",
	// "a/"): look for the file of each directory's name.
	for i := range ents {
		if !ents[i].isDir() {
			continue
		}
		name := ents[i].name
		lo, hi := 0, len(ents)
		for lo < hi {
			m := (lo + hi) / 2
			if entryKeyLess(&ents[m], name, false) {
				lo = m + 1
			} else {
				hi = m
			}
		}
		if lo < len(ents) && ents[lo].name == name && !ents[lo].isDir() {
			return fmt.Errorf("%q is both a file and a directory", name)
		}
	}
	return nil
}

// compareEntries orders entries as git does: by name, a directory's name
// compared as if it ended in "/".
func compareEntries(a, b *rawEntry) int {
	ak, bk := a.name, b.name
	if a.isDir() {
		ak += "/"
	}
	if b.isDir() {
		bk += "/"
	}
	return strings.Compare(ak, bk)
}

func entryKeyLess(e *rawEntry, name string, dir bool) bool {
	k := e.name
	if e.isDir() {
		k += "/"
	}
	if dir {
		name += "/"
	}
	return k < name
}

// checkEntryName refuses names that could escape the working tree or reach
// into .git when a tree is checked out or restored.
func checkEntryName(name string) error {
	switch {
	case name == "":
		return errors.New("an entry has an empty name")
	case name == "." || name == "..":
		return fmt.Errorf("an entry is named %q", name)
	case strings.ContainsAny(name, "/\\\x00"):
		return fmt.Errorf("entry %q contains a slash, backslash or NUL", truncate([]byte(name), 60))
	case isDotGitName(name):
		return fmt.Errorf("entry %q names the repository directory", name)
	}
	return nil
}

// isDotGitName reports names a filesystem may treat as ".git": any case,
// NTFS trailing dots and spaces, alternate data streams and the 8.3 short
// name, and HFS+ ignorable code points. (rollback applies the same rule to
// paths it restores.)
func isDotGitName(name string) bool {
	if strings.IndexByte(name, 'g') < 0 && strings.IndexByte(name, 'G') < 0 {
		return false // every spelling has a g (fast path for the usual name)
	}
	var b strings.Builder
	for _, r := range name {
		if (r >= 0x200c && r <= 0x200f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x206a && r <= 0x206f) || r == 0xfeff {
			continue
		}
		b.WriteRune(r)
	}
	n := strings.ToLower(b.String())
	if i := strings.IndexByte(n, ':'); i >= 0 {
		n = n[:i]
	}
	n = strings.TrimRight(n, ". ")
	return n == ".git" || n == "git~1"
}

func limitKey(ref hegelRef) string {
	if ref.ns.userFiles {
		return "syncMaxCheckpointBlobSize"
	}
	return "syncMaxBlobSize"
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return text.Plural(int(n), "byte", "bytes")
}
