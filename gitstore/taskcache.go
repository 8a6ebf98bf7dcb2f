package gitstore

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/git-hegel/git-hegel/gitstore/objects"
)

// The task cache keeps, per task, the content of the commit its ref last
// pointed at: <common git dir>/hegel/task-cache/<task>. A hit costs one
// small file read instead of five object reads (commit, tree, three
// blobs, each inflated); the state is parsed once, by the task's decoder.
// An entry is used only when the ref still points at its commit, so it
// cannot go stale; anything that does not parse, or whose checksum does
// not match, is a miss. Deleting the directory loses nothing.
//
// The file is rewritten in place, not through a temporary file and a
// rename: creating a file is the most expensive thing a transition does
// on some filesystems (ext4 allocating an inode among many recently freed
// ones took 0.1–0.2 ms here), and the checksum already turns a torn or
// interleaved write into a miss. The format (docs/storage.md):
//
//	git-hegel task cache 2
//	commit <hex>
//	tree <hex>
//	extras <n>                  (or "extras unknown")
//	<mode> <hex> <name>         (n lines)
//	state <length>
//	<bytes>
//	workflow <length>
//	<bytes>
//	crc32 <hex of everything above>
const (
	taskCacheDir   = "hegel/task-cache"
	taskCacheMagic = "git-hegel task cache 2\n"
)

// taskCachePath is the cache file for a key: a task's name, or
// "archive/<name>" for an archived task. The suffix keeps a task named
// "archive" apart from the directory of archived ones. (Files named
// <key>.json are an earlier format's, never read.)
func taskCachePath(key string) string { return taskCacheDir + "/" + key + ".cache" }

// removeTaskCache drops a cache entry (best effort: an entry is only used
// while its ref points at its commit anyway).
func (r *Repo) removeTaskCache(key string) { _ = r.common.Remove(taskCachePath(key)) }

// readTaskCache returns the cached document for commit h, or nil.
func (r *Repo) readTaskCache(name string, h plumbing.Hash) *Doc {
	var b []byte
	var err error
	if r.CommonDir != "" {
		b, err = os.ReadFile(filepath.Join(r.CommonDir, filepath.FromSlash(taskCachePath(name))))
	} else {
		b, err = readFile(r.common, taskCachePath(name))
	}
	if err != nil {
		return nil
	}
	c, ok := parseTaskCache(b)
	if !ok || c.commit != h {
		return nil
	}
	r.rememberTree(h, c.tree)
	if c.extras != nil {
		r.rememberExtras(h, c.extras)
	}
	// The documents' blobs are their content's names (not the version
	// blob's: any spelling of the version is accepted on read).
	r.rememberDocBlobs(h, map[string]plumbing.Hash{
		stateFile:    objects.HashObject(plumbing.BlobObject, c.state),
		workflowFile: objects.HashObject(plumbing.BlobObject, c.workflow),
	})
	return &Doc{
		Files:  map[string][]byte{stateFile: c.state, workflowFile: c.workflow},
		Commit: h,
		Tree:   c.tree,
	}
}

type cachedTask struct {
	commit, tree    plumbing.Hash
	extras          map[string]leaf // nil: unknown
	state, workflow []byte
}

func parseTaskCache(b []byte) (cachedTask, bool) {
	var c cachedTask
	body, sum, ok := cutLastLine(b)
	if !ok || !bytes.HasPrefix(body, []byte(taskCacheMagic)) {
		return c, false
	}
	want, ok := strings.CutPrefix(sum, "crc32 ")
	if !ok || want != strconv.FormatUint(uint64(crc32.ChecksumIEEE(body)), 16) {
		return c, false
	}
	rest := body[len(taskCacheMagic):]
	line := func() (string, bool) {
		l, after, ok := bytes.Cut(rest, []byte("\n"))
		rest = after
		return string(l), ok
	}
	hashLine := func(key string) (plumbing.Hash, bool) {
		l, ok := line()
		v, ok2 := strings.CutPrefix(l, key+" ")
		h, ok3 := objects.ParseHex(v)
		return h, ok && ok2 && ok3
	}
	section := func(key string) ([]byte, bool) {
		l, ok := line()
		v, ok2 := strings.CutPrefix(l, key+" ")
		n, err := strconv.Atoi(v)
		if !ok || !ok2 || err != nil || n < 0 || n > len(rest) {
			return nil, false
		}
		out := rest[:n:n]
		rest = rest[n:]
		return out, true
	}
	if c.commit, ok = hashLine("commit"); !ok {
		return c, false
	}
	if c.tree, ok = hashLine("tree"); !ok {
		return c, false
	}
	l, ok := line()
	if !ok {
		return c, false
	}
	if l != "extras unknown" {
		v, ok := strings.CutPrefix(l, "extras ")
		n, err := strconv.Atoi(v)
		if !ok || err != nil || n < 0 || n > 1<<16 {
			return c, false
		}
		c.extras = make(map[string]leaf, n)
		for i := 0; i < n; i++ {
			l, ok := line()
			mode, l2, ok2 := strings.Cut(l, " ")
			hx, name, ok3 := strings.Cut(l2, " ")
			fm, err := filemode.New(mode)
			h, ok4 := objects.ParseHex(hx)
			if !ok || !ok2 || !ok3 || !ok4 || err != nil || name == "" {
				return c, false
			}
			c.extras[name] = leaf{mode: fm, hash: h}
		}
	}
	if c.state, ok = section("state"); !ok || len(c.state) == 0 {
		return c, false
	}
	if c.workflow, ok = section("workflow"); !ok || len(rest) != 0 {
		return c, false
	}
	return c, true
}

// cutLastLine splits b before its last line, which must end in a newline.
func cutLastLine(b []byte) (body []byte, last string, ok bool) {
	if len(b) == 0 || b[len(b)-1] != '\n' {
		return nil, "", false
	}
	i := bytes.LastIndexByte(b[:len(b)-1], '\n')
	if i < 0 {
		return nil, "", false
	}
	return b[:i+1], string(b[i+1 : len(b)-1]), true
}

// writeTaskCache records d as the task's cached content. It is best
// effort: a cache that cannot be written only costs speed. Never
// fsynced: after a crash a torn file fails its checksum and is a miss.
func (r *Repo) writeTaskCache(name string, d *Doc) {
	var b bytes.Buffer
	state, wf := d.Files[stateFile], d.Files[workflowFile]
	b.Grow(len(taskCacheMagic) + 200 + len(state) + len(wf))
	b.WriteString(taskCacheMagic)
	fmt.Fprintf(&b, "commit %s\ntree %s\n", d.Commit, d.Tree)
	r.extras.mu.Lock()
	ex, known := r.extras.m[d.Commit]
	r.extras.mu.Unlock()
	if !known {
		b.WriteString("extras unknown\n")
	} else {
		names := make([]string, 0, len(ex))
		for n := range ex {
			if strings.ContainsAny(n, "\n") {
				return // cannot be written in this format; stay a miss
			}
			names = append(names, n)
		}
		sort.Strings(names)
		fmt.Fprintf(&b, "extras %d\n", len(names))
		for _, n := range names {
			fmt.Fprintf(&b, "%s %s %s\n", ex[n].mode, ex[n].hash, n)
		}
	}
	fmt.Fprintf(&b, "state %d\n", len(state))
	b.Write(state)
	fmt.Fprintf(&b, "workflow %d\n", len(wf))
	b.Write(wf)
	fmt.Fprintf(&b, "crc32 %s\n", strconv.FormatUint(uint64(crc32.ChecksumIEEE(b.Bytes())), 16))

	if r.CommonDir == "" {
		_ = r.writeCommon(taskCachePath(name), b.Bytes(), false)
		return
	}
	p := filepath.Join(r.CommonDir, filepath.FromSlash(taskCachePath(name)))
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_TRUNC, 0)
	if errors.Is(err, fs.ErrNotExist) {
		if err := r.shared.MkdirAll(filepath.Dir(p)); err != nil {
			return
		}
		f, err = r.shared.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
	}
	if err != nil {
		return
	}
	_, _ = f.Write(b.Bytes())
	_ = f.Close()
}

// cachedState returns the cached state.json of commit h, or nil.
func (r *Repo) cachedState(key string, h plumbing.Hash) []byte {
	if d := r.readTaskCache(key, h); d != nil {
		return d.Files[stateFile]
	}
	return nil
}
