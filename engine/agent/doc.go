// Package agent is what git-hegel knows of coding agents (Claude Code,
// Codex, Cursor): their hook payloads, read into normalised events
// (agents.go; one too large is cut to a bound as it is read,
// payload_cut.go), and the answers they expect (agent_reply.go); their
// settings files, and what `hooks install` and `uninstall` do to them
// (settings.go); the event model (event.go); guard rules judged on
// events (rules.go); and the per-phase metrics (metrics.go).
//
// Guard rules live where their inputs do: a rule is part of a workflow
// definition, so its type is engine/workflow's Rule; judging it takes an
// agent's events, so CheckRules is here; what a violation does to a task
// at next (block it, or record a forced override) takes the task's state,
// so that is engine's guard.
//
// The package does no I/O: payloads, transcripts and settings files come
// in as bytes, and events go out through EventStore, which gitstore
// implements. It imports nothing of this module but engine/workflow and
// engine/text; engine imports it, never the other way round.
//
// Where a new feature's code goes: a new agent gets its payload mapping
// in agents.go, its answers in agent_reply.go and its settings file in
// settings.go's table; a new rule type is parsed in engine/workflow
// (load_hegel.go) and judged in rules.go.
package agent
