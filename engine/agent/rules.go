package agent

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/git-hegel/git-hegel/engine/text"
	"github.com/git-hegel/git-hegel/engine/workflow"
)

// Guard rules: per-node checks (hegel's five types) that catch an agent
// going in circles or skipping work. They are checked at `next` (a
// violation blocks the transition unless forced) and, except
// require_commits, on each agent event (the hook tells the agent to stop
// and reconsider).
//
//   - require_commits {lookback_phases}: at least one commit on the branch
//     during the last N phases, the current one included (999: the run).
//   - repeated_command {pattern, threshold, window}: threshold or more
//     matching shell commands in the last window seconds of the phase.
//   - repeated_file_edit {path_pattern, threshold, window}: the same for
//     file edits.
//   - phase_timeout {max_duration}: the phase has run longer than that.
//   - token_budget {max_tokens}: the phase used more tokens (in + out).

// Violation is a rule found broken.
type Violation struct {
	Rule    workflow.Rule
	Node    string
	Summary string  // what was observed, one line
	Comply  string  // how to comply, one line
	Recent  []Event // the events that caused it, oldest first (at most 5)
	// Matched is how many events caused it; Recent shows the last of them.
	Matched int
}

// RuleInput is what the rules are judged on.
type RuleInput struct {
	Node       string
	Now        time.Time
	PhaseStart time.Time
	// Events are the phase's events, oldest first (earlier ones are
	// ignored).
	Events []Event
	// ExtraTokens are tokens counted elsewhere (folded events the caller
	// summed without passing them).
	ExtraTokens int64
	// LookbackStart returns when the phase n phases back (1: this one)
	// started; CommitsSince counts the branch's commits since then.
	// Without CommitsSince, require_commits is not checked.
	LookbackStart func(n int) time.Time
	CommitsSince  func(t time.Time) (int, error)
}

// maxRecent is how many causing events a violation shows.
const maxRecent = 5

// CheckRules returns the violations of rules, in rule order. skip leaves
// out a rule type (nil: none).
func CheckRules(rules []workflow.Rule, in RuleInput, skip func(ruleType string) bool) ([]Violation, error) {
	var out []Violation
	for i := range rules {
		r := &rules[i]
		if skip != nil && skip(r.Type) {
			continue
		}
		v, err := checkRule(r, in)
		if err != nil {
			return nil, err
		}
		if v != nil {
			v.Rule, v.Node = *r, in.Node
			out = append(out, *v)
		}
	}
	return out, nil
}

func checkRule(r *workflow.Rule, in RuleInput) (*Violation, error) {
	switch r.Type {
	case workflow.RuleRequireCommits:
		if in.CommitsSince == nil {
			return nil, nil
		}
		since := in.PhaseStart
		if in.LookbackStart != nil {
			since = in.LookbackStart(r.LookbackPhases)
		}
		n, err := in.CommitsSince(since)
		if err != nil {
			return nil, err
		}
		if n > 0 {
			return nil, nil
		}
		span := "this phase"
		switch {
		case r.LookbackPhases >= workflow.AllCommits:
			span = "this run"
		case r.LookbackPhases > 1:
			span = fmt.Sprintf("the last %d phases", r.LookbackPhases)
		}
		return &Violation{
			Summary: fmt.Sprintf("no commit on the branch during %s (since %s)", span, since.UTC().Format("2006-01-02 15:04:05 UTC")),
			Comply:  "commit the work of this phase (git commit), then run the command again",
		}, nil
	case workflow.RuleRepeatedCommand, workflow.RuleRepeatedFileEdit:
		return checkRepeated(r, in), nil
	case workflow.RulePhaseTimeout:
		d := in.Now.Sub(in.PhaseStart)
		limit := time.Duration(r.MaxDuration) * time.Second
		if d <= limit {
			return nil, nil
		}
		return &Violation{
			Summary: fmt.Sprintf("the phase has run %s, longer than its %s limit", roundDuration(d), roundDuration(limit)),
			Comply:  "check whether the approach is working: narrow the goal, or ask for help, before going on",
		}, nil
	case workflow.RuleTokenBudget:
		total := in.ExtraTokens
		var recent []Event
		for i := range in.Events {
			ev := &in.Events[i]
			if ev.Time.Before(in.PhaseStart) || ev.Tokens() == 0 {
				continue
			}
			total += ev.Tokens()
			recent = append(recent, *ev)
		}
		if total <= r.MaxTokens {
			return nil, nil
		}
		return &Violation{
			Summary: fmt.Sprintf("the phase used %s tokens, over its budget of %s", groupDigits(total), groupDigits(r.MaxTokens)),
			Comply:  "summarise where the phase stands and split the remaining work into a smaller next step",
			Recent:  lastN(recent, maxRecent),
			Matched: len(recent),
		}, nil
	}
	return nil, nil
}

