package main

import (
	"fmt"
	"net"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/user"
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
//	gitserver ssh <root>                      # sets SSHCONFIG
//
// http is git http-backend (smart HTTP) run through net/http/cgi behind
// basic authentication; daemon is git daemon (git://) with receive-pack
// enabled; ssh is OpenSSH's sshd on 127.0.0.1 with its own host key,
// which accepts one key, named only in the ssh config file SSHCONFIG
// (hosts hegel-ssh, hegel-behind through ProxyJump, and hegel-nokey,
// whose key the server does not accept). All stop when the script ends.
// Scripts skip themselves where a server is missing, with the conditions
// [githttpbackend], [gitdaemon] and [sshd] (gitServerCondition).
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
	case "ssh":
		startSSHD(ts, root)
	default:
		ts.Fatalf("gitserver: unknown server %q (http, daemon, ssh)", args[0])
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
	case "sshd":
		for _, p := range []string{sshdPath, "ssh", "ssh-keygen"} {
			if _, err := exec.LookPath(p); err != nil {
				return false, nil
			}
		}
		return true, nil
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

const sshdPath = "/usr/sbin/sshd"

// startSSHD runs sshd for the script (see cmdGitServer) and writes the
// client's ssh config.
func startSSHD(ts *testscript.TestScript, root string) {
	dir := filepath.Join(root, ".ssh-test")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		ts.Fatalf("%v", err)
	}
	for _, k := range []string{"host", "user", "other"} {
		if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", filepath.Join(dir, k)).CombinedOutput(); err != nil {
			ts.Fatalf("ssh-keygen: %v: %s", err, out)
		}
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			ts.Fatalf("%v", err)
		}
		return strings.TrimSpace(string(b))
	}
	me, err := user.Current()
	if err != nil {
		ts.Fatalf("%v", err)
	}
	if os.Geteuid() == 0 {
		// sshd started as root separates privileges into this directory,
		// which the system creates at boot where sshd is a service.
		if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
			ts.Fatalf("sshd's privilege separation directory: %v", err)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		ts.Fatalf("%v", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	write := func(name, text string, perm os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), perm); err != nil {
			ts.Fatalf("%v", err)
		}
		return p
	}
	write("authorized_keys", read("user.pub")+"\n", 0o600)
	sshdConfig := write("sshd_config", fmt.Sprintf(`ListenAddress 127.0.0.1
Port %d
HostKey %s
AuthorizedKeysFile %s
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
PermitRootLogin prohibit-password
AllowTcpForwarding yes
StrictModes no
UsePAM no
PidFile none
`, port, filepath.Join(dir, "host"), filepath.Join(dir, "authorized_keys")), 0o600)
	hostKey := strings.Fields(read("host.pub"))
	write("known_hosts", fmt.Sprintf("[127.0.0.1]:%d %s %s\n", port, hostKey[0], hostKey[1]), 0o600)
	common := fmt.Sprintf(`  HostName 127.0.0.1
  Port %d
  User %s
  IdentitiesOnly yes
  UserKnownHostsFile %s
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking yes
  BatchMode yes
`, port, me.Username, filepath.Join(dir, "known_hosts"))
	cfg := write("config", "Host hegel-ssh\n"+common+"  IdentityFile "+filepath.Join(dir, "user")+"\n"+
		"Host hegel-behind\n"+common+"  IdentityFile "+filepath.Join(dir, "user")+"\n  ProxyJump hegel-ssh\n"+
		"Host hegel-nokey\n"+common+"  IdentityFile "+filepath.Join(dir, "other")+"\n", 0o600)

	cmd := exec.Command(sshdPath, "-f", sshdConfig, "-D", "-e")
	var log strings.Builder
	cmd.Stderr = &log
	if err := cmd.Start(); err != nil {
		ts.Fatalf("sshd: %v", err)
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
			ts.Fatalf("sshd did not start listening on %s: %v\n%s", addr, err, log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	ts.Setenv("SSHCONFIG", cfg)
}
