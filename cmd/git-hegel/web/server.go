// Package web serves `git hegel web`: a dashboard of the repository's
// tasks, their timelines and workflow graphs, and the decisions at their
// gates, on 127.0.0.1 only. It is a presentation layer, like the command
// line: every page reads the refs through the engine and gitstore anew,
// and every action is the engine operation the matching command runs.
//
// Nothing here runs at package initialisation: templates are parsed by
// New, so other git-hegel commands do not pay for them.
package web

import (
	"bytes"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/engine/text"
	"github.com/git-hegel/git-hegel/gitstore"
)

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed static
var staticFiles embed.FS

// Repo is the repository as one request sees it, opened for that request
// so that every page shows the refs as they are now.
type Repo struct {
	Engine *engine.Engine
	Git    *gitstore.Repo
	// Checkpoints lists a task's checkpoints, oldest first.
	Checkpoints func(task string) ([]*engine.Checkpoint, error)
	// Actions lists a task's agent actions, oldest first (nil: none are
	// shown).
	Actions func(task string) ([]*engine.Action, error)
	// NewestUndo is the undo a redo of a task's agent actions would take
	// back (nil: none).
	NewestUndo func(task string) (*engine.ActionSnapshot, error)
	// Undo plans and carries out an undo (or redo) of a task's agent
	// actions, as git hegel undo -y does; the plan is returned when it
	// refuses too.
	Undo func(task string, o engine.UndoOptions) (*engine.UndoPlan, error)
}

// Options configure a Server.
type Options struct {
	// Open opens the repository for one request. warn receives the
	// warnings the request's operations print (shown on the page).
	Open func(warn func(string)) (*Repo, error)
	// Addr is the host:port the server listens on; requests must name it
	// (or localhost:port) in their Host header.
	Addr string
	// Token is the access token the printed URL carries; NoAuth turns the
	// check off.
	Token  string
	NoAuth bool
	// Now is the clock (tests fix it).
	Now func() time.Time
	// Log receives one line per refused request and per failed one.
	Log io.Writer
	// Title names the repository in page headers.
	Title string
}

// Server is the web UI's http.Handler.
type Server struct {
	o      Options
	tmpl   *template.Template
	mux    *http.ServeMux
	csrf   string
	port   string
	static http.Handler
	logMu  sync.Mutex
}

// NewToken returns a random token (256 bits, hex).
func NewToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// New parses the templates and returns the handler.
func New(o Options) (*Server, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	_, port, err := net.SplitHostPort(o.Addr)
	if err != nil {
		return nil, fmt.Errorf("bad listen address %q: %v", o.Addr, err)
	}
	if !o.NoAuth && len(o.Token) < 32 {
		return nil, errors.New("the access token is too short")
	}
	csrf, err := NewToken()
	if err != nil {
		return nil, err
	}
	s := &Server{o: o, csrf: csrf, port: port}
	if s.tmpl, err = parseTemplates(); err != nil {
		return nil, err
	}
	sub, err := fs.Sub(staticFiles, "static")
	if err != nil {
		return nil, err
	}
	s.static = http.StripPrefix("/static/", http.FileServer(http.FS(sub)))
	s.routes()
	return s, nil
}

func (s *Server) routes() {
	m := http.NewServeMux()
	m.HandleFunc("GET /{$}", s.page(s.board))
	m.HandleFunc("GET /task/{name}", s.page(s.task))
	m.HandleFunc("GET /task/{name}/workflow", s.page(s.taskWorkflow))
	m.HandleFunc("GET /task/{name}/artifact/{path...}", s.page(s.artifact))
	m.HandleFunc("POST /task/{name}/approve", s.action(s.approve))
	m.HandleFunc("POST /task/{name}/reject", s.action(s.reject))
	m.HandleFunc("POST /task/{name}/answer", s.action(s.answer))
	m.HandleFunc("POST /task/{name}/undo", s.action(s.undo))
	m.HandleFunc("GET /workflows", s.page(s.workflows))
	m.HandleFunc("GET /workflow/{name}", s.page(s.workflow))
	m.HandleFunc("GET /history", s.page(s.history))
	m.HandleFunc("GET /stats", s.page(s.stats))
	m.Handle("GET /static/", s.static)
	s.mux = m
}

// cookieName is per port: cookies are not kept apart by port, and two
// servers (two repositories) must not overwrite each other's token.
func (s *Server) cookieName(kind string) string { return "hegel-" + kind + "-" + s.port }

