package gitstore_test

// Adding a history entry should cost the same with 100,000 entries
// stored as with 10 (within 10%). BenchmarkAddHistory isolates
// AddHistory from the process around it: each iteration opens the
// repository afresh (as a command does) and adds one entry for today.
// The big history is written by git fast-import, one pack, in the layout
// docs/storage.md documents, as testdata/bench's history scenario does.
//
//	go test -run '^$' -bench BenchmarkAddHistory -benchtime=200x ./gitstore/

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/git-hegel/git-hegel/engine"
)

// benchHistoryRepo is a repository whose refs/hegel/history holds n
// entries spread over the 365 days before today.
func benchHistoryRepo(b *testing.B, n int) string {
	b.Helper()
	dir := benchDiskRepo(b)
	today := time.Now().UTC().Truncate(24 * time.Hour)
	first := today.AddDate(0, 0, -365)
	span := today.Sub(first)
	var in strings.Builder
	fmt.Fprintf(&in, "commit refs/hegel/history\ncommitter Bench <bench@example.com> %d +0000\ndata 6\nbench\nM 100644 inline version\ndata 2\n1\n\n", today.Unix())
	for i := 0; i < n; i++ {
		start := first.Add(time.Duration(int64(span) / int64(n) * int64(i))).Truncate(time.Second)
		id := start.Format("20060102T150405Z") + fmt.Sprintf("-%08x", i)
		js, err := json.Marshal(map[string]any{
			"id": id, "task": fmt.Sprintf("task-%06d", i), "workflow": "minimal", "mode": "m",
			"status": "completed", "started_at": start, "ended_at": start.Add(time.Hour), "duration_ms": 3600000,
			"nodes_completed": []string{"spec", "plan"}, "attempts": 1, "worktree": "/work/repo", "user": "Bench",
		})
		if err != nil {
			b.Fatal(err)
		}
		fmt.Fprintf(&in, "M 100644 inline entries/%s/%s.json\ndata %d\n%s\n", start.Format("2006/01/02"), id, len(js), js)
	}
	in.WriteString("done\n")
	benchGitStdin(b, dir, in.String(), "fast-import", "--quiet", "--done")
	return dir
}

func BenchmarkAddHistory(b *testing.B) {
	if testing.Short() {
		b.Skip("100,000 entries take seconds to write")
	}
	// Both repositories are built first, and flushed to disk, so the
	// writeback of the big pack does not slow the rounds that follow; the
	// rounds alternate, so the machine's load falls on both alike.
	dirs := map[int]string{10: benchHistoryRepo(b, 10), 100000: benchHistoryRepo(b, 100000)}
	benchGit(b, dirs[10], "-c", "core.fsync=none", "version") // a process start, settling the cache
	_ = exec.Command("sync").Run()
	now := time.Now().UTC()
	seq := 0
	for round := 0; round < 3; round++ {
		for _, n := range []int{10, 100000} {
			b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					r := benchOpen(b, dirs[n])
					seq++
					start := now.Add(time.Duration(seq) * time.Millisecond)
					st := &engine.State{Task: fmt.Sprintf("t%d", seq), Workflow: "minimal", WorkflowID: fmt.Sprintf("bench-%d", seq), StartedAt: start, Status: engine.StatusAborted}
					end := start.Add(time.Minute)
					st.EndedAt = &end
					e := engine.NewHistoryEntry(st, nil, end, &engine.GitInfo{Branch: "main"}, "Bench")
					if err := r.History().AddHistory(e); err != nil {
						b.Fatal(err)
					}
					r.Objects().Close()
				}
			})
		}
	}
}
