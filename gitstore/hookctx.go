package gitstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-billy/v5/osfs"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/engine/agent"
	"github.com/git-hegel/git-hegel/engine/workflow"
	"github.com/git-hegel/git-hegel/gitstore/gitdir"
	"github.com/git-hegel/git-hegel/gitstore/refs"
)

// What `git hegel hook` needs on every agent tool call, read without
// opening the repository: the worktree's active task (from the session
// file), the commit its ref points at, and a cache of the task's current
// node and rules keyed by that commit. The cache can never be stale: any
// change to the task moves its ref, and a cache for another commit is
// ignored and rebuilt through the engine (hegel-hook.json in the
// worktree's git dir; deleting it only costs one slow call).

// HookCacheFile is the hook cache's name in the worktree's git dir.
const HookCacheFile = "hegel-hook.json"

// hookCacheVersion 2: a trusted cache carries a trust stamp too
// (version 1 kept one only when untrusted, and is built again).
const hookCacheVersion = 2

// HookCache is the part of a task the hook checks events against.
type HookCache struct {
	Version    int             `json:"version"`
	Task       string          `json:"task"`
	Commit     string          `json:"commit"` // the task ref's commit it describes
	Workflow   string          `json:"workflow"`
	Run        string          `json:"run"`
	Node       string          `json:"node"`
	Status     string          `json:"status"`
	PhaseStart time.Time       `json:"phase_start"`
	Rules      []workflow.Rule `json:"rules,omitempty"`
	// Recent are the phase's folded events within the rules' longest
	// window; PhaseTokens sums the tokens of all its folded events.
	Recent      []agent.Event `json:"recent,omitempty"`
	PhaseTokens int64         `json:"phase_tokens,omitempty"`
	// Untrusted: the task's definition was not trusted when the cache was
	// built, so Rules is empty. Trust can change without the task's
	// commit changing, either way (granted, or taken back by deleting
	// the record's line): TrustStamp is the trust record's TrustStamp
	// when the cache was built, and the cache is built again once the
	// record has changed (Current). A built-in definition is trusted
	// whatever the record says, and has no stamp.
	Untrusted  bool   `json:"untrusted,omitempty"`
	TrustStamp string `json:"trust_stamp,omitempty"`
}

// TrustStamp identifies the state of the clone's trust record (its size,
// modification time and inode number; "none" when there is none). Every
// change to the record, an append by `git hegel trust` or a line
// deleted by hand, changes it. The inode tells a file saved whole over
// the record (as editors and sed -i do) from the one it replaced even
// when both have the same size and the clock has not moved on (file
// times advance in ticks of a few milliseconds).
//
// A record that is a symbolic link is stamped as a link and as the file
// it leads to: the record moved away and replaced by a link to it (which
// may lead where it is no longer read) is a change, and so is a change
// to that file.
func TrustStamp(commonDir string) string {
	p := filepath.Join(commonDir, filepath.FromSlash(trustFile))
	fi, err := os.Lstat(p)
	if err != nil {
		return "none"
	}
	stamp := fileStamp(fi)
	if fi.Mode()&os.ModeSymlink != 0 {
		stamp = "link " + stamp + " to "
		if to, err := os.Stat(p); err == nil {
			stamp += fileStamp(to)
		} else {
			stamp += "none"
		}
	}
	return stamp
}

func fileStamp(fi os.FileInfo) string {
	return fmt.Sprintf("%d %d %d", fi.Size(), fi.ModTime().UnixNano(), refs.FileID(fi))
}

// Current reports whether the cache still describes the task for the
// trust record in commonDir (it is keyed by the task's commit): one for
// a built-in definition always does, any other while the record is
// unchanged.
func (c *HookCache) Current(commonDir string) bool {
	if c.TrustStamp == "" {
		return !c.Untrusted
	}
	return c.TrustStamp == TrustStamp(commonDir)
}

// HookTarget is where a hook's events go.
type HookTarget struct {
	Layout     *gitdir.Layout
	Session    string // the session file; "" when there is none
	ActiveTask string // "" when the worktree has no workflow
	Commit     string // the active task's ref ("" if missing)
	// realTop is the worktree's top with its symbolic links resolved,
	// once WorktreePath needed it.
	realTop string
	// linkedOut maps the names WorktreePath gave through a link that
	// leads out of the worktree to where the link leads.
	linkedOut map[string]string
	// getenv reads the environment, for the configuration; ignoreCase
	// is core.ignorecase once read ("" before).
	getenv     func(string) string
	ignoreCase string
}

