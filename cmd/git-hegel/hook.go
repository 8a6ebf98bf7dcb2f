package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/engine/agent"
	"github.com/git-hegel/git-hegel/engine/workflow"
	"github.com/git-hegel/git-hegel/gitstore"
	"github.com/git-hegel/git-hegel/gitstore/gitdir"
)

// `git hegel hook <EventName>`: one agent hook. Agents run it on every
// tool call, so the common case (a PostToolUse for the active task) reads
// a handful of small files and appends one line; it opens the repository
// only when the hook cache is stale (the task moved), at a stop (which
// folds the journal into the task's ref) and at a session start (which
// renders the task's prompt). See docs/agents.md.

// quietPeriod is how long a phase_timeout or token_budget violation, once
// reported, is not reported again; the repeated_* rules stay quiet for
// their own window.
const quietPeriod = 10 * time.Minute

func hookFlags(fs *pflag.FlagSet) {
	fs.String("agent", "", "the `agent` sending the payload: claude, codex or cursor (default: detected from it)")
	completeValues(fs, "agent", kindAgent)
}

func runHook(c *cmdCtx, args []string) error {
	if err := c.wantArgs(args, 1, 1); err != nil {
		return err
	}
	name := c.stringFlag("agent")
	if name != "" && !contains(agent.Names, name) {
		return usagef(c.name, "unknown agent '%s' (supported: %s)", name, strings.Join(agent.Names, ", "))
	}
	event := args[0]
	// A Write of a huge file sends its content, which the hook does not
	// keep anyway: past agent.MaxHookPayload the long strings are cut
	// while reading, and the events say so. Size never fails the hook
	// (and so never the agent's tool call).
	data, err := io.ReadAll(io.LimitReader(c.Stdin, agent.MaxHookPayload+1))
	if err != nil {
		return fmt.Errorf("cannot read the hook payload: %v", err)
	}
	var cut int64
	if len(data) > agent.MaxHookPayload {
		if data, cut, err = agent.CutPayload(io.MultiReader(bytes.NewReader(data), c.Stdin)); err != nil {
			return fmt.Errorf("cannot read the hook payload: %v", err)
		}
	}
	now := c.Now()
	in := agent.HookInput{Event: event, Payload: data, Agent: name, Now: now, Getenv: c.Getenv, Cut: cut}
	h, err := agent.ParseHook(in)
	if err != nil && cut > 0 {
		// Cut at its total bound, the document no longer parses: the
		// event is still recorded, by the name the agent ran the hook
		// with.
		in.Payload = []byte("{}")
		h, err = agent.ParseHook(in)
	}
	if err != nil {
		return err
	}
	tgt, err := c.locateHook(h)
	if err != nil || tgt.ActiveTask == "" {
		return err // outside a repository, or no workflow: nothing to record
	}
	h.MapPaths(tgt.WorktreePath)
	hr := &hookRun{c: c, h: h, tgt: tgt, now: now}
	return hr.run()
}

// locateHook finds the repository: from the working directory, else from
// where the agent says it works (Cursor runs user-level hooks elsewhere).
// Outside any repository there is nothing to do and no error.
func (c *cmdCtx) locateHook(h *agent.Hook) (*gitstore.HookTarget, error) {
	dirs := []string{c.Dir}
	if h.Cwd != "" {
		dirs = append(dirs, h.Cwd)
	}
	dirs = append(dirs, h.CursorRoots...)
	for _, d := range dirs {
		tgt, err := gitstore.LocateHook(d, c.Getenv)
		if errors.Is(err, gitdir.ErrNotRepo) || errors.Is(err, gitstore.ErrNoWorkTree) {
			continue
		}
		return tgt, err
	}
	return &gitstore.HookTarget{}, nil
}

type hookRun struct {
	c     *cmdCtx
	h     *agent.Hook
	tgt   *gitstore.HookTarget
	now   time.Time
	repo  *gitstore.Repo // opened on the slow paths only
	cache *gitstore.HookCache
}

