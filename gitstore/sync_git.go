package gitstore

// The git binary moves sync's objects: `git fetch` and `git push` know
// everything the user configured for a remote (ssh config and keys,
// core.sshCommand, GIT_SSH_COMMAND, the ssh agent, credential helpers,
// http.* settings, url.*.insteadOf, protocol v2), so git hegel reaches a
// remote exactly where plain git does. What git fetches lands in the
// quarantine, never in the repository: git runs there as in a repository
// of its own (sync_quarantine.go) whose configuration includes this
// repository's, whose refs are the remote's refs as we last saw them (so
// git negotiates only what changed), and whose object directory is the
// quarantine, with the repository's objects as an alternate. Sync reads
// the remote's refs from there, validates, and only then moves objects
// and tracking refs. A push names every ref with its new value and a
// lease on its old one (--force-with-lease=<ref>:<old>), atomically.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
)

// remoteTransport moves objects between the repository and a remote. On disk
// it is the git binary (gitTransport); in-memory repositories (unit
// tests) are given one of their own (Repo.syncTransport).
type remoteTransport interface {
	// fetch receives into q the objects of the remote's refs under
	// req.prefixes that the repository lacks and returns those refs (full
	// names) with their values. q is empty afterwards when nothing was
	// missing.
	fetch(ctx context.Context, rem *Remote, req fetchRequest, q *quarantine) (map[string]plumbing.Hash, error)
	// push sends each update with its lease (the remote's ref must still
	// hold old, zero meaning absent), all or none where the remote can.
	push(ctx context.Context, rem *Remote, ups []refUpdate, progress io.Writer) (*pushResult, error)
}

// fetchRequest is what one fetch asks for.
type fetchRequest struct {
	// prefixes are the ref names (relative to refs/hegel/) fetched: a
	// namespace of one ref per task ends in "/"; the others name one ref.
	prefixes []string
	// seen are the remote's refs as the last fetch or push left them
	// (name relative to refs/hegel/ → value): git offers them as commits
	// we have. (Relative: it is the sync's map of the tracking refs, not
	// a copy with 10,000 names rebuilt.)
	seen map[string]plumbing.Hash
	// haves are more commits the remote likely has (its branches, for
	// checkpoints, whose commits have the project's commits as parents).
	haves map[string]plumbing.Hash
	// progress, if set, gets git's own progress lines.
	progress io.Writer
}

// refUpdate is one ref a push moves from old to new.
type refUpdate struct {
	name     plumbing.ReferenceName
	old, new plumbing.Hash
}

// pushResult is what the remote did with each update.
type pushResult struct {
	// moved lists the refs the push moved.
	moved map[plumbing.ReferenceName]bool
	// uptodate lists the refs the remote had at their new value already.
	uptodate map[plumbing.ReferenceName]bool
	// stale lists the refs whose lease failed: the remote moved.
	stale map[plumbing.ReferenceName]bool
	// refused holds the remote's reason for each ref it refused.
	refused map[string]string
	// sent counts the objects sent.
	sent int
}

// transport returns how this repository reaches remotes.
func (r *Repo) transport() (remoteTransport, error) {
	if r.syncTransport != nil {
		return r.syncTransport, nil
	}
	if r.CommonDir == "" {
		return nil, errors.New("sync needs a repository on disk")
	}
	return &gitTransport{r: r}, nil
}

// gitTransport runs git fetch and git push.
type gitTransport struct {
	r *Repo
	// afterList, if set, runs after each listing of the remote's refs
	// (tests use it to move the remote before git fetch runs).
	afterList func(attempt int)
}

// where names the remote as git is told it: by name when it is one of
// the repository's remotes (so every remote.<name>.* setting applies),
// else by URL.
func (rem *Remote) where(push bool) string {
	if rem.configured {
		return rem.Name
	}
	if push {
		return rem.PushURL
	}
	return rem.FetchURL
}

func (t *gitTransport) fetch(ctx context.Context, rem *Remote, req fetchRequest, q *quarantine) (map[string]plumbing.Hash, error) {
	if len(req.seen) >= t.r.syncListRefs() {
		return t.fetchListed(ctx, rem, req, q) // sync_list_remote.go
	}
	if err := q.prepareRepo(ctx, t.r, req.seen, req.haves); err != nil {
		return nil, err
	}
	return t.fetchAll(ctx, rem, req, q)
}

