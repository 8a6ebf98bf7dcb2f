package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/git-hegel/git-hegel/engine/text"
	"github.com/git-hegel/git-hegel/gitstore"
)

// git hegel gc, and the cleanup ordinary commands run now and then, as git
// runs gc --auto (docs/history.md, "Retention").

// Defaults of the retention settings.
const (
	defaultRetentionDays       = 30
	defaultCleanupIntervalDays = 7
)

func gcFlags(fs *pflag.FlagSet) {
	intFlag(fs, "retention-days", "", -1, "remove what ended more than N days ago (default: git config hegel.retentionDays, else 30; 0 keeps everything)")
	valueName(fs, "retention-days", "N")
	fs.BoolP("dry-run", "n", false, "say what would be removed, remove nothing")
	jsonFlag(fs)
}

// retentionDays is --retention-days, else hegel.retentionDays.
func (c *cmdCtx) retentionDays(r *gitstore.Repo) (int, error) {
	n, _ := c.flags.GetInt("retention-days")
	if c.flags.Changed("retention-days") {
		if n < 0 {
			return 0, usagef("gc", "--retention-days must be 0 or more, not %d", n)
		}
		return n, nil
	}
	days := r.Config().Int("hegel", "retentiondays", defaultRetentionDays)
	if days < 0 {
		return 0, fmt.Errorf("hegel.retentionDays must be 0 or more, not %d (git config hegel.retentionDays 30)", days)
	}
	return int(days), nil
}

func runGC(c *cmdCtx, args []string) error {
	if err := c.wantArgs(args, 0, 0); err != nil {
		return err
	}
	r, err := c.openRepo()
	if err != nil {
		return err
	}
	days, err := c.retentionDays(r)
	if err != nil {
		return err
	}
	dry := c.boolFlag("dry-run")
	if days == 0 {
		if c.boolFlag("json") {
			return writeJSON(c.Stdout, gcJSON{Schema: c.jsonSchema(), DryRun: dry, Archived: []string{}, DeletedRecords: []string{}, Rerooted: []string{}, Kept: []string{}})
		}
		from := "git config hegel.retentionDays"
		if c.flags.Changed("retention-days") {
			from = "--retention-days"
		}
		fmt.Fprintf(c.Stdout, "Nothing removed: the retention is 0 days, which keeps everything (%s)\n", from)
		return nil
	}
	now := c.Now()
	rep, err := r.GC(gitstore.GCOptions{Before: now.Add(-time.Duration(days) * 24 * time.Hour), DryRun: dry})
	if !dry && rep != nil {
		_ = r.MarkCleanup(now)
	}
	if rep != nil {
		if c.boolFlag("json") {
			j := gcReportJSON(rep, days)
			j.Schema = c.jsonSchema()
			if jerr := writeJSON(c.Stdout, j); jerr != nil {
				return jerr
			}
		} else {
			printGC(c.Stdout, rep, days)
		}
	}
	return err
}

// printGC says what gc removed, one line a kind.
func printGC(w io.Writer, rep *gitstore.GCReport, days int) {
	verb := "Removed"
	if rep.DryRun {
		verb = "Would remove"
	}
	if rep.Empty() {
		fmt.Fprintf(w, "Nothing to remove: nothing ended more than %s ago\n", text.Plural(days, "day", "days"))
		return
	}
	if rep.HistoryEntries > 0 {
		fmt.Fprintf(w, "%s %s of runs that ended more than %s ago (the statistics of %s are kept)\n", verb,
			text.Plural(rep.HistoryEntries, "history entry", "history entries"), text.Plural(days, "day", "days"),
			text.Plural(rep.SummaryDays, "day", "days"))
	}
	if n := len(rep.Archived); n > 0 {
		line := fmt.Sprintf("%s %s: %s", verb, text.Plural(n, "archived task", "archived tasks"), strings.Join(rep.Archived, ", "))
		if k := len(rep.Checkpoints); k > 0 {
			line += fmt.Sprintf(" (and the checkpoints of %s)", text.Plural(k, "task", "tasks"))
		}
		fmt.Fprintln(w, line)
	}
	if rep.DroppedStashes > 0 {
		fmt.Fprintf(w, "%s %s\n", verb, text.Plural(rep.DroppedStashes, "dropped stash", "dropped stashes"))
	}
	if n := len(rep.Actions); n > 0 {
		fmt.Fprintf(w, "%s the agent-action snapshots of %s: %s\n", verb, text.Plural(n, "task", "tasks"), strings.Join(rep.Actions, ", "))
	}
	if n := len(rep.DeletedRecords); n > 0 {
		fmt.Fprintf(w, "%s the %s of deleted %s: %s\n", verb, plural(n, "record", "records"), plural(n, "task", "tasks"), strings.Join(rep.DeletedRecords, ", "))
	}
	if rep.DryRun {
		return
	}
	if len(rep.Rerooted) > 0 || rep.Reflogs > 0 {
		fmt.Fprintf(w, "Rewrote %s so that no commit reaches what was removed; removed or restarted %s\n",
			orNone(rep.Rerooted), text.Plural(rep.Reflogs, "reflog", "reflogs"))
	}
	if len(rep.Kept) > 0 {
		fmt.Fprintf(w, "Still reachable from %s: the remote keeps what was removed here, so git gc cannot reclaim it\n", strings.Join(rep.Kept, ", "))
	}
	fmt.Fprintln(w, "'git gc --prune=now' reclaims the space now; 'git gc' does in time")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "no chain"
	}
	return strings.Join(s, ", ")
}

