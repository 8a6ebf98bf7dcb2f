package main

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"
)

// A writing state command (next, stash push/pop/drop) must create files:
// a loose object each for the blobs, trees and commit it writes, and a
// lock plus a new file for each ref (and for the session file) it moves.
// On this machine's ext4 creating a file costs from 20 µs to 0.7 ms,
// depending on how many files were deleted in the last minutes (the
// allocator skips recently freed inodes one by one), so no writer can stay
// within 1.15× of `git hegel version`, which creates none. The floor is
// what git itself pays to write the same: `git hash-object -w` of as many
// new objects plus `git update-ref --stdin` of as many refs, less the two
// git start-ups. The proposed bound (docs/benchmarks.md, 2026-11-25) is
// the writer against `git hegel version` plus that floor.

// floorSeq makes each run's objects new.
var floorSeq atomic.Int64

// gitFloor returns the steps that measure git writing objects new loose
// objects and moving files refs (with reflogs) in dir: an untimed step
// that prepares fresh content, then the two timed git commands.
func (b *bench) gitFloor(dir, label, of string, objects, files int) []step {
	tmp := filepath.Join(b.work, "floor", strings.NewReplacer(" ", "-", "@", "").Replace(of+label))
	paths := filepath.Join(tmp, "paths")
	script := filepath.Join(tmp, "refs")
	prepare := inProcess(func() error {
		if err := os.MkdirAll(tmp, 0o755); err != nil {
			return err
		}
		var ps, ids []string
		for i := 0; i < objects; i++ {
			n := floorSeq.Add(1)
			content := fmt.Sprintf("{\"floor\": %d, \"at\": %q}\n", n, time.Now().Format(time.RFC3339Nano))
			p := filepath.Join(tmp, fmt.Sprintf("o%d", i))
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				return err
			}
			ps = append(ps, p)
			ids = append(ids, blobID(content))
		}
		var sc strings.Builder
		for i := 0; i < files; i++ {
			fmt.Fprintf(&sc, "update refs/bench/floor-%d %s\n", i, ids[i%len(ids)])
		}
		if err := os.WriteFile(paths, []byte(strings.Join(ps, "\n")+"\n"), 0o644); err != nil {
			return err
		}
		return os.WriteFile(script, []byte(sc.String()), 0o644)
	})
	ho := timed(fmt.Sprintf("%s floor: git hash-object -w (%d new)%s", of, objects, label), dir, "git", "hash-object", "-w", "--stdin-paths")
	ho.stdin = paths
	refs := "refs"
	if files == 1 {
		refs = "ref"
	}
	ur := timed(fmt.Sprintf("%s floor: git update-ref --stdin (%d %s)%s", of, files, refs, label), dir, "git", "update-ref", "--create-reflog", "--stdin")
	ur.stdin = script
	return []step{prepare, ho, ur}
}

// blobID is git's name for a blob holding content.
func blobID(content string) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(content))
	h.Write([]byte(content))
	return hex.EncodeToString(h.Sum(nil))
}

// floorStats is, run by run, `git hegel version` plus what git paid for
// the work alone: the git commands' times (parts: hash-object and
// update-ref; a scan too where one is part of the floor) less one `git
// version` each (each git command's own start-up, which the git-hegel
// command pays once, in version). The runs of one round line up across
// the stats.
func floorStats(label string, ver, gv *stats, parts ...*stats) *stats {
	n := min(len(ver.walls), len(gv.walls))
	for _, p := range parts {
		n = min(n, len(p.walls))
	}
	s := &stats{label: label}
	for i := 0; i < n; i++ {
		var git time.Duration
		for _, p := range parts {
			git += p.walls[i] - gv.walls[i]
		}
		s.walls = append(s.walls, ver.walls[i]+max(0, git))
	}
	return s
}

// writes says what a floor row's git commands wrote: " (7 objects, 3 refs)".
func writes(objects, files int) string {
	n := func(k int, one string) string {
		if k == 1 {
			return "1 " + one
		}
		return fmt.Sprintf("%d %ss", k, one)
	}
	return " (" + n(objects, "object") + ", " + n(files, "ref") + ")"
}
