package gitstore

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-hegel/git-hegel/gitstore/refs"
)

// Remote is a git remote as sync uses it: its name (which names the
// tracking namespace refs/hegel-remotes/<name>/) and where to fetch from
// and push to.
type Remote struct {
	Name     string
	FetchURL string
	PushURL  string
	// configured: Name is one of the repository's remotes, so git is
	// told the name and applies every remote.<name>.* setting.
	configured bool
}

// ErrNoRemote reports a remote name that git's configuration does not
// define.
var ErrNoRemote = errors.New("no such remote")

// ResolveRemote returns the remote name names, or the default one when
// name is empty: git config hegel.remote, else the current branch's
// upstream remote, else origin. The URLs, rewritten by
// url.<base>.insteadOf (and pushInsteadOf for pushing) as git does, are
// for messages: git fetch and push are given the remote's name.
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
	rem := &Remote{Name: name, configured: true, FetchURL: r.rewriteURL(urls[0], false)}
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
