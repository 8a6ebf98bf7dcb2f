package gitstore

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/git-hegel/git-hegel/engine"
)

// excludePattern hides the session file, its lock and temporary files from
// git status in every worktree, while .hegel/workflows/ stays committable.
const excludePattern = "**/.hegel/state.json*"

// ensureExcluded adds excludePattern to info/exclude in the common git dir
// (shared by all linked worktrees) unless it is already there.
func (r *Repo) ensureExcluded() error {
	const name = "info/exclude"
	b, err := readFile(r.common, name)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("cannot read %s: %s", name, oneLine(err.Error()))
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(line) == excludePattern {
			return nil
		}
	}
	var buf bytes.Buffer
	buf.Write(b)
	if len(b) > 0 && !bytes.HasSuffix(b, []byte("\n")) {
		buf.WriteByte('\n')
	}
	buf.WriteString("# git-hegel: per-worktree session metadata\n" + excludePattern + "\n")
	if err := r.common.MkdirAll("info", 0o755); err != nil {
		return fmt.Errorf("cannot create info/: %s", oneLine(err.Error()))
	}
	if err := writeFileAtomic(r.common, name, buf.Bytes()); err != nil {
		return fmt.Errorf("cannot update %s: %s", name, oneLine(err.Error()))
	}
	return nil
}

// Init prepares the working tree: the exclude entry for the session file
// and the .hegel/workflows directory for shared definitions. It reports
// what it created; running it again creates nothing.
func (r *Repo) Init() (created []string, err error) {
	if err := r.ensureExcluded(); err != nil {
		return nil, err
	}
	s := r.Sessions()
	wf := s.dir + "/workflows"
	if _, err := r.worktree.Stat(wf); errors.Is(err, os.ErrNotExist) {
		if err := r.worktree.MkdirAll(wf, 0o755); err != nil {
			return nil, fmt.Errorf("cannot create %s: %s", wf, oneLine(err.Error()))
		}
		created = append(created, wf+"/")
	}
	if _, err := s.LoadSession(); err != nil {
		if _, err := s.UpdateSession(func(*engine.Session) error { return nil }); err != nil {
			return nil, err
		}
		created = append(created, s.file())
	}
	return created, nil
}