// checkRepeated counts matching events in the rule's window, which ends
// now and never reaches back past the phase's start.
func checkRepeated(r *workflow.Rule, in RuleInput) *Violation {
	from := in.Now.Add(-time.Duration(r.Window) * time.Second)
	if in.PhaseStart.After(from) {
		from = in.PhaseStart
	}
	re := r.Matcher()
	var hits []Event
	for i := range in.Events {
		ev := &in.Events[i]
		if ev.Time.Before(from) || ev.Time.After(in.Now) {
			continue
		}
		var subject string
		switch {
		case r.Type == workflow.RuleRepeatedCommand && ev.IsCommand() && !ev.IsHegel():
			subject = ev.Command
		case r.Type == workflow.RuleRepeatedFileEdit && ev.IsEdit():
			subject = ev.File
		default:
			continue
		}
		if re == nil || re.MatchString(subject) {
			hits = append(hits, *ev)
		}
	}
	if len(hits) < r.Threshold {
		return nil
	}
	what, pat, comply := "commands", r.Pattern, "read the last failure, write down what you expect to change, then change one thing before running it again"
	if r.Type == workflow.RuleRepeatedFileEdit {
		what, pat, comply = "file edits", r.PathPattern, "write down what the file must do (ideally as a failing test), then make one deliberate change"
	}
	match := ""
	if pat != "" {
		match = fmt.Sprintf(" matching %s", text.Quote(pat))
	}
	return &Violation{
		Summary: fmt.Sprintf("%d %s%s in the last %s (limit: fewer than %d)", len(hits), what, match, roundDuration(time.Duration(r.Window)*time.Second), r.Threshold),
		Comply:  comply,
		Recent:  lastN(hits, maxRecent),
		Matched: len(hits),
	}
}

// EventRule reports whether a rule type is checked on agent events.
func EventRule(ruleType string) bool { return ruleType != workflow.RuleRequireCommits }

// MaxWindow is the longest time back any of rules looks at events (0: the
// rules need no events).
func MaxWindow(rules []workflow.Rule) time.Duration {
	var w time.Duration
	for _, r := range rules {
		if r.Type == workflow.RuleRepeatedCommand || r.Type == workflow.RuleRepeatedFileEdit {
			w = max(w, time.Duration(r.Window)*time.Second)
		}
	}
	return w
}

// Describe is the violation as one line.
func (v *Violation) Describe() string {
	return fmt.Sprintf("guard rule %s of '%s': %s", v.Rule.Type, v.Node, v.Summary)
}

// recentHeading names the list of causing events, saying so when it
// shows only the last of them.
func (v *Violation) recentHeading(name string) string {
	if v.Matched > len(v.Recent) {
		return fmt.Sprintf("%s (the last %d of %d)", name, len(v.Recent), v.Matched)
	}
	return name
}

// RecentLines renders the causing events, one per line.
func (v *Violation) RecentLines() []string {
	var out []string
	for _, ev := range v.Recent {
		what := ev.Command
		switch {
		case v.Rule.Type == workflow.RuleRepeatedFileEdit:
			what = ev.File + " (" + ev.Tool + ")"
		case v.Rule.Type == workflow.RuleTokenBudget:
			what = fmt.Sprintf("%s in, %s out (%s)", groupDigits(ev.TokensIn), groupDigits(ev.TokensOut), ev.Hook)
		}
		out = append(out, ev.Time.UTC().Format("15:04:05")+"  "+oneLineText(what))
	}
	return out
}

// ViolationMessage is what an agent is told about violations on a hook.
func ViolationMessage(vs []Violation, wfName string) string {
	var b strings.Builder
	for i, v := range vs {
		if i > 0 {
			b.WriteString("\n\n")
		}
		fmt.Fprintf(&b, "git-hegel (workflow %s): %s.\nStop and reconsider: %s.", wfName, v.Describe(), v.Comply)
		if lines := v.RecentLines(); len(lines) > 0 {
			b.WriteString("\n" + v.recentHeading("Recent") + ":\n  " + strings.Join(lines, "\n  "))
		}
		if v.Rule.Type == workflow.RulePhaseTimeout || v.Rule.Type == workflow.RuleTokenBudget {
			fmt.Fprintf(&b, "\nIf the phase's work is done, move on with `git hegel next` (add `--force %s` if this rule still blocks it).", v.Rule.Type)
		}
	}
	return b.String()
}

// GuardError is returned when guard rules block a transition.
type GuardError struct {
	From       string
	Violations []Violation
}

func (e *GuardError) Error() string {
	v := e.Violations[0]
	msg := fmt.Sprintf("Cannot leave '%s': %s", e.From, v.Describe())
	if len(e.Violations) > 1 {
		msg += fmt.Sprintf(" (and %d more)", len(e.Violations)-1)
	}
	types := make([]string, 0, len(e.Violations))
	for _, x := range e.Violations {
		if !slices.Contains(types, x.Rule.Type) {
			types = append(types, x.Rule.Type)
		}
	}
	if len(types) == 1 {
		return msg + fmt.Sprintf(". To bypass it: git hegel next --force %s", types[0])
	}
	return msg + ". To bypass them: git hegel next --force"
}

// Details renders every violation with its causing events and how to
// comply, for a person at `next`.
func (e *GuardError) Details() string {
	var b strings.Builder
	for _, v := range e.Violations {
		fmt.Fprintf(&b, "%s\n", v.Describe())
		if lines := v.RecentLines(); len(lines) > 0 {
			fmt.Fprintf(&b, "  %s:\n", v.recentHeading("recent events"))
			for _, l := range lines {
				fmt.Fprintf(&b, "    %s\n", l)
			}
		}
		fmt.Fprintf(&b, "  to comply: %s\n", v.Comply)
		fmt.Fprintf(&b, "  to bypass (recorded in the task): git hegel next --force %s\n", v.Rule.Type)
	}
	return b.String()
}

func lastN(evs []Event, n int) []Event {
	if len(evs) > n {
		evs = evs[len(evs)-n:]
	}
	return slices.Clone(evs)
}

// roundDuration prints a duration in whole seconds: 2m0s, 1h30m0s.
func roundDuration(d time.Duration) string { return d.Round(time.Second).String() }

// groupDigits prints 12345 as 12,345.
func groupDigits(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func oneLineText(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 100 {
		return string(r[:100]) + "…"
	}
	return s
}
