package gitstore

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/engine/text"
)

// WorkflowFiles reads the user's workflow definitions, .hegel/workflows/*.yaml
// (and *.yml), keyed by their path relative to the top of the work tree. A
// file that cannot be read is given with no content and its error in
// unreadable, so it is listed as broken without hiding the others.
func (s *Sessions) WorkflowFiles() (map[string][]byte, error) {
	files, _ := s.WorkflowFilesAll()
	return files, nil
}

// WorkflowFilesAll is WorkflowFiles with the files that could not be read.
func (s *Sessions) WorkflowFilesAll() (files map[string][]byte, unreadable map[string]error) {
	return s.yamlFiles("workflows")
}

// MetaFiles reads the user's meta-modes, .hegel/meta/*.yaml (and *.yml),
// as WorkflowFilesAll reads workflows.
func (s *Sessions) MetaFiles() (files map[string][]byte, unreadable map[string]error) {
	return s.yamlFiles("meta")
}

// yamlFiles reads the YAML files of one folder of .hegel/.
func (s *Sessions) yamlFiles(folder string) (files map[string][]byte, unreadable map[string]error) {
	dir := path.Join(s.dir, folder)
	infos, err := s.r.worktree.ReadDir(dir)
	if err != nil {
		return nil, nil // no directory: no user files
	}
	unreadable = map[string]error{}
	names := make([]string, 0, len(infos))
	for _, fi := range infos {
		if !fi.IsDir() && (strings.HasSuffix(fi.Name(), ".yaml") || strings.HasSuffix(fi.Name(), ".yml")) {
			names = append(names, fi.Name())
		}
	}
	sort.Strings(names)
	out := make(map[string][]byte, len(names))
	for _, n := range names {
		p := path.Join(dir, n)
		b, err := readFile(s.r.worktree, p)
		if err != nil {
			unreadable[p] = fmt.Errorf("%s:1: cannot read it: %s", text.QuotePath(p, true), oneLine(err.Error()))
			continue
		}
		out[p] = b
	}
	return out, unreadable
}

// WorkflowFile reads the worktree's own file for workflow name,
// .hegel/workflows/<name>.yaml (else .yml, as the registry picks it): its
// path relative to the top of the work tree and its bytes. No such file is
// an error wrapping engine.ErrNotFound. A file larger than a task may
// store as its definition (hegel.syncMaxBlobSize) is a *TooLargeError and
// is not read: status compares this file on every call, and a task could
// not carry it anyway.
func (s *Sessions) WorkflowFile(name string) (string, []byte, error) {
	for _, ext := range []string{".yaml", ".yml"} {
		p := path.Join(s.dir, "workflows", name+ext)
		fi, err := s.r.worktree.Stat(p)
		if err != nil {
			if _, lerr := s.r.worktree.Lstat(p); lerr == nil {
				// There, but a link that leads nowhere it may go.
				return p, nil, fmt.Errorf("cannot read %s: %s", text.QuotePath(p, true), oneLine(err.Error()))
			}
			continue
		}
		if fi.IsDir() {
			continue
		}
		if !fi.Mode().IsRegular() {
			// A device or a pipe (through a link) would never end.
			return p, nil, fmt.Errorf("%s is not a regular file", text.QuotePath(p, true))
		}
		limit := s.r.docLimit()
		if limit > 0 && fi.Size() > limit {
			return p, nil, &TooLargeError{What: text.QuotePath(p, true), Size: fi.Size(), Limit: limit, Key: "syncMaxBlobSize"}
		}
		b, err := readFileLimit(s.r.worktree, p, limit)
		if err != nil {
			return p, nil, fmt.Errorf("cannot read %s: %s", text.QuotePath(p, true), oneLine(err.Error()))
		}
		return p, b, nil
	}
	return "", nil, fmt.Errorf("no file for workflow %s: %w", name, engine.ErrNotFound)
}

// readFileLimit reads a file of at most limit bytes (0: no limit); one
// that grew past it since it was measured is an error.
func readFileLimit(fs billy.Filesystem, name string, limit int64) ([]byte, error) {
	f, err := fs.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	if limit > 0 {
		r = io.LimitReader(f, limit+1)
	}
	b, err := io.ReadAll(r)
	if err == nil && limit > 0 && int64(len(b)) > limit {
		return nil, fmt.Errorf("it grew past %d bytes while it was read", limit)
	}
	return b, err
}

// resolvedPath is p (relative to the top of the work tree) with the
// symbolic links on its way followed, as reading it followed them: a
// commit can make .hegel/workflows, or the file, a link to a file it
// holds elsewhere. p itself when it cannot be resolved inside the work
// tree.
func (r *Repo) resolvedPath(p string) string {
	if r.WorkTree == "" {
		return p
	}
	top, err := filepath.EvalSymlinks(r.WorkTree)
	if err != nil {
		return p
	}
	real, err := filepath.EvalSymlinks(filepath.Join(r.WorkTree, filepath.FromSlash(p)))
	if err != nil {
		return p
	}
	rel, err := filepath.Rel(top, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return p
	}
	return filepath.ToSlash(rel)
}

// Committed reports whether a commit holds def at p (a path relative to
// the top of the work tree): HEAD's, or the one a merge, cherry-pick,
// revert or rebase in progress is bringing in (a pull that stopped on a
// conflict has written the other side's files already). The file is then
// as a clone, pull or checkout wrote it. An unborn branch, a path no such
// commit has and a tree that cannot be read are not.
func (r *Repo) Committed(p string, def []byte) bool {
	p = r.resolvedPath(p)
	blobs := map[string]bool{}
	for _, c := range r.checkedOutCommits() {
		co, err := object.GetCommit(r.storage, c)
		if err != nil {
			continue
		}
		t, err := co.Tree()
		if err != nil {
			continue
		}
		ent, err := t.FindEntry(p)
		if err == nil && (ent.Mode.IsRegular() || ent.Mode == filemode.Executable) {
			blobs[ent.Hash.String()] = true
		}
	}
	if len(blobs) == 0 {
		return false
	}
	if blobs[engine.DefinitionID(def)] {
		return true
	}
	// The checkout may have converted it (line endings, as .gitattributes,
	// which the commit brings, asks): git hashes the bytes as it would
	// store them at that path, and says whether they are a committed blob.
	if r.WorkTree == "" || r.GitDir == "" {
		return false
	}
	cmd := exec.Command("git", "--git-dir", r.GitDir, "--work-tree", r.WorkTree, "hash-object", "--stdin", "--path="+p)
	cmd.Dir = r.WorkTree
	cmd.Stdin = bytes.NewReader(def)
	out, err := cmd.Output()
	return err == nil && blobs[strings.TrimSpace(string(out))]
}

// checkedOutCommits are the commits whose files this worktree may hold
// as they wrote them: HEAD's, and those MERGE_HEAD, CHERRY_PICK_HEAD,
// REVERT_HEAD and REBASE_HEAD name while git is in the middle of one.
func (r *Repo) checkedOutCommits() []plumbing.Hash {
	var out []plumbing.Hash
	if h, err := r.Head(); err == nil && !h.Commit.IsZero() {
		out = append(out, h.Commit)
	}
	if r.GitDir == "" {
		return out
	}
	for _, name := range []string{"MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD", "REBASE_HEAD"} {
		b, err := os.ReadFile(filepath.Join(r.GitDir, name))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) > 0 && plumbing.IsHash(f[0]) {
				out = append(out, plumbing.NewHash(f[0]))
			}
		}
	}
	return out
}
