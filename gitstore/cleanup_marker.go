package gitstore

import (
	"os"
	"path/filepath"
	"time"
)

// <common git dir>/hegel/last-cleanup: its modification time is when gc
// last ran (git hegel gc, or the automatic cleanup), so that deciding
// whether a cleanup is due costs one stat. Deleting it only restarts the
// interval.
const cleanupMarker = "hegel/last-cleanup"

// CleanupDue reports whether interval or more has passed since the last
// cleanup. Without a marker it records now and reports false: the
// interval starts with the first command that asks.
func (r *Repo) CleanupDue(now time.Time, interval time.Duration) bool {
	if r.CommonDir == "" {
		return false
	}
	fi, err := os.Stat(filepath.Join(r.CommonDir, filepath.FromSlash(cleanupMarker)))
	if err != nil {
		_ = r.MarkCleanup(now)
		return false
	}
	return now.Sub(fi.ModTime()) >= interval
}

// MarkCleanup records that a cleanup ran at now.
func (r *Repo) MarkCleanup(now time.Time) error {
	if r.CommonDir == "" {
		return nil
	}
	if err := r.writeCommon(cleanupMarker, []byte(now.UTC().Format(time.RFC3339)+"\n"), false); err != nil {
		return err
	}
	return os.Chtimes(filepath.Join(r.CommonDir, filepath.FromSlash(cleanupMarker)), now, now)
}
