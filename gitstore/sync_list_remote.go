package gitstore

// A fetch into a clone that tracks many refs lists the remote's refs
// first and fetches only those that differ from what it tracks.
//
// git fetch of wildcard refspecs costs what the quarantine holds, not
// what changed: the client sends the server one "have" per tracked ref
// (and the server parses each), and the connectivity check after the
// fetch (git rev-list --objects --not --all) reads every one of them.
// With 10,000 tasks stored and one changed upstream, that is most of a
// sync. Listing the remote's refs (git ls-remote, which reads only the
// ref advertisement that git fetch reads anyway) tells which refs
// differ; git fetch then names exactly those, in a quarantine that holds
// only their previous values, so negotiation and the connectivity check
// cost what changed. Nothing differs: no git fetch at all. A ref the
// remote no longer lists is gone from it, as --prune would have found.
//
// The listing is the remote's word, as hostile as anything fetched: its
// lines must be a hash and a ref name; a name git would refuse to store
// is left out, as git fetch leaves it out; a name inside a namespace that
// git-hegel would never write is reported as skipped, as for a fetch.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-hegel/git-hegel/gitstore/objects"
	"github.com/git-hegel/git-hegel/gitstore/refs"
)

const (
	// defaultSyncListRefs is hegel.syncListRefs' default: the tracked
	// refs from which a fetch lists the remote's refs first. Each tracked
	// ref costs a fetch of the whole namespace about 26 µs (measured with
	// 10,000: its have line, which the server parses, and its tip in the
	// connectivity check); a listing costs a second connection when
	// something changed, which over ssh is a second handshake (some 30
	// ms on a nearby host). They meet near 1,000 refs.
	defaultSyncListRefs = 1000
	// listedFetchMax bounds the refs one listed fetch names on git's
	// command line (two ref names each; Windows bounds a command line to
	// 32,767 characters). More refs differ: git fetch of the whole
	// namespace, which then costs about what the refs that moved do.
	listedFetchMax = 128
	// listAttempts bounds the listings of one fetch: a ref that moved or
	// vanished between the listing and git fetch makes the fetch list
	// again.
	listAttempts = 3
)

// syncListRefs reads hegel.syncListRefs: a fetch lists the remote's refs
// first when the clone tracks at least this many (0: always). The
// command refuses a value that does not parse (cmd/git-hegel/settings.go).
func (r *Repo) syncListRefs() int {
	n := r.cfg.Int("hegel", "synclistrefs", defaultSyncListRefs)
	if n < 0 {
		return defaultSyncListRefs
	}
	return int(min(n, 1<<30))
}

// fetchListed is gitTransport.fetch for a clone that tracks many refs
// (see the file's comment).
func (t *gitTransport) fetchListed(ctx context.Context, rem *Remote, req fetchRequest, q *quarantine) (map[string]plumbing.Hash, error) {
	if err := q.prepareConfig(ctx, t.r); err != nil {
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		listed, err := t.listRemote(ctx, rem, req, q)
		if err != nil {
			return nil, err
		}
		if t.afterList != nil {
			t.afterList(attempt)
		}
		want := differing(listed, req.seen)
		if len(want) == 0 {
			return listed, nil
		}
		if len(want) > listedFetchMax {
			if err := q.writeRefs(req.seen, req.haves); err != nil {
				return nil, err
			}
			return t.fetchAll(ctx, rem, req, q)
		}
		// The quarantine holds the previous values of the refs fetched
		// (what git offers as haves and stops its connectivity walk at)
		// and the commits the remote likely has (req.haves: with
		// checkpoints, the remote-tracking branches, which bound the
		// walk through the project's history). A ref that is new here has
		// no previous value: the walk reads its own commits only, as
		// they end at a root or at a commit of a have.
		prev := make(map[string]plumbing.Hash, len(want))
		specs := make([]string, 0, len(want))
		for _, n := range want {
			rel := strings.TrimPrefix(n, hegelPrefix)
			prev[rel] = req.seen[rel]
			specs = append(specs, "+"+n+":"+n)
		}
		if err := q.writeRefs(prev, req.haves); err != nil {
			return nil, err
		}
		stderr, err := t.runFetch(ctx, rem, req, q, false, specs)
		if err != nil {
			// A ref that moved or vanished since the listing fails git
			// fetch of its exact name: list again, and fetch what differs
			// then. A failure with the same listing is the remote's.
			if attempt < listAttempts && ctx.Err() == nil {
				again, lerr := t.listRemote(ctx, rem, req, q)
				if lerr == nil && !sameValues(listed, again, want) {
					if err := q.clear(); err != nil {
						return nil, err
					}
					continue
				}
			}
			return nil, describeGitFailure(rem, rem.FetchURL, stderr, err)
		}
		if err := q.open(t.r.storage); err != nil {
			return nil, err
		}
		got, err := q.refs()
		if err != nil {
			return nil, err
		}
		for _, n := range want {
			// git fetch of an exact name wrote it, at the value it
			// fetched (which may be newer than the listing's).
			h, ok := got[n]
			if !ok {
				return nil, fmt.Errorf("cannot read the fetched refs: git fetch did not write %s", n)
			}
			listed[n] = h
		}
		return listed, nil
	}
}

