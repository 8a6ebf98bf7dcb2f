package main

// The history rows: git hegel log and stats over 100,000 history entries,
// and the cost of adding an entry with 100,000 entries stored against 10.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// benchHistory is how many entries the big history holds.
const benchHistory = 100000

// historyDays is how many days (ending yesterday, UTC) the entries are
// spread over: 274 a day, about 1,900 in the last week.
const historyDays = 365

// fillHistory stores n history entries in dir's refs/hegel/history, in the
// layout docs/storage.md documents (version, entries/<Y>/<M>/<D>/<id>.json),
// as one commit written by git fast-import, spread evenly over the
// historyDays days before today.
func (b *bench) fillHistory(dir string, n int) error {
	t0 := time.Now()
	today := time.Now().UTC().Truncate(24 * time.Hour)
	first := today.AddDate(0, 0, -historyDays)
	span := today.Sub(first)
	var in strings.Builder
	fmt.Fprintf(&in, "commit refs/hegel/history\ncommitter Bench <bench@example.com> %d +0000\ndata <<EOF\nbench: %d entries\nEOF\n", today.Unix(), n)
	in.WriteString("M 100644 inline version\ndata 2\n1\n\n")
	workflows := []string{"minimal", "execution", "research", "pipeline"}
	statuses := []string{"completed", "completed", "completed", "aborted", "failed", "rolled_back"}
	for i := 0; i < n; i++ {
		start := first.Add(time.Duration(int64(span) / int64(n) * int64(i))).Truncate(time.Second)
		d := time.Duration(5+i%115) * time.Minute
		id := start.Format("20060102T150405Z") + fmt.Sprintf("-%08x", i)
		e := map[string]any{
			"id": id, "task": fmt.Sprintf("task-%06d", i), "workflow": workflows[i%len(workflows)], "mode": "m",
			"status": statuses[i%len(statuses)], "started_at": start, "ended_at": start.Add(d), "duration_ms": d.Milliseconds(),
			"nodes_completed": []string{"spec", "plan"}, "nodes_failed": []string{}, "nodes_skipped": []string{},
			"attempts": 2, "rollbacks": 0, "worktree": "/work/repo", "user": "Bench",
			"start": map[string]string{"branch": "main", "head": strings.Repeat("a", 40)},
			"end":   map[string]string{"branch": "main", "head": strings.Repeat("b", 40)},
			"nodes": map[string]any{"spec": map[string]any{"time_ms": d.Milliseconds() / 2, "visits": 1, "attempts": 1},
				"plan": map[string]any{"time_ms": d.Milliseconds() / 2, "visits": 1, "attempts": 1}},
		}
		js, err := json.Marshal(e)
		if err != nil {
			return err
		}
		fmt.Fprintf(&in, "M 100644 inline entries/%s/%s.json\ndata %d\n%s\n", start.Format("2006/01/02"), id, len(js), js)
	}
	in.WriteString("done\n")
	if err := b.gitStdin(dir, in.String(), "fast-import", "--quiet", "--done"); err != nil {
		return err
	}
	b.logf("  stored %d history entries in %v", n, time.Since(t0).Round(time.Millisecond))
	return nil
}

// historyRepo makes an empty repository for the history scenario, with
// the automatic cleanup off (it would remove most of the entries) and no
// checkpoints (not what is timed).
func (b *bench) historyRepo(name string, entries int) (string, error) {
	dir := filepath.Join(b.work, name)
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"}, {"commit", "-q", "--allow-empty", "-m", "init"},
		{"config", "hegel.autoCleanup", "false"}, {"config", "hegel.checkpoints", "off"},
	} {
		if _, err := b.git(dir, args...); err != nil {
			return "", err
		}
	}
	if err := b.fillHistory(dir, entries); err != nil {
		return "", err
	}
	return dir, nil
}

// runHistory times git hegel log -n 20, log --since 1.week.ago and stats
// for yesterday over 100,000 entries, and adding an entry (abort of a run
// just started) with 100,000 entries stored against 10.
func runHistory(b *bench) ([]row, error) {
	big, err := b.historyRepo("history-100k", benchHistory)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(big)
	small, err := b.historyRepo("history-10", 10)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(small)
	// Check what is read.
	out, err := b.hegel(big, "log", "-n", "20")
	if err != nil {
		return nil, err
	}
	// Twenty entries under the header row.
	if got := strings.Count(out, "\n"); got != 21 {
		return nil, fmt.Errorf("git hegel log -n 20 printed %d lines, want a header and 20 entries", got)
	}
	yesterday := time.Now().UTC().AddDate(0, 0, -1).Format("2006-01-02")
	out, err = b.hegel(big, "stats", "--date", yesterday, "--json")
	if err != nil {
		return nil, err
	}
	if !strings.Contains(out, `"totalWorkflows": 27`) {
		return nil, fmt.Errorf("git hegel stats --date %s counts no ~274 runs: %.300s", yesterday, out)
	}
	out, err = b.hegel(big, "log", "--since", "1.week.ago")
	if err != nil {
		return nil, err
	}
	week := strings.Count(out, "\n")
	b.settle()
	// The cold rows remove the caches of past days first: stats both the
	// statistics and the entries log keeps (which stats would otherwise
	// read yesterday's entries from), log the entries. The cold log
	// writes the entries again, the cold stats the statistics, so the
	// next round's warm rows are warm.
	cache := filepath.Join(big, ".git", "hegel", "history-days")
	entries := filepath.Join(big, ".git", "hegel", "history-entries")
	round := []step{
		timed("log -n 20", big, hegelCmd("log", "-n", "20")...),
		timed("log --since 1.week.ago", big, hegelCmd("log", "--since", "1.week.ago")...),
		timed("stats --date yesterday", big, hegelCmd("stats", "--date", yesterday)...),
		setup(big, "rm", "-rf", cache, entries),
		timed("stats --date yesterday (cold cache)", big, hegelCmd("stats", "--date", yesterday)...),
		setup(big, "rm", "-rf", entries),
		timed("log --since 1.week.ago (cold cache)", big, hegelCmd("log", "--since", "1.week.ago")...),
		timed("git hegel version", big, hegelVersion...),
		setup(small, "git", "hegel", "start", "minimal", "--task", "add"),
		timed("abort (10 entries)", small, hegelCmd("abort")...),
		setup(big, "git", "hegel", "start", "minimal", "--task", "add"),
		timed("abort (100,000 entries)", big, hegelCmd("abort")...),
	}
	// Not rotated: the cold rows follow the removal of the caches, each
	// abort the start before it.
	ss, err := b.measure(round, b.runs, measureOpts{})
	if err != nil {
		return nil, err
	}
	l := "100k entries"
	b.keep("history", l, ss...)
	return []row{
		absRow("log -n 20 over 100,000 entries", l, ss[0], 100*time.Millisecond),
		absRow(fmt.Sprintf("log --since 1.week.ago over 100,000 entries (%d listed)", week), l, ss[1], 100*time.Millisecond),
		absRow("log --since 1.week.ago over 100,000 entries, cold cache", l, ss[4], 100*time.Millisecond),
		absRow("stats for one day over 100,000 entries", l, ss[2], 200*time.Millisecond),
		absRow("stats for one day over 100,000 entries, cold cache", l, ss[3], 200*time.Millisecond),
		timeRow("log -n 20 vs git hegel version", l, ss[0], ss[5], 0),
		sizeRow("adding an entry (abort) with 100,000 entries vs 10", "100k/10 entries", ss[7], ss[6], 1.10),
	}, nil
}
