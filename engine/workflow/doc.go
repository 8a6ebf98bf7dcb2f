// Package workflow reads and checks workflow definitions: a YAML file
// (hegel's format included) parsed into a Definition of nodes,
// transitions, stage metadata, gates, guard rules and step handlers; the
// prompt templates and their rendering with guides, partials and
// optional context; the built-in workflows and guides, embedded; and the
// Registry that layers the user's files over the built-ins. Meta-modes
// (metamode.go), workflows of workflows, are read the same way: their
// files, built-ins and MetaRegistry.
//
// A Definition is what a file says, never what a task did: nothing here
// knows a task's state. The package does no I/O (the user's files come in
// as bytes, guides through GuideSource) and imports nothing of this module
// but engine/text; engine and engine/agent import it, never the other
// way round.
//
// Where a new feature's code goes: a new key of a workflow file is parsed
// in the load file of its group (load.go the core keys, load_meta.go stage
// metadata, gates and retries, load_run.go the step runner's, load_hegel.go
// hegel's guard rules and end nodes), kept on Node or Definition, and
// checked in validate.go when it needs the whole graph. What a task does
// with it belongs to engine.
package workflow
