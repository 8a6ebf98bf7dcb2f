package main

// Scenarios for the agent hooks: `git hegel hook` runs on every
// tool call of a coding agent, so it must cost what starting git-hegel
// costs, however long the journal of unfolded events has grown.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// hookWorkflow has the rules that make the hook read the journal's tail
// (the repeated_* rules) on every call: the hook's most expensive case.
const hookWorkflow = `start_node: code
nodes:
  code:
    prompt: Write code.
    rules:
      - type: repeated_command
        pattern: "^go test"
        threshold: 100000
        window: 120
      - type: repeated_file_edit
        threshold: 100000
        window: 300
      - type: phase_timeout
        max_duration: 86400
    transitions:
      - when: code_complete
        to: done
`

// hookRepo prepares a repository for the hook scenario: the workflow
// started as task "hooks", and a journal of n events spread over the last
// hours (one every 3 s, alternating commands and edits, newest now), as an
// agent leaves it between two stops. It returns the payload file.
func (b *bench) hookRepo(spec repoSpec, n int) (string, string, error) {
	dir, err := b.repo(spec)
	if err != nil {
		return "", "", err
	}
	if err := b.resetHegel(dir); err != nil {
		return "", "", err
	}
	os.Remove(filepath.Join(dir, ".git", "hegel-journal.jsonl"))
	os.Remove(filepath.Join(dir, ".git", "hegel-hook.json"))
	if err := os.WriteFile(filepath.Join(dir, ".hegel", "workflows", "hookbench.yaml"), []byte(hookWorkflow), 0o644); err != nil {
		return "", "", err
	}
	if _, err := b.hegel(dir, "start", "hookbench", "--task", "hooks"); err != nil {
		return "", "", err
	}
	if err := writeJournal(filepath.Join(dir, ".git", "hegel-journal.jsonl"), "hooks", n, time.Now()); err != nil {
		return "", "", err
	}
	payload := filepath.Join(dir, ".git", "bench-payload.json")
	p := fmt.Sprintf(`{"session_id":"bench","transcript_path":"/nonexistent/bench.jsonl","cwd":%q,"permission_mode":"default",`+
		`"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"go test ./...","description":"Run the tests"},`+
		`"tool_response":{"stdout":"ok","stderr":"","interrupted":false,"isImage":false},"tool_use_id":"toolu_bench"}`, dir)
	if err := os.WriteFile(payload, []byte(p), 0o644); err != nil {
		return "", "", err
	}
	return dir, payload, nil
}

// writeJournal writes n events for task as the hook would, the newest at
// end.
func writeJournal(path, task string, n int, end time.Time) error {
	var sb strings.Builder
	for i := 0; i < n; i++ {
		at := end.Add(-time.Duration(n-i) * 3 * time.Second).UTC()
		ev := map[string]any{"time": at, "kind": "post_tool", "hook": "PostToolUse", "agent": "claude", "session": "bench", "task": task}
		if i%2 == 0 {
			ev["tool"], ev["action"], ev["command"] = "Bash", "command", fmt.Sprintf("go test ./pkg%d/...", i%50)
		} else {
			ev["tool"], ev["action"], ev["file"] = "Edit", "edit", fmt.Sprintf("pkg%d/file%d.go", i%50, i%7)
		}
		line, err := json.Marshal(ev)
		if err != nil {
			return err
		}
		sb.WriteString("\n")
		sb.Write(line)
		sb.WriteString("\n")
	}
	return os.WriteFile(path, []byte(sb.String()), 0o644)
}

// runHook times `git hegel hook PostToolUse` with 10,000 and with 10
// events in the journal against `git hegel version`.
func runHook(b *bench) ([]row, error) {
	big, bigPayload, err := b.hookRepo(repoSpec{Files: 100, Seed: 12}, 10000)
	if err != nil {
		return nil, err
	}
	small, smallPayload, err := b.hookRepo(repoSpec{Files: 100, Seed: 13}, 10)
	if err != nil {
		return nil, err
	}
	// Warm the hook caches as an agent's first calls would.
	for _, d := range []struct{ dir, payload string }{{big, bigPayload}, {small, smallPayload}} {
		if _, _, err := b.run(step{dir: d.dir, argv: hegelCmd("hook", "PostToolUse"), stdin: d.payload}); err != nil {
			return nil, err
		}
	}
	b.settle()
	round := []step{
		{label: "git hegel hook PostToolUse (10,000 events)", dir: big, argv: hegelCmd("hook", "PostToolUse"), stdin: bigPayload},
		{label: "git hegel hook PostToolUse (10 events)", dir: small, argv: hegelCmd("hook", "PostToolUse"), stdin: smallPayload},
		timed("git hegel version", big, hegelVersion...),
	}
	ss, err := b.measure(round, b.runs, measureOpts{rotate: true})
	if err != nil {
		return nil, err
	}
	b.keep("hook", "10k/10 events", ss...)
	for _, d := range []string{big, small} {
		if err := b.resetHegel(d); err != nil {
			return nil, err
		}
		os.Remove(filepath.Join(d, ".git", "hegel-journal.jsonl"))
		os.Remove(filepath.Join(d, ".hegel", "workflows", "hookbench.yaml"))
	}
	return []row{
		timeRow("hook, 10,000-event journal vs version", "100", ss[0], ss[2], 1.5),
		timeRow("hook, 10 events vs version", "100", ss[1], ss[2], 1.5),
		sizeRow("hook 10,000 vs 10 events", "10k/10", ss[0], ss[1], 1.10),
	}, nil
}

// runFold times `git hegel next` on the self-looping workflow with 10,000
// events journaled since the last transition, which it folds into the
// task's ref first, against the same next with nothing to fold. The whole
// command, fold included, must stay under 200 ms.
func runFold(b *bench) ([]row, error) {
	dir, err := b.repo(std(1000))
	if err != nil {
		return nil, err
	}
	if err := b.startLoop(dir); err != nil {
		return nil, err
	}
	if _, err := b.git(dir, "config", "hegel.checkpoints", "off"); err != nil {
		return nil, err
	}
	journal := filepath.Join(dir, ".git", "hegel-journal.jsonl")
	b.settle()
	round := []step{
		inProcess(func() error { return writeJournal(journal, "bench", 10000, time.Now()) }),
		timed("git hegel next again (folds 10,000 events)", dir, hegelCmd("next", "again")...),
		timed("git hegel next again (nothing to fold)", dir, hegelCmd("next", "again")...),
	}
	ss, err := b.measure(round, b.runs, measureOpts{})
	if err != nil {
		return nil, err
	}
	b.keep("fold", "1k", ss...)
	if err := b.resetHegel(dir); err != nil {
		return nil, err
	}
	os.Remove(journal)
	return []row{
		absRow("next folding 10,000 events", "1k", ss[0], 200*time.Millisecond),
		timeRow("next folding 10,000 events vs next", "1k", ss[0], ss[1], 0),
	}, nil
}