// ServeHTTP checks every request before it reaches a page: the Host
// header (DNS rebinding), the access token, and for writes the CSRF
// token and the Origin.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	if !s.hostAllowed(r.Host) {
		s.refuse(w, r, http.StatusMisdirectedRequest, "This server answers only to 127.0.0.1:"+s.port+" and localhost:"+s.port+" (Host header "+quoteHeader(r.Host)+" refused: DNS rebinding guard).")
		return
	}
	if !s.o.NoAuth {
		if tok := r.URL.Query().Get("token"); tok != "" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			if !s.tokenOK(tok) {
				s.refuse(w, r, http.StatusForbidden, "The access token in this address is not this server's. Open the address 'git hegel web' printed.")
				return
			}
			// Keep the token in a cookie and take it out of the address
			// (history, the Referer of links).
			http.SetCookie(w, &http.Cookie{Name: s.cookieName("token"), Value: tok, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
			q := r.URL.Query()
			q.Del("token")
			u := url.URL{Path: r.URL.Path, RawQuery: q.Encode()}
			http.Redirect(w, r, u.String(), http.StatusSeeOther)
			return
		}
		c, err := r.Cookie(s.cookieName("token"))
		if err != nil || !s.tokenOK(c.Value) {
			s.refuse(w, r, http.StatusUnauthorized, "This page needs the access token. Open the address 'git hegel web' printed (it ends in ?token=…).")
			return
		}
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		if r.Method != http.MethodPost {
			s.refuse(w, r, http.StatusMethodNotAllowed, "Only GET and POST are served.")
			return
		}
		if o := r.Header.Get("Origin"); o != "" && o != "null" && !s.originAllowed(o) {
			s.refuse(w, r, http.StatusForbidden, "Refused a form sent from another site ("+quoteHeader(o)+").")
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
		if err := r.ParseForm(); err != nil {
			s.refuse(w, r, http.StatusBadRequest, "The form could not be read.")
			return
		}
		if subtle.ConstantTimeCompare([]byte(r.PostForm.Get("csrf")), []byte(s.csrf)) != 1 {
			s.refuse(w, r, http.StatusForbidden, "The form's CSRF token is missing or not this server's; reload the page and try again.")
			return
		}
	}
	s.mux.ServeHTTP(w, r)
}

func (s *Server) tokenOK(tok string) bool {
	return subtle.ConstantTimeCompare([]byte(tok), []byte(s.o.Token)) == 1
}

// hostAllowed: the loopback address the server listens on, by address or
// as localhost, with its port. A DNS name an attacker controls that
// resolves to 127.0.0.1 (rebinding) is refused.
func (s *Server) hostAllowed(host string) bool {
	return host == "127.0.0.1:"+s.port || host == "localhost:"+s.port
}

func (s *Server) originAllowed(origin string) bool {
	return origin == "http://127.0.0.1:"+s.port || origin == "http://localhost:"+s.port
}

func quoteHeader(v string) string {
	if len(v) > 80 {
		v = v[:80] + "…"
	}
	return fmt.Sprintf("%q", v)
}

// refuse answers a request the checks turned down, in plain text.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, code int, msg string) {
	// The path is cut: refusals come before the token check, and a page
	// elsewhere could fill the terminal with megabyte-long lines.
	p := r.URL.Path
	if len(p) > 200 {
		cut := 200
		for cut > 0 && !utf8.RuneStart(p[cut]) {
			cut--
		}
		p = p[:cut] + "…"
	}
	s.logf("refused %s %s: %d %s", r.Method, p, code, msg)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	fmt.Fprintln(w, msg)
}

// logf writes one line to the terminal running the server. What it
// names comes from requests (a path any web page in the browser can make
// it fetch, without the token) and from fetched data: control characters
// are written out as escapes, so an escape sequence never reaches the
// terminal and a line break never forges a line.
func (s *Server) logf(format string, args ...any) {
	line := text.OneLine(fmt.Sprintf(format, args...))
	s.logMu.Lock()
	defer s.logMu.Unlock()
	fmt.Fprintf(s.o.Log, "git hegel web: %s\n", line)
}

// request is what a page handler gets: the repository as of this
// request, and the warnings its operations printed.
type request struct {
	*http.Request
	repo     *Repo
	warnings []string
	now      time.Time
	// clearFlash, if set, removes the flash cookie with the response.
	clearFlash *http.Cookie
}

// pageError is an error with the HTTP status it should be answered with.
type pageError struct {
	code int
	err  error
}

func (e *pageError) Error() string { return e.err.Error() }
func (e *pageError) Unwrap() error { return e.err }

