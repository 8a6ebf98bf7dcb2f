package rollback

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// Popping a stash after HEAD moved: a parked file that a later commit
// changed too is merged three ways, as git stash pop merges it. The base
// is the file as HEAD had it when the stash was made (the parked tree's
// base/), ours the file as HEAD has it now (the working tree holds the
// same, or the path is refused as a local change), theirs the parked
// file. Text is merged by git merge-file, with git stash's labels.

// The kinds of UnparkConflict.
const (
	// ConflictContent: both changed the same lines; the file is written
	// with conflict markers.
	ConflictContent = "content"
	// ConflictAddAdd: both added the file, differently; written with
	// conflict markers (an empty base).
	ConflictAddAdd = "add/add"
	// ConflictModifyDelete: the stash deleted a file HEAD changed since;
	// HEAD's version is left.
	ConflictModifyDelete = "modify/delete"
	// ConflictDeleteModify: HEAD deleted a file the stash changed; the
	// stash's version is written back.
	ConflictDeleteModify = "delete/modify"
	// ConflictBinary: both changed a binary file; HEAD's version is left.
	ConflictBinary = "binary"
	// ConflictType: a symbolic link or submodule on one side or both;
	// HEAD's version is left.
	ConflictType = "type"
)

// Labels of the sides in conflict markers, git stash's.
const (
	labelOurs   = "Updated upstream"
	labelBase   = "Stash base"
	labelTheirs = "Stashed changes"
)

// UnparkConflict is one path a stash's files could not be merged on.
type UnparkConflict struct {
	Path string
	Kind string
}

// Describe says what happened to the path, in a few words.
func (c UnparkConflict) Describe() string {
	switch c.Kind {
	case ConflictContent:
		return "both modified; conflict markers written"
	case ConflictAddAdd:
		return "both added; conflict markers written"
	case ConflictModifyDelete:
		return "deleted in the stash, modified since; the current version is left"
	case ConflictDeleteModify:
		return "modified in the stash, deleted since; the stash's version is written"
	case ConflictBinary:
		return "binary file modified in both; the current version is left"
	default:
		return "file type differs; the current version is left"
	}
}

// mergeInput is a path both the stash and HEAD changed since the stash's
// base, with no uncommitted change.
type mergeInput struct {
	path               string
	base, ours, theirs leaf
	// theirsStaged: the parked file is the parked index's blob, so it is
	// in repository form (a snapshot stores a file that matches the index
	// as the index's blob, and a modified one as the bytes on disk).
	theirsStaged bool
}

// unparkPlan is what popping a stash does to each path.
type unparkPlan struct {
	wt, ix          []change
	merge           []mergeInput
	busyWT, busyIdx []string
}

// planUnpark sorts the parked changes (base -> parked) by the state of
// their path: nowWT, nowIdx and headWT give each path's leaf in the
// working tree, the index and HEAD where it differs from the parked one
// (absent: as parked); localWT and localIdx are the paths with
// uncommitted changes in the working tree and in the index.
func planUnpark(pwt, pix []change, nowWT, nowIdx, headWT map[string]leaf, localWT, localIdx map[string]bool) unparkPlan {
	var pl unparkPlan
	local := func(p string) bool { return localWT[p] || localIdx[p] }
	parkedIdx := make(map[string]leaf, len(pix))
	for _, c := range pix {
		parkedIdx[c.path] = c.to
	}
	for _, c := range pwt {
		w := sideOf(nowWT, c)
		switch {
		case sameLeaf(w, c.to):
			// already as parked
		case sameLeaf(w, c.from):
			pl.wt = append(pl.wt, change{path: c.path, from: w, to: c.to})
		case !local(c.path):
			staged, ok := parkedIdx[c.path]
			pl.merge = append(pl.merge, mergeInput{path: c.path, base: c.from, ours: sideOf(headWT, c), theirs: c.to,
				theirsStaged: ok && sameLeaf(staged, c.to)})
		case localWT[c.path]:
			pl.busyWT = append(pl.busyWT, c.path)
		default:
			pl.busyIdx = appendOnce(pl.busyIdx, c.path)
		}
	}
	for _, c := range pix {
		i := sideOf(nowIdx, c)
		switch {
		case sameLeaf(i, c.to):
		case sameLeaf(i, c.from):
			pl.ix = append(pl.ix, change{path: c.path, from: i, to: c.to})
		case !local(c.path):
			// HEAD changed it since: the index keeps HEAD's version, the
			// merge lands in the working tree, as git stash pop leaves it.
		default:
			pl.busyIdx = appendOnce(pl.busyIdx, c.path)
		}
	}
	return pl
}

// sideOf is c's path in m, or c's parked side when m does not have it.
func sideOf(m map[string]leaf, c change) leaf {
	if l, ok := m[c.path]; ok {
		return l
	}
	return c.to
}

func sameLeaf(a, b leaf) bool { return a.mode == b.mode && (a.mode == 0 || a.hash == b.hash) }

// fromSides maps each change's path to its from side.
func fromSides(cs []change) map[string]leaf {
	m := make(map[string]leaf, len(cs))
	for _, c := range cs {
		m[c.path] = c.from
	}
	return m
}

