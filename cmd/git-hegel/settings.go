package main

import (
	"fmt"
	"strings"

	"github.com/git-hegel/git-hegel/cmd/git-hegel/worktree"
	"github.com/git-hegel/git-hegel/engine/workflow"
	"github.com/git-hegel/git-hegel/gitstore/gitdir"
)

// hegel.* settings with a type, as the README lists them. A value that
// does not parse is fatal, as in git, naming the key and the value: a
// typo must never quietly become the default.
var (
	numberSettings = []string{
		"maxCheckpoints", "maxManualCheckpoints", "checkpointMaxFileSize", "retentionDays",
		"cleanupIntervalDays", "maxAttempts", "maxResultSize", "syncMaxBlobSize",
		"syncMaxCheckpointBlobSize", "syncMaxCommitSize",
	}
	boolSettings = []string{
		"autoCleanup", "checkpoints", "commitGuard", "keepCheckpointsOnDone", "strictWorkflows",
	}
)

// checkSettings refuses a hegel.* number or boolean git could not parse
// either.
func checkSettings(cfg *gitdir.Config) error {
	for _, key := range numberSettings {
		if v, ok := cfg.Get("hegel", "", key); ok {
			if _, ok := gitdir.ParseInt(v); !ok {
				return &gitdir.UnsupportedError{Reason: fmt.Sprintf("bad numeric config value '%s' for 'hegel.%s'", v, key)}
			}
		}
	}
	if v, ok := cfg.Get("hegel", "meta", "auto"); ok {
		if _, ok := gitdir.ParseBool(v); !ok {
			return &gitdir.UnsupportedError{Reason: fmt.Sprintf("bad boolean config value '%s' for 'hegel.meta.auto'", v)}
		}
	}
	if v, ok := cfg.Get("hegel", "agent", "keepactions"); ok {
		if n, ok := gitdir.ParseInt(v); !ok || n < 1 {
			return &gitdir.UnsupportedError{Reason: fmt.Sprintf("bad numeric config value '%s' for 'hegel.agent.keepActions' (it takes a number of actions, at least 1)", v)}
		}
	}
	if v, ok := cfg.Get("hegel", "agent", "snapshots"); ok {
		if _, ok := gitdir.ParseBool(v); !ok {
			return &gitdir.UnsupportedError{Reason: fmt.Sprintf("bad boolean config value '%s' for 'hegel.agent.snapshots'", v)}
		}
	}
	if v, ok := cfg.Get("hegel", "", "synclistrefs"); ok {
		if n, ok := gitdir.ParseInt(v); !ok || n < 0 {
			return &gitdir.UnsupportedError{Reason: fmt.Sprintf("bad numeric config value '%s' for 'hegel.syncListRefs' (it takes a number of refs, 0 or more)", v)}
		}
	}
	if _, err := maxRollbacksSetting(cfg); err != nil {
		return err
	}
	if err := worktree.CheckStashKeep(cfg); err != nil {
		return &gitdir.UnsupportedError{Reason: err.Error()}
	}
	for _, key := range boolSettings {
		if _, err := cfg.StrictBool("hegel", key, false); err != nil {
			v, _ := cfg.Get("hegel", "", key)
			return &gitdir.UnsupportedError{Reason: fmt.Sprintf("bad boolean config value '%s' for 'hegel.%s'", v, key)}
		}
	}
	return nil
}

// maxRollbacksSetting reads hegel.maxRollbacks: the cap on a task's moves
// back to an earlier node when its workflow's max_rollbacks does not set
// one, 1 to workflow.MaxRollbacksLimit, or "off" (-1). Unset is 0: the
// default.
func maxRollbacksSetting(cfg *gitdir.Config) (int, error) {
	v, ok := cfg.Get("hegel", "", "maxrollbacks")
	if !ok {
		return 0, nil
	}
	if strings.EqualFold(strings.TrimSpace(v), "off") {
		return -1, nil
	}
	if n, ok := gitdir.ParseInt(v); ok && n >= 1 && n <= workflow.MaxRollbacksLimit {
		return int(n), nil
	}
	return 0, &gitdir.UnsupportedError{Reason: fmt.Sprintf("bad config value '%s' for 'hegel.maxRollbacks': moves back a task may make, 1 to %d, or off", v, workflow.MaxRollbacksLimit)}
}