func (hr *hookRun) run() error {
	h, tgt := hr.h, hr.tgt
	if denied, err := hr.checkGate(); denied || err != nil {
		return err
	}
	hr.cache = gitstore.ReadHookCache(tgt.Layout.GitDir, tgt.ActiveTask, tgt.Commit)
	if hr.cache == nil || !hr.cache.Current(tgt.Layout.CommonDir) {
		if err := hr.rebuild(); err != nil {
			return err
		}
		if hr.cache == nil {
			return nil // the session names no task we own
		}
	}
	if !(&engine.State{Status: hr.cache.Status}).Active() {
		return nil // a finished or stashed task records nothing
	}
	if len(h.Edits) > 0 {
		// An edit about to run: refused when another open task locked
		// the file. Nothing is journaled (the PostToolUse would count it).
		// A refused edit changes nothing: no snapshot either.
		denied, err := hr.checkLocks()
		if err == nil && !denied {
			hr.snapshotAction()
		}
		return err
	}
	hr.snapshotAction()
	hr.closeOpenAction()
	for i := range h.Events {
		h.Events[i].Task = hr.cache.Task
	}
	if h.Kind == agent.EventStop && len(h.Events) > 0 {
		hr.addTranscriptTokens()
	}
	j := hr.journal()
	if err := j.Append(h.Events...); err != nil {
		return err
	}
	context := ""
	if h.Kind == agent.EventSessionStart {
		var err error
		if context, err = hr.resumeContext(); err != nil {
			hr.c.warn(err.Error())
		}
	}
	message := ""
	if h.Reports() {
		vs, err := hr.violations(j)
		if err != nil {
			hr.c.warn(err.Error())
		}
		if len(vs) > 0 {
			message = agent.ViolationMessage(vs, hr.cache.Workflow)
			hr.recordReported(j, vs)
		}
	}
	if h.Kind == agent.EventStop {
		// The agent's turn is over: fold the journal into the task's ref
		// (one commit), so nothing waits in the journal for long.
		if err := hr.fold(); err != nil {
			hr.c.warn("agent events not folded yet: " + err.Error())
		}
	}
	if out := h.Reply(context, message); out != nil {
		_, err := hr.c.Stdout.Write(out)
		return err
	}
	return nil
}

// journal opens the worktree's journal; the configuration (for
// core.sharedRepository) is read only when the journal must be created.
func (hr *hookRun) journal() *gitstore.Journal {
	gitDir := hr.tgt.Layout.GitDir
	if hr.repo != nil {
		return hr.repo.Journal()
	}
	if _, err := os.Stat(gitstore.OpenJournal(gitDir, nil).Path()); err == nil {
		return gitstore.OpenJournal(gitDir, nil)
	}
	cfg, _ := gitstore.LayoutConfig(hr.tgt.Layout, hr.c.Getenv)
	return gitstore.OpenJournal(gitDir, cfg)
}

// open opens the repository for a slow path.
func (hr *hookRun) open() (*gitstore.Repo, *engine.Engine, error) {
	if hr.repo == nil {
		r, err := gitstore.Open(hr.tgt.Layout.WorkTree, hr.c.Getenv)
		if err != nil {
			return nil, nil, err
		}
		r.Now = hr.c.Now
		// The engine tells this worktree's tasks by its id, as every
		// command does; without it, it compares paths, and a moved
		// repository would lose its active task here.
		id, err := r.WorktreeID()
		if err != nil {
			return nil, nil, err
		}
		hr.c.worktreeID = id
		hr.repo = r
	}
	e := hr.c.newEngine(hr.repo)
	e.Warn = func(string) {} // the agent must not see the engine's warnings
	return hr.repo, e, nil
}

// rebuild makes the hook cache from the task as the engine sees it.
func (hr *hookRun) rebuild() error {
	r, e, err := hr.open()
	if err != nil {
		return err
	}
	// Stamped before trust is read: trust granted or taken back
	// meanwhile makes the next hook build the cache again, never keeps a
	// stale one.
	stamp := gitstore.TrustStamp(hr.tgt.Layout.CommonDir)
	t, err := e.Current("")
	if errors.Is(err, engine.ErrNoWorkflow) {
		hr.cache = nil
		return nil
	}
	if err != nil {
		return err
	}
	wf, err := engine.TaskWorkflow(t)
	if err != nil {
		return err
	}
	st := t.State
	c := &gitstore.HookCache{
		Task: st.Task, Commit: t.Rev, Workflow: st.Workflow, Run: engine.RunKey(st),
		Node: st.CurrentNode, Status: st.Status, PhaseStart: st.PhaseStartTime,
	}
	// A rule's text reaches the agent: an untrusted definition's do not
	// (engine/trust.go); its session start gets a notice, not the prompt.
	trust := e.TrustOf(t.Definition)
	c.Untrusted = !trust.Trusted
	if trust.How != engine.TrustBuiltin {
		c.TrustStamp = stamp
	}
	if n, ok := wf.Nodes[st.CurrentNode]; ok && !c.Untrusted {
		for _, rule := range n.Rules {
			if agent.EventRule(rule.Type) {
				c.Rules = append(c.Rules, rule)
			}
		}
	}
	if len(c.Rules) > 0 {
		evs, err := r.Events().Folded(st.Task, c.Run, st.PhaseStartTime)
		if err != nil {
			return err
		}
		from := hr.now.Add(-lookBack(c.Rules))
		for _, ev := range evs {
			c.PhaseTokens += ev.Tokens()
			if !ev.Time.Before(from) {
				c.Recent = append(c.Recent, ev)
			}
		}
	}
	r.WriteHookCache(c)
	hr.cache = c
	return nil
}

