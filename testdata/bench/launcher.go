package main

// The launcher: a small child process that starts every timed command.
//
// Linux folds the memory high-water mark of the process image a child
// replaces at exec into the child's ru_maxrss, and a child forked (or
// vforked) from the bench driver starts from the driver's image, which
// grows to tens of MiB while it generates repositories. Started from this
// small launcher instead, a command's peak RSS is its own (or the
// launcher's few MiB, whichever is larger). The launcher also times the
// command, so the pipe to the driver is outside the measurement.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime/debug"
	"strings"
	"time"
)

const launcherArg = "-internal-launcher"

type launchReq struct {
	Argv  []string `json:"argv"`
	Dir   string   `json:"dir"`
	Env   []string `json:"env"`
	Stdin string   `json:"stdin,omitempty"` // a file given as standard input
}

type launchResp struct {
	WallNS int64  `json:"wall_ns"`
	MaxRSS int64  `json:"max_rss_kib"`
	Err    string `json:"err,omitempty"`
}

// runLauncher serves requests, one JSON line each, until stdin closes.
func runLauncher() {
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	errFile, err := os.CreateTemp("", "bench-stderr-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	defer os.Remove(errFile.Name())
	// Keep this process small: its peak RSS is the floor of every
	// command's (see above).
	debug.SetGCPercent(10)
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(nil, 1<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var req launchReq
		var resp launchResp
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			resp.Err = err.Error()
		} else {
			resp = launch(req, devnull, errFile)
		}
		if err := out.Encode(resp); err != nil {
			os.Exit(2)
		}
	}
}

func launch(req launchReq, devnull, errFile *os.File) launchResp {
	if err := errFile.Truncate(0); err != nil {
		return launchResp{Err: err.Error()}
	}
	if _, err := errFile.Seek(0, io.SeekStart); err != nil {
		return launchResp{Err: err.Error()}
	}
	cmd := exec.Command(req.Argv[0], req.Argv[1:]...)
	cmd.Dir = req.Dir
	cmd.Env = req.Env
	if req.Stdin != "" {
		f, err := os.Open(req.Stdin)
		if err != nil {
			return launchResp{Err: err.Error()}
		}
		defer f.Close()
		cmd.Stdin = f // a file, not a pipe: nothing copied in the timed path
	}
	// Files, not pipes: no copying goroutine in the timed path.
	cmd.Stdout = devnull
	cmd.Stderr = errFile
	start := time.Now()
	err := cmd.Run()
	resp := launchResp{WallNS: int64(time.Since(start))}
	if err != nil {
		msg, _ := os.ReadFile(errFile.Name())
		resp.Err = fmt.Sprintf("%v: %s", err, strings.TrimSpace(string(msg)))
		return resp
	}
	resp.MaxRSS = maxRSS(cmd.ProcessState)
	return resp
}

// launcher is the driver's handle on its launcher process.
type launcher struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
}

func startLauncher() (*launcher, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, launcherArg)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &launcher{cmd: cmd, in: in, out: bufio.NewScanner(out)}, nil
}

func (l *launcher) run(req launchReq) (launchResp, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return launchResp{}, err
	}
	if _, err := l.in.Write(append(b, '\n')); err != nil {
		return launchResp{}, err
	}
	if !l.out.Scan() {
		if err := l.out.Err(); err != nil {
			return launchResp{}, err
		}
		return launchResp{}, io.ErrUnexpectedEOF
	}
	var resp launchResp
	err = json.Unmarshal(l.out.Bytes(), &resp)
	return resp, err
}

func (l *launcher) close() {
	l.in.Close()
	_ = l.cmd.Wait()
}
