package gitstore

import (
	"bytes"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-hegel/git-hegel/gitstore/refs"
)

// reflogIdent is the committer identity and time git would write.
func (r *Repo) reflogIdent() string {
	s := r.signature()
	return fmt.Sprintf("%s <%s> %d %s", s.Name, s.Email, s.When.Unix(), s.When.Format("-0700"))
}

// commitSubject is the first line of commit h's message ("" if unreadable).
func (r *Repo) commitSubject(h plumbing.Hash) string {
	data, err := r.objects.Read(plumbing.CommitObject, h)
	if err != nil {
		return ""
	}
	if _, body, ok := bytes.Cut(data, []byte("\n\n")); ok {
		line, _, _ := bytes.Cut(body, []byte("\n"))
		return string(line)
	}
	return ""
}

// AppendReflog adds an entry to ref's reflog as git would for an update
// made some other way (HEAD's, when a branch it points to moved): "HEAD"
// is this worktree's; any other name is in the common dir.
func (r *Repo) AppendReflog(ref string, old, new plumbing.Hash, msg string) error {
	if r.CommonDir == "" {
		return nil
	}
	dir := r.CommonDir
	if ref == "HEAD" {
		dir = r.GitDir
	}
	return refs.NewReflogs(osfsAt(dir), r.shared, r.cfg, r.reflogIdent, r.commitSubject).Append(ref, old, new, msg)
}