// fetchAll fetches every ref under req.prefixes into the quarantine,
// which holds req.seen: git updates those that moved and prunes those the
// remote no longer has.
func (t *gitTransport) fetchAll(ctx context.Context, rem *Remote, req fetchRequest, q *quarantine) (map[string]plumbing.Hash, error) {
	var specs []string
	for _, p := range req.prefixes {
		src := hegelPrefix + p + "*"
		specs = append(specs, "+"+src+":"+src)
	}
	if stderr, err := t.runFetch(ctx, rem, req, q, true, specs); err != nil {
		return nil, describeGitFailure(rem, rem.FetchURL, stderr, err)
	}
	if err := q.open(t.r.storage); err != nil {
		return nil, err
	}
	return q.refs()
}

// runFetch runs git fetch of specs in the quarantine and returns what it
// wrote on its standard error.
func (t *gitTransport) runFetch(ctx context.Context, rem *Remote, req fetchRequest, q *quarantine, prune bool, specs []string) (string, error) {
	args := append(quarantineGitArgs(q),
		// Always a pack, which the quarantine keeps or stores loose
		// (migrate); its progress shows where unpack-objects' would not.
		"-c", "fetch.unpackLimit=1", "-c", "transfer.unpackLimit=1",
		"fetch", "--no-tags", "--refmap=", "--no-recurse-submodules", "--no-write-fetch-head",
		"--no-auto-maintenance")
	if prune {
		args = append(args, "--prune")
	}
	if req.progress != nil {
		args = append(args, "--progress")
	} else {
		args = append(args, "--quiet")
	}
	args = append(args, rem.where(false))
	args = append(args, specs...)
	_, stderr, err := runSyncGit(ctx, t.remoteCwd(), t.quarantineEnv(), req.progress, args...)
	return stderr, err
}

// quarantineGitArgs are the options of every git command run in the
// quarantine: what git fetch would do beside fetching, none of it here.
func quarantineGitArgs(q *quarantine) []string {
	return []string{"--git-dir", q.dir,
		"-c", "fetch.fsckObjects=false", "-c", "transfer.fsckObjects=false", // sync_fsck.go checks, per ref
		"-c", "fetch.writeCommitGraph=false", "-c", "core.alternateRefsCommand=exit 0 #"}
}

// quarantineEnv is the environment of git run in the quarantine. Its
// configuration holds the system's and the user's already
// (prepareConfig): git reads no other file.
func (t *gitTransport) quarantineEnv() []string {
	return append(cleanGitEnv(os.Environ()), "GIT_ALTERNATE_OBJECT_DIRECTORIES="+t.r.objectsDir(),
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull)
}

// pushBatch bounds the refs one git push names: its command line holds
// two arguments per ref, and the system bounds a command line's length.
const pushBatch = 1000

func (t *gitTransport) push(ctx context.Context, rem *Remote, ups []refUpdate, progress io.Writer) (*pushResult, error) {
	res := &pushResult{moved: map[plumbing.ReferenceName]bool{}, uptodate: map[plumbing.ReferenceName]bool{}, stale: map[plumbing.ReferenceName]bool{}, refused: map[string]string{}}
	atomic := true
	for len(ups) > 0 {
		n := min(len(ups), pushBatch)
		out, stderr, err := t.pushOnce(ctx, rem, ups[:n], progress, atomic)
		if err != nil && atomic && strings.Contains(stderr, "does not support --atomic") {
			atomic = false // the remote cannot: ref by ref, as before atomic pushes existed
			continue
		}
		if perr := parsePushPorcelain(out, res); perr != nil || (err != nil && len(res.moved)+len(res.uptodate)+len(res.stale)+len(res.refused) == 0) {
			return res, describeGitFailure(rem, rem.PushURL, stderr, err)
		}
		res.sent += totalSent(stderr)
		ups = ups[n:]
	}
	return res, nil
}

