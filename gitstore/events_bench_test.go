package gitstore

import (
	"fmt"
	"testing"
	"time"

	"github.com/git-hegel/git-hegel/engine/agent"
)

// BenchmarkFold10k folds a journal of 10,000 events into a task's ref:
// what the first transition after a long agent session pays (target: under
// 200 ms, docs/benchmarks.md).
func BenchmarkFold10k(b *testing.B) {
	r, dir := stashDiskRepo(b)
	r.Now = func() time.Time { return fixedNow }
	e := stashEngine(r, dir, r.Now)
	if _, err := e.Start("minimal", "", "t"); err != nil {
		b.Fatal(err)
	}
	evs := make([]agent.Event, 10000)
	for i := range evs {
		evs[i] = agent.Event{Time: fixedNow.Add(time.Duration(i) * time.Second), Kind: agent.EventPostTool,
			Hook: "PostToolUse", Agent: "claude", Session: "3f1c9a52-7d4e-4b8a-9c21-5e6f7a8b9c0d",
			Tool: "Bash", Action: agent.ActionCommand, Command: fmt.Sprintf("go test ./pkg%d/...", i%50), Task: "t"}
	}
	s := r.Events()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		if err := s.Record(evs...); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := s.Fold(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkJournalTail reads the last two minutes of a 10,000-event
// journal, what the hook does on every call.
func BenchmarkJournalTail(b *testing.B) {
	r, _ := stashDiskRepo(b)
	j := r.Journal()
	for i := 0; i < 10000; i++ {
		if err := j.Append(agent.Event{Time: fixedNow.Add(time.Duration(i) * 3 * time.Second), Kind: agent.EventPostTool,
			Tool: "Bash", Action: agent.ActionCommand, Command: "go test", Task: "t"}); err != nil {
			b.Fatal(err)
		}
	}
	since := fixedNow.Add(10000*3*time.Second - 2*time.Minute)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		evs, err := j.Tail(since)
		if err != nil || len(evs) != 40 {
			b.Fatalf("%d events, %v", len(evs), err)
		}
	}
}
