package main

// The task rows: git hegel tasks with 1,000 tasks (500 of them
// archived), and status and next with those 1,000 tasks present against
// the same commands in a repository with none.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// benchTasks is how many tasks the tasks scenarios store, half archived.
const benchTasks = 1000

// fillTasks stores n tasks beside whatever dir has: n/2 open ones (parked:
// owned by no worktree, so they are nobody's active task) under
// refs/hegel/tasks/ and n/2 completed ones under refs/hegel/archive/, in
// the format gitstore/tasks.go and archive.go document, written in one git
// fast-import run (so their objects are packed, as after git gc). The
// workflow blob is the loop workflow's, taken from a task git-hegel
// started.
func (b *bench) fillTasks(dir string, n int) error {
	return b.fillTasksAt(dir, n, "refs/hegel/")
}

// fillTasksAt is fillTasks with the refs written below root instead of
// refs/hegel/ (refs/bench/ stores the same objects without the tasks).
func (b *bench) fillTasksAt(dir string, n int, root string) error {
	t0 := time.Now()
	if _, err := b.hegel(dir, "start", "loop", "--task", "bench-template"); err != nil {
		return err
	}
	wf, err := b.git(dir, "rev-parse", "refs/hegel/tasks/bench-template:workflow.yaml")
	if err != nil {
		return err
	}
	wf = strings.TrimSpace(wf)
	if _, err := b.hegel(dir, "abort"); err != nil {
		return err
	}
	base := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	var in strings.Builder
	for i := 0; i < n; i++ {
		at := base.Add(time.Duration(i) * time.Minute)
		st := map[string]any{
			"workflow": "loop", "mode": "loop", "workflow_id": at.Format(time.RFC3339),
			"started_at": at, "phase_start_time": at, "updated_at": at, "worktree": "", "attempt": 1,
			"rollback_history": []any{}, "priority": []string{"low", "normal", "high", "urgent"}[i%4],
		}
		ref := root + "tasks/"
		name := fmt.Sprintf("open-%04d", i)
		if i%2 == 1 {
			ref, name = root+"archive/", fmt.Sprintf("done-%04d", i)
			st["status"], st["current_node"], st["history"], st["ended_at"] = "completed", "done", []string{"a", "done"}, at
		} else {
			st["status"], st["current_node"], st["history"] = "active", "a", []string{"a"}
		}
		st["task"] = name
		js, err := json.MarshalIndent(st, "", "  ")
		if err != nil {
			return err
		}
		js = append(js, '\n')
		fmt.Fprintf(&in, "commit %s%s\ncommitter Bench <bench@example.com> %d +0000\ndata <<EOF\nbench: %s\nEOF\n", ref, name, at.Unix(), name)
		fmt.Fprintf(&in, "M 100644 inline version\ndata 2\n1\n\nM 100644 %s workflow.yaml\nM 100644 inline state.json\ndata %d\n%s\n", wf, len(js), js)
	}
	in.WriteString("done\n")
	if err := b.gitStdin(dir, in.String(), "fast-import", "--quiet", "--done"); err != nil {
		return err
	}
	b.logf("  stored %d tasks in %v", n, time.Since(t0).Round(time.Millisecond))
	return nil
}