func (t *gitTransport) pushOnce(ctx context.Context, rem *Remote, ups []refUpdate, progress io.Writer, atomic bool) (string, string, error) {
	args := []string{"--git-dir", t.r.GitDir, "push", "--porcelain", "--progress",
		// A pre-push hook and signing are for the project's code, not
		// for git-hegel's records; neither are tags and submodules.
		"--no-verify", "--no-signed", "--no-follow-tags", "--recurse-submodules=no"}
	if atomic {
		args = append(args, "--atomic")
	}
	args = append(args, rem.where(true))
	for _, u := range ups {
		old := ""
		if !u.old.IsZero() {
			old = u.old.String()
		}
		args = append(args, "--force-with-lease="+string(u.name)+":"+old)
	}
	for _, u := range ups {
		args = append(args, u.new.String()+":"+string(u.name))
	}
	return runSyncGit(ctx, t.remoteCwd(), cleanGitEnv(os.Environ()), progress, args...)
}

// remoteCwd is where git runs to reach a remote: the top of the work
// tree, or the git dir of a bare repository, where git fetch and git push
// run themselves. A remote's URL may be a relative path, which git
// resolves from there; from the quarantine it would name another
// directory.
func (t *gitTransport) remoteCwd() string {
	if t.r.WorkTree != "" {
		return t.r.WorkTree
	}
	return t.r.GitDir
}

// runSyncGit runs git in dir and returns its standard output and error. Its
// progress lines (everything on stderr but errors) also go to progress,
// if set, as git writes them.
func runSyncGit(ctx context.Context, dir string, env []string, progress io.Writer, args ...string) (string, string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if progress != nil {
		cmd.Stderr = io.MultiWriter(&stderr, &progressFilter{w: progress})
	}
	err := cmd.Run()
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			return stdout.String(), stderr.String(), fmt.Errorf("cannot run git: %s", oneLine(err.Error()))
		}
	}
	return stdout.String(), stderr.String(), err
}

// progressFilter passes git's progress lines on. The rest stays back:
// error lines become git hegel's one-line error, and the lines about refs
// name the quarantine's, which git hegel reports in its own words.
type progressFilter struct {
	w    io.Writer
	line []byte
}

var progressLineRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(remote: |[A-Z][a-z]+ (objects|deltas): |Enumerating objects|Total \d|Delta compression)`)
})

func (f *progressFilter) Write(b []byte) (int, error) {
	for _, c := range b {
		f.line = append(f.line, c)
		if c != '\n' && c != '\r' {
			continue
		}
		if progressLineRe().Match(f.line) {
			_, _ = f.w.Write(f.line)
		}
		f.line = f.line[:0]
	}
	return len(b), nil
}

// parsePushPorcelain reads git push --porcelain's lines
// ("<flag>\t<src>:<dst>\t<summary>") into res.
func parsePushPorcelain(out string, res *pushResult) error {
	for _, line := range strings.Split(out, "\n") {
		parts := strings.SplitN(line, "\t", 3)
		if len(parts) != 3 || len(parts[0]) != 1 {
			continue
		}
		_, dst, ok := strings.Cut(parts[1], ":")
		if !ok {
			continue
		}
		name, summary := plumbing.ReferenceName(dst), parts[2]
		switch parts[0] {
		case " ", "+", "*":
			res.moved[name] = true
		case "=":
			res.uptodate[name] = true
		case "!":
			switch reason := bracketReason(summary); {
			case strings.HasPrefix(summary, "[rejected]") && (reason == "stale info" || reason == "fetch first" || reason == "non-fast-forward"):
				res.stale[name] = true
			case strings.HasPrefix(summary, "[rejected]") && reason == "atomic push failed":
				// Another ref of the push failed; that one says why.
			default:
				if reason == "" {
					reason = strings.Trim(summary, "[]")
				}
				res.refused[dst] = reason
			}
		}
	}
	return nil
}

// bracketReason returns the reason in "[rejected] (stale info)".
func bracketReason(summary string) string {
	i := strings.Index(summary, "(")
	j := strings.LastIndex(summary, ")")
	if i < 0 || j < i {
		return ""
	}
	return summary[i+1 : j]
}

var totalRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^Total (\d+) `) })

// totalSent reads the objects pack-objects sent from its "Total N" line.
func totalSent(stderr string) int {
	n := 0
	for _, m := range totalRe().FindAllStringSubmatch(stderr, -1) {
		v, _ := strconv.Atoi(m[1])
		n += v
	}
	return n
}

