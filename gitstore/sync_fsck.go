package gitstore

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	gitstorer "github.com/go-git/go-git/v5/plumbing/storer"
)

// Fetched objects pass git's own checks: the ones `git fsck --strict`
// and transfer.fsckObjects apply (.gitmodules and .gitattributes rules,
// gitlinks, dates and header bytes, tree entry names and order), always,
// whatever transfer.fsckObjects says. git is installed beside git-hegel,
// so rather than keep a copy of its rules we run its checker: `git
// index-pack --stdin --strict` over the pack, with the quarantine as its
// object directory and the repository's objects as an alternate (so links
// to objects we already have resolve, and a .gitmodules blob we already
// have is checked too). docs/decisions.md has the cost against checks in
// Go.
//
// index-pack stops at the first object it refuses. To refuse only the
// refs that bring it, sync maps the object to the refs whose new objects
// include it, leaves those out, and checks what remains again, as a pack
// of exactly the remaining refs' objects.

// gitChecker runs git's object checks for one repository.
type gitChecker struct {
	gitDir  string
	objects string // the repository's object directory
	// types are fsck.<msg-id> and fetch.fsck.<msg-id> settings passed to
	// git as --strict=<id>=<severity>,... (fetch.fsck.* wins, as in git
	// fetch, whose settings they are; fsck.* because git fsck --strict is
	// the check we promise to keep clean).
	types []string
	// keys maps a message id to the setting that gave it, for messages.
	keys map[string]string
	mode string // benchmarks only: force "--strict" or "--fsck-objects"
	warn func(string)
}

// checker returns the repository's git checker, or nil for an in-memory
// repository (unit tests), which has no git to run.
func (r *Repo) checker(warn func(string)) *gitChecker {
	if r.CommonDir == "" {
		return nil
	}
	c := &gitChecker{gitDir: r.GitDir, objects: filepath.Join(r.CommonDir, "objects"), warn: warn, keys: map[string]string{}}
	if d := r.getenv("GIT_OBJECT_DIRECTORY"); d != "" {
		c.objects = d
	}
	set := map[string]string{}
	var order []string
	add := func(opts [][2]string, prefix string) {
		for _, o := range opts {
			id, val := strings.ToLower(o[0]), strings.ToLower(strings.TrimSpace(o[1]))
			switch {
			case id == "skiplist":
				val = strings.TrimSpace(o[1])
			case val != "error" && val != "warn" && val != "ignore":
				warn(fmt.Sprintf("ignoring %s%s=%s: not error, warn or ignore", prefix, o[0], o[1]))
				continue
			}
			if _, ok := set[id]; !ok {
				order = append(order, id)
			}
			set[id], c.keys[id] = val, prefix+o[0]
		}
	}
	add(r.cfg.Options("fsck", ""), "fsck.")
	add(r.cfg.Options("fetch", "fsck"), "fetch.fsck.")
	for _, id := range order {
		c.types = append(c.types, id+"="+set[id])
	}
	return c
}

// fsckFailure is what git refused.
type fsckFailure struct {
	object plumbing.Hash // zero when git named no object
	check  string        // git's fsck message id ("gitmodulesUrl"), "" for other failures
	msg    string        // git's message, one line
}

func (f *fsckFailure) reason() string {
	switch {
	case f.check != "":
		return fmt.Sprintf("git fsck: %s: object %s: %s", f.check, f.object, f.msg)
	case !f.object.IsZero():
		return fmt.Sprintf("git index-pack: object %s: %s", f.object, f.msg)
	}
	return "git index-pack: " + f.msg
}

var (
	fsckErrorRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^error: object ([0-9a-f]{40}): ([A-Za-z0-9]+): (.*)$`)
	})
	missingRe     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`did not receive expected object ([0-9a-f]{40})`) })
	unknownTypeRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^fatal: (?:Unhandled message id: ([a-z]+)|Unknown fsck message type: '([^']*)')`)
	})
)

// indexPack runs `git index-pack --stdin` on the pack in file, writing the
// pack and its index into objDir/pack; with strict, git's fsck checks
// apply to every object in it (and to .gitmodules and .gitattributes
// blobs its trees name). A refusal is a *fsckFailure; any other failure an
// error.
func (c *gitChecker) indexPack(file, objDir string, strict bool, alternates ...string) (*fsckFailure, error) {
	for attempt := 0; ; attempt++ {
		args := []string{"--git-dir", c.gitDir, "index-pack", "--stdin", "--fix-thin"}
		if strict {
			// --fsck-objects: git's object checks without its link
			// checks, which would look up every entry of every new tree
			// (sync checks links itself, for the new objects only). Only
			// --strict takes message settings in this git's generation.
			s := "--fsck-objects"
			if len(c.types) > 0 || c.mode == "--strict" {
				s = "--strict"
			}
			if len(c.types) > 0 {
				s += "=" + strings.Join(c.types, ",")
			}
			args = append(args, s)
		}
		in, err := os.Open(file)
		if err != nil {
			return nil, err
		}
		cmd := exec.Command("git", args...)
		cmd.Stdin = in
		cmd.Env = append(cleanGitEnv(os.Environ()),
			"GIT_OBJECT_DIRECTORY="+objDir,
			"GIT_ALTERNATE_OBJECT_DIRECTORIES="+strings.Join(append([]string{c.objects}, alternates...), string(os.PathListSeparator)))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err = cmd.Run()
		in.Close()
		if err == nil {
			return nil, nil
		}
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			return nil, fmt.Errorf("cannot run git index-pack: %s", oneLine(err.Error()))
		}
		f := parseIndexPackError(stderr.String())
		// A setting this git does not know: git fetch skips it with a
		// warning, and so do we.
		if m := unknownTypeRe().FindStringSubmatch(lastFatal(stderr.String())); m != nil && strict && attempt < 100 {
			if c.dropType(m[1], m[2]) {
				continue
			}
		}
		return f, nil
	}
}

