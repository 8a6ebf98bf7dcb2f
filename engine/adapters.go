package engine

import (
	"fmt"
	"time"

	"github.com/git-hegel/git-hegel/engine/workflow"
)

// Adapters are the AI tools a run sends prompts to, configured in git
// config (docs/run.md):
//
//	hegel.adapter                  the default adapter's name
//	hegel.adapter.<name>.command   a command line; the prompt arrives on its stdin
//	hegel.adapter.<name>.timeout   optional: stop it after this long (90s, 10m)

// Adapter is one configured adapter.
type Adapter struct {
	Name    string
	Command string
	Timeout time.Duration
}

// AdapterSource looks adapters up (git config in the command line).
type AdapterSource interface {
	// Adapter returns the adapter called name, or nil when
	// hegel.adapter.<name>.command is not set; an error for a setting
	// that does not parse.
	Adapter(name string) (*Adapter, error)
	// DefaultAdapter is hegel.adapter ("" when unset).
	DefaultAdapter() string
}

// knownAdapters are ready command lines for the common agent CLIs, which
// the message about a missing adapter suggests (docs/run.md has them all).
var knownAdapters = map[string]string{
	"claude": "claude -p",
	"codex":  "codex exec -",
	"llm":    "llm",
	"ollama": "ollama run llama3.2",
	"gemini": "gemini",
	"aider":  "aider --message-file /dev/stdin --yes",
}

// AdapterError is a step whose adapter is not configured.
type AdapterError struct {
	Step string
	Name string // "" when the step runs the default adapter and none is set
}

func (e *AdapterError) Error() string {
	if e.Name == "" {
		return fmt.Sprintf("Step '%s' runs the default adapter, and none is set; pass --adapter NAME, or set one: git config hegel.adapter claude (with git config hegel.adapter.claude.command 'claude -p'; docs/run.md lists others)", e.Step)
	}
	cmd, ok := knownAdapters[e.Name]
	if !ok {
		cmd = "<a command that reads the prompt on standard input>"
	}
	return fmt.Sprintf("No adapter '%s' is configured (step '%s'); add it with: git config hegel.adapter.%s.command '%s'", e.Name, e.Step, e.Name, cmd)
}

// adapterFor resolves the adapter a step at node runs: its own, or for
// "default" the run's --adapter, else hegel.adapter.
func adapterFor(src AdapterSource, h *workflow.Handler, node, override string) (*Adapter, error) {
	name := h.Adapter
	if name == workflow.DefaultAdapter {
		name = override
		if name == "" && src != nil {
			name = src.DefaultAdapter()
		}
		if name == "" {
			return nil, &AdapterError{Step: node}
		}
	}
	if src == nil {
		return nil, &AdapterError{Step: node, Name: name}
	}
	a, err := src.Adapter(name)
	if err != nil {
		return nil, err
	}
	if a == nil {
		return nil, &AdapterError{Step: node, Name: name}
	}
	return a, nil
}
