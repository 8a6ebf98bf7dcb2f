// Package text formats what git-hegel says to people: counted nouns
// ("1 stash", "2 stashes"), paths quoted the way git quotes them,
// durations ("3m 12s"), percentages, and values quoted in messages.
//
// It is a leaf: it imports nothing from this module, so every other
// package (engine, engine/workflow, engine/agent, gitstore, rollback,
// cmd/git-hegel) may use it. Put a helper here only when more than one of
// them needs it and it knows nothing of tasks, workflows or git.
package text
