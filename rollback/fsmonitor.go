package rollback

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	gitobjects "github.com/git-hegel/git-hegel/gitstore/objects"
)

// A snapshot taken with the directory cache can also ask the user's
// fsmonitor hook (core.fsmonitor set to a command, the protocol of git's
// fsmonitor-watchman hook, versions 1 and 2) which paths changed since the
// previous one. Index entries and untracked files below no reported path
// are then not lstat'd: a tracked file the stat cache does not hold was
// clean at the previous snapshot and still is; one the stat cache holds
// has the stat data recorded there. Directories are still opened and
// checked against the directory cache, which keeps its own rules.
//
// The hook's token is kept in the worktree's git directory as
// hegel-fsmonitor, with what it is valid for: the hook, the index file and
// the stat cache file (size, mtime, inode) and the scan's settings as they
// were when the snapshot that took it was stored. Anything else found on
// the next snapshot (the index rewritten by `git add`, the stat cache
// written by another snapshot, a changed setting), or a hook that fails,
// times out, prints something else than its protocol or says "/"
// (everything may have changed), means a full scan: never a snapshot
// that misses a change git would see with the same hook.
//
// core.fsmonitor=true (git's builtin daemon, spoken to over its own IPC)
// is not used: those snapshots scan everything, as without a monitor.

const (
	fsmonFile    = "hegel-fsmonitor"
	fsmonMagic   = "hegel-fsmonitor 1"
	fsmonMaxSize = 64 << 20
)

// fsmonTimeout bounds the hook's run (a variable for the tests).
var fsmonTimeout = 10 * time.Second

// fsmonitor is the hook the user configured, and where it runs.
type fsmonitor struct {
	hook    string
	version int // core.fsmonitorHookVersion: 1, 2, or 0 (unset: 2, then 1)
	root    string
}

// fsmonChanges is what the hook reported: the paths (without a trailing
// slash) below which something may have changed, and the stat cache the
// previous snapshot left.
type fsmonChanges struct {
	paths map[string]bool
	cache *statCache
	// skipped counts the lstat calls spared.
	skipped int64
}

// fsmonRecord is the token file's content.
type fsmonRecord struct {
	hook, token, index, statCache, settings string
}

// fsmonitorFor reads core.fsmonitor: a hook command, or nil (unset, a
// boolean: the builtin daemon or off).
func fsmonitorFor(get func(section, key string) (string, bool), root string) *fsmonitor {
	v, ok := get("core", "fsmonitor")
	v = strings.TrimSpace(v)
	if !ok || v == "" || root == "" {
		return nil
	}
	switch strings.ToLower(v) {
	case "true", "false", "yes", "no", "on", "off", "1", "0":
		return nil
	}
	if strings.HasPrefix(v, "~/") {
		if h, err := os.UserHomeDir(); err == nil {
			v = filepath.Join(h, v[2:])
		}
	}
	f := &fsmonitor{hook: v, root: root}
	if s, ok := get("core", "fsmonitorhookversion"); ok {
		switch strings.TrimSpace(s) {
		case "1":
			f.version = 1
		case "2":
			f.version = 2
		}
	}
	return f
}

func scanSettings(cfg scanConfig) string {
	return fmt.Sprintf("%t %t %t %t %d", cfg.fileMode, cfg.trustCtime, cfg.minimal, cfg.symlinks, cfg.maxSize)
}

// begin asks the hook what changed since the record's token. It returns
// the token to record once this snapshot is stored, and the changes, nil
// when everything must be scanned (why, for the trace).
func (f *fsmonitor) begin(gitDir string, idx *gitIndex, cfg scanConfig) (token string, ch *fsmonChanges, why string) {
	now := strconv.FormatInt(time.Now().UnixNano(), 10)
	rec, ok := loadFsmonRecord(gitDir)
	if !ok {
		// Git's own first token is a timestamp too: a v2 hook takes it.
		return now, nil, "no token from a previous snapshot"
	}
	if rec.hook != f.hook {
		return now, nil, "another hook"
	}
	// The hook is asked even when its answer cannot be used, for a token
	// of its own to keep (a timestamp may make it say "/" next time).
	var cache *statCache
	switch {
	case rec.settings != scanSettings(cfg):
		why = "other settings"
	case idx.ident == "" || idx.ident == "none" || rec.index != idx.ident:
		why = "the index changed"
	default:
		if cache = loadStatCache(gitDir); cache == nil || cache.ident != rec.statCache {
			why = "the stat cache changed"
		}
	}
	var (
		out []byte
		err error
	)
	if f.version != 1 {
		out, err = f.run(2, rec.token)
		if err == nil {
			k := bytes.IndexByte(out, 0)
			if k <= 0 {
				return now, nil, "the hook printed no token"
			}
			token, out = string(out[:k]), out[k+1:]
		}
	}
	// Unset, git asks a hook that fails version 2 for version 1 (not one
	// that timed out: that would double the wait).
	var exit *exec.ExitError
	if f.version == 1 || (f.version == 0 && errors.As(err, &exit)) {
		if _, perr := strconv.ParseInt(rec.token, 10, 64); perr != nil {
			if err == nil {
				err = errors.New("not a timestamp")
			}
			return now, nil, "hook: " + err.Error()
		}
		token = now // before the hook runs: nothing after it is missed
		out, err = f.run(1, rec.token)
	}
	if err != nil {
		return now, nil, "hook: " + err.Error()
	}
	if !validToken(token) {
		return now, nil, "the hook printed a token that cannot be kept"
	}
	if why != "" {
		return token, nil, why
	}
	paths, ok := parseFsmonPaths(out)
	if !ok {
		return token, nil, "the hook reported everything, or something not a path"
	}
	return token, &fsmonChanges{paths: paths, cache: cache}, ""
}

