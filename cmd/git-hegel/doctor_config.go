package main

import (
	"sort"
	"strings"

	"github.com/git-hegel/git-hegel/engine/text"
	"github.com/git-hegel/git-hegel/gitstore"
)

// configFixNote says why --fix leaves a setting alone: the configuration
// is the user's, and only they know the value they meant.
const configFixNote = "--fix does not change the configuration: edit it with 'git config'"

// configProblems checks the hegel.* settings with the rules the commands
// refuse a value by (settingRules, engineSettingRules): one problem per
// bad value, naming where git says it is set, and one note per key
// git-hegel does not read, naming the closest one it does.
func configProblems(c *cmdCtx, r *gitstore.Repo, fix bool) []doctorProblem {
	cfg := r.Config()
	var ps []doctorProblem
	if c.displayConfigErr != nil {
		p := doctorProblem{Kind: "config", Where: "configuration", Problem: oneLineErr(c.displayConfigErr) + "; " + configFixNote}
		if fix {
			p.FixError = "left as it is: " + configFixNote
		}
		ps = append(ps, p)
	}
	rules := append(append([]settingRule{}, settingRules...), engineSettingRules...)
	rules = append(rules, promptRule)
	for _, sub := range cfg.Subsections("hegel") {
		if name, ok := strings.CutPrefix(sub, "adapter."); ok {
			rules = append(rules, adapterTimeoutRule(name))
		}
	}
	for _, s := range rules {
		var origins map[string]string
		for _, v := range s.values(cfg) {
			if s.check(v) == nil {
				continue
			}
			if origins == nil {
				origins = r.ConfigOrigins(s.key)
			}
			value := v
			effect := s.effect
			if effect == "" {
				effect = "every command that reads it stops"
			}
			p := doctorProblem{Kind: "config", Where: text.OneLine(s.key), Value: &value, Origin: origins[v], Accepts: s.accepts,
				Problem: "'" + text.OneLine(v) + "'" + fromOrigin(origins[v]) + " is not accepted: it takes " + s.accepts +
					"; " + effect + "; " + configFixNote}
			if fix {
				p.FixError = "left as it is: " + configFixNote
			}
			ps = append(ps, p)
		}
	}
	seen := map[string]bool{}
	note := func(key string) {
		if seen[strings.ToLower(key)] || knownSetting(key) {
			return
		}
		seen[strings.ToLower(key)] = true
		var origin string
		for _, o := range r.ConfigOrigins(key) {
			origin = o
		}
		msg := "git-hegel reads no such key" + fromOrigin(origin)
		if k := closestSetting(key); k != "" {
			msg += "; the closest it reads is " + k
		}
		ps = append(ps, doctorProblem{Kind: "note", Where: text.OneLine(key), Origin: origin, Note: true, Problem: msg})
	}
	for _, o := range cfg.Options("hegel", "") {
		note("hegel." + o[0])
	}
	for _, sub := range cfg.Subsections("hegel") {
		for _, o := range cfg.Options("hegel", sub) {
			note("hegel." + sub + "." + o[0])
		}
	}
	return ps
}

func fromOrigin(o string) string {
	if o == "" {
		return ""
	}
	return " (from " + text.OneLine(o) + ")"
}

// settingKeys is every hegel.* key git-hegel reads, as the documentation
// spells it (hegel.adapter.<name>.* aside).
func settingKeys() []string {
	var keys []string
	for _, s := range append(append([]settingRule{}, settingRules...), engineSettingRules...) {
		keys = append(keys, s.key)
	}
	keys = append(keys, promptRule.key)
	keys = append(keys, knownSettings...)
	sort.Strings(keys)
	return keys
}

// knownSetting reports a key git-hegel reads (any case, as git's keys).
func knownSetting(key string) bool {
	low := strings.ToLower(key)
	if rest, ok := strings.CutPrefix(low, "hegel.adapter."); ok {
		if i := strings.LastIndex(rest, "."); i > 0 {
			return rest[i+1:] == "command" || rest[i+1:] == "timeout"
		}
	}
	for _, k := range settingKeys() {
		if strings.ToLower(k) == low {
			return true
		}
	}
	return false
}

// closestSetting is the known key nearest to key ("" when none is near),
// by the distance a mistyped command is measured with (similar.go).
func closestSetting(key string) string {
	best, out := similarityFloor+1, ""
	for _, k := range settingKeys() {
		if d := editDistance(strings.ToLower(key), strings.ToLower(k)); d < best {
			best, out = d, k
		}
	}
	return out
}