// describeGitFailure turns what git fetch or push said into one line
// naming the remote: unreachable, authentication rejected, repository
// not found, or git's own last word.
func describeGitFailure(rem *Remote, u, stderr string, err error) error {
	where := fmt.Sprintf("remote '%s' (%s)", rem.Name, redactURL(u))
	last := redactInText(gitReason(stderr))
	if last == "" && err != nil {
		last = oneLine(err.Error())
	}
	low := strings.ToLower(stderr)
	has := func(subs ...string) bool {
		for _, s := range subs {
			if strings.Contains(low, s) {
				return true
			}
		}
		return false
	}
	http := strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://")
	switch {
	case has("host key verification failed", "remote host identification has changed"):
		return fmt.Errorf("Cannot reach %s: ssh could not verify the host's key (see ssh's known_hosts)", where)
	case has("permission denied (publickey", "permission denied, please try again", "too many authentication failures", "no more authentication methods"):
		return fmt.Errorf("Cannot reach %s: ssh authentication failed (%s)", where, sshReason(stderr))
	case has("authentication failed for", "could not read username", "could not read password", "http basic: access denied", "the requested url returned error: 401", "the requested url returned error: 403", "terminal prompts disabled"):
		if http {
			return fmt.Errorf("Cannot reach %s: credentials were rejected (git hegel asks git's credential helpers; see 'git help credential')", where)
		}
		return fmt.Errorf("Cannot reach %s: authentication failed", where)
	case has("repository not found", "does not appear to be a git repository", "access denied or repository not exported", "the requested url returned error: 404", "no such repository", "not a git repository"):
		return fmt.Errorf("Cannot reach %s: repository not found", where)
	case has("could not resolve host", "could not resolve hostname", "name or service not known", "temporary failure in name resolution"):
		return fmt.Errorf("Cannot reach %s: unknown host (%s)", where, last)
	}
	if last == "" {
		last = "git failed"
	}
	return fmt.Errorf("Cannot reach %s: %s", where, last)
}

// gitReason is git's last error line, without its "fatal: " prefix and
// the advice git adds after it.
func gitReason(stderr string) string {
	lines := strings.Split(strings.ReplaceAll(stderr, "\r", "\n"), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		for _, p := range []string{"fatal: ", "error: "} {
			if strings.HasPrefix(l, p) {
				l = strings.TrimPrefix(l, p)
				if l == "Could not read from remote repository." || strings.HasPrefix(l, "failed to push some refs") {
					continue
				}
				if strings.HasSuffix(l, ":") {
					// git says why on the next line ("unable to connect
					// to host:" then "host[0: 1.2.3.4]: errno=Connection
					// refused"): without it the reason ends in a colon.
					l += " " + continuation(lines[i+1:])
				}
				return oneLine(strings.TrimSpace(l))
			}
		}
	}
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" && !strings.HasPrefix(l, "Please make sure") && !strings.HasPrefix(l, "and the repository exists") {
			return oneLine(l)
		}
	}
	return ""
}

// continuation is the first non-empty line of lines, the part after
// "errno=" when it names a system error.
func continuation(lines []string) string {
	for _, l := range lines {
		if l = strings.TrimSpace(l); l == "" {
			continue
		}
		if _, after, ok := strings.Cut(l, "errno="); ok {
			return after
		}
		return l
	}
	return ""
}

// sshReason is ssh's own line about the refusal.
func sshReason(stderr string) string {
	for _, l := range strings.Split(stderr, "\n") {
		if strings.Contains(strings.ToLower(l), "permission denied") || strings.Contains(strings.ToLower(l), "authentication") {
			return oneLine(strings.TrimSpace(l))
		}
	}
	return "ssh refused every key"
}

var credInURL = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(://[^/@\s:]*):[^/@\s]*@`) })

// redactInText hides passwords written into URLs inside git's messages.
func redactInText(s string) string { return credInURL().ReplaceAllString(s, "${1}:xxxxx@") }

// objectsDir is the repository's object directory, as git would use it.
func (r *Repo) objectsDir() string {
	if d := r.getenv("GIT_OBJECT_DIRECTORY"); d != "" {
		return d
	}
	return filepath.Join(r.CommonDir, "objects")
}

// sortedNames returns m's keys in order.
func sortedNames(m map[string]plumbing.Hash) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
