package gitstore

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
)

// excludePattern hides the session file, its lock and temporary files from
// git status in every worktree, while .hegel/workflows/ stays committable.
const excludePattern = "**/.hegel/state.json*"

// ensureExcluded adds excludePattern to info/exclude in the common git dir
// (shared by all linked worktrees) unless it is already there, and reports
// whether it added it.
func (r *Repo) ensureExcluded() (bool, error) {
	const name = "info/exclude"
	b, err := readFile(r.common, name)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, fmt.Errorf("cannot read %s: %s", name, oneLine(err.Error()))
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(line) == excludePattern {
			return false, nil
		}
	}
	var buf bytes.Buffer
	buf.Write(b)
	if len(b) > 0 && !bytes.HasSuffix(b, []byte("\n")) {
		buf.WriteByte('\n')
	}
	buf.WriteString("# git-hegel: per-worktree session metadata\n" + excludePattern + "\n")
	if err := r.writeCommon(name, buf.Bytes(), true); err != nil {
		return false, fmt.Errorf("cannot update %s: %s", name, oneLine(err.Error()))
	}
	return true, nil
}

// Init prepares the working tree: the exclude entry for the session file
// and the .hegel/workflows directory for shared definitions. It reports
// what it did, one line each; running it again does nothing. It does not write a
// session: the next command rebuilds one from the refs if it has to, so
// init never hides a workflow whose session file was lost.
func (r *Repo) Init() (did []string, err error) {
	s := r.Sessions()
	if err := s.safe(); err != nil {
		return nil, err
	}
	added, err := r.ensureExcluded()
	if err != nil {
		return nil, err
	}
	if added {
		did = append(did, "Added "+excludePattern+" to .git/info/exclude")
	}
	wf := s.dir + "/workflows"
	if _, err := r.lstatWorktree(wf); errors.Is(err, os.ErrNotExist) {
		if err := r.mkdirWorktree(wf); err != nil {
			var link *linkInPathError
			if errors.As(err, &link) {
				return nil, s.linkError(link.path)
			}
			return nil, fmt.Errorf("cannot create %s: %s", wf, oneLine(err.Error()))
		}
		did = append(did, "Created "+wf+"/")
	}
	return did, nil
}
