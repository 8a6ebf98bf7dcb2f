package objects

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/git-hegel/git-hegel/gitstore/gitdir"
)

// git-hegel hardens what it writes exactly as git would harden the same
// kind of file: git's core.fsync lists the components that are fsynced
// and core.fsyncMethod says how (git-config(1)). By default git fsyncs
// packs and their metadata, and neither loose objects nor refs; a crash
// of git-hegel's process loses nothing either way (the page cache
// survives it), only a power loss or kernel crash can. What git-hegel
// writes maps onto git's components as follows:
//
//	loose-object  loose objects (task, stash, checkpoint commits and trees)
//	pack          packs written by sync
//	pack-metadata their .idx files
//	reference     refs, packed-refs, HEAD, and git-hegel's pointers that
//	              work like one: the session file (.hegel/state.json, the
//	              worktree's active task, as HEAD names its branch), the
//	              adoption and remote set-up records, info/exclude
//	index         the index a rollback writes
//
// Caches (task cache, stash summaries, hook cache) are never fsynced: a
// torn one is a miss. The rollback journal is always fsynced: it is what
// finishes or refuses an interrupted rollback, which git has no
// counterpart for.

// FsyncComponent is one of git's core.fsync components.
type FsyncComponent uint16

// The components of core.fsync, as git numbers them.
const (
	FsyncLooseObject FsyncComponent = 1 << iota
	FsyncPack
	FsyncPackMetadata
	FsyncCommitGraph
	FsyncIndex
	FsyncReference
)

// Git's aggregates.
const (
	fsyncObjects         = FsyncLooseObject | FsyncPack
	fsyncDerivedMetadata = FsyncPackMetadata | FsyncCommitGraph
	fsyncDefault         = (fsyncObjects | fsyncDerivedMetadata) &^ FsyncLooseObject
	fsyncCommitted       = fsyncObjects | FsyncReference
	fsyncAdded           = fsyncCommitted | FsyncIndex
	fsyncAll             = FsyncLooseObject | FsyncPack | FsyncPackMetadata | FsyncCommitGraph | FsyncIndex | FsyncReference
)

// fsyncNames is git's table, in git's order: a name matches every entry
// it is a prefix of, as git's strncmp does ("pack" is pack and
// pack-metadata).
var fsyncNames = []struct {
	name string
	bits FsyncComponent
}{
	{"loose-object", FsyncLooseObject},
	{"pack", FsyncPack},
	{"pack-metadata", FsyncPackMetadata},
	{"commit-graph", FsyncCommitGraph},
	{"index", FsyncIndex},
	{"objects", fsyncObjects},
	{"reference", FsyncReference},
	{"derived-metadata", fsyncDerivedMetadata},
	{"committed", fsyncCommitted},
	{"added", fsyncAdded},
	{"all", fsyncAll},
}

type fsyncMethod uint8

const (
	fsyncMethodFsync fsyncMethod = iota
	fsyncMethodWriteoutOnly
	fsyncMethodBatch
)

// Durability is the repository's core.fsync, core.fsyncMethod and
// core.fsyncObjectFiles, and git's GIT_TEST_FSYNC (false: no fsync at
// all, as git's test suite runs). Safe for concurrent use.
type Durability struct {
	components  FsyncComponent
	method      fsyncMethod
	objectFiles int8 // core.fsyncObjectFiles: -1 unset, 0 false, 1 true
	off         bool
	warnings    []string
	warnOnce    sync.Once
	warn        func(string)
	// synced counts the files hardened, and flushes the batch flushes
	// (Counts).
	synced, flushes atomic.Int64
}

// Counts returns how many files were hardened and how many batch flushes
// ran, for tests that check what a command fsyncs.
func (d *Durability) Counts() (synced, flushes int64) {
	return d.synced.Load(), d.flushes.Load()
}

// ParseDurability reads the settings as git's config callback does: the
// last core.fsync wins, each starting from the default; unknown names are
// ignored with git's warning, given to warn (nil: silent) the first time
// the settings are used.
func ParseDurability(c *gitdir.Config, getenv func(string) string, warn func(string)) *Durability {
	d := &Durability{components: fsyncDefault, objectFiles: -1, warn: warn}
	if v, ok := c.Get("core", "", "fsync"); ok {
		d.components = d.parseComponents(v)
	}
	if v, ok := c.Get("core", "", "fsyncmethod"); ok {
		switch v {
		case "fsync":
			d.method = fsyncMethodFsync
		case "writeout-only":
			d.method = fsyncMethodWriteoutOnly
		case "batch":
			d.method = fsyncMethodBatch
		default:
			d.warnings = append(d.warnings, fmt.Sprintf("ignoring unknown core.fsyncMethod value '%s'", v))
		}
	}
	if v, ok := c.Get("core", "", "fsyncobjectfiles"); ok {
		d.warnings = append(d.warnings, "core.fsyncObjectFiles is deprecated; use core.fsync instead")
		if b, ok := gitdir.ParseBool(v); ok && b {
			d.objectFiles = 1
		} else {
			d.objectFiles = 0
		}
	}
	if v := getenv("GIT_TEST_FSYNC"); v != "" {
		if b, ok := gitdir.ParseBool(v); ok && !b {
			d.off = true
		}
	}
	return d
}

