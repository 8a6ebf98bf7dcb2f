package gitstore

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/client"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"

	"github.com/git-hegel/git-hegel/gitstore/refs"
)

// Remote is a git remote as sync uses it: its name (which names the
// tracking namespace refs/hegel-remotes/<name>/) and where to fetch from
// and push to.
type Remote struct {
	Name     string
	FetchURL string
	PushURL  string
}

// ErrNoRemote reports a remote name that git's configuration does not
// define.
var ErrNoRemote = errors.New("no such remote")

// ResolveRemote returns the remote name names, or the default one when
// name is empty: git config hegel.remote, else the current branch's
// upstream remote, else origin. URLs are rewritten by url.<base>.insteadOf
// (and pushInsteadOf for pushing), as git does.
func (r *Repo) ResolveRemote(name string) (*Remote, error) {
	if name == "" {
		name = r.defaultRemote()
	}
	if err := refs.CheckName(plumbing.ReferenceName(trackingRoot + name + "/" + relStashes)); err != nil || strings.Contains(name, "/") {
		return nil, fmt.Errorf("%w: '%s' cannot name a remote", ErrNoRemote, name)
	}
	urls := r.cfg.All("remote", name, "url")
	if len(urls) == 0 {
		return nil, fmt.Errorf("%w: '%s' is not a git remote (see 'git remote -v'; set another with 'git config hegel.remote <name>')", ErrNoRemote, name)
	}
	rem := &Remote{Name: name, FetchURL: r.rewriteURL(urls[0], false)}
	if push := r.cfg.All("remote", name, "pushurl"); len(push) > 0 {
		rem.PushURL = r.rewriteURL(push[0], false)
	} else {
		rem.PushURL = r.rewriteURL(urls[0], true)
	}
	return rem, nil
}

func (r *Repo) defaultRemote() string {
	if v, ok := r.cfg.Get("hegel", "", "remote"); ok && strings.TrimSpace(v) != "" {
		return strings.TrimSpace(v)
	}
	if h, err := r.Head(); err == nil && h.Branch != "" {
		if v, ok := r.cfg.Get("branch", h.Branch, "remote"); ok && v != "" && v != "." {
			return v
		}
	}
	return "origin"
}

// rewriteURL applies the longest matching url.<base>.insteadOf (or, for
// a push URL, pushInsteadOf first).
func (r *Repo) rewriteURL(u string, push bool) string {
	best, bestLen := "", 0
	try := func(key string) {
		for base, prefixes := range r.cfg.SubsectionValues("url", key) {
			for _, p := range prefixes {
				if p != "" && strings.HasPrefix(u, p) && len(p) > bestLen {
					best, bestLen = base+u[len(p):], len(p)
				}
			}
		}
	}
	if push {
		try("pushinsteadof")
		if bestLen > 0 {
			return best
		}
	}
	try("insteadof")
	if bestLen > 0 {
		return best
	}
	return u
}

// conn opens git protocol sessions to one URL of a remote, asking git's
// credential helpers for HTTP credentials when the server wants them.
type conn struct {
	r      *Repo
	remote string
	url    string
	ep     *transport.Endpoint
	cl     transport.Transport
	auth   transport.AuthMethod
	cred   map[string]string // what git credential fill gave, to approve or reject
}

func (r *Repo) newConn(remote, u string) (*conn, error) {
	ep, err := transport.NewEndpoint(u)
	if err != nil {
		return nil, fmt.Errorf("Cannot use remote '%s': bad URL %s: %s", remote, redactURL(u), oneLine(err.Error()))
	}
	cl, err := client.NewClient(ep)
	if err != nil {
		return nil, fmt.Errorf("Cannot use remote '%s' (%s): %s", remote, redactURL(u), oneLine(err.Error()))
	}
	return &conn{r: r, remote: remote, url: u, ep: ep, cl: cl}, nil
}

func (c *conn) isHTTP() bool { return c.ep.Protocol == "http" || c.ep.Protocol == "https" }

// session opens an upload-pack (fetch) or receive-pack (push) session and
// reads the advertised refs. An empty remote has no refs: adv is nil for
// fetch. An HTTP 401 makes it ask git credential fill once and retry.
func (c *conn) session(ctx context.Context, push bool) (transport.Session, *packp.AdvRefs, error) {
	for attempt := 0; ; attempt++ {
		var sess transport.Session
		var err error
		if push {
			sess, err = c.cl.NewReceivePackSession(c.ep, c.auth)
		} else {
			sess, err = c.cl.NewUploadPackSession(c.ep, c.auth)
		}
		if err != nil {
			return nil, nil, c.describe(err)
		}
		adv, err := sess.AdvertisedReferencesContext(ctx)
		if err == nil {
			c.credentialDone(true)
			return sess, adv, nil
		}
		_ = sess.Close()
		if errors.Is(err, transport.ErrEmptyRemoteRepository) {
			c.credentialDone(true)
			return nil, nil, nil
		}
		authErr := errors.Is(err, transport.ErrAuthenticationRequired) || errors.Is(err, transport.ErrAuthorizationFailed)
		if authErr && c.isHTTP() && attempt == 0 && c.cred == nil {
			if ferr := c.credentialFill(); ferr != nil {
				return nil, nil, ferr
			}
			continue
		}
		if authErr {
			c.credentialDone(false)
		}
		return nil, nil, c.describe(err)
	}
}

