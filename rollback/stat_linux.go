package rollback

import (
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

func sysStat(fi fs.FileInfo) (statData, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return statData{}, false
	}
	return fromStatT(st), true
}

func fromStatT(st *syscall.Stat_t) statData {
	return statData{
		CtimeSec: uint32(st.Ctim.Sec), CtimeNsec: uint32(st.Ctim.Nsec),
		MtimeSec: uint32(st.Mtim.Sec), MtimeNsec: uint32(st.Mtim.Nsec),
		Dev: uint32(st.Dev), Ino: uint32(st.Ino), UID: st.Uid, GID: st.Gid,
		Size: uint32(st.Size),
	}
}

// scanDirOS reads a directory and lstats the wanted entries relative to
// the open directory (fstatat), which spares the kernel a walk down the
// whole path for each file.
func scanDirOS(dir string, decide func([]dirent) []bool) ([]dirent, []fstat, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	ds, err := f.ReadDir(-1)
	if err != nil {
		return nil, nil, err
	}
	fd := int(f.Fd())
	out := make([]dirent, len(ds))
	for i, d := range ds {
		out[i] = dirent{name: d.Name(), kind: kindOf(d.Type())}
	}
	want := decide(out)
	sts := make([]fstat, len(ds))
	var st unix.Stat_t
	for i := range out {
		if !want[i] {
			continue
		}
		for {
			err = unix.Fstatat(fd, out[i].name, &st, unix.AT_SYMLINK_NOFOLLOW)
			if err != unix.EINTR {
				break
			}
		}
		if err != nil {
			if err == unix.ENOENT {
				continue // deleted meanwhile: kindNone
			}
			return nil, nil, &fs.PathError{Op: "lstat", Path: dir + "/" + out[i].name, Err: err}
		}
		sts[i] = fstat{kind: kindOf(fileModeOf(st.Mode)), exec: st.Mode&0o100 != 0, size: st.Size, stat: fromUnixStat(&st), hasStat: true}
		out[i].kind = sts[i].kind
	}
	return out, sts, nil
}

func fromUnixStat(st *unix.Stat_t) statData {
	return statData{
		CtimeSec: uint32(st.Ctim.Sec), CtimeNsec: uint32(st.Ctim.Nsec),
		MtimeSec: uint32(st.Mtim.Sec), MtimeNsec: uint32(st.Mtim.Nsec),
		Dev: uint32(st.Dev), Ino: uint32(st.Ino), UID: st.Uid, GID: st.Gid,
		Size: uint32(st.Size),
	}
}

func fileModeOf(m uint32) fs.FileMode {
	switch m & syscall.S_IFMT {
	case syscall.S_IFREG:
		return 0
	case syscall.S_IFLNK:
		return fs.ModeSymlink
	case syscall.S_IFDIR:
		return fs.ModeDir
	}
	return fs.ModeNamedPipe
}
