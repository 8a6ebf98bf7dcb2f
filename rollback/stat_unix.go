//go:build unix && !linux

package rollback

import (
	"io/fs"
	"syscall"
)

func sysStat(fi fs.FileInfo) (statData, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return statData{}, false
	}
	return statData{
		CtimeSec: uint32(st.Ctimespec.Sec), CtimeNsec: uint32(st.Ctimespec.Nsec),
		MtimeSec: uint32(st.Mtimespec.Sec), MtimeNsec: uint32(st.Mtimespec.Nsec),
		Dev: uint32(st.Dev), Ino: uint32(st.Ino), UID: st.Uid, GID: st.Gid,
		Size: uint32(st.Size),
	}, true
}
