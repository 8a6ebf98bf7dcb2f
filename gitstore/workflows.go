package gitstore

import (
	"fmt"
	"path"
	"sort"
	"strings"

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
	dir := path.Join(s.dir, "workflows")
	infos, err := s.r.worktree.ReadDir(dir)
	if err != nil {
		return nil, nil // no directory: no user workflows
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
		if err != nil || fi.IsDir() {
			continue
		}
		if limit := s.r.docLimit(); limit > 0 && fi.Size() > limit {
			return p, nil, &TooLargeError{What: text.QuotePath(p, true), Size: fi.Size(), Limit: limit, Key: "syncMaxBlobSize"}
		}
		b, err := readFile(s.r.worktree, p)
		if err != nil {
			return p, nil, fmt.Errorf("cannot read %s: %s", text.QuotePath(p, true), oneLine(err.Error()))
		}
		return p, b, nil
	}
	return "", nil, fmt.Errorf("no file for workflow %s: %w", name, engine.ErrNotFound)
}
