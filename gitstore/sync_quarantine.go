package gitstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	gitstorer "github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/git-hegel/git-hegel/gitstore/objects"
	"github.com/git-hegel/git-hegel/gitstore/refs"
)

// quarantine holds the objects a fetch received until they are validated,
// as git's receive-pack does for a push: rejected data never enters the
// repository's object store, so a refused ref leaves nothing behind (not
// even objects git fsck would complain about). On disk it is a temporary
// repository in the git dir that git fetch runs in (sync_git.go); in
// memory (unit tests) a memory storage.
type quarantine struct {
	dir   string // "" in memory
	store storage.Storer
	count int
	// arrived lists the objects git fetch brought (on disk).
	arrived []plumbing.Hash
	// checked: git's checks passed on the whole pack as received.
	checked bool
}

// unpackLimit is git's fetch.unpackLimit default: a fetch of fewer
// objects is stored as loose objects, a larger one as a pack.
const unpackLimit = 100

func (r *Repo) newQuarantine() (*quarantine, error) {
	if r.CommonDir == "" {
		return &quarantine{store: memory.NewStorage()}, nil
	}
	removeStaleQuarantines(r.CommonDir)
	dir, err := os.MkdirTemp(r.CommonDir, quarantinePrefix)
	if err != nil {
		return nil, fmt.Errorf("cannot create a directory for fetched objects: %w", err)
	}
	for _, sub := range []string{"objects/pack", "objects/info", "refs"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o777); err != nil {
			_ = os.RemoveAll(dir)
			return nil, fmt.Errorf("cannot create a directory for fetched objects: %w", err)
		}
	}
	return &quarantine{dir: dir}, nil
}

// prepareRepo makes the quarantine a repository git fetch can run in:
// its configuration is the repository's as git reads it here (every
// file and include, flattened by git config --list), so the remote, its
// URL rewriting, authentication, proxies and protocol settings are the
// ones git fetch would use here; its HEAD is the repository's; and its
// refs are seen and haves, so git offers them as commits we have and
// sends only what is new. seen are refs under refs/hegel/ (relative
// names): a fetch updates them, and prunes those the remote no longer
// has.
func (q *quarantine) prepareRepo(ctx context.Context, r *Repo, seen, haves map[string]plumbing.Hash) error {
	if err := q.prepareConfig(ctx, r); err != nil {
		return err
	}
	return q.writeRefs(seen, haves)
}

// prepareConfig writes the quarantine's configuration and HEAD (see
// prepareRepo); it has no refs yet.
func (q *quarantine) prepareConfig(ctx context.Context, r *Repo) error {
	cfg, err := r.flatConfig(ctx)
	if err != nil {
		return err
	}
	head, err := os.ReadFile(filepath.Join(r.GitDir, "HEAD"))
	if err != nil || !bytes.HasPrefix(head, []byte("ref: ")) && len(bytes.TrimSpace(head)) != 40 {
		head = []byte("ref: refs/heads/main\n")
	}
	for name, b := range map[string][]byte{"config": cfg, "HEAD": head} {
		if err := os.WriteFile(filepath.Join(q.dir, name), b, 0o666); err != nil {
			return fmt.Errorf("cannot prepare the directory for fetched objects: %w", err)
		}
	}
	return nil
}

// writeRefs makes seen and haves the quarantine's refs (see prepareRepo),
// in place of any it had.
func (q *quarantine) writeRefs(seen, haves map[string]plumbing.Hash) error {
	var packed bytes.Buffer
	packed.WriteString("# pack-refs with: peeled fully-peeled sorted \n")
	all := map[string]plumbing.Hash{}
	for n, h := range haves {
		all["refs/hegel-haves/"+strings.TrimPrefix(n, "refs/")] = h
	}
	for rel, h := range seen {
		all[hegelPrefix+rel] = h
	}
	for _, n := range sortedNames(all) {
		if !all[n].IsZero() {
			packed.WriteString(all[n].String() + " " + n + "\n")
		}
	}
	if err := os.RemoveAll(filepath.Join(q.dir, "refs")); err != nil {
		return fmt.Errorf("cannot prepare the directory for fetched objects: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(q.dir, "refs"), 0o777); err != nil {
		return fmt.Errorf("cannot prepare the directory for fetched objects: %w", err)
	}
	if err := os.WriteFile(filepath.Join(q.dir, "packed-refs"), packed.Bytes(), 0o666); err != nil {
		return fmt.Errorf("cannot prepare the directory for fetched objects: %w", err)
	}
	return nil
}

// flatConfig returns the configuration git reads in the repository
// (system, global, the repository's, the worktree's, and the files they
// include, as evaluated here), as one file; the command line's (git -c)
// reaches git fetch through the environment anyway. Left out: the core
// settings that describe this repository, and the object checks, which
// sync runs itself (sync_fsck.go) and whose settings it reads itself.
func (r *Repo) flatConfig(ctx context.Context) ([]byte, error) {
	dir := r.WorkTree
	if dir == "" {
		dir = r.GitDir
	}
	out, stderr, err := runSyncGit(ctx, dir, cleanGitEnv(os.Environ()), nil, "--git-dir", r.GitDir, "config", "--list", "--includes", "--show-scope", "-z")
	if err != nil {
		return nil, fmt.Errorf("cannot read git's configuration: %s", gitReason(stderr))
	}
	var b bytes.Buffer
	b.WriteString("[core]\n\trepositoryformatversion = 0\n\tbare = true\n")
	fields := strings.Split(out, "\x00")
	for i := 0; i+1 < len(fields); i += 2 {
		scope, entry := fields[i], fields[i+1]
		key, value, hasValue := strings.Cut(entry, "\n")
		if scope == "command" || skipFlatKey(key) {
			continue
		}
		dot, last := strings.IndexByte(key, '.'), strings.LastIndexByte(key, '.')
		if dot < 0 {
			continue
		}
		fmt.Fprintf(&b, "[%s", key[:dot])
		if last > dot {
			fmt.Fprintf(&b, " %s", gitConfigQuote(key[dot+1:last]))
		}
		fmt.Fprintf(&b, "]\n\t%s", key[last+1:])
		if hasValue {
			fmt.Fprintf(&b, " = %s", gitConfigQuote(value))
		}
		b.WriteString("\n")
	}
	return b.Bytes(), nil
}

// skipFlatKey reports the settings flatConfig leaves out.
func skipFlatKey(key string) bool {
	for _, p := range []string{"core.worktree", "core.bare", "core.repositoryformatversion", "extensions.",
		"include.", "includeif.", "fsck.", "fetch.fsck.", "receive.fsck."} {
		if key == p || strings.HasPrefix(key, p) && strings.HasSuffix(p, ".") {
			return true
		}
	}
	return false
}

// gitConfigQuote quotes a value (or a subsection name) for a git config
// file.
func gitConfigQuote(v string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\t", `\t`).Replace(v) + `"`
}

// open reads what git fetch stored in the quarantine: it lists the
// objects that arrived (a thin pack's bases, which index-pack appends
// from the repository, did not) and opens them for reading.
func (q *quarantine) open(base gitstorer.EncodedObjectStorer) error {
	all, err := listObjects(q.objectsDir())
	if err != nil {
		return fmt.Errorf("cannot read the fetched objects: %w", err)
	}
	q.arrived = q.arrived[:0]
	for _, h := range all {
		if base.HasEncodedObject(h) != nil {
			q.arrived = append(q.arrived, h)
		}
	}
	q.count = len(q.arrived)
	q.store = filesystem.NewStorageWithOptions(osfs.New(q.dir), cache.NewObjectLRUDefault(),
		filesystem.Options{KeepDescriptors: true, LargeObjectThreshold: largeObject})
	return nil
}

// refs returns the quarantine's refs under refs/hegel/: after a fetch,
// the remote's.
func (q *quarantine) refs() (map[string]plumbing.Hash, error) {
	list, err := refs.NewFiles(osfs.New(q.dir), refs.Options{}).List(hegelPrefix)
	if err != nil {
		return nil, fmt.Errorf("cannot read the fetched refs: %w", err)
	}
	out := make(map[string]plumbing.Hash, len(list))
	for _, r := range list {
		out[string(r.Name)] = r.Hash
	}
	return out, nil
}

// listObjects lists the objects in an object directory: those of its
// packs (from each index) and the loose ones.
func listObjects(dir string) ([]plumbing.Hash, error) {
	var out []plumbing.Hash
	idx, _ := filepath.Glob(filepath.Join(dir, "pack", "pack-*.idx"))
	for _, p := range idx {
		b, err := os.ReadFile(p)
		const head = 8 + 256*4
		if err != nil || len(b) < head || !bytes.Equal(b[:4], []byte("\377tOc")) {
			return nil, fmt.Errorf("%s: not a version 2 pack index", filepath.Base(p))
		}
		n := int(binary.BigEndian.Uint32(b[head-4 : head]))
		if len(b) < head+n*20 {
			return nil, fmt.Errorf("%s: cut short", filepath.Base(p))
		}
		for i := 0; i < n; i++ {
			var h plumbing.Hash
			copy(h[:], b[head+i*20:])
			out = append(out, h)
		}
	}
	fans, _ := filepath.Glob(filepath.Join(dir, "[0-9a-f][0-9a-f]"))
	for _, d := range fans {
		ents, err := os.ReadDir(d)
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			if h, ok := objects.ParseLowerHex(filepath.Base(d) + e.Name()); ok {
				out = append(out, h)
			}
		}
	}
	return out, nil
}

const quarantinePrefix = "hegel-incoming-"

// removeStaleQuarantines removes quarantines a killed fetch left behind:
// any older than a day (a running fetch's is minutes old at most).
func removeStaleQuarantines(commonDir string) {
	old, _ := filepath.Glob(filepath.Join(commonDir, quarantinePrefix+"*"))
	for _, d := range old {
		if fi, err := os.Stat(d); err == nil && time.Since(fi.ModTime()) > 24*time.Hour {
			_ = os.RemoveAll(d)
		}
	}
}

func (q *quarantine) objectsDir() string { return filepath.Join(q.dir, "objects") }

// holdsOnly reports whether every object that arrived is one of hashes:
// then git's checks of hashes covered all the quarantine brings.
func (q *quarantine) holdsOnly(hashes []plumbing.Hash) bool {
	set := make(map[plumbing.Hash]bool, len(hashes))
	for _, h := range hashes {
		set[h] = true
	}
	for _, h := range q.arrived {
		if !set[h] {
			return false
		}
	}
	return true
}

// over returns a store that reads the quarantined objects, then base's.
func (q *quarantine) over(base gitstorer.EncodedObjectStorer) gitstorer.EncodedObjectStorer {
	return &overlay{top: q.store, base: base}
}

// migrate moves the accepted objects into base. When every ref was
// accepted and git's checks passed on the whole pack, a large fetch keeps
// the pack as it is (its files are moved into the object store); a small
// one, or one some refs of which were refused, is stored as loose objects,
// only those the accepted refs bring.
func (q *quarantine) migrate(base gitstorer.EncodedObjectStorer, objectsDir string, accepted []plumbing.Hash, all bool) error {
	if q.store == nil {
		return nil
	}
	if all && q.checked && q.dir != "" && q.count >= unpackLimit && objectsDir != "" {
		packs, _ := filepath.Glob(filepath.Join(q.objectsDir(), "pack", "pack-*.pack"))
		if len(packs) == 1 {
			if err := movePack(packs[0], filepath.Join(objectsDir, "pack")); err != nil {
				return err
			}
			// go-git reads the list of packs once: make it look again.
			if ri, ok := base.(interface{ Reindex() }); ok {
				ri.Reindex()
			}
			return nil
		}
	}
	for _, h := range accepted {
		if base.HasEncodedObject(h) == nil {
			continue
		}
		o, err := q.store.EncodedObject(plumbing.AnyObject, h)
		if err != nil {
			continue // not fetched: the repository had it (a thin pack's base)
		}
		if _, err := base.SetEncodedObject(o); err != nil {
			return err
		}
	}
	return nil
}

// movePack moves a pack and its index into dir, the pack first: git (and
// go-git) find a pack by its index, so it is never seen half moved.
func movePack(pack, dir string) error {
	base := strings.TrimSuffix(filepath.Base(pack), ".pack")
	src := filepath.Dir(pack)
	for _, ext := range []string{".pack", ".rev", ".idx"} {
		from := filepath.Join(src, base+ext)
		if _, err := os.Stat(from); err != nil {
			if ext == ".rev" {
				continue
			}
			return err
		}
		if err := os.Rename(from, filepath.Join(dir, base+ext)); err != nil {
			return err
		}
	}
	return nil
}

// discard removes the quarantine and whatever it still holds.
func (q *quarantine) discard() {
	if c, ok := q.store.(io.Closer); ok && q.store != nil {
		_ = c.Close()
	}
	if q.dir != "" {
		_ = os.RemoveAll(q.dir)
	}
}

// objectReader returns a store for the many object reads of a merge and
// a function that releases it: the repository's own, whose object layer
// keeps packs open, reads them without a lock and caches what it read
// (gitstore/objects). Size limits are checked before reading (checkSize).
func (r *Repo) objectReader() (gitstorer.EncodedObjectStorer, func()) {
	return r.storage, func() {}
}

// overlay reads from top, then base; writes go to top.
type overlay struct {
	top  gitstorer.EncodedObjectStorer
	base gitstorer.EncodedObjectStorer
}

var _ gitstorer.EncodedObjectStorer = (*overlay)(nil)

func (o *overlay) NewEncodedObject() plumbing.EncodedObject { return o.top.NewEncodedObject() }

func (o *overlay) SetEncodedObject(obj plumbing.EncodedObject) (plumbing.Hash, error) {
	return o.top.SetEncodedObject(obj)
}

func (o *overlay) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	obj, err := o.top.EncodedObject(t, h)
	if err == nil {
		return obj, nil
	}
	return o.base.EncodedObject(t, h)
}

func (o *overlay) IterEncodedObjects(t plumbing.ObjectType) (gitstorer.EncodedObjectIter, error) {
	return o.top.IterEncodedObjects(t)
}

func (o *overlay) HasEncodedObject(h plumbing.Hash) error {
	if o.top.HasEncodedObject(h) == nil {
		return nil
	}
	return o.base.HasEncodedObject(h)
}

func (o *overlay) EncodedObjectSize(h plumbing.Hash) (int64, error) {
	if n, err := o.top.EncodedObjectSize(h); err == nil {
		return n, nil
	}
	return o.base.EncodedObjectSize(h)
}

func (o *overlay) AddAlternate(string) error {
	return errors.New("alternates are not supported here")
}