// lookBack is how far back the hook reads events: the rules' longest
// window, or the quiet period within which a reported violation is not
// reported again.
func lookBack(rules []workflow.Rule) time.Duration {
	return max(agent.MaxWindow(rules), quietPeriod)
}

// fold moves the journal onto the task refs and refreshes the cache.
func (hr *hookRun) fold() error {
	r, _, err := hr.open()
	if err != nil {
		return err
	}
	if err := r.Events().Fold(); err != nil {
		return err
	}
	return hr.rebuild()
}

// addTranscriptTokens puts the token usage the transcript gained since the
// last stop on the stop event.
func (hr *hookRun) addTranscriptTokens() {
	if hr.h.TranscriptPath == "" {
		return
	}
	r, _, err := hr.open()
	if err != nil {
		return
	}
	u, err := r.TranscriptUsage(hr.h.Agent, hr.h.TranscriptPath)
	if err != nil || (u.In == 0 && u.Out == 0 && u.Cached == 0) {
		return
	}
	ev := &hr.h.Events[len(hr.h.Events)-1]
	ev.TokensIn += u.In
	ev.TokensOut += u.Out
	ev.TokensCached += u.Cached
}

// violations checks the event rules of the task's node on its recent
// events, leaving out violations reported within their quiet period.
func (hr *hookRun) violations(j *gitstore.Journal) ([]agent.Violation, error) {
	c := hr.cache
	if len(c.Rules) == 0 {
		return nil, nil
	}
	since := hr.now.Add(-lookBack(c.Rules))
	if c.PhaseStart.After(since) {
		since = c.PhaseStart
	}
	tail, err := j.Tail(since)
	if err != nil {
		return nil, err
	}
	evs := append([]agent.Event(nil), c.Recent...)
	extra := c.PhaseTokens // all folded tokens; the recent ones are in evs
	for _, ev := range c.Recent {
		extra -= ev.Tokens()
	}
	for _, ev := range tail {
		if ev.Task == c.Task {
			evs = append(evs, ev)
		}
	}
	vs, err := agent.CheckRules(c.Rules, agent.RuleInput{
		Node: c.Node, Now: hr.now, PhaseStart: c.PhaseStart, Events: evs, ExtraTokens: max(extra, 0),
	}, nil)
	if err != nil {
		return nil, err
	}
	var out []agent.Violation
	for _, v := range vs {
		quiet := quietPeriod
		if v.Rule.Type == workflow.RuleRepeatedCommand || v.Rule.Type == workflow.RuleRepeatedFileEdit {
			quiet = time.Duration(v.Rule.Window) * time.Second
		}
		if !reportedSince(evs, v.Rule.Type, hr.now.Add(-quiet)) {
			out = append(out, v)
		}
	}
	return out, nil
}

func reportedSince(evs []agent.Event, rule string, since time.Time) bool {
	for _, ev := range evs {
		if ev.Kind == agent.EventViolation && ev.Rule == rule && !ev.Time.Before(since) {
			return true
		}
	}
	return false
}

// recordReported journals the violations just reported, so they are
// counted by metrics and not repeated within their quiet period.
func (hr *hookRun) recordReported(j *gitstore.Journal, vs []agent.Violation) {
	evs := make([]agent.Event, 0, len(vs))
	for _, v := range vs {
		evs = append(evs, agent.Event{
			Time: hr.now.UTC(), Kind: agent.EventViolation, Hook: hr.h.Name, Agent: hr.h.Agent,
			Session: hr.h.Session, Task: hr.cache.Task, Node: hr.cache.Node, Rule: v.Rule.Type, Detail: v.Summary,
		})
	}
	if err := j.Append(evs...); err != nil {
		hr.c.warn(err.Error())
	}
}

