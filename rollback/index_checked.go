package rollback

import (
	"crypto/sha1"
	"fmt"
	"os"
	"path/filepath"
	"time"

	gitobjects "github.com/git-hegel/git-hegel/gitstore/objects"
)

// The index file closes with the SHA-1 of its content, and reading it
// checks that (as git 2.39 does on every read): 8 ms of hashing on
// 100,000 entries, which an agent's snapshot, one before every tool
// call, paid again and again for the same file. Once the checksum of a
// version of the file has been checked, its stat data (size, mtime and
// ctime to the nanosecond, device, inode) and checksum are recorded in
// hegel-indexsum beside it; a later read of a file with the same stat
// data that closes with the same checksum decodes it without hashing it.
// A file written since has a new ctime, which no program can set, as long
// as it was written in a later tick of the clock: so only a version whose
// mtime and ctime were over a second old when it was read is recorded
// (git's racy rule, as for the directory cache). A file git wrote anew
// on a reused inode at the same size still closes with its own checksum,
// unless it is the same content. What is skipped is only the check
// against damage to a file that was whole when checked and has not been
// written since, which git itself leaves to the filesystem with
// index.skipHash.
//
// The record, in the worktree's git directory whichever index file was
// read (GIT_INDEX_FILE may name one anywhere), is one line: "hegel index
// checked 1 <size> <mtime ns> <ctime s>.<ctime ns> <dev> <ino> <checksum>
// <path, quoted>". Without stat data (on Windows) every read is checked.
// It is only a cache: any other content means the check is made, and the
// record rewritten.
const indexCheckedFile = "hegel-indexsum"

// indexCheckedRacy is how old a version of the index must be to be
// recorded (a variable for the tests).
var indexCheckedRacy = time.Second

// indexChecked returns nil when the index file at path, with stat data fi
// and content data, was checked before in this version; otherwise the
// function that records it as checked in gitDir, to call once its
// checksum has matched.
func indexChecked(gitDir, path string, fi os.FileInfo, data []byte, perm gitobjects.SharedPerm, readAt time.Time) func() {
	sd, ok := sysStat(fi)
	if !ok || gitDir == "" || len(data) < sha1.Size {
		return func() {}
	}
	settled := readAt.Add(-indexCheckedRacy)
	if !time.Unix(int64(sd.MtimeSec), int64(sd.MtimeNsec)).Before(settled) ||
		!time.Unix(int64(sd.CtimeSec), int64(sd.CtimeNsec)).Before(settled) {
		return func() {} // racy: checked every time until it settles
	}
	line := fmt.Sprintf("hegel index checked 1 %d %d %d.%09d %d %d %x %q\n", fi.Size(), fi.ModTime().UnixNano(),
		sd.CtimeSec, sd.CtimeNsec, sd.Dev, sd.Ino, data[len(data)-sha1.Size:], path)
	record := filepath.Join(gitDir, indexCheckedFile)
	if b, err := os.ReadFile(record); err == nil && string(b) == line {
		return nil
	}
	return func() {
		// Best effort, like every cache: a record not written means the
		// next read checks again.
		_ = perm.WriteFile(record, []byte(line), false)
	}
}
