package refs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-hegel/git-hegel/gitstore/gitdir"
	"github.com/git-hegel/git-hegel/gitstore/objects"
)

// Reflogs are written as git writes them, one line per update in
// logs/<ref>:
//
//	<old> <new> <name> <<email>> <unix time> <+hhmm>\t<message>
//
// Every update of a ref under refs/hegel/ is logged (git's
// REF_FORCE_CREATE_REFLOG), so `git reflog refs/hegel/tasks/<t>` lists a
// task's states and `git hegel doctor` can go back to one. Other refs
// follow core.logAllRefUpdates as git does: "always" logs every ref; true
// (the default in a repository with a work tree) creates logs for HEAD,
// refs/heads/, refs/remotes/ and refs/notes/; a log that exists is always
// appended to. Lines are appended with one write and not fsynced (git
// does not fsync reflogs either by default).

// HegelRefPrefix is the namespace whose every update is logged.
const HegelRefPrefix = "refs/hegel/"

// Reflogs writes the reflogs below a git dir (the one holding logs/).
type Reflogs struct {
	fs   billy.Filesystem
	perm objects.SharedPerm
	// ident is "Name <email> <unix> <+hhmm>" for a new line.
	ident func() string
	// all is core.logAllRefUpdates=always; none is false.
	all, none bool
	// subject gives a commit's subject, for updates given no message.
	subject func(plumbing.Hash) string
}

// NewReflogs writes the reflogs below fs, the git dir holding logs/,
// with the shared permissions perm, following cfg's
// core.logAllRefUpdates. ident gives a new line's "Name <email> <unix>
// <+hhmm>"; subject, a commit's subject for an update given no message.
func NewReflogs(fs billy.Filesystem, perm objects.SharedPerm, cfg *gitdir.Config, ident func() string, subject func(plumbing.Hash) string) *Reflogs {
	l := &Reflogs{fs: fs, perm: perm, ident: ident, subject: subject}
	if v, ok := cfg.Get("core", "", "logallrefupdates"); ok {
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "always":
			l.all = true
		default:
			l.none = !cfg.Bool("core", "logallrefupdates", true)
		}
	}
	return l
}

// autocreate reports whether git would create name's log (rather than
// only append to an existing one).
func (l *Reflogs) autocreate(name string) bool {
	switch {
	case strings.HasPrefix(name, HegelRefPrefix), l.all:
		return true
	case l.none:
		return false
	}
	return name == "HEAD" || strings.HasPrefix(name, "refs/heads/") ||
		strings.HasPrefix(name, "refs/remotes/") || strings.HasPrefix(name, "refs/notes/")
}

// line formats one entry.
func (l *Reflogs) line(old, new plumbing.Hash, msg string) []byte {
	var b bytes.Buffer
	b.WriteString(old.String())
	b.WriteByte(' ')
	b.WriteString(new.String())
	b.WriteByte(' ')
	b.WriteString(l.ident())
	if m := reflogMessage(msg); m != "" {
		b.WriteByte('\t')
		b.WriteString(m)
	}
	b.WriteByte('\n')
	return b.Bytes()
}

// reflogMessage collapses whitespace as git's copy_reflog_msg does: no
// leading or trailing space, runs (newlines included) become one space.
func reflogMessage(msg string) string {
	var b strings.Builder
	space := true
	for i := 0; i < len(msg); i++ {
		c := msg[i]
		isSpace := c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
		if space && isSpace {
			continue
		}
		space = isSpace
		if isSpace {
			c = ' '
		}
		b.WriteByte(c)
	}
	return strings.TrimRight(b.String(), " ")
}

// Append adds one entry to name's log, creating it when git would.
func (l *Reflogs) Append(name string, old, new plumbing.Hash, msg string) error {
	if msg == "" && !new.IsZero() && l.subject != nil {
		msg = l.subject(new)
	}
	p := filepath.Join("logs", filepath.FromSlash(name))
	create := l.autocreate(name)
	flag := os.O_WRONLY | os.O_APPEND
	if create {
		flag |= os.O_CREATE
	}
	f, err := l.open(p, flag)
	if err != nil {
		if !create && errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("cannot append to the reflog %s: %w", l.fs.Join(l.fs.Root(), p), err)
	}
	_, err = f.Write(l.line(old, new, msg))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("cannot append to the reflog %s: %w", l.fs.Join(l.fs.Root(), p), err)
	}
	return nil
}

// restart replaces name's log with one entry, from no commit to new: the
// chain was rewritten, and an entry naming the old tip would keep what was
// cut off reachable for git gc until the entry expired. A non-zero from
// (a commit new reaches) is named first, in an entry of its own.
func (l *Reflogs) restart(name string, from, new plumbing.Hash, msg string) error {
	if msg == "" && l.subject != nil {
		msg = l.subject(new)
	}
	var lines []byte
	old := plumbing.ZeroHash
	if !from.IsZero() && from != new {
		fromMsg := ""
		if l.subject != nil {
			fromMsg = l.subject(from)
		}
		lines = l.line(plumbing.ZeroHash, from, fromMsg)
		old = from
	}
	lines = append(lines, l.line(old, new, msg)...)
	p := filepath.Join("logs", filepath.FromSlash(name))
	tmp := p + ".hegel-" + objects.NewID()[:8] + LockSuffix
	f, err := l.open(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL)
	if err == nil {
		_, err = f.Write(lines)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = l.fs.Rename(tmp, p)
		}
		if err != nil {
			_ = l.fs.Remove(tmp)
		}
	}
	if err != nil {
		return fmt.Errorf("cannot rewrite the reflog %s: %w", l.fs.Join(l.fs.Root(), p), err)
	}
	return nil
}

// open opens a file below logs/, creating its directories (with the
// shared permissions on disk) when it has to.
func (l *Reflogs) open(p string, flag int) (io.WriteCloser, error) {
	if abs, ok := l.osPath(p); ok {
		return l.perm.OpenFile(abs, flag)
	}
	f, err := l.fs.OpenFile(p, flag, 0o666)
	if errors.Is(err, fs.ErrNotExist) && flag&os.O_CREATE != 0 {
		if err := l.fs.MkdirAll(filepath.Dir(p), 0o777); err != nil {
			return nil, err
		}
		f, err = l.fs.OpenFile(p, flag, 0o666)
	}
	return f, err
}

func (l *Reflogs) osPath(p string) (string, bool) {
	return (&Files{fs: l.fs}).osPath(p)
}

// log writes the reflog entry of an update (see Reflog).
func (r *Files) log(name plumbing.ReferenceName, old, new plumbing.Hash, u Reflog) error {
	if r.logs == nil {
		return nil
	}
	if u.Restart {
		return r.logs.restart(string(name), u.RestartFrom, new, u.Msg)
	}
	return r.logs.Append(string(name), old, new, u.Msg)
}

// logDelete records a deletion. The reflog of a ref under refs/hegel/ is
// kept, with a last entry to the zero id, so that what the ref pointed at
// can still be found (and stays reachable until the entries expire, as
// git gc expires them); any other ref's log goes with it, as in git.
func (r *Files) logDelete(name plumbing.ReferenceName, old plumbing.Hash, u Reflog) error {
	if r.logs == nil {
		return nil
	}
	if strings.HasPrefix(string(name), HegelRefPrefix) {
		msg := u.Msg
		if msg == "" {
			msg = "delete"
		}
		return r.logs.Append(string(name), old, plumbing.ZeroHash, msg)
	}
	p := filepath.Join("logs", filepath.FromSlash(string(name)))
	_ = r.fs.Remove(p)
	r.removeEmptyParents(p)
	return nil
}
