package gitstore

import (
	"strings"
)

// The adoption record says which worktree of this clone created each task
// or took it over (git hegel start, switch, stash pop): one file per task,
// <common git dir>/hegel/adopted/<task>, holding that worktree's id. It
// lives outside the synced refs on purpose. A task's state.json names its
// owner too (worktree_id), but that field travels with fetch, so a remote
// can write any worktree id into it, this one's included; rebuilding a lost
// session must not adopt such a task and print its prompt to whoever
// (person or coding agent) reads the output. So the rebuild takes only
// tasks this record gives to the worktree (engine.AdoptionRecord).
const adoptedDir = "hegel/adopted"

func adoptedPath(task string) string { return adoptedDir + "/" + task }

// Adopted implements engine.AdoptionRecord: whether the worktree
// worktreeID of this clone created task or took it over.
func (s Tasks) Adopted(task, worktreeID string) bool {
	b, err := readFile(s.r.common, adoptedPath(task))
	return err == nil && strings.TrimSpace(string(b)) == worktreeID
}

// recordAdopted notes that worktreeID (this clone's) holds task now. It
// writes only when the record says otherwise, so the commands that move a
// task on cost one small read.
func (r *Repo) recordAdopted(task, worktreeID string) error {
	if b, err := readFile(r.common, adoptedPath(task)); err == nil && strings.TrimSpace(string(b)) == worktreeID {
		return nil
	}
	return r.writeCommon(adoptedPath(task), []byte(worktreeID+"\n"), true)
}
