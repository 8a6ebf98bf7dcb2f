package gitstore

import (
	"fmt"
	"path"
	"sort"
	"strings"

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
