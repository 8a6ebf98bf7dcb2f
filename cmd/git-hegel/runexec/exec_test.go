//go:build unix

package runexec

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/git-hegel/git-hegel/engine"
)

func newExec(t *testing.T) *Executor {
	return &Executor{Dir: t.TempDir(), Env: os.Environ(), Grace: 300 * time.Millisecond}
}

func TestRunOutputStdinEnvFiles(t *testing.T) {
	x := newExec(t)
	var out, errOut bytes.Buffer
	res := x.Run(context.Background(), &engine.Process{
		Command:  `cat; echo "task=$HEGEL_TASK"; cat "$HEGEL_RESULTS_DIR/plan"; pwd; echo oops >&2; exit 3`,
		Stdin:    []byte("the prompt\n"),
		Env:      []string{"HEGEL_TASK=t1"},
		Files:    map[string][]byte{"plan": []byte("the plan\n")},
		FilesEnv: "HEGEL_RESULTS_DIR",
		Stdout:   &out, Stderr: &errOut,
	})
	if res.Exit != 3 || res.Err != nil || res.Cancelled || res.Signal != "" {
		t.Fatalf("result %+v", res)
	}
	want := "the prompt\ntask=t1\nthe plan\n" + x.Dir + "\n"
	if got := out.String(); got != want {
		t.Errorf("stdout %q, want %q", got, want)
	}
	if errOut.String() != "oops\n" {
		t.Errorf("stderr %q", errOut.String())
	}
}

// pidsOf starts nothing: it reads the pids a script wrote to file.
func pidsOf(t *testing.T, file string) []int {
	t.Helper()
	b, _ := os.ReadFile(file)
	var out []int
	for _, f := range strings.Fields(string(b)) {
		n, err := strconv.Atoi(f)
		if err == nil {
			out = append(out, n)
		}
	}
	return out
}

// alive reports a process that runs: a zombie waiting for init does not.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) == 0 || f[0] != "Z"
}

// waitFile waits until the script has written its pids.
func waitFile(t *testing.T, file string, n int) {
	t.Helper()
	for i := 0; i < 500; i++ {
		if len(pidsOf(t, file)) >= n {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s never got %d pids", file, n)
}

// Cancelling stops the whole process group with SIGTERM: the shell and
// the background process it started.
func TestCancelStopsTheGroup(t *testing.T) {
	x := newExec(t)
	pids := filepath.Join(x.Dir, "pids")
	ctx, cancel := context.WithCancel(context.Background())
	go func() { waitFile(t, pids, 2); cancel() }()
	start := time.Now()
	res := x.Run(ctx, &engine.Process{Command: `sleep 30 & echo $! >> pids; echo $$ >> pids; wait`})
	if !res.Cancelled || res.Killed || res.Signal != "SIGTERM" {
		t.Errorf("result %+v", res)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %s", d)
	}
	for _, p := range pidsOf(t, pids) {
		if alive(p) {
			t.Errorf("process %d still runs", p)
		}
	}
}

// A group that ignores SIGTERM is killed after the grace period.
func TestCancelKillsWhatIgnoresTerm(t *testing.T) {
	x := newExec(t)
	pids := filepath.Join(x.Dir, "pids")
	ctx, cancel := context.WithCancel(context.Background())
	go func() { waitFile(t, pids, 1); cancel() }()
	start := time.Now()
	res := x.Run(ctx, &engine.Process{Command: `trap '' TERM; echo $$ > pids; sleep 30 & wait; wait`})
	d := time.Since(start)
	if !res.Cancelled || !res.Killed {
		t.Errorf("result %+v", res)
	}
	if d < x.Grace || d > x.Grace+2*time.Second {
		t.Errorf("took %s with a grace of %s", d, x.Grace)
	}
	for _, p := range pidsOf(t, pids) {
		if alive(p) {
			t.Errorf("process %d still runs", p)
		}
	}
}

func TestTimeout(t *testing.T) {
	x := newExec(t)
	res := x.Run(context.Background(), &engine.Process{Command: "sleep 30", Timeout: 100 * time.Millisecond})
	if !res.TimedOut || res.Cancelled || res.OK() {
		t.Errorf("result %+v", res)
	}
}

// A background process left holding the output does not hold the run up
// for long after the step exits, and is left running.
func TestLeftoverDoesNotHang(t *testing.T) {
	x := newExec(t)
	var out bytes.Buffer
	start := time.Now()
	res := x.Run(context.Background(), &engine.Process{Command: `echo hi; (sleep 5; echo late) & echo $! > bg`, Stdout: &out})
	if d := time.Since(start); d > pipeWait+time.Second {
		t.Errorf("took %s", d)
	}
	if res.Exit != 0 || !strings.HasPrefix(out.String(), "hi\n") {
		t.Errorf("result %+v, output %q", res, out.String())
	}
	for _, p := range pidsOf(t, filepath.Join(x.Dir, "bg")) {
		syscall.Kill(p, syscall.SIGKILL)
	}
}

func TestCancelledBeforeStart(t *testing.T) {
	x := newExec(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := x.Run(ctx, &engine.Process{Command: "touch ran"})
	if !res.Cancelled {
		t.Errorf("result %+v", res)
	}
	if _, err := os.Stat(filepath.Join(x.Dir, "ran")); err == nil {
		t.Error("it ran")
	}
}