// parseComponents is git's parse_fsync_components: a comma-separated list
// of names, each added, or removed with a leading "-", starting from the
// default; "none" (as the whole rest of the value, which is how git
// compares it) starts from nothing instead.
func (d *Durability) parseComponents(s string) FsyncComponent {
	current := fsyncDefault
	var positive, negative FsyncComponent
	for s != "" {
		s = strings.TrimLeft(s, ", \t\n\r")
		item, rest, found := strings.Cut(s, ",")
		if !found {
			rest = ""
		}
		if s == "none" {
			current = 0
			s = rest
			continue
		}
		negated := false
		if strings.HasPrefix(item, "-") {
			negated = true
			item = item[1:]
			if item == "" {
				d.warnings = append(d.warnings, "invalid value for variable core.fsync")
			}
		}
		if item == "" {
			break
		}
		matched := false
		for _, n := range fsyncNames {
			if !strings.HasPrefix(n.name, item) {
				continue
			}
			matched = true
			if negated {
				negative |= n.bits
			} else {
				positive |= n.bits
			}
		}
		if !matched {
			d.warnings = append(d.warnings, fmt.Sprintf("ignoring unknown core.fsync component '%s'", item))
		}
		s = rest
	}
	return current&^negative | positive
}

// Wants reports whether files of component c are hardened.
func (d *Durability) Wants(c FsyncComponent) bool {
	return d != nil && !d.off && d.components&c != 0
}

// Sync hardens f if its component is in core.fsync, by core.fsyncMethod:
// writeout-only starts the write-back and waits for it without asking
// the disk to flush its cache (git's FSYNC_WRITEOUT_ONLY, falling back to
// a full fsync where the system cannot); fsync and batch flush fully
// (batch defers only loose objects, see Objects.Flush).
func (d *Durability) Sync(c FsyncComponent, f OSFile) error {
	if !d.Wants(c) {
		return nil
	}
	d.warnings1()
	d.synced.Add(1)
	if d.method == fsyncMethodWriteoutOnly && writeout(f) == nil {
		return nil
	}
	return f.Sync()
}

// warnings1 reports the configuration's warnings once, the first time the
// settings are used (git warns when it reads them).
func (d *Durability) warnings1() {
	d.warnOnce.Do(func() {
		if d.warn != nil {
			for _, w := range d.warnings {
				d.warn(w)
			}
		}
	})
}

// looseBatch holds the state of core.fsyncMethod=batch for an object
// database: whether loose objects were written out since the last flush.
type looseBatch struct {
	pending atomic.Bool
	mu      sync.Mutex
}

// OSFile is an open OS file: *os.File, or a billy file that wraps one.
type OSFile interface {
	Fd() uintptr
	Sync() error
}

// syncLoose hardens a loose object's temporary file before its rename.
// With core.fsyncMethod=batch it only writes it out (no disk cache flush)
// and leaves the flush to Flush, which runs before any ref update: git's
// bulk check-in, without the temporary object directory (an object not
// yet flushed is visible, but no ref points at it).
func (o *Objects) syncLoose(f *os.File) error {
	d := o.dur
	if d == nil || d.off {
		return nil
	}
	d.warnings1()
	switch {
	case d.method == fsyncMethodBatch && d.Wants(FsyncLooseObject):
		d.synced.Add(1)
		if writeout(f) == nil {
			o.batch.pending.Store(true)
			return nil
		}
		return f.Sync()
	case d.objectFiles > 0:
		d.synced.Add(1)
		return f.Sync() // git's core.fsyncObjectFiles: a full flush, whatever the method
	}
	return d.Sync(FsyncLooseObject, f)
}

// Flush makes the loose objects written out under core.fsyncMethod=batch
// durable with one full flush (an fsync of a temporary file in the object
// directory, which on the usual filesystems flushes the disk's cache and
// the journal with it), as git does before the objects are used. Ref
// updates call it first; it costs nothing when nothing is pending.
func (o *Objects) Flush() error {
	if o == nil || !o.batch.pending.Load() {
		return nil
	}
	o.batch.mu.Lock()
	defer o.batch.mu.Unlock()
	if !o.batch.pending.Swap(false) {
		return nil
	}
	f, err := os.CreateTemp(o.dir, "bulk_fsync_")
	if err != nil {
		o.batch.pending.Store(true)
		return fmt.Errorf("cannot flush written objects: %w", err)
	}
	name := f.Name()
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	os.Remove(name)
	if err != nil {
		o.batch.pending.Store(true)
		return fmt.Errorf("cannot flush written objects: %w", err)
	}
	if o.dur != nil {
		o.dur.flushes.Add(1)
	}
	return nil
}
