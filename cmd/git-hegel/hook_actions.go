package main

import (
	"os"
	"runtime/debug"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/engine/agent"
	"github.com/git-hegel/git-hegel/gitstore"
	"github.com/git-hegel/git-hegel/gitstore/gitdir"
)

// Agent-action snapshots: on PreToolUse of a tool that may change files,
// a snapshot of the worktree and the index for the active task; on its
// PostToolUse, another, which closes it (git hegel undo, docs/agents.md).
// A snapshot that fails never fails the agent's call: the hook warns on
// stderr (which the agent shows as a hook message, not as a refusal) and
// carries on.

// actionSettings are the hegel.agent.* keys the hook reads.
type actionSettings struct {
	on    bool     // hegel.agent.snapshots (default on)
	tools []string // hegel.agent.snapshotTools (nil: agent.DefaultSnapshotTools)
}

func readActionSettings(cfg *gitdir.Config) actionSettings {
	s := actionSettings{on: true}
	if v, ok := cfg.Get("hegel", "agent", "snapshots"); ok {
		if on, ok := gitdir.ParseBool(v); ok {
			s.on = on
		}
	}
	if v, ok := cfg.Get("hegel", "agent", "snapshottools"); ok {
		s.tools = agent.ParseToolList(v)
	}
	return s
}

// snapshotAction takes the action snapshot h's tool call asks for, if
// any.
func (hr *hookRun) snapshotAction() {
	h := hr.h
	if h.Call == nil || (h.Kind != agent.EventPreTool && h.Kind != agent.EventPostTool) || h.Call.Undo {
		return
	}
	cfg, err := hr.config()
	if err != nil {
		hr.c.warn("no snapshot of this action: " + err.Error())
		return
	}
	set := readActionSettings(cfg)
	if !set.on || !agent.SnapshotsTool(h.Call.Tool, set.tools) {
		return
	}
	r, e, err := hr.open()
	if err != nil {
		hr.c.warn("no snapshot of this action: " + err.Error())
		return
	}
	phase := engine.ActionBefore
	if h.Kind == agent.EventPostTool {
		phase = engine.ActionAfter
	}
	// The open repository's layout, not the hook's: only the open
	// resolves the index's path (GIT_INDEX_FILE, core.worktree).
	gcForSnapshot(r.Layout.IndexFile, hr.c.Getenv)
	s := engine.ActionSnapshot{Phase: phase, Session: h.Session, Agent: h.Agent, Tool: h.Call.Tool, Input: h.Call.Input}
	if err := e.RecordAction(hr.cache.Task, s); err != nil {
		hr.c.warn("no snapshot of this action: " + err.Error())
	}
}

// closeOpenAction ends this session's tool call that got a snapshot
// before it and never one after (engine.CloseOpenAction), when the
// agent's turn is over: on Stop, on the person's next prompt and at the
// session's end.
func (hr *hookRun) closeOpenAction() {
	h := hr.h
	if h.Kind != agent.EventStop && h.Kind != agent.EventPrompt && h.Kind != agent.EventSessionEnd {
		return
	}
	cfg, err := hr.config()
	if err != nil {
		return // the call's snapshot warned already, if it took one
	}
	if !readActionSettings(cfg).on {
		return
	}
	_, e, err := hr.open()
	if err != nil {
		hr.c.warn("the agent's last action was not closed: " + err.Error())
		return
	}
	if err := e.CloseOpenAction(hr.cache.Task, h.Session); err != nil {
		hr.c.warn("the agent's last action was not closed: " + err.Error())
	}
}

// config is the repository's configuration: the open repository's, or
// read from the layout without opening it.
func (hr *hookRun) config() (*gitdir.Config, error) {
	if hr.repo != nil {
		return hr.repo.Config(), nil
	}
	return gitstore.LayoutConfig(hr.tgt.Layout, hr.c.Getenv)
}

// smallSnapshotIndex is the largest index (some 10,000 entries) whose
// snapshot runs with a lazier garbage collector.
const smallSnapshotIndex = 1 << 20

// gcForSnapshot lets the snapshot of a small working tree run without
// collecting garbage: it allocates a few MiB in all, and the collector's
// first cycle (at 4 MiB) cost the hook more than the memory it gave back.
// A larger tree keeps the default pacing, which bounds its peak memory;
// the memory limit bounds a small tree's (large untracked files are read
// whole). GOGC or GOMEMLIMIT in the environment are left to rule.
func gcForSnapshot(index string, getenv func(string) string) {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return
	}
	if fi, err := os.Stat(index); err != nil || fi.Size() > smallSnapshotIndex {
		return
	}
	debug.SetGCPercent(400)
	debug.SetMemoryLimit(64 << 20)
}
