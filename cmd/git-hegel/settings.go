package main

import (
	"fmt"
	"strconv"
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
			if _, ok := parseConfigInt(v); !ok {
				return &gitdir.UnsupportedError{Reason: fmt.Sprintf("bad numeric config value '%s' for 'hegel.%s'", v, key)}
			}
		}
	}
	if v, ok := cfg.Get("hegel", "meta", "auto"); ok {
		if _, ok := gitdir.ParseBool(v); !ok {
			return &gitdir.UnsupportedError{Reason: fmt.Sprintf("bad boolean config value '%s' for 'hegel.meta.auto'", v)}
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

// parseConfigInt reads an integer as git's git_parse_int64 does: decimal,
// with an optional k, m or g suffix.
func parseConfigInt(v string) (int64, bool) {
	v = strings.ToLower(strings.TrimSpace(v))
	mult := int64(1)
	switch {
	case strings.HasSuffix(v, "k"):
		mult, v = 1<<10, strings.TrimSuffix(v, "k")
	case strings.HasSuffix(v, "m"):
		mult, v = 1<<20, strings.TrimSuffix(v, "m")
	case strings.HasSuffix(v, "g"):
		mult, v = 1<<30, strings.TrimSuffix(v, "g")
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, false
	}
	return n * mult, true
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
	if n, ok := parseConfigInt(v); ok && n >= 1 && n <= workflow.MaxRollbacksLimit {
		return int(n), nil
	}
	return 0, &gitdir.UnsupportedError{Reason: fmt.Sprintf("bad config value '%s' for 'hegel.maxRollbacks': moves back a task may make, 1 to %d, or off", v, workflow.MaxRollbacksLimit)}
}
