package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/git-hegel/git-hegel/engine/workflow"
	"github.com/git-hegel/git-hegel/gitstore/gitdir"
	"github.com/git-hegel/git-hegel/rollback"
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

// knownSettings are the other hegel.* keys git-hegel reads, with no
// value to refuse (TestManPageNamesEveryConfigKey keeps every list here
// and the keys the code reads the same). hegel.adapter.<name>.command
// and .timeout are known too (knownSetting).
var knownSettings = []string{
	"hegel.remote", "hegel.adapter", "hegel.onComplete", "hegel.artifactDir",
	"hegel.approval.otherPerson", "hegel.agent.snapshotTools", "hegel.agent.allowGateCommands",
}

// settingRule is one hegel.* key whose value a command refuses: the same
// check for the command (checkSettings) and for doctor (configProblems).
type settingRule struct {
	key     string // as the documentation spells it
	accepts string // what a value may be, in a few words
	all     bool   // every value counts (a list), not only the last
	// effect is what a bad value does, for doctor ("": every command
	// that reads it stops).
	effect string
	// check is the command's refusal of v (nil: v is fine).
	check func(v string) error
}

func numberRule(key string) settingRule {
	return settingRule{key: key, accepts: "a whole number, with an optional k, m or g suffix", check: func(v string) error {
		if _, ok := gitdir.ParseInt(v); !ok {
			return badSetting("bad numeric config value '%s' for '%s'", v, key)
		}
		return nil
	}}
}

func boolRule(key string) settingRule {
	return settingRule{key: key, accepts: "true or false (yes, no, on, off, 1, 0)", check: func(v string) error {
		if _, ok := gitdir.ParseBool(v); !ok {
			return badSetting("bad boolean config value '%s' for '%s'", v, key)
		}
		return nil
	}}
}

func badSetting(format, v, key string) error {
	return &gitdir.UnsupportedError{Reason: fmt.Sprintf(format, v, key)}
}

// settingRules are checked by every command that opens the repository.
var settingRules = func() []settingRule {
	var rules []settingRule
	for _, k := range numberSettings {
		rules = append(rules, numberRule("hegel."+k))
	}
	rules = append(rules,
		boolRule("hegel.meta.auto"),
		settingRule{key: "hegel.agent.keepActions", accepts: "a number of actions, at least 1", check: func(v string) error {
			if n, ok := gitdir.ParseInt(v); !ok || n < 1 {
				return badSetting("bad numeric config value '%s' for '%s' (it takes a number of actions, at least 1)", v, "hegel.agent.keepActions")
			}
			return nil
		}},
		boolRule("hegel.agent.snapshots"),
		settingRule{key: "hegel.syncListRefs", accepts: "a number of refs, 0 or more", check: func(v string) error {
			if n, ok := gitdir.ParseInt(v); !ok || n < 0 {
				return badSetting("bad numeric config value '%s' for '%s' (it takes a number of refs, 0 or more)", v, "hegel.syncListRefs")
			}
			return nil
		}},
		settingRule{key: "hegel.maxRollbacks", accepts: fmt.Sprintf("1 to %d, or off", workflow.MaxRollbacksLimit), check: func(v string) error {
			_, err := parseMaxRollbacks(v)
			return err
		}},
		settingRule{key: "hegel.stash.keep", all: true, accepts: "a path or a pattern inside the repository, such as 'notes/' or '*.local.json'", check: func(v string) error {
			if err := rollback.CheckStashKeep(v); err != nil {
				return &gitdir.UnsupportedError{Reason: err.Error()}
			}
			return nil
		}},
	)
	for _, k := range boolSettings {
		rules = append(rules, boolRule("hegel."+k))
	}
	return rules
}()

// engineSettingRules are checked before a command that runs the engine
// changes anything (checkEngineConfig).
var engineSettingRules = []settingRule{
	{key: "hegel.checkpointInterval", accepts: "1 or more", check: func(v string) error {
		if n, err := strconv.Atoi(strings.TrimSpace(v)); err != nil || n < 1 {
			return badSetting("bad config value '%s' for '%s': it counts node entries between automatic checkpoints, 1 or more (turn them off with 'git config hegel.checkpoints off')", v, "hegel.checkpointInterval")
		}
		return nil
	}},
	boolRule("hegel.history"),
}

// Settings a command reads with a warning, or refuses only when it uses
// them: doctor reports them as it reports the others.
var (
	promptRule = settingRule{key: "hegel.prompt", accepts: "full or brief", effect: "commands warn and show the prompt in full", check: func(v string) error {
		if _, ok := parsePrompt(v); !ok {
			return fmt.Errorf("hegel.prompt is '%s', which is neither full nor brief", v)
		}
		return nil
	}}
)

// adapterTimeoutRule is hegel.adapter.<name>.timeout, which 'git hegel
// run' refuses when it uses that adapter (configAdapters.Adapter).
func adapterTimeoutRule(name string) settingRule {
	return settingRule{key: "hegel.adapter." + name + ".timeout", accepts: "a duration such as 90s, 10m or 1h30m, or a number of seconds",
		effect: "'git hegel run' stops when it uses this adapter", check: func(v string) error {
			if strings.TrimSpace(v) == "" {
				return nil
			}
			_, err := parseTimeout(v)
			return err
		}}
}

// splitKey is hegel.<sub>.<name> as Config.Get takes it.
func splitKey(key string) (sub, name string) {
	rest := strings.TrimPrefix(key, "hegel.")
	if i := strings.LastIndex(rest, "."); i >= 0 {
		return rest[:i], strings.ToLower(rest[i+1:])
	}
	return "", strings.ToLower(rest)
}

// values are the values of the rule's key that count: the last one, or
// every one for a list.
func (s settingRule) values(cfg *gitdir.Config) []string {
	sub, name := splitKey(s.key)
	if s.all {
		return cfg.All("hegel", sub, name)
	}
	if v, ok := cfg.Get("hegel", sub, name); ok {
		return []string{v}
	}
	return nil
}

// firstBadSetting is the refusal of the first bad value under rules.
func firstBadSetting(cfg *gitdir.Config, rules []settingRule) error {
	for _, s := range rules {
		for _, v := range s.values(cfg) {
			if err := s.check(v); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkSettings refuses a hegel.* number or boolean git could not parse
// either.
func checkSettings(cfg *gitdir.Config) error {
	return firstBadSetting(cfg, settingRules)
}

// checkEngineConfig refuses settings the engine cannot read, in one line
// that says how to fix them, before the command changes anything.
func checkEngineConfig(cfg *gitdir.Config) error {
	return firstBadSetting(cfg, engineSettingRules)
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
	return parseMaxRollbacks(v)
}

func parseMaxRollbacks(v string) (int, error) {
	if strings.EqualFold(strings.TrimSpace(v), "off") {
		return -1, nil
	}
	if n, ok := gitdir.ParseInt(v); ok && n >= 1 && n <= workflow.MaxRollbacksLimit {
		return int(n), nil
	}
	return 0, &gitdir.UnsupportedError{Reason: fmt.Sprintf("bad config value '%s' for 'hegel.maxRollbacks': moves back a task may make, 1 to %d, or off", v, workflow.MaxRollbacksLimit)}
}
