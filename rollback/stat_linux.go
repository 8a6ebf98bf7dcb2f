package rollback

import (
	"bytes"
	"encoding/binary"
	"io/fs"
	"os"
	"strings"
	"sync"
	"syscall"
	"unsafe"

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
// whole path for each file. The directory is read with getdents64 into a
// large buffer and the entries parsed here, not through os.File: that
// costs open, one getdents64 per 8 KiB and close, where os.File added
// two fcntl pairs, an epoll registration and a DirEntry per name
// (docs/benchmarks.md, "2026-11-25: rollback scan"). The names of a
// directory share one allocation.
func scanDirOS(dir string, decide func([]dirent) []bool) ([]dirent, []fstat, error) {
	out, sts, _, err := scanDirListingOS(dir, nil, decide, &scanBufs{split: 1})
	return out, sts, err
}

// scanDirListingOS is scanDirOS with the directory cache (dircache.go):
// with cache, the directory's stat data is taken from the open directory
// and a listing the cache still holds for it is used instead of reading
// it; a listing read is recorded. The listing a cache gets is the raw one,
// every entry with its type, before decide sees it. A listing taken from
// the cache and the stat data returned live in buf.
func scanDirListingOS(dir string, cache *dirListingUse, decide func([]dirent) []bool, buf *scanBufs) ([]dirent, []fstat, bool, error) {
	fd, err := openDir(dir)
	if err != nil {
		return nil, nil, false, &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	defer unix.Close(fd)
	var (
		st     unix.Stat_t
		out    []dirent
		cached bool
		dirSt  statData
	)
	if cache != nil {
		if err := unix.Fstat(fd, &st); err != nil {
			return nil, nil, false, &fs.PathError{Op: "fstat", Path: dir, Err: err}
		}
		dirSt = fromUnixStat(&st)
		out, cached = cache.c.reuse(cache.dir, dirSt, buf.ents)
		if cached {
			buf.ents = out
		}
	}
	if !cached {
		out, err = readDirents(fd)
		if err != nil {
			return nil, nil, false, &fs.PathError{Op: "readdirent", Path: dir, Err: err}
		}
		for i := range out {
			if out[i].kind != kindNone {
				continue
			}
			// DT_UNKNOWN (filesystems that do not fill d_type): lstat it,
			// as os.ReadDir does.
			if err := fstatat(fd, out[i].name, &buf.cname, &st); err == nil {
				out[i].kind = kindOf(fileModeOf(st.Mode))
			} else if err != unix.ENOENT {
				return nil, nil, false, &fs.PathError{Op: "lstat", Path: dir + "/" + out[i].name, Err: err}
			}
		}
	}
	if cache != nil && !cached {
		// The entries' kinds change below as they are lstatted: the
		// recorded listing keeps its own copy. (A listing from the cache
		// is decoded into buf, and the cache keeps its encoded form.)
		raw := append([]dirent(nil), out...)
		sortDirents(raw)
		cache.c.record(cache.dir, dirSt, raw)
	}
	want := decide(out)
	buf.sts = resize(buf.sts, len(out))
	if err := lstatWanted(fd, dir, out, want, buf.sts, buf); err != nil {
		return nil, nil, false, err
	}
	return out, buf.sts, cached, nil
}

// lstatWanted lstats the wanted entries of the directory open at fd into
// sts, and sets their kinds in out. A directory with many of them is
// shared out across buf.split goroutines, in ranges of entries; each
// writes only its own entries, so the result is the serial one, and the
// error returned is the one the serial loop would meet first.
func lstatWanted(fd int, dir string, out []dirent, want []bool, sts []fstat, buf *scanBufs) error {
	n := 0
	for _, w := range want {
		if w {
			n++
		}
	}
	parts := 1
	if buf.split > 1 && lstatThreadCost > 0 {
		parts = min(buf.split, n/lstatThreadCost)
	}
	if parts < 2 {
		return lstatRange(fd, dir, out, want, sts, &buf.cname)
	}
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for k := 0; k < parts; k++ {
		lo, hi := k*len(out)/parts, (k+1)*len(out)/parts
		wg.Add(1)
		go func() {
			defer wg.Done()
			var name []byte
			errs[k] = lstatRange(fd, dir, out[lo:hi], want[lo:hi], sts[lo:hi], &name)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// lstatRange lstats the wanted entries of out, in order, stopping at the
// first failure; one deleted meanwhile keeps kindNone.
func lstatRange(fd int, dir string, out []dirent, want []bool, sts []fstat, name *[]byte) error {
	var st unix.Stat_t
	for i := range out {
		if !want[i] {
			continue
		}
		if err := fstatat(fd, out[i].name, name, &st); err != nil {
			if err == unix.ENOENT {
				continue // deleted meanwhile: kindNone
			}
			return &fs.PathError{Op: "lstat", Path: dir + "/" + out[i].name, Err: err}
		}
		sts[i] = fstat{kind: kindOf(fileModeOf(st.Mode)), exec: st.Mode&0o100 != 0, size: st.Size, stat: fromUnixStat(&st), hasStat: true}
		out[i].kind = sts[i].kind
	}
	return nil
}

// scanDirListing is scanDir with the directory cache (dircache.go).
func (o osFS) scanDirListing(p string, c *dirCache, decide func([]dirent) []bool, buf *scanBufs) ([]dirent, []fstat, bool, error) {
	return scanDirListingOS(o.full(p), &dirListingUse{c: c, dir: p}, decide, buf)
}

// openDir opens a directory for reading its entries, as os.Open does
// (following a symbolic link, which the scan never hands it but for the
// top of the working tree).
func openDir(dir string) (int, error) {
	return openRetry(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
}

func openRetry(name string, flags int, perm uint32) (int, error) {
	for {
		fd, err := unix.Open(name, flags, perm)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// fstatat lstats name in the directory open at fd, copying the name into
// *buf (NUL-terminated, grown as needed) rather than allocating a C string
// for each of 100,000 files as unix.Fstatat does.
func fstatat(fd int, name string, buf *[]byte, st *unix.Stat_t) error {
	if sysFstatat == 0 || strings.IndexByte(name, 0) >= 0 {
		for {
			err := unix.Fstatat(fd, name, st, unix.AT_SYMLINK_NOFOLLOW)
			if err != unix.EINTR {
				return err
			}
		}
	}
	b := append(append((*buf)[:0], name...), 0)
	*buf = b
	for {
		_, _, e := unix.Syscall6(sysFstatat, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(unsafe.Pointer(st)), unix.AT_SYMLINK_NOFOLLOW, 0, 0)
		switch e {
		case 0:
			return nil
		case unix.EINTR:
			continue
		}
		return e
	}
}

// direntBufs are getdents64 buffers: 32 KiB holds a directory of several
// hundred entries in one call.
var direntBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// readDirents lists the directory open at fd, without "." and "..". An
// entry whose type the filesystem did not say (DT_UNKNOWN) has kindNone.
func readDirents(fd int) ([]dirent, error) {
	bp := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(bp)
	buf := *bp
	var (
		names []byte // every name, one after another
		ends  []int  // where each ends in names
		kinds []fileKind
	)
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			break
		}
		// struct linux_dirent64: d_ino u64, d_off s64, d_reclen u16,
		// d_type u8, d_name NUL-terminated.
		for off := 0; off+19 <= n; {
			reclen := int(binary.NativeEndian.Uint16(buf[off+16:]))
			if reclen < 19 || off+reclen > n {
				return nil, unix.EIO // a record the kernel would never write
			}
			rec := buf[off : off+reclen]
			off += reclen
			if binary.NativeEndian.Uint64(rec) == 0 {
				continue // a deleted entry
			}
			name := rec[19:]
			if k := bytes.IndexByte(name, 0); k >= 0 {
				name = name[:k]
			}
			if len(name) == 0 || string(name) == "." || string(name) == ".." {
				continue
			}
			names = append(names, name...)
			ends = append(ends, len(names))
			kinds = append(kinds, direntKind(rec[18]))
		}
	}
	all := string(names)
	out := make([]dirent, len(ends))
	start := 0
	for i, e := range ends {
		out[i] = dirent{name: all[start:e], kind: kinds[i]}
		start = e
	}
	return out, nil
}

// direntKind is the kind d_type gives; kindNone for DT_UNKNOWN.
func direntKind(t byte) fileKind {
	switch t {
	case unix.DT_REG:
		return kindFile
	case unix.DT_DIR:
		return kindDir
	case unix.DT_LNK:
		return kindSymlink
	case unix.DT_UNKNOWN:
		return kindNone
	}
	return kindOther
}

// readFileOS reads a whole file as os.ReadFile does (following a link),
// without os.File: open, fstat, read until EOF, close, where os.File
// added two fcntl pairs and an epoll registration per file.
func readFileOS(name string) ([]byte, error) {
	fd, err := openRetry(name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	defer unix.Close(fd)
	size := 0
	var st unix.Stat_t
	if unix.Fstat(fd, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG {
		size = int(st.Size)
	}
	// One byte more than the size, so that a file read whole shows its
	// end on the next read without a buffer to grow (as os.ReadFile).
	buf := make([]byte, 0, size+1)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := unix.Read(fd, buf[len(buf):cap(buf)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: name, Err: err}
		}
		if n == 0 {
			return buf, nil
		}
		buf = buf[:len(buf)+n]
	}
}

// writeFileOS creates name exclusively (O_EXCL: never through a link or
// over a file that is there), writes data and returns its stat, without
// os.File (see readFileOS).
func writeFileOS(name string, data []byte, perm os.FileMode) (fstat, error) {
	fd, err := openRetry(name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, uint32(perm.Perm()))
	if err != nil {
		return fstat{}, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	fail := func(op string, err error) (fstat, error) {
		unix.Close(fd)
		return fstat{}, &fs.PathError{Op: op, Path: name, Err: err}
	}
	for rest := data; len(rest) > 0; {
		n, err := unix.Write(fd, rest)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fail("write", err)
		}
		rest = rest[n:]
	}
	var st unix.Stat_t
	for {
		if err = unix.Fstat(fd, &st); err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return fail("stat", err)
	}
	if err := unix.Close(fd); err != nil {
		return fstat{}, &fs.PathError{Op: "close", Path: name, Err: err}
	}
	return fstat{kind: kindOf(fileModeOf(st.Mode)), exec: st.Mode&0o100 != 0, size: st.Size, stat: fromUnixStat(&st), hasStat: true}, nil
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
