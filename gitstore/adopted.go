package gitstore

import (
	"fmt"
	"strings"
)

// The adoption record says which worktree of this clone created each task
// or took it over (git hegel start, switch, stash pop): one file per task,
// <common git dir>/hegel/adopted/<task>, holding that worktree's id. It
// lives outside the synced refs on purpose. A task's state.json names its
// owner too (worktree_id), but that field travels with fetch, so a remote
// can write any worktree id into it, this one's included. So ownership is
// decided from this record (engine.AdoptionRecord), and the record is
// written only when the engine claims a task, never inferred from a
// state that names this worktree: a fetched state saved by any command
// here (approve, say) would otherwise adopt itself.
const adoptedDir = "hegel/adopted"

func adoptedPath(task string) string { return adoptedDir + "/" + task }

// Adopted implements engine.AdoptionRecord: whether the worktree
// worktreeID of this clone created task or took it over.
func (s Tasks) Adopted(task, worktreeID string) bool {
	b, err := readFile(s.r.common, adoptedPath(task))
	return err == nil && strings.TrimSpace(string(b)) == worktreeID
}

// Adopt implements engine.AdoptionRecord: worktreeID (this clone's)
// holds task now.
func (s Tasks) Adopt(task, worktreeID string) error {
	if err := s.r.recordAdopted(task, worktreeID); err != nil {
		return fmt.Errorf("%s", oneLine(err.Error()))
	}
	return nil
}

// adoptedBy returns the worktree id the record gives task to ("" none).
func (r *Repo) adoptedBy(task string) string {
	b, err := readFile(r.common, adoptedPath(task))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// recordAdopted notes that worktreeID (this clone's) holds task now. It
// writes only when the record says otherwise, so claiming a task this
// worktree holds already costs one small read.
func (r *Repo) recordAdopted(task, worktreeID string) error {
	if b, err := readFile(r.common, adoptedPath(task)); err == nil && strings.TrimSpace(string(b)) == worktreeID {
		return nil
	}
	return r.writeCommon(adoptedPath(task), []byte(worktreeID+"\n"), true)
}