// describe turns a transport error into one line naming the remote.
func (c *conn) describe(err error) error {
	where := fmt.Sprintf("remote '%s' (%s)", c.remote, redactURL(c.url))
	msg := oneLine(err.Error())
	var netErr net.Error
	var dnsErr *net.DNSError
	var opErr *net.OpError
	switch {
	case errors.Is(err, transport.ErrRepositoryNotFound):
		return fmt.Errorf("Cannot reach %s: repository not found", where)
	case errors.Is(err, transport.ErrAuthenticationRequired), errors.Is(err, transport.ErrAuthorizationFailed):
		if c.isHTTP() {
			return fmt.Errorf("Cannot reach %s: credentials were rejected (git hegel asks git's credential helpers; see 'git help credential')", where)
		}
		return fmt.Errorf("Cannot reach %s: authentication failed", where)
	case c.ep.Protocol == "ssh" && (strings.Contains(msg, "SSH_AUTH_SOCK") || strings.Contains(msg, "unable to authenticate")):
		return fmt.Errorf("Cannot reach %s: ssh authentication failed (git hegel uses only the ssh agent: start one and 'ssh-add' your key)", where)
	case errors.As(err, &dnsErr):
		return fmt.Errorf("Cannot reach %s: unknown host %s", where, dnsErr.Name)
	case errors.As(err, &opErr) && opErr.Err != nil:
		return fmt.Errorf("Cannot reach %s: %s", where, oneLine(opErr.Err.Error()))
	case errors.As(err, &netErr):
		return fmt.Errorf("Cannot reach %s: %s", where, msg)
	}
	return fmt.Errorf("Cannot reach %s: %s", where, msg)
}

// redactURL hides a password written into a URL.
func redactURL(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.User == nil {
		return u
	}
	if _, ok := p.User.Password(); ok {
		p.User = url.UserPassword(p.User.Username(), "xxxxx")
		return p.String()
	}
	return u
}

// credentialFill asks git's credential helpers (and, if git is allowed
// to, the user) for a username and password: go-git's HTTP transport does
// not read them itself.
func (c *conn) credentialFill() error {
	req := c.credentialRequest()
	out, err := c.gitCredential("fill", req)
	if err != nil {
		return fmt.Errorf("Cannot reach remote '%s' (%s): it asks for credentials and git credential fill found none", c.remote, redactURL(c.url))
	}
	got := parseCredential(out)
	if got["username"] == "" && got["password"] == "" {
		return fmt.Errorf("Cannot reach remote '%s' (%s): it asks for credentials and git credential fill found none", c.remote, redactURL(c.url))
	}
	c.cred = got
	c.auth = &githttp.BasicAuth{Username: got["username"], Password: got["password"]}
	return nil
}

// credentialDone tells the helpers whether the credentials worked, so
// they store good ones and forget bad ones.
func (c *conn) credentialDone(ok bool) {
	if c.cred == nil {
		return
	}
	var b strings.Builder
	for _, k := range []string{"protocol", "host", "path", "username", "password"} {
		if v, found := c.cred[k]; found {
			fmt.Fprintf(&b, "%s=%s\n", k, v)
		}
	}
	action := "approve"
	if !ok {
		action = "reject"
	}
	_, _ = c.gitCredential(action, b.String())
	c.cred = nil
	if !ok {
		c.auth = nil
	}
}

func (c *conn) credentialRequest() string {
	var b strings.Builder
	fmt.Fprintf(&b, "protocol=%s\n", c.ep.Protocol)
	host := c.ep.Host
	if c.ep.Port != 0 {
		host = fmt.Sprintf("%s:%d", host, c.ep.Port)
	}
	fmt.Fprintf(&b, "host=%s\n", host)
	if p := strings.TrimPrefix(c.ep.Path, "/"); p != "" {
		fmt.Fprintf(&b, "path=%s\n", p)
	}
	if c.ep.User != "" {
		fmt.Fprintf(&b, "username=%s\n", c.ep.User)
	}
	return b.String()
}

func (c *conn) gitCredential(action, input string) ([]byte, error) {
	cmd := exec.Command("git", "credential", action)
	cmd.Stdin = strings.NewReader(input + "\n")
	cmd.Stderr = os.Stderr // git may prompt there
	if c.r.WorkTree != "" {
		cmd.Dir = c.r.WorkTree // so the repository's own credential settings apply
	}
	return cmd.Output()
}

func parseCredential(out []byte) map[string]string {
	m := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			m[k] = v
		}
	}
	return m
}
