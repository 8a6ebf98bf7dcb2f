package gitstore

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/git-hegel/git-hegel/engine"
)

// WorkflowFiles reads the user's workflow definitions, .hegel/workflows/*.yaml
// (and *.yml), keyed by their path relative to the top of the work tree.
func (s *Sessions) WorkflowFiles() (map[string][]byte, error) {
	dir := path.Join(s.dir, "workflows")
	infos, err := s.r.worktree.ReadDir(dir)
	if err != nil {
		return nil, nil // no directory: no user workflows
	}
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
			return nil, fmt.Errorf("cannot read %s: %s", engine.QuotePath(p, true), oneLine(err.Error()))
		}
		out[p] = b
	}
	return out, nil
}
