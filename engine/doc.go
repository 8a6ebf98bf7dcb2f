// Package engine runs workflows: the state machine that moves a task
// through the nodes of its workflow and keeps its state valid. It owns the
// task and its state (Task, State), the commands on them (start, next,
// prev, done, fail, approve, reject, ask, answer, pause, resume, skip,
// abort, reset, switch, describe), gates and retries, what a stash and a
// rollback do to a task, the history of runs and its stats, the step
// runner's sequence, the timeline of a task, and the guard at next that
// applies a node's guard rules to a task.
//
// It decides and does no I/O: it reads and writes through the interfaces
// it defines (TaskStore, SessionStore, StashStore, ArchiveStore,
// HistoryStore, Files, Executor, Snapshots, Parking), which gitstore and
// cmd/git-hegel (its worktree adapter over package rollback) implement
// and tests replace with in-memory fakes. A rollback's sequence is the
// engine's: it decides and records, and Snapshots only snapshots and
// restores. It
// imports no go-git, no os, os/exec or filesystem package, and nothing of
// this module but its sub-packages, which never import it:
//
//   - engine/workflow: workflow definitions (parsing, validation,
//     templates, built-ins, guides, the registry);
//   - engine/agent: coding agents (hook payloads, settings files, the
//     event model, guard rules judged on events, metrics);
//   - engine/text: the formatting every layer's messages share.
//
// An Engine holds only what lives as long as a worktree's settings
// (stores, clock, callbacks); what one call is told (--task, --force, a
// claim) is an argument of the method: TaskOptions, NextOptions and the
// like.
//
// Where a new feature's code goes: what a workflow file may say goes to
// engine/workflow, what an agent sends or reads to engine/agent; what a
// command does to a task's state goes here, as a method over the stores
// in a file named for the command or concern; storing it is gitstore's
// (behind an interface defined here), printing it cmd/git-hegel's.
package engine