func (c *gitChecker) dropType(id, value string) bool {
	for i, t := range c.types {
		k, v, _ := strings.Cut(t, "=")
		if (id != "" && k == id) || (id == "" && v == value) {
			c.warn(fmt.Sprintf("ignoring %s=%s: git does not know this check", c.keys[k], v))
			c.types = append(c.types[:i], c.types[i+1:]...)
			return true
		}
	}
	return false
}

// parseIndexPackError reads what index-pack refused from its stderr.
func parseIndexPackError(stderr string) *fsckFailure {
	for _, line := range strings.Split(stderr, "\n") {
		if m := fsckErrorRe().FindStringSubmatch(line); m != nil {
			return &fsckFailure{object: plumbing.NewHash(m[1]), check: m[2], msg: oneLine(m[3])}
		}
	}
	if m := missingRe().FindStringSubmatch(stderr); m != nil {
		return &fsckFailure{object: plumbing.NewHash(m[1]), msg: "missing (the remote did not send it)"}
	}
	msg := strings.TrimPrefix(lastFatal(stderr), "fatal: ")
	if msg == "" {
		msg = "failed"
	}
	return &fsckFailure{msg: oneLine(msg)}
}

func lastFatal(stderr string) string {
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(lines[i], "fatal: ") {
			return lines[i]
		}
	}
	if len(lines) > 0 {
		return lines[len(lines)-1]
	}
	return ""
}

// cleanGitEnv drops the variables that would point a git child at another
// repository, index or object directory than the one we name.
func cleanGitEnv(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES",
			"GIT_COMMON_DIR", "GIT_QUARANTINE_PATH":
			continue
		}
		out = append(out, kv)
	}
	return out
}

// checkObjects runs git's checks on exactly the objects hashes (read from
// s), as one pack written to a scratch directory that is removed
// afterwards. alternates are object directories that links may point to.
func (c *gitChecker) checkObjects(s gitstorer.EncodedObjectStorer, hashes []plumbing.Hash, scratchIn string, alternates ...string) (*fsckFailure, error) {
	dir, err := os.MkdirTemp(scratchIn, quarantinePrefix+"check-")
	if err != nil {
		return nil, fmt.Errorf("cannot create a directory to check objects in: %s", oneLine(err.Error()))
	}
	defer os.RemoveAll(dir)
	objDir := filepath.Join(dir, "objects")
	if err := os.MkdirAll(filepath.Join(objDir, "pack"), 0o777); err != nil {
		return nil, err
	}
	file := filepath.Join(dir, "check.pack")
	if err := writePack(file, s, hashes); err != nil {
		return nil, fmt.Errorf("cannot pack the objects to check: %s", oneLine(err.Error()))
	}
	return c.indexPack(file, objDir, true, alternates...)
}

// writePack writes the objects hashes as a pack without deltas (window
// 0: this pack only exists to be checked).
func writePack(file string, s gitstorer.EncodedObjectStorer, hashes []plumbing.Hash) error {
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	enc := packfile.NewEncoder(f, s, false)
	if _, err := enc.Encode(hashes, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// candidate is a remote ref that passed git-hegel's own checks, with the
// objects it brings, waiting for git's.
type candidate struct {
	ref     hegelRef
	tip     plumbing.Hash
	objects []plumbing.Hash
}

// fsckCheck is the outcome of one run of git's checks.
type fsckCheck struct {
	fail *fsckFailure
	// whole: the run covered the pack as received, which may hold objects
	// no candidate brings; otherwise it covered exactly the candidates'.
	whole bool
}

// gitCheck runs git's checks over the candidates' objects, read from s
// (first, if set, is a run already made over the received pack), and
// returns the candidates that passed. Those whose objects git refused are
// refused (s.refuse), named with git's message id.
func (s *syncer) gitCheck(cands []candidate, objects gitstorer.EncodedObjectStorer, first *fsckCheck, alternates ...string) []candidate {
	c := s.checker()
	if c == nil || len(cands) == 0 {
		return cands
	}
	res := first
	for len(cands) > 0 {
		if res == nil {
			var all []plumbing.Hash
			seen := map[plumbing.Hash]bool{}
			for _, cd := range cands {
				for _, h := range cd.objects {
					if !seen[h] {
						seen[h] = true
						all = append(all, h)
					}
				}
			}
			if len(all) == 0 {
				return cands
			}
			fail, err := c.checkObjects(objects, all, s.r.CommonDir, alternates...)
			if err != nil {
				fail = &fsckFailure{msg: oneLine(err.Error())}
			}
			res = &fsckCheck{fail: fail}
		}
		if res.fail == nil {
			return cands
		}
		var bad, rest []candidate
		for _, cd := range cands {
			if !res.fail.object.IsZero() && containsHash(cd.objects, res.fail.object) {
				bad = append(bad, cd)
			} else {
				rest = append(rest, cd)
			}
		}
		if len(bad) == 0 {
			if !res.whole {
				// Refused, but not for one object we can trace to a ref:
				// nothing that was checked can be trusted.
				bad, rest = cands, nil
			}
			// Else the received pack failed on something none of the
			// candidates brings: check their own objects alone.
		}
		for _, cd := range bad {
			s.refuse(cd.ref, res.fail.reason(), res.fail.check)
		}
		cands, res = rest, nil
	}
	return cands
}

func containsHash(hs []plumbing.Hash, h plumbing.Hash) bool {
	for _, x := range hs {
		if x == h {
			return true
		}
	}
	return false
}