// run runs the hook as git does: `<hook> <version> <token>` in the
// working tree, stdin empty, bounded in time and output.
func (f *fsmonitor) run(version int, token string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), fsmonTimeout)
	defer cancel()
	var cmd *exec.Cmd
	if strings.ContainsAny(f.hook, "|&;<>()$`\\\"' \t\n*?[#~=%") {
		cmd = exec.CommandContext(ctx, "sh", "-c", f.hook+` "$@"`, f.hook, strconv.Itoa(version), token)
	} else {
		cmd = exec.CommandContext(ctx, f.hook, strconv.Itoa(version), token)
	}
	cmd.Dir = f.root
	cmd.Stdin = nil
	cmd.WaitDelay = time.Second
	var out limitedBuffer
	cmd.Stdout = &out
	err := cmd.Run()
	if ctx.Err() != nil {
		return nil, errors.New("timed out")
	}
	if err != nil {
		return nil, err
	}
	if out.over {
		return nil, errors.New("too much output")
	}
	return out.b.Bytes(), nil
}

// limitedBuffer keeps at most fsmonMaxSize bytes.
type limitedBuffer struct {
	b    bytes.Buffer
	over bool
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if l.b.Len()+len(p) > fsmonMaxSize {
		l.over = true
		return len(p), nil
	}
	return l.b.Write(p)
}

func validToken(t string) bool {
	return t != "" && len(t) <= 4096 && !strings.ContainsAny(t, "\x00\n")
}

// parseFsmonPaths reads the hook's NUL-separated paths; false when one is
// "/" (everything) or not a relative path inside the working tree.
func parseFsmonPaths(out []byte) (map[string]bool, bool) {
	paths := map[string]bool{}
	for _, p := range strings.Split(string(out), "\x00") {
		if p == "" {
			continue
		}
		if p == "/" {
			return nil, false
		}
		p = strings.TrimSuffix(p, "/")
		if p == "" || p[0] == '/' || strings.Contains(p, "\n") {
			return nil, false
		}
		for _, c := range strings.Split(p, "/") {
			if c == "" || c == "." || c == ".." {
				return nil, false
			}
		}
		paths[p] = true
	}
	return paths, true
}

// covers reports whether dir ("" for the top) or a directory above it was
// reported: everything in it may have changed.
func (c *fsmonChanges) covers(dir string) bool {
	for d := dir; d != ""; {
		if c.paths[d] {
			return true
		}
		k := strings.LastIndexByte(d, '/')
		if k < 0 {
			break
		}
		d = d[:k]
	}
	return false
}

// cached returns the stat data the stat cache holds for p, as the scan
// would have read it, when it is there and not racy.
func (c *fsmonChanges) cached(p string) (fstat, bool, bool) {
	e, ok := c.cache.entries[p]
	if !ok {
		return fstat{}, false, false
	}
	if racy(e.stat, c.cache.mtime) {
		return fstat{}, true, false
	}
	st := fstat{kind: kindFile, exec: e.flags&dirtyExec != 0, size: int64(e.stat.Size), stat: e.stat, hasStat: true}
	if e.flags&dirtyLink != 0 {
		st.kind = kindSymlink
	}
	return st, true, true
}

func loadFsmonRecord(gitDir string) (fsmonRecord, bool) {
	b, err := os.ReadFile(filepath.Join(gitDir, fsmonFile))
	if err != nil || len(b) > 64<<10 {
		return fsmonRecord{}, false
	}
	lines := strings.Split(string(b), "\n")
	if len(lines) != 7 || lines[0] != fsmonMagic || lines[6] != "" {
		return fsmonRecord{}, false
	}
	hook, err1 := hex.DecodeString(lines[1])
	token, err2 := hex.DecodeString(lines[2])
	if err1 != nil || err2 != nil || !validToken(string(token)) {
		return fsmonRecord{}, false
	}
	return fsmonRecord{hook: string(hook), token: string(token), index: lines[3], statCache: lines[4], settings: lines[5]}, true
}

// saveFsmonRecord records the token once the snapshot's stat cache is
// written (best effort: without it the next snapshot scans everything).
func saveFsmonRecord(gitDir string, perm gitobjects.SharedPerm, r fsmonRecord) {
	final := filepath.Join(gitDir, fsmonFile)
	if r.statCache == "" || strings.ContainsAny(r.index+r.statCache+r.settings, "\n") {
		os.Remove(final)
		return
	}
	b := fmt.Sprintf("%s\n%s\n%s\n%s\n%s\n%s\n", fsmonMagic, hex.EncodeToString([]byte(r.hook)),
		hex.EncodeToString([]byte(r.token)), r.index, r.statCache, r.settings)
	if err := perm.WriteFile(final, []byte(b), false); err != nil {
		os.Remove(final) // an older token must not be trusted
	}
}

// fileIdent is a file's size, mtime and inode ("" when it is not there).
func fileIdent(fi os.FileInfo) string {
	sd, _ := sysStat(fi)
	return fmt.Sprintf("%d %d %d", fi.Size(), fi.ModTime().UnixNano(), sd.Ino)
}
