package refs

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
)

// The multi-process test re-executes the test binary with -test.run
// selecting TestRefsWorkerProcess and GITHEGEL_REFS_WORKER set. (A
// -test.run re-exec rather than TestMain, so this file does not claim the
// package's only TestMain.)
const (
	refsWorkerEnv   = "GITHEGEL_REFS_WORKER" // "incr" or "read"
	refsWorkerDir   = "GITHEGEL_REFS_DIR"    // the git dir
	refsWorkerName  = "GITHEGEL_REFS_NAME"   // the ref
	refsWorkerCount = "GITHEGEL_REFS_COUNT"  // increments per incr worker
	refsWorkerGo    = "GITHEGEL_REFS_GO"     // file whose creation starts the workers
	refsWorkerStop  = "GITHEGEL_REFS_STOP"   // file whose creation stops the reader
	refsWorkerOut   = "REFSWORKER "          // prefix of the worker's result line
)

// TestRefsWorkerProcess is not a test: it is the body of the worker
// processes TestFileRefsProcesses starts.
func TestRefsWorkerProcess(t *testing.T) {
	mode := os.Getenv(refsWorkerEnv)
	if mode == "" {
		t.Skip("helper process for TestFileRefsProcesses")
	}
	gitDir, name := os.Getenv(refsWorkerDir), plumbing.ReferenceName(os.Getenv(refsWorkerName))
	r := &Files{fs: osfs.New(gitDir, osfs.WithBoundOS()), lockTimeout: 20 * time.Second}
	exists := func(p string) func() bool {
		return func() bool { _, err := os.Stat(p); return err == nil }
	}

	// Wait for the start signal so all workers really run at once.
	start, deadline := exists(os.Getenv(refsWorkerGo)), time.Now().Add(30*time.Second)
	for !start() {
		if time.Now().After(deadline) {
			t.Fatal("no start signal")
		}
		time.Sleep(time.Millisecond)
	}

	switch mode {
	case "incr":
		count, err := strconv.Atoi(os.Getenv(refsWorkerCount))
		if err != nil {
			t.Fatal(err)
		}
		ok, conflicts := 0, 0
		for range count {
			c, err := refsIncrement(r, name)
			conflicts += c
			if err != nil {
				fmt.Printf("%sok=%d conflicts=%d error=%q\n", refsWorkerOut, ok, conflicts, err)
				t.Fatal(err)
			}
			ok++
		}
		fmt.Printf("%sok=%d conflicts=%d\n", refsWorkerOut, ok, conflicts)
	case "read":
		rawPath := filepath.Join(gitDir, filepath.FromSlash(string(name)))
		reads, problems := refsWatch(r, name, rawPath, exists(os.Getenv(refsWorkerStop)))
		fmt.Printf("%sreads=%d problems=%d\n", refsWorkerOut, reads, len(problems))
		for _, p := range problems {
			fmt.Printf("%sproblem: %s\n", refsWorkerOut, p)
		}
		if len(problems) > 0 {
			t.Fatal("reader saw problems")
		}
	default:
		t.Fatalf("unknown worker mode %q", mode)
	}
}

type refsWorker struct {
	cmd    *exec.Cmd
	stdout bytes.Buffer
}

// result returns the worker's REFSWORKER lines.
func (w *refsWorker) result() []string {
	var lines []string
	for _, l := range strings.Split(w.stdout.String(), "\n") {
		if s, ok := strings.CutPrefix(l, refsWorkerOut); ok {
			lines = append(lines, s)
		}
	}
	return lines
}

// TestFileRefsProcesses runs 6 processes doing 40 compare-and-swap
// increments each on one on-disk ref, plus a reader process, all at once.
func TestFileRefsProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Skip("cannot find the test binary:", err)
	}
	const procs, each = 6, 40
	const name = "refs/hegel/procs/counter"
	gitDir := refsNewGitDir(t)
	signals := t.TempDir()
	goFile, stopFile := filepath.Join(signals, "go"), filepath.Join(signals, "stop")

	startWorker := func(mode string) *refsWorker {
		w := &refsWorker{}
		w.cmd = exec.Command(exe, "-test.run=^TestRefsWorkerProcess$", "-test.count=1", "-test.timeout=120s")
		w.cmd.Env = append(os.Environ(),
			refsWorkerEnv+"="+mode,
			refsWorkerDir+"="+gitDir,
			refsWorkerName+"="+name,
			refsWorkerCount+"="+strconv.Itoa(each),
			refsWorkerGo+"="+goFile,
			refsWorkerStop+"="+stopFile,
		)
		w.cmd.Stdout = &w.stdout
		w.cmd.Stderr = &w.stdout
		if err := w.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return w
	}
	reader := startWorker("read")
	var workers []*refsWorker
	for range procs {
		workers = append(workers, startWorker("incr"))
	}
	if err := os.WriteFile(goFile, nil, 0o666); err != nil {
		t.Fatal(err)
	}

	total, conflicts := 0, 0
	for i, w := range workers {
		err := w.cmd.Wait()
		lines := w.result()
		if err != nil || len(lines) != 1 {
			t.Errorf("worker %d: %v\n%s", i, err, w.stdout.String())
			continue
		}
		var ok, c int
		if _, err := fmt.Sscanf(lines[0], "ok=%d conflicts=%d", &ok, &c); err != nil {
			t.Errorf("worker %d: bad result %q: %v", i, lines[0], err)
			continue
		}
		total += ok
		conflicts += c
	}
	if err := os.WriteFile(stopFile, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	readerErr := reader.cmd.Wait()
	readerLines := reader.result()
	if readerErr != nil || len(readerLines) != 1 || !strings.HasSuffix(readerLines[0], "problems=0") {
		t.Errorf("reader: %v\n%s", readerErr, reader.stdout.String())
	}

	if total != procs*each {
		t.Fatalf("%d successful updates, want %d", total, procs*each)
	}
	r := &Files{fs: osfs.New(gitDir, osfs.WithBoundOS())}
	h, err := r.Read(name)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := refsCounterOf(h); n != procs*each {
		t.Fatalf("counter = %d after %d successful increments: updates were lost", n, procs*each)
	}
	if locks := refsLockFiles(t, r.fs); len(locks) != 0 {
		t.Fatalf("lock files left behind: %v", locks)
	}
	t.Logf("%d increments, %d conflicts retried; reader: %s", total, conflicts, strings.Join(readerLines, "; "))
}
