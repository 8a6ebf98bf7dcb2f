package main

import (
	"fmt"
	"net"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// cmdGitServer serves the repositories under a directory with git's own
// servers, for the scripts that sync against real servers:
//
//	gitserver http <root> <user> <password>   # sets HTTPURL
//	gitserver daemon <root>                   # sets DAEMONURL
//
// http is git http-backend (smart HTTP) run through net/http/cgi behind
// basic authentication; daemon is git daemon (git://) with receive-pack
// enabled. Both stop when the script ends. Scripts skip themselves where
// this git installation lacks a server, with the conditions
// [githttpbackend] and [gitdaemon] (gitServerCondition).
func cmdGitServer(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: gitserver http <root> <user> <password> | gitserver daemon <root>")
	}
	root := ts.MkAbs(args[1])
	if err := os.MkdirAll(root, 0o755); err != nil {
		ts.Fatalf("%v", err)
	}
	git, err := exec.LookPath("git")
	if err != nil {
		ts.Fatalf("git not installed")
	}
	switch args[0] {
	case "http":
		if len(args) != 4 {
			ts.Fatalf("usage: gitserver http <root> <user> <password>")
		}
		user, password := args[2], args[3]
		backend := &cgi.Handler{Path: git, Args: []string{"http-backend"}, Dir: root,
			Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1",
				"HOME=" + ts.Getenv("HOME"), "GIT_CONFIG_GLOBAL=" + ts.Getenv("GIT_CONFIG_GLOBAL")}}
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if u, p, ok := r.BasicAuth(); !ok || u != user || p != password {
				w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
				http.Error(w, "authentication required", http.StatusUnauthorized)
				return
			}
			r.Header.Set("REMOTE_USER", user)
			backend.ServeHTTP(w, r)
		}))
		ts.Defer(srv.Close)
		ts.Setenv("HTTPURL", srv.URL)
	case "daemon":
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			ts.Fatalf("%v", err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		// git-daemon itself, not the git wrapper: killing the wrapper
		// would leave the daemon running.
		out, err := exec.Command(git, "--exec-path").Output()
		if err != nil {
			ts.Fatalf("git --exec-path: %v", err)
		}
		cmd := exec.Command(filepath.Join(strings.TrimSpace(string(out)), "git-daemon"), "--reuseaddr", "--listen=127.0.0.1", fmt.Sprintf("--port=%d", port),
			"--base-path="+root, "--export-all", "--enable=receive-pack", "--informative-errors", root)
		cmd.Env = append(os.Environ(), "HOME="+ts.Getenv("HOME"), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+ts.Getenv("GIT_CONFIG_GLOBAL"))
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			ts.Fatalf("git daemon: %v", err)
		}
		ts.Defer(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		})
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		deadline := time.Now().Add(10 * time.Second)
		for {
			c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
			if err == nil {
				c.Close()
				break
			}
			if time.Now().After(deadline) {
				ts.Fatalf("git daemon did not start listening on %s: %v", addr, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
		ts.Setenv("DAEMONURL", "git://"+addr)
	default:
		ts.Fatalf("gitserver: unknown server %q (http, daemon)", args[0])
	}
}

// gitServerCondition answers [githttpbackend] and [gitdaemon]: whether
// this git installation has the server.
func gitServerCondition(cond string) (bool, error) {
	var prog string
	switch cond {
	case "githttpbackend":
		prog = "git-http-backend"
	case "gitdaemon":
		prog = "git-daemon"
	default:
		return false, fmt.Errorf("unknown condition %q", cond)
	}
	out, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		return false, nil
	}
	_, err = os.Stat(filepath.Join(strings.TrimSpace(string(out)), prog))
	return err == nil, nil
}
