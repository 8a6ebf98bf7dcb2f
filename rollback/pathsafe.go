package rollback

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"unicode/utf8"
)

// ErrUnsafePath reports a checkpoint tree that names a path git-hegel will
// not write: it could escape the working tree or reach into .git.
var ErrUnsafePath = errors.New("unsafe path in checkpoint")

// checkName validates one tree entry name, the way git's fsck and
// verify_path do: no empty name, ".", "..", slash or NUL, and no .git in
// any spelling a filesystem might fold onto it (any case, NTFS trailing
// dots and spaces, alternate streams and the 8.3 short name, HFS+
// ignorable code points).
func checkName(name string) error {
	switch {
	case name == "":
		return errors.New("empty name")
	case name == "." || name == "..":
		return fmt.Errorf("%q component", name)
	case strings.ContainsAny(name, "/\x00"):
		return fmt.Errorf("name %q contains a slash or NUL", name)
	case runtime.GOOS == "windows" && strings.ContainsAny(name, `\:`):
		return fmt.Errorf("name %q contains a backslash or colon", name)
	case isDotGit(name):
		return fmt.Errorf("name %q is the repository directory", name)
	}
	return nil
}

func isDotGit(name string) bool {
	// Fast path for plain ASCII names that cannot fold onto .git.
	ascii := true
	for i := 0; i < len(name); i++ {
		if name[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii && (len(name) < 4 || (name[0] != '.' && name[0] != 'g' && name[0] != 'G')) {
		return false
	}
	var b strings.Builder
	for i := 0; i < len(name); {
		r, w := utf8.DecodeRuneInString(name[i:])
		i += w
		if hfsIgnorable(r) {
			continue
		}
		b.WriteRune(r)
	}
	n := strings.ToLower(b.String())
	if i := strings.IndexByte(n, ':'); i >= 0 {
		n = n[:i] // NTFS alternate data stream: .git::$INDEX_ALLOCATION
	}
	n = strings.TrimRight(n, ". ")
	return n == ".git" || n == "git~1"
}

// hfsIgnorable lists the code points HFS+ drops when it compares names.
func hfsIgnorable(r rune) bool {
	return (r >= 0x200c && r <= 0x200f) || (r >= 0x202a && r <= 0x202e) ||
		(r >= 0x206a && r <= 0x206f) || r == 0xfeff
}

// reservedPath reports paths git-hegel keeps for itself in every working
// tree: the session file and its lock and temporary files. They are never
// snapshotted and never restored.
func reservedPath(p string) bool {
	i := strings.LastIndexByte(p, '/')
	dir, base := "", p
	if i >= 0 {
		dir, base = p[:i], p[i+1:]
	}
	if !strings.HasPrefix(base, "state.json") {
		return false
	}
	return dir == ".hegel" || strings.HasSuffix(dir, "/.hegel")
}

// checkPath validates a whole slash-separated path.
func checkPath(p string) error {
	if strings.HasPrefix(p, "/") {
		return fmt.Errorf("%w: %q is absolute", ErrUnsafePath, p)
	}
	for _, c := range strings.Split(p, "/") {
		if err := checkName(c); err != nil {
			return fmt.Errorf("%w: %q: %v", ErrUnsafePath, p, err)
		}
	}
	if reservedPath(p) {
		return fmt.Errorf("%w: %q is git-hegel's session file", ErrUnsafePath, p)
	}
	return nil
}

// userError is a message for people (one line, capitalised, saying what
// to do) that still matches its sentinel with errors.Is.
type userError struct {
	kind error
	msg  string
}

func (e *userError) Error() string        { return e.msg }
func (e *userError) Is(target error) bool { return target == e.kind }

func userErr(kind error, format string, a ...any) error {
	return &userError{kind: kind, msg: fmt.Sprintf(format, a...)}
}