// pathsOf are the paths of the changes given.
func pathsOf(cs []change) map[string]bool {
	m := make(map[string]bool, len(cs))
	for _, c := range cs {
		m[c.path] = true
	}
	return m
}

func isFile(l leaf) bool { return l.mode == filemode.Regular || l.mode == filemode.Executable }

// mergeParked merges one path: the change to make in the working tree
// (nil: it stays as HEAD has it), and the kind of conflict ("" for none).
// Merged blobs are stored before the caller journals the result.
func (m *Manager) mergeParked(mg mergeInput) (*change, string, error) {
	b, o, t := mg.base, mg.ours, mg.theirs
	switch {
	case t.mode == 0:
		return nil, ConflictModifyDelete, nil
	case o.mode == 0:
		return &change{path: mg.path, from: o, to: t}, ConflictDeleteModify, nil
	case !isFile(o) || !isFile(t) || (b.mode != 0 && !isFile(b)):
		return nil, ConflictType, nil
	}
	var base []byte
	if b.mode != 0 {
		var err error
		if base, err = m.w.obj.read(plumbing.BlobObject, b.hash); err != nil {
			return nil, "", err
		}
	}
	ours, err := m.w.obj.read(plumbing.BlobObject, o.hash)
	if err != nil {
		return nil, "", err
	}
	theirs, err := m.w.obj.read(plumbing.BlobObject, t.hash)
	if err != nil {
		return nil, "", err
	}
	// The base and ours are commits' blobs, in repository form; a parked
	// file that was modified is the bytes on disk, in working-tree form
	// (CRLF with core.autocrlf, a clean/smudge filter's output). Merged
	// as they are, every line would differ, so, as git stash pop does,
	// the parked file is merged as git would store it, and the result is
	// written as git would check it out.
	convert := m.w.mayConvert()
	if convert && !mg.theirsStaged {
		if theirs, err = m.w.cleanBytes(mg.path, theirs); err != nil {
			return nil, "", err
		}
	}
	if isBinary(base) || isBinary(ours) || isBinary(theirs) {
		return nil, ConflictBinary, nil
	}
	merged, conflicts, err := m.mergeFile(ours, base, theirs)
	if err != nil {
		return nil, "", err
	}
	mode := o.mode
	if b.mode != 0 && o.mode == b.mode {
		mode = t.mode
	}
	kind := ""
	if conflicts {
		kind = ConflictContent
		if b.mode == 0 {
			kind = ConflictAddAdd
		}
	}
	h := plumbing.ComputeHash(plumbing.BlobObject, merged)
	if h == o.hash && mode == o.mode {
		return nil, kind, nil
	}
	if err := m.w.obj.write(plumbing.BlobObject, h, merged); err != nil {
		return nil, "", err
	}
	if convert {
		onDisk, err := m.w.smudgeBlob(mg.path, h)
		if err != nil {
			return nil, "", err
		}
		h = plumbing.ComputeHash(plumbing.BlobObject, onDisk)
		if err := m.w.obj.write(plumbing.BlobObject, h, onDisk); err != nil {
			return nil, "", err
		}
	}
	return &change{path: mg.path, from: o, to: leaf{path: mg.path, mode: mode, hash: h}}, kind, nil
}

// isBinary is git's test: a NUL byte in the first 8000.
func isBinary(b []byte) bool {
	if len(b) > 8000 {
		b = b[:8000]
	}
	return bytes.IndexByte(b, 0) >= 0
}

// mergeFile runs git merge-file on the three versions (in files under
// the git directory, removed after): the result, with conflict markers
// in git's style (merge.conflictStyle applies), and whether it has any.
func (m *Manager) mergeFile(ours, base, theirs []byte) ([]byte, bool, error) {
	dir, err := os.MkdirTemp(m.r.GitDir, "hegel-merge-")
	if err != nil {
		return nil, false, fmt.Errorf("cannot merge: %w", err)
	}
	defer os.RemoveAll(dir)
	names := []string{"ours", "base", "theirs"}
	for i, b := range [][]byte{ours, base, theirs} {
		if err := os.WriteFile(filepath.Join(dir, names[i]), b, 0o600); err != nil {
			return nil, false, fmt.Errorf("cannot merge: %w", err)
		}
	}
	cmd := exec.Command("git", "--git-dir", m.r.GitDir, "merge-file", "-p",
		"-L", labelOurs, "-L", labelBase, "-L", labelTheirs,
		filepath.Join(dir, "ours"), filepath.Join(dir, "base"), filepath.Join(dir, "theirs"))
	cmd.Dir = dir
	cmd.Env = os.Environ()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return stdout.Bytes(), false, nil
	case errors.As(err, &exit) && exit.ExitCode() > 0 && exit.ExitCode() < 128:
		// The exit code counts the conflicts.
		return stdout.Bytes(), true, nil
	}
	msg := string(bytes.TrimSpace(stderr.Bytes()))
	if i := bytes.IndexByte([]byte(msg), '\n'); i >= 0 {
		msg = msg[:i]
	}
	if msg == "" {
		msg = err.Error()
	}
	return nil, false, fmt.Errorf("git merge-file failed: %s", msg)
}