// LocateHook finds the repository around dir, its session and active task,
// with plain file reads. A directory outside any repository is gitdir.ErrNotRepo;
// a repository without a work tree is ErrNoWorkTree.
func LocateHook(dir string, getenv func(string) string) (*HookTarget, error) {
	l, err := gitdir.Discover(dir, getenv)
	if err != nil {
		return nil, err
	}
	if l.WorkTree == "" {
		return nil, ErrNoWorkTree
	}
	t := &HookTarget{Layout: l, getenv: getenv}
	t.Session = findSessionFile(l.WorkTree, dir)
	if t.Session == "" {
		return t, nil
	}
	b, err := readNoFollow(t.Session)
	if err != nil {
		return t, nil // no session (or a link): no workflow to record events for
	}
	var sess struct {
		ActiveTask string `json:"active_task"`
	}
	if json.Unmarshal(b, &sess) != nil || !engine.ValidTaskName(sess.ActiveTask) {
		return t, nil
	}
	t.ActiveTask = sess.ActiveTask
	h, err := refs.NewFiles(osfs.New(l.CommonDir, osfs.WithBoundOS()), refs.Options{}).Read(TaskRef(sess.ActiveTask))
	if err == nil {
		t.Commit = h.String()
	} else if !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	return t, nil
}

// findSessionFile looks for .hegel/state.json from dir up to the top of
// the work tree, as Sessions does; a .hegel that is a symbolic link, or
// lies beyond one, is no session ("").
func findSessionFile(top, dir string) string {
	top = filepath.Clean(top)
	d, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	if rel, err := filepath.Rel(top, d); err != nil || strings.HasPrefix(rel, "..") {
		d = top
	}
	for {
		if fi, err := os.Lstat(filepath.Join(d, HegelDir)); err == nil && (fi.IsDir() || fi.Mode()&os.ModeSymlink != 0) {
			if fi.Mode()&os.ModeSymlink != 0 || linkBetween(top, d) {
				return ""
			}
			return filepath.Join(d, HegelDir, sessionFile)
		}
		if d == top {
			return filepath.Join(top, HegelDir, sessionFile)
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}

// ReadHookCache returns the cache for commit, or nil when there is none
// for it (missing, damaged, or built for another commit).
func ReadHookCache(gitDir, task, commit string) *HookCache {
	b, err := os.ReadFile(filepath.Join(gitDir, HookCacheFile))
	if err != nil {
		return nil
	}
	var c HookCache
	if json.Unmarshal(b, &c) != nil || c.Version != hookCacheVersion || c.Task != task || c.Commit != commit || commit == "" {
		return nil
	}
	return &c
}

// WriteHookCache stores c, best effort: a cache that cannot be written
// only costs speed.
func (r *Repo) WriteHookCache(c *HookCache) {
	c.Version = hookCacheVersion
	b, err := json.Marshal(c)
	if err != nil {
		return
	}
	_ = r.shared.WriteFile(filepath.Join(r.GitDir, HookCacheFile), b, false)
}

// LayoutConfig reads the configuration that applies to a repository
// without opening it.
func LayoutConfig(l *gitdir.Layout, getenv func(string) string) (*gitdir.Config, error) {
	return gitdir.Load(getenv, osfs.New(l.CommonDir, osfs.WithBoundOS()), osfs.New(l.GitDir))
}

// linkBetween reports a symbolic link among the directories below top down
// to dir.
func linkBetween(top, dir string) bool {
	for d := dir; d != top && len(d) > len(top); d = filepath.Dir(d) {
		if fi, err := os.Lstat(d); err != nil || fi.Mode()&os.ModeSymlink != 0 {
			return true
		}
	}
	return false
}

// readNoFollow reads a regular file, never through a symbolic link in
// its last component.
func readNoFollow(p string) ([]byte, error) {
	if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() {
		return nil, errors.New("not a regular file") // where open has no O_NOFOLLOW
	}
	f, err := os.OpenFile(p, os.O_RDONLY|oNoFollow, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	return io.ReadAll(io.LimitReader(f, 1<<20))
}
