package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/git-hegel/git-hegel/cmd/git-hegel/web"
	"github.com/git-hegel/git-hegel/engine"
)

// `git hegel web`: the dashboard (package web) served on 127.0.0.1.

func webFlags(fs *pflag.FlagSet) {
	intFlag(fs, "port", "", 0, "listen on this port (default: a free one)")
	valueName(fs, "port", "N")
	fs.Bool("open", false, "open the address in the browser ($BROWSER, else xdg-open or open)")
	fs.Bool("no-auth", false, "serve without the access token (anyone on this machine can approve)")
}

func runWeb(c *cmdCtx, args []string) error {
	if err := c.wantArgs(args, 0, 0); err != nil {
		return err
	}
	port, _ := c.flags.GetInt("port")
	if port < 0 || port > 65535 {
		return usagef(c.name, "--port must be between 0 and 65535")
	}
	// Open the repository once now, so that a wrong directory fails
	// before anything listens.
	r, err := c.openRepo()
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return fmt.Errorf("cannot listen on 127.0.0.1:%d: %v", port, errors.Unwrap(err))
	}
	defer ln.Close()
	h, url, err := c.webHandler(ln.Addr().String(), r.WorkTree)
	if err != nil {
		return err
	}
	if c.boolFlag("no-auth") {
		c.warn("--no-auth: every program and user on this machine can read the tasks and approve or reject them")
	}
	fmt.Fprintf(c.Stdout, "Serving %s on %s\n", r.WorkTree, url)
	fmt.Fprintln(c.Stdout, "Press Ctrl-C to stop.")
	if c.boolFlag("open") {
		// The browser gets a private file that redirects to the address,
		// not the address: a command line is world-readable (/proc), and
		// the address carries the token.
		page, remove, err := redirectPage(url)
		if err == nil {
			defer remove()
			err = openBrowser(c.Getenv, page)
		}
		if err != nil {
			c.warn("could not open a browser (" + err.Error() + "); open the address above")
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Shutdown(shut)
	fmt.Fprintln(c.Stdout, "Stopped.")
	return nil
}

// webHandler builds the dashboard's handler for a server listening on
// addr (host:port), and the address to print (with the token).
func (c *cmdCtx) webHandler(addr, title string) (http.Handler, string, error) {
	noAuth := c.boolFlag("no-auth")
	token := ""
	if !noAuth {
		var err error
		if token, err = web.NewToken(); err != nil {
			return nil, "", err
		}
	}
	// One request at a time changes the repository, as one command line
	// would; pages are read in parallel.
	var writeMu sync.Mutex
	s, err := web.New(web.Options{
		Addr:   addr,
		Token:  token,
		NoAuth: noAuth,
		Now:    c.Now,
		Log:    c.Stderr,
		Title:  title,
		Open: func(warn func(string)) (*web.Repo, error) {
			rc := c.requestCtx(warn)
			r, err := rc.openRepo()
			if err != nil {
				return nil, err
			}
			e := rc.newEngine(r)
			checkpoints := func(task string) ([]*engine.Checkpoint, error) {
				defer rc.closeSnapshots() // the pack files it opened
				return rc.snapshots(r).Checkpoints(task)
			}
			actions := func(task string) ([]*engine.Action, error) {
				defer rc.closeSnapshots()
				_, acts, err := e.ListActions(task)
				return acts, err
			}
			newestUndo := func(task string) (*engine.ActionSnapshot, error) {
				defer rc.closeSnapshots()
				return e.NewestUndo(task)
			}
			undo := func(task string, o engine.UndoOptions) (*engine.UndoPlan, error) {
				defer rc.closeSnapshots()
				if _, err := e.RecoverUndo(); err != nil {
					return nil, err
				}
				p, err := e.PlanUndo(task, o)
				if err != nil {
					return nil, err
				}
				return p, e.Undo(p)
			}
			return &web.Repo{Engine: e, Git: r, Checkpoints: checkpoints, Actions: actions, NewestUndo: newestUndo, Undo: undo}, nil
		},
	})
	if err != nil {
		return nil, "", err
	}
	url := "http://" + addr + "/"
	if !noAuth {
		url += "?token=" + token
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			writeMu.Lock()
			defer writeMu.Unlock()
		}
		s.ServeHTTP(w, r)
	})
	return h, url, nil
}

// requestCtx is the command's context for one request: no standard
// input (nothing can be asked), and the warnings and notes the
// operations print go to the page (and the terminal).
func (c *cmdCtx) requestCtx(warn func(string)) *cmdCtx {
	env := *c.Env
	env.Stdin = strings.NewReader("")
	env.Terminal = func(io.Writer) bool { return false }
	env.Stdout = io.Discard
	env.Stderr = &lineWriter{fn: func(line string) {
		fmt.Fprintln(c.Stderr, line)
		warn(strings.TrimPrefix(line, "warning: "))
	}}
	// Flags of `git hegel web` mean nothing to the operations (--task,
	// --force, -y stay unset).
	fs := pflag.NewFlagSet("git hegel web", pflag.ContinueOnError)
	return &cmdCtx{Env: &env, name: "web", flags: fs}
}

// lineWriter hands each complete line written to it to fn.
type lineWriter struct {
	mu  sync.Mutex
	buf []byte
	fn  func(string)
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		w.fn(string(w.buf[:i]))
		w.buf = w.buf[i+1:]
	}
	return len(p), nil
}

// openBrowser opens url with $BROWSER (a colon-separated list of
// commands, tried in order, where %s stands for the address, as
// xdg-open and Python's webbrowser read it), or the system's opener.
func openBrowser(getenv func(string) string, url string) error {
	var cands [][]string
	for _, c := range strings.Split(getenv("BROWSER"), ":") {
		if f := strings.Fields(c); len(f) > 0 {
			cands = append(cands, f)
		}
	}
	if len(cands) == 0 {
		switch runtime.GOOS {
		case "darwin":
			cands = [][]string{{"open"}}
		case "windows":
			cands = [][]string{{"rundll32", "url.dll,FileProtocolHandler"}}
		default:
			cands = [][]string{{"xdg-open"}}
		}
	}
	var err error
	for _, c := range cands {
		args, placed := slices.Clone(c[1:]), false
		for i, a := range args {
			if strings.Contains(a, "%s") {
				args[i], placed = strings.ReplaceAll(a, "%s", url), true
			}
		}
		if !placed {
			args = append(args, url)
		}
		cmd := exec.Command(c[0], args...)
		if err = cmd.Start(); err == nil {
			go cmd.Wait()
			return nil
		}
	}
	return err
}