type gcJSON struct {
	Schema         int      `json:"schema"`
	DryRun         bool     `json:"dry_run"`
	RetentionDays  int      `json:"retention_days"`
	Before         string   `json:"before,omitempty"`
	HistoryEntries int      `json:"history_entries"`
	SummaryDays    int      `json:"summary_days"`
	Archived       []string `json:"archived"`
	Checkpoints    []string `json:"checkpoints,omitempty"`
	Actions        []string `json:"actions,omitempty"`
	DroppedStashes int      `json:"dropped_stashes"`
	DeletedRecords []string `json:"deleted_records"`
	Rerooted       []string `json:"rerooted"`
	Reflogs        int      `json:"reflogs"`
	Kept           []string `json:"kept"`
}

func gcReportJSON(rep *gitstore.GCReport, days int) gcJSON {
	nonNil := func(s []string) []string {
		if s == nil {
			return []string{}
		}
		return s
	}
	return gcJSON{Schema: jsonSchemaVersion, DryRun: rep.DryRun, RetentionDays: days, Before: rep.Before.UTC().Format(time.RFC3339),
		HistoryEntries: rep.HistoryEntries, SummaryDays: rep.SummaryDays, Archived: nonNil(rep.Archived), Checkpoints: rep.Checkpoints, Actions: rep.Actions,
		DroppedStashes: rep.DroppedStashes, DeletedRecords: nonNil(rep.DeletedRecords), Rerooted: nonNil(rep.Rerooted),
		Reflogs: rep.Reflogs, Kept: nonNil(rep.Kept)}
}

// autoCleanupCommands are the commands after which the cleanup may run:
// those that end runs or drop stashes (git runs gc --auto after the
// commands that add objects). Reading commands never do.
var autoCleanupCommands = map[string]bool{
	"start": true, "next": true, "done": true, "abort": true, "reset": true,
	"approve": true, "rollback": true, "stash": true, "delete": true,
}

// autoCleanupStash are the stash verbs that add or drop stashes (list and
// show only read).
var autoCleanupStash = map[string]bool{"push": true, "pop": true, "drop": true, "clear": true}

// autoCleanup runs gc when hegel.cleanupIntervalDays have passed since the
// last one (hegel.autoCleanup, default true). Deciding costs one stat of
// the marker file; a cleanup that fails only warns: the command that
// triggered it succeeded.
func (c *cmdCtx) autoCleanup() {
	r := c.repo
	if r == nil || !autoCleanupCommands[c.name] || (c.name == "stash" && !autoCleanupStash[c.sub]) {
		return
	}
	cfg := r.Config()
	if !cfg.Bool("hegel", "autocleanup", true) {
		return
	}
	interval := cfg.Int("hegel", "cleanupintervaldays", defaultCleanupIntervalDays)
	days := cfg.Int("hegel", "retentiondays", defaultRetentionDays)
	if interval < 1 || days < 1 {
		return
	}
	now := c.Now()
	if !r.CleanupDue(now, time.Duration(interval)*24*time.Hour) {
		return
	}
	// Claim it first, so concurrent commands do not all clean up.
	if err := r.MarkCleanup(now); err != nil {
		return
	}
	rep, err := r.GC(gitstore.GCOptions{Before: now.Add(-time.Duration(days) * 24 * time.Hour)})
	if err != nil {
		c.warn("the automatic cleanup failed: " + oneLineErr(err) + "; run 'git hegel gc'")
		return
	}
	if rep.Empty() {
		return
	}
	var parts []string
	if rep.HistoryEntries > 0 {
		parts = append(parts, text.Plural(rep.HistoryEntries, "history entry", "history entries"))
	}
	if n := len(rep.Archived); n > 0 {
		parts = append(parts, text.Plural(n, "archived task", "archived tasks"))
	}
	if rep.DroppedStashes > 0 {
		parts = append(parts, text.Plural(rep.DroppedStashes, "dropped stash", "dropped stashes"))
	}
	if n := len(rep.DeletedRecords); n > 0 {
		parts = append(parts, text.Plural(n, "deleted-task record", "deleted-task records"))
	}
	fmt.Fprintf(c.Stderr, "Cleaned up what ended more than %s ago: %s (git hegel gc; git config hegel.autoCleanup false turns this off)\n",
		text.Plural(int(days), "day", "days"), strings.Join(parts, ", "))
}

func oneLineErr(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }
