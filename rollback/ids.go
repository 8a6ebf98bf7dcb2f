package rollback

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Checkpoints travel (git hegel fetch --checkpoints), so a checkpoint in
// a chain may have been made by another clone, or forged there: its
// metadata can name any branch, commit and file. Two things tell the ones
// this clone took:
//
//   - a checkpoint's id is a window of the SHA-256 of everything it
//     records (digest below): an id that does not match its content was
//     not given by this code (a forged one, or one from a git-hegel that
//     derived ids otherwise, from the time and the previous checkpoint);
//   - this clone records the digest of every checkpoint it takes in
//     $GIT_COMMON_DIR/hegel/checkpoints-taken, a local file that no fetch
//     writes and no push sends. A checkpoint whose digest is listed there
//     has exactly the content this clone stored.
//
// Local reports both. The record is appended to before the chain's ref
// names the checkpoint; a line whose checkpoint never reached the chain
// (the process died in between) is harmless, and a lost record (the file
// deleted) only makes this clone's checkpoints count as foreign.

// idLen is the length of a checkpoint id: 8 hex digits.
const idLen = 8

// digest is the SHA-256, in hex, of what c records: every field of its
// metadata but its id and chain_before (set when a later restore cuts the
// chain), its trees, and the caller's Meta in canonical form.
func (c *Checkpoint) digest() string {
	h := sha256.New()
	fmt.Fprintf(h, "git-hegel checkpoint\nkind %s\ncreated %s\nprevious %s\nbranch %s\nhead %s\nindex %s\nworktree %s\n",
		c.Kind, c.CreatedAt.UTC().Format(time.RFC3339Nano), c.Previous, c.Branch, c.Head, orEmpty(c.IndexTree), orEmpty(c.WorkTree))
	list := func(name string, items []string) {
		fmt.Fprintf(h, "%s %d\n", name, len(items))
		for _, s := range items {
			fmt.Fprintf(h, "%q\n", s)
		}
	}
	list("assume-unchanged", c.AssumeUnchanged)
	list("intent-to-add", c.IntentToAdd)
	list("files-changed", c.FilesChanged)
	fmt.Fprintf(h, "files-changed-count %d\n", c.FilesChangedCount)
	fmt.Fprintf(h, "skipped %d\n", len(c.Skipped))
	for _, s := range c.Skipped {
		fmt.Fprintf(h, "%q %d %q\n", s.Path, s.Size, s.Reason)
	}
	fmt.Fprintf(h, "moved %d\n", len(c.Moved))
	for _, b := range c.Moved {
		fmt.Fprintf(h, "%q %q\n", b.Ref, b.Commit)
	}
	h.Write([]byte("meta "))
	h.Write(c.Meta.canonical())
	return hex.EncodeToString(h.Sum(nil))
}

// contentID picks c's id from its digest: the first 8-digit window that
// is no prefix of an id in the chain (ids), and no id there is a prefix
// of.
func contentID(digest string, ids []string) (string, error) {
	for i := 0; i+idLen <= len(digest); i += idLen {
		id := digest[i : i+idLen]
		clash := false
		for _, c := range ids {
			if strings.HasPrefix(c, id) || strings.HasPrefix(id, c) {
				clash = true
				break
			}
		}
		if !clash {
			return id, nil
		}
	}
	return "", errors.New("no id derived from the checkpoint's content is free in its chain")
}

// chainIDs are the ids of chain's checkpoints, in order.
func chainIDs(chain []*Checkpoint) []string {
	ids := make([]string, len(chain))
	for i, c := range chain {
		ids[i] = c.ID
	}
	return ids
}

// idMatches reports whether id is one that contentID could give for
// digest.
func idMatches(id, digest string) bool {
	if len(id) != idLen {
		return false
	}
	for i := 0; i+idLen <= len(digest); i += idLen {
		if digest[i:i+idLen] == id {
			return true
		}
	}
	return false
}

// Local reports whether this clone took cp: its id is derived from its
// content, and the local record lists that content.
func (m *Manager) Local(cp *Checkpoint) bool {
	d := cp.digest()
	return idMatches(cp.ID, d) && m.record().has(d)
}

// takenFile is the local record, in the common git directory (shared by
// the clone's worktrees, as its checkpoint chains are).
const takenFile = "hegel/checkpoints-taken"

// takenRecord is the set of digests this clone took: the file's lines,
// read once, or a set in memory for in-memory repositories.
type takenRecord struct {
	path string // "" in memory
	m    *Manager
	once sync.Once
	set  map[string]bool
	err  error
}

func (m *Manager) record() *takenRecord {
	if m.taken == nil {
		m.taken = &takenRecord{m: m}
		if !m.w.memory {
			m.taken.path = filepath.Join(m.r.CommonDir, filepath.FromSlash(takenFile))
		}
	}
	return m.taken
}

func (t *takenRecord) load() {
	t.once.Do(func() {
		t.set = map[string]bool{}
		if t.path == "" {
			return
		}
		f, err := os.Open(t.path)
		if errors.Is(err, fs.ErrNotExist) {
			return
		}
		if err != nil {
			t.err = err
			return
		}
		defer f.Close()
		s := bufio.NewScanner(f)
		for s.Scan() {
			if line := strings.TrimSpace(s.Text()); len(line) == 2*sha256.Size {
				t.set[line] = true
			}
		}
		t.err = s.Err()
	})
}

func (t *takenRecord) has(digest string) bool {
	t.load()
	return t.set[digest]
}

// add appends digest to the record (with the repository's shared
// permissions, as every file git-hegel creates in the git directory). It
// does not read the file: a checkpoint taken is a line appended, whatever
// the record's size.
func (t *takenRecord) add(digest string) error {
	if t.set != nil && t.set[digest] {
		return nil
	}
	if t.path != "" {
		perm := t.m.r.Shared()
		if err := perm.MkdirAll(filepath.Dir(t.path)); err != nil {
			return fmt.Errorf("cannot record the checkpoint: %w", err)
		}
		f, err := perm.OpenFile(t.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND)
		if err != nil {
			return fmt.Errorf("cannot record the checkpoint: %w", err)
		}
		var b bytes.Buffer
		b.WriteString(digest)
		b.WriteByte('\n')
		_, err = io.Copy(f, &b)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("cannot record the checkpoint: %w", err)
		}
	}
	if t.path == "" {
		t.load() // in memory, the set is the record
	}
	if t.set != nil {
		t.set[digest] = true
	}
	return nil
}
