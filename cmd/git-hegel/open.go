package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/git-hegel/git-hegel/cmd/git-hegel/runexec"
	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/engine/workflow"
	"github.com/git-hegel/git-hegel/gitstore"
	"github.com/git-hegel/git-hegel/gitstore/gitdir"
)

// readOnly reports a command (or verb) that writes nothing to the
// repository, marked so in the command table.
func (c *cmdCtx) readOnly() bool {
	cmd := lookup(c.name)
	if cmd == nil {
		return false
	}
	if s := cmd.findSub(c.sub); s != nil && len(cmd.subs) > 0 {
		return s.readOnly
	}
	return cmd.readOnly && (cmd.writeFlag == "" || !c.boolFlag(cmd.writeFlag))
}

// openRepo opens the repository around the working directory.
func (c *cmdCtx) openRepo() (*gitstore.Repo, error) {
	r, err := gitstore.Open(c.Dir, c.Getenv)
	if err != nil {
		return nil, err
	}
	// doctor runs whatever the settings say: it reports a bad value
	// (doctor_config.go) where any other command stops on it.
	doctor := c.name == "doctor"
	if err := c.useConfig(r.Config()); err != nil {
		if !doctor {
			return nil, err
		}
		c.displayConfigErr = err
	}
	if err := checkSettings(r.Config()); err != nil && !doctor {
		return nil, err
	}
	r.Now = c.Now
	c.repo = r
	r.Warn = c.warn
	// Read (or create) the repository's instance id now, so newEngine
	// cannot fail on it later. A command that only reads never creates it:
	// running status or log in a repository leaves nothing behind.
	id, err := r.WorktreeID, error(nil)
	if c.readOnly() {
		id = r.ExistingWorktreeID
	}
	if c.worktreeID, err = id(); err != nil {
		return nil, err
	}
	switch c.name {
	case "fetch", "push", "sync", "remote":
		// They merge the tracking refs themselves, or must not.
	default:
		c.mergePlainFetched(r)
	}
	return r, nil
}

// newEngine wires the engine to the repository's stores and settings, and
// to the command's terminal (-y). What one call is told (--task, --force)
// goes to each call: taskOptions.
func (c *cmdCtx) newEngine(r *gitstore.Repo) *engine.Engine {
	s := r.Sessions()
	cfg := r.Config()
	e := &engine.Engine{
		Tasks:   r.Tasks(),
		Archive: r.Tasks(),
		History: r.History(),
		Shapes:  r,
		Session: s,
		Stashes: r.Stashes(),
		Workflows: func() (*workflow.Registry, error) {
			return loadRegistry(r, s)
		},
		MetaModes: func() (*workflow.MetaRegistry, error) {
			return workflow.LoadMetaModes(s.MetaFiles()), nil
		},
		MetaAuto:        metaAuto(cfg),
		Guides:          c.guideSource(r, s),
		Events:          r.Events(),
		Worktree:        r.WorkTree,
		WorktreeID:      c.worktreeID,
		AgentReads:      c.forAgent,
		Now:             c.Now,
		Git:             r.GitInfo,
		Warn:            c.warn,
		Files:           r.Files(),
		MaxAttempts:     int(cfg.Int("hegel", "maxattempts", workflow.DefaultMaxAttempts)),
		ArtifactDir:     configValue(cfg, "artifactdir"),
		KeepCheckpoints: cfg.Bool("hegel", "keepcheckpointsondone", false),
		Snapshots:       c.snapshots(r),
		Parking:         c.snapshots(r),
		Actions:         c.snapshots(r),
		// hegel.checkpoints=off: building the snapshots (ignore rules, the
		// GC setting) would be most of a transition's own cost.
		NoAutoCheckpoints: !cfg.Bool("hegel", "checkpoints", true),
		// checkEngineConfig refuses a bad interval before a command that
		// changes anything runs; here it only has to be read.
		CheckpointInterval: int(max(cfg.Int("hegel", "checkpointinterval", 1), 1)),
		HistoryOff:         !cfg.Bool("hegel", "history", true),
		FoldCase:           cfg.Bool("core", "ignorecase", false),
		Version:            version,
		User: func() string {
			n, _ := cfg.Get("user", "", "name")
			return n
		},
		Email: func() string {
			m, _ := cfg.Get("user", "", "email")
			return m
		},
		ApprovalOtherPerson: otherPerson(cfg),
		Confirm:             c.confirmTransition,
	}
	if cfg.Bool("hegel", "commitguard", true) {
		e.CommitTimes = r.CommitTimes
		e.CommitsAfter = r.CommitsAfter
	}
	e.Trust = r.Trust()
	e.WorkflowFile = s.WorkflowFile
	e.Committed = r.Committed
	// A prompt's guides, partials, templates and context that a commit
	// brought reach the agent once trusted (engine.CommittedText).
	e.Guides = c.guideSource(r, s.WithVet(e.CommittedText))
	// checkSettings refused a bad value before the engine was made.
	e.MaxRollbacks, _ = maxRollbacksSetting(cfg)
	// Checks (check: on a node) run through os/exec in the worktree's
	// top directory, for next and done as for run.
	e.Exec = &runexec.Executor{Dir: r.WorkTree, Env: os.Environ()}
	return e
}

