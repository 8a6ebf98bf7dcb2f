package objects

import "golang.org/x/sys/unix"

// writeout starts writing f's dirty pages and waits for them, without a
// disk cache flush: git's FSYNC_WRITEOUT_ONLY on Linux.
func writeout(f OSFile) error {
	return unix.SyncFileRange(int(f.Fd()), 0, 0,
		unix.SYNC_FILE_RANGE_WAIT_BEFORE|unix.SYNC_FILE_RANGE_WRITE|unix.SYNC_FILE_RANGE_WAIT_AFTER)
}
