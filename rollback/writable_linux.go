package rollback

import (
	"os"
	"slices"
	"sync"

	"golang.org/x/sys/unix"
)

// changeProblem says why the file or directory at full cannot be removed
// or replaced, or, for a directory, why nothing can be created or removed
// in it ("" when nothing stops it). ok is false when full does not exist
// (or, with dir, is not a directory). One statx, which needs no open file
// and follows no link, gives the immutable and append-only flags and what
// the permission check needs.
func changeProblem(full string, dir bool) (why string, ok bool) {
	var st unix.Statx_t
	mask := unix.STATX_TYPE | unix.STATX_MODE | unix.STATX_UID | unix.STATX_GID
	if err := unix.Statx(unix.AT_FDCWD, full, unix.AT_SYMLINK_NOFOLLOW, mask, &st); err != nil {
		return "", false
	}
	isDir := uint32(st.Mode)&unix.S_IFMT == unix.S_IFDIR
	if dir && !isDir {
		return "", false
	}
	what := "is"
	if dir {
		what = "is a directory that is"
	}
	switch {
	case st.Attributes&unix.STATX_ATTR_IMMUTABLE != 0:
		return what + " immutable (chattr +i)", true
	case st.Attributes&unix.STATX_ATTR_APPEND != 0:
		return what + " append-only (chattr +a)", true
	case dir && !mayWriteIn(st.Uid, st.Gid, uint32(st.Mode)):
		return "is a directory you may not write in", true
	}
	return "", true
}

var groups = sync.OnceValue(func() []int {
	g, _ := os.Getgroups()
	return append(g, os.Getegid())
})

// mayWriteIn applies the permission check access(W_OK|X_OK) makes for a
// directory, from the statx already made.
func mayWriteIn(uid, gid, mode uint32) bool {
	euid := os.Geteuid()
	switch {
	case euid == 0:
		return true
	case int(uid) == euid:
		return mode&0o300 == 0o300
	case slices.Contains(groups(), int(gid)):
		return mode&0o030 == 0o030
	}
	return mode&0o003 == 0o003
}