// otherPerson reads hegel.approval.otherPerson (git's subsection syntax:
// [hegel "approval"] otherPerson = true); a value that is no boolean
// counts as true, so a typo never turns the check off.
func otherPerson(cfg *gitdir.Config) bool {
	v, ok := cfg.Get("hegel", "approval", "otherperson")
	if !ok {
		return false
	}
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "no", "off", "false", "0":
		return false
	}
	return true
}

// metaAuto reads hegel.meta.auto (git's subsection syntax: [hegel "meta"]
// auto = true); checkSettings has refused a value that is no boolean.
func metaAuto(cfg *gitdir.Config) bool {
	v, ok := cfg.Get("hegel", "meta", "auto")
	if !ok {
		return false
	}
	b, _ := gitdir.ParseBool(v)
	return b
}

// guideSource is where prompts take their guides from: the worktree's
// and the built-in ones, shortened with hegel.prompt=brief (brief.go).
func (c *cmdCtx) guideSource(r *gitstore.Repo, s *gitstore.Sessions) workflow.GuideSource {
	if contains(fullPromptCommands, c.name) || c.promptSetting(r.Config()) != promptBrief {
		return s
	}
	return briefGuides{s}
}

// selected is the task the command names with --task ("": this
// worktree's active task). start's --task names the task it creates.
func (c *cmdCtx) selected() string {
	if c.name == "start" || c.name == "meta" {
		return ""
	}
	return c.stringFlag("task")
}

// taskOptions are the command's --task and its plain --force (changing a
// task another worktree owns, and what else the command gives it to do).
func (c *cmdCtx) taskOptions() engine.TaskOptions {
	return engine.TaskOptions{Task: c.selected(), Force: c.boolFlag("force")}
}

// engine opens the repository and returns an engine for it. A stash's
// file operation that a killed process cut short is finished or undone
// first, with one line saying which (doctor reports it instead).
func (c *cmdCtx) engine() (*engine.Engine, *gitstore.Repo, error) {
	r, err := c.openRepo()
	if err != nil {
		return nil, nil, err
	}
	if err := checkEngineConfig(r.Config()); err != nil {
		return nil, nil, err
	}
	e := c.newEngine(r)
	c.eng = e
	if note, err := e.RecoverParking(); err != nil {
		c.warn(err.Error())
	} else if note != "" {
		fmt.Fprintln(c.Stderr, note)
	}
	if !c.readOnly() {
		// A task a fetch moved on gets the entry checkpoint of its new
		// node before this command changes anything.
		if note := e.CatchUpCheckpoint(c.selected()); note != "" {
			fmt.Fprintln(c.Stderr, note)
		}
	}
	return e, r, nil
}

// loadRegistry loads the workflows with the repository's settings: strict
// parsing (hegel.strictWorkflows) and the user's guides and partials.
func loadRegistry(r *gitstore.Repo, s *gitstore.Sessions) (*workflow.Registry, error) {
	files, unreadable := s.WorkflowFilesAll()
	guides, err := s.UserGuideNames()
	if err != nil {
		return nil, err
	}
	partials, err := s.UserPartialNames()
	if err != nil {
		return nil, err
	}
	beside, err := s.UserGuidePartialNames()
	if err != nil {
		return nil, err
	}
	templates, err := s.UserTemplateNames()
	if err != nil {
		return nil, err
	}
	return workflow.LoadRegistry(files, workflow.LoadOptions{
		Strict:        r.Config().Bool("hegel", "strictworkflows", false),
		UserGuides:    guides,
		UserPartials:  append(partials, beside...),
		UserTemplates: templates,
		Unreadable:    unreadable,
	}), nil
}

// configValue is hegel.<key>, or "" when unset.
func configValue(cfg *gitdir.Config, key string) string {
	v, _ := cfg.Get("hegel", "", key)
	return v
}