// runTasks times git hegel tasks (the 500 open tasks) and git hegel tasks
// --archived (all 1,000) on the 1k repository, with the task caches warm
// (as after any listing) and cold (both removed: every state is read from
// the packed objects).
func runTasks(b *bench) ([]row, error) {
	spec := std(1000)
	dir, err := b.repo(spec)
	if err != nil {
		return nil, err
	}
	if err := b.resetHegel(dir); err != nil {
		return nil, err
	}
	if err := b.fillTasks(dir, benchTasks); err != nil {
		return nil, err
	}
	// Check what is listed, and warm the cache.
	out, err := b.hegel(dir, "tasks", "--archived", "--json")
	if err != nil {
		return nil, err
	}
	if got := strings.Count(out, `"task": "`); got != benchTasks+1 { // and the aborted template
		return nil, fmt.Errorf("git hegel tasks --archived lists %d tasks, want %d", got, benchTasks+1)
	}
	b.settle()
	caches := []string{filepath.Join(dir, ".git", "hegel", "task-cache"), filepath.Join(dir, ".git", "hegel", "task-list.json")}
	round := []step{
		timed("git hegel tasks", dir, hegelCmd("tasks")...),
		timed("git hegel tasks --archived", dir, hegelCmd("tasks", "--archived")...),
		timed("git rev-parse HEAD", dir, revParse...),
		setup(dir, "rm", "-rf", caches[0], caches[1]),
		timed("git hegel tasks --archived (cold cache)", dir, hegelCmd("tasks", "--archived")...),
	}
	ss, err := b.measure(round, b.runs, measureOpts{rotate: true})
	if err != nil {
		return nil, err
	}
	b.keep("tasks", spec.label(), ss...)
	if err := b.resetHegel(dir); err != nil {
		return nil, err
	}
	label := fmt.Sprintf(" (%d stored, %d archived)", benchTasks, benchTasks/2)
	return []row{
		absRow("tasks"+label, spec.label(), ss[0], 100*time.Millisecond),
		absRow("tasks --archived"+label, spec.label(), ss[1], 100*time.Millisecond),
		timeRow("tasks --archived, cold cache"+label+" vs warm", spec.label(), ss[3], ss[1], 0),
		timeRow("tasks"+label+" vs rev-parse", spec.label(), ss[0], ss[2], 0),
	}, nil
}

// runManyTasks times status and next in a repository holding 1,000 other
// tasks (500 archived) against the same commands in one holding none, in
// the same rounds: they must be unchanged (within 10%), and status
// within the bound against git hegel version. Both are copies of the 1k
// repository (cp -a, index refreshed) holding the same objects: the tasks'
// objects are imported into both, and only the crowded one keeps the refs,
// so the refs are the only difference (a pack more or less changes what
// next's checkpoint pays to look objects up).
func runManyTasks(b *bench) ([]row, error) {
	spec := std(1000)
	src, err := b.repo(spec)
	if err != nil {
		return nil, err
	}
	if err := b.resetHegel(src); err != nil {
		return nil, err
	}
	var dirs [2]string
	for i, name := range []string{"plain", "crowded"} {
		d := filepath.Join(b.work, "many-tasks-"+name+"-"+spec.key())
		if err := os.RemoveAll(d); err != nil {
			return nil, err
		}
		if out, err := exec.Command("cp", "-a", src, d).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("cp -a: %v: %s", err, out)
		}
		defer os.RemoveAll(d)
		// The copy's files have new inodes and change times: refresh the
		// index, as git status would, or every checkpoint rehashes them.
		if _, err := b.git(d, "update-index", "-q", "--refresh"); err != nil {
			return nil, err
		}
		root := "refs/hegel/"
		if i == 0 {
			root = "refs/bench/"
		}
		if err := b.fillTasksAt(d, benchTasks, root); err != nil {
			return nil, err
		}
		if i == 0 {
			refs, err := b.git(d, "for-each-ref", "--format=delete %(refname)", "refs/bench/")
			if err != nil {
				return nil, err
			}
			if err := b.gitStdin(d, refs, "update-ref", "--stdin"); err != nil {
				return nil, err
			}
		}
		if _, err := b.hegel(d, "start", "loop", "--task", "bench"); err != nil {
			return nil, err
		}
		dirs[i] = d
	}
	b.settle()
	round := []step{
		timed("status (no other task)", dirs[0], hegelCmd("status")...),
		timed("status (1,000 tasks)", dirs[1], hegelCmd("status")...),
		timed("next (no other task)", dirs[0], hegelCmd("next", "again")...),
		timed("next (1,000 tasks)", dirs[1], hegelCmd("next", "again")...),
		timed("git hegel version", dirs[1], hegelVersion...),
	}
	ss, err := b.measure(round, b.runs, measureOpts{rotate: true})
	if err != nil {
		return nil, err
	}
	b.keep("many-tasks", spec.label(), ss...)
	l := spec.label()
	return []row{
		sizeRow("status with 1,000 tasks vs none", l, ss[1], ss[0], 1.10),
		sizeRow("next with 1,000 tasks vs none", l, ss[3], ss[2], 1.10),
		timeRow("status with 1,000 tasks vs git hegel version", l, ss[1], ss[4], stateBound),
	}, nil
}