// listRemote lists the remote's refs under req.prefixes with git
// ls-remote, run in the quarantine as git fetch is (same configuration,
// same remote), and parses what it printed (parseListing).
func (t *gitTransport) listRemote(ctx context.Context, rem *Remote, req fetchRequest, q *quarantine) (map[string]plumbing.Hash, error) {
	args := append(quarantineGitArgs(q), "ls-remote", rem.where(false))
	for _, p := range req.prefixes {
		args = append(args, hegelPrefix+p+"*")
	}
	out, stderr, err := runSyncGit(ctx, t.remoteCwd(), t.quarantineEnv(), nil, args...)
	if err != nil {
		return nil, describeGitFailure(rem, rem.FetchURL, stderr, err)
	}
	return parseListing(out, req.prefixes, req.seen)
}

// parseListing reads git ls-remote's lines ("<hash>\t<ref name>") and
// returns the refs under prefixes (relative to refs/hegel/, as
// fetchRequest.prefixes) as git fetch of those prefixes would have
// written them: a name git would refuse to store is left out (git fetch
// ignores it too). A line that is not a hash and a name, a zero hash, or
// a name listed twice makes the whole listing unusable: the remote, or
// something between, is not speaking git. A name in seen (a tracking
// ref's, checked when it was written) is not checked again: with 10,000
// refs tracked, only the new names are.
func parseListing(out string, prefixes []string, seen map[string]plumbing.Hash) (map[string]plumbing.Hash, error) {
	listed := make(map[string]plumbing.Hash, len(seen)+16)
	for len(out) > 0 {
		var line string
		line, out, _ = strings.Cut(out, "\n")
		if line == "" {
			continue
		}
		hex, name, ok := strings.Cut(line, "\t")
		h, okh := objects.ParseLowerHex(hex)
		if !ok || !okh || h.IsZero() {
			return nil, fmt.Errorf("the remote's list of refs is damaged: %q", truncate([]byte(line), 80))
		}
		rel, ok := strings.CutPrefix(name, hegelPrefix)
		if !ok || !underAny(rel, prefixes) {
			continue // ls-remote's patterns match a name's tail
		}
		if _, known := seen[rel]; !known && refs.CheckName(plumbing.ReferenceName(name)) != nil {
			continue
		}
		if _, dup := listed[name]; dup {
			return nil, fmt.Errorf("the remote's list of refs is damaged: it lists %s twice", name)
		}
		listed[name] = h
	}
	return listed, nil
}

func underAny(rel string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(rel, p) {
			return true
		}
	}
	return false
}

// differing returns, sorted, the listed refs whose value is not the one
// last seen: those the fetch brings. A name sync does not carry (outside
// its namespaces, or one git-hegel would never write) is not fetched:
// the caller skips it as it would a fetched one.
func differing(listed, seen map[string]plumbing.Hash) []string {
	var out []string
	for name, h := range listed {
		rel := strings.TrimPrefix(name, hegelPrefix)
		if seen[rel] == h {
			continue
		}
		if _, ok, err := classify(rel); !ok || err != nil {
			continue
		}
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// sameValues reports whether b lists names at the values a does.
func sameValues(a, b map[string]plumbing.Hash, names []string) bool {
	for _, n := range names {
		ha, oka := a[n]
		hb, okb := b[n]
		if ha != hb || oka != okb {
			return false
		}
	}
	return true
}

// clear empties the quarantine's object directory: what a failed git
// fetch may have left there is not what the next one brings.
func (q *quarantine) clear() error {
	if err := os.RemoveAll(q.objectsDir()); err != nil {
		return fmt.Errorf("cannot prepare the directory for fetched objects: %w", err)
	}
	for _, sub := range []string{"objects/pack", "objects/info"} {
		if err := os.MkdirAll(filepath.Join(q.dir, sub), 0o777); err != nil {
			return fmt.Errorf("cannot prepare the directory for fetched objects: %w", err)
		}
	}
	return nil
}
