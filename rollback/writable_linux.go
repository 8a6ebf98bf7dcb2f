package rollback

import "golang.org/x/sys/unix"

// changeProblem says why the file or directory at full (which may not
// exist: "") cannot be removed or replaced, or, for a directory, why
// nothing can be created or removed in it. The immutable and append-only
// flags come from statx, which needs no open file and follows no link.
func changeProblem(full string, dir bool) string {
	var st unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, full, unix.AT_SYMLINK_NOFOLLOW, unix.STATX_TYPE, &st); err != nil {
		return ""
	}
	what := "is"
	if dir {
		what = "is a directory that is"
	}
	switch {
	case st.Attributes&unix.STATX_ATTR_IMMUTABLE != 0:
		return what + " immutable (chattr +i)"
	case st.Attributes&unix.STATX_ATTR_APPEND != 0:
		return what + " append-only (chattr +a)"
	case dir && unix.Access(full, unix.W_OK|unix.X_OK) != nil:
		return "is a directory you may not write in"
	}
	return ""
}