// resumeContext tells a new agent session where its task stands.
func (hr *hookRun) resumeContext() (string, error) {
	_, e, err := hr.open()
	if err != nil {
		return "", err
	}
	v, err := e.Repeat("")
	if err != nil {
		return "", err
	}
	st := v.State
	var b strings.Builder
	fmt.Fprintf(&b, "This repository runs a git-hegel workflow; continue it.\n")
	fmt.Fprintf(&b, "Task: %s (workflow %s, status %s)\n", st.Task, st.Workflow, st.Status)
	fmt.Fprintf(&b, "History: %s\n", historyLine(st.History))
	fmt.Fprintf(&b, "Current node: %s\n\nPrompt:\n%s\n\n", st.CurrentNode, trimNL(v.Prompt))
	b.WriteString("When this node's work is done, run `git hegel next` (or `git hegel next <claim>`); `git hegel status` shows where the task stands.")
	return b.String(), nil
}

// checkGate refuses, in the agent's own format, a shell command of the
// agent's that runs one of the person's commands (git hegel approve,
// reject, answer, trust: agent.GateCommand), whatever task it names,
// unless hegel.agent.allowGateCommands is true. A gate the agent passes
// itself is no gate; an agent told to by text it read (a fetched task, a
// file) is the case this stops.
func (hr *hookRun) checkGate() (denied bool, err error) {
	h := hr.h
	if h.Kind != agent.EventPreTool || h.Call == nil || h.Call.Gate == "" {
		return false, nil
	}
	// Refused unless the setting says otherwise: a configuration that
	// cannot be read allows nothing (and fails no other hook work).
	if cfg, err := hr.config(); err == nil {
		if v, ok := cfg.Get("hegel", "agent", "allowgatecommands"); ok {
			if allow, ok := gitdir.ParseBool(v); ok && allow {
				return false, nil
			}
		}
	}
	why := "approvals, rejections, answers to your questions and trust are theirs to give"
	if strings.HasSuffix(h.Call.Gate, " --force") {
		why = "taking a lock from another task, or changing another worktree's task, is theirs to decide"
	}
	reason := fmt.Sprintf("'git hegel %s' is for the person you work with, not for the agent: %s. Ask them to run it (git config hegel.agent.allowGateCommands true lets agents run it).", h.Call.Gate, why)
	out := h.Deny(reason)
	if out == nil {
		return false, nil
	}
	_, err = hr.c.Stdout.Write(out)
	return true, err
}

// checkLocks refuses, in the agent's own format, an edit about to run on
// a file another open task has locked, naming the file and that task. It
// opens the repository: locks are in every task's state, and another
// task (or clone, after a fetch) may take one at any time.
func (hr *hookRun) checkLocks() (denied bool, err error) {
	_, e, err := hr.open()
	if err != nil {
		return false, err
	}
	states, err := e.LockStates()
	if err != nil {
		return false, err
	}
	var reasons []string
	for _, f := range hr.h.Edits {
		names := []string{f}
		if rel, ok := hr.tgt.OtherWorktreePath(f); ok {
			// A file of another worktree of this repository (still
			// absolute: outside this one) is locked where it lies.
			names[0] = rel
		} else {
			// A file of this worktree that is in another one all the
			// same (a worktree nested in this one, as agents' worktrees
			// often are, or one a link of this worktree leads into) is
			// that worktree's file too: both names are checked.
			at, ok := hr.tgt.LinkedOut(f)
			if !ok {
				at = filepath.Join(hr.tgt.Layout.WorkTree, filepath.FromSlash(f))
			}
			if rel, ok := hr.tgt.OtherWorktreePath(at); ok && rel != f {
				names = append(names, rel)
			}
		}
		for _, n := range names {
			if hs := engine.LockedBy(states, hr.cache.Task, n, e.FoldCase); len(hs) > 0 {
				reasons = append(reasons, engine.LockMessage(n, hs[0]))
				break
			}
		}
	}
	if len(reasons) == 0 {
		return false, nil
	}
	out := hr.h.Deny(strings.Join(reasons, "\n"))
	if out == nil {
		return false, nil
	}
	ev := agent.Event{Time: hr.now.UTC(), Kind: agent.EventViolation, Hook: hr.h.Name, Agent: hr.h.Agent,
		Session: hr.h.Session, Task: hr.cache.Task, Node: hr.cache.Node, Rule: engine.RuleLockedFiles, Detail: reasons[0]}
	if err := hr.journal().Append(ev); err != nil {
		hr.c.warn(err.Error())
	}
	_, err = hr.c.Stdout.Write(out)
	return true, err
}