// renderedError is returned with a page that shows the problem itself
// (a filter form with what is wrong in it): the page is rendered, with
// this status.
type renderedError struct{ code int }

func (e *renderedError) Error() string { return http.StatusText(e.code) }

func notFound(format string, args ...any) error {
	return &pageError{http.StatusNotFound, fmt.Errorf(format, args...)}
}

// statusOf maps an engine error to an HTTP status: a name that names
// nothing is 404, a bad request 400, one the task's state does not allow
// 409.
func statusOf(err error) int {
	var pe *pageError
	switch {
	case errors.As(err, &pe):
		return pe.code
	case errors.Is(err, engine.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, engine.ErrBadName):
		return http.StatusBadRequest
	}
	return http.StatusConflict
}

// open opens the repository for r.
func (s *Server) open(r *http.Request) (*request, error) {
	req := &request{Request: r, now: s.o.Now()}
	repo, err := s.o.Open(func(msg string) { req.warnings = append(req.warnings, msg) })
	if err != nil {
		return nil, err
	}
	req.repo = repo
	return req, nil
}

// page wraps a handler that renders a template: it opens the repository,
// runs the handler, and writes the page (or the error page) in one go.
func (s *Server) page(fn func(*request) (string, any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		req, err := s.open(r)
		if err != nil {
			s.errorPage(w, r, http.StatusInternalServerError, err, nil)
			return
		}
		name, data, err := fn(req)
		if req.clearFlash != nil {
			http.SetCookie(w, req.clearFlash)
		}
		var re *renderedError
		if errors.As(err, &re) {
			s.render(w, r, re.code, name, data)
			return
		}
		if err != nil {
			s.errorPage(w, r, statusOf(err), err, req.warnings)
			return
		}
		s.render(w, r, http.StatusOK, name, data)
	}
}

// render executes template name into a buffer, then writes it: a
// template error becomes a clean 500, never half a page.
func (s *Server) render(w http.ResponseWriter, r *http.Request, code int, name string, data any) {
	var buf bytes.Buffer
	if err := s.tmpl.ExecuteTemplate(&buf, name, data); err != nil {
		s.logf("%s %s: template %s: %v", r.Method, r.URL.Path, name, err)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprintln(w, "The page could not be rendered; see the terminal running 'git hegel web'.")
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	w.Write(withoutBidiControls(buf.Bytes()))
}

// withoutBidiControls removes the bidirectional-text controls from a
// rendered page. Escaping for HTML leaves them as they are, and in what
// pages show (descriptions, names, artifacts, messages, much of it
// fetched) one makes the browser show a line in another order than it is
// stored: `Login <U+202E>exe.png` reads as `Login gnp.exe`. Removed, as
// text.Clean removes them, the page reads in the order stored. The
// templates hold none, URLs are percent-encoded before this, and the task
// names, ids and hashes forms post back cannot hold them.
func withoutBidiControls(page []byte) []byte {
	if bytes.IndexFunc(page, text.IsBidiControl) < 0 {
		return page
	}
	out := make([]byte, 0, len(page))
	for len(page) > 0 {
		r, n := utf8.DecodeRune(page)
		if !text.IsBidiControl(r) {
			out = append(out, page[:n]...)
		}
		page = page[n:]
	}
	return out
}

type errorData struct {
	pageData
	Code    int
	Message string
}

func (s *Server) errorPage(w http.ResponseWriter, r *http.Request, code int, err error, warnings []string) {
	if code >= 500 {
		s.logf("%s %s: %v", r.Method, r.URL.Path, err)
	}
	d := errorData{pageData: s.base(nil, "Error"), Code: code, Message: err.Error()}
	d.Warnings = warnings
	// A page that answers a form must not reload itself: a reload sends
	// the form again.
	d.NoRefresh = r.Method != http.MethodGet && r.Method != http.MethodHead
	s.render(w, r, code, "error.html", d)
}

// trustedHTML marks HTML this package produced and escaped itself (the
// Markdown renderer's output).
func trustedHTML(s string) template.HTML { return template.HTML(s) }

// pageData is what every page's layout shows.
type pageData struct {
	Title    string
	Repo     string
	Nav      string
	CSRF     string
	Flash    string
	Warnings []string
	// NoRefresh leaves out the "refresh every 5s" box.
	NoRefresh bool
}

func (s *Server) base(req *request, title string) pageData {
	d := pageData{Title: title, Repo: s.o.Title, CSRF: s.csrf}
	if req != nil {
		d.Warnings = req.warnings
	}
	return d
}
