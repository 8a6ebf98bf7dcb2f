package gitstore

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/git-hegel/git-hegel/gitstore/gitdir"
	"github.com/git-hegel/git-hegel/gitstore/objects"
	"github.com/git-hegel/git-hegel/gitstore/refs"
	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/memfs"
	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/filesystem/dotgit"
	"github.com/go-git/go-git/v5/storage/memory"
)

// ErrNoWorkTree is returned for bare repositories and from inside a git
// directory: git-hegel keeps a session per working tree.
var ErrNoWorkTree = errors.New("this operation must be run in a work tree")

// Repo is an opened repository: where it lives, its configuration, and the
// go-git storage git-hegel reads and writes objects through.
type Repo struct {
	gitdir.Layout // empty paths for in-memory repositories

	// stashesMade is the record of the stashes pushed here, read once
	// per process (stash_made.go); nil until read.
	stashesMade   map[string]bool
	stashesMadeMu sync.Mutex

	cfg      *gitdir.Config
	storage  storage.Storer
	objects  *objects.Objects
	shared   objects.SharedPerm
	refs     refs.Backend
	worktree billy.Filesystem // the working tree
	common   billy.Filesystem // the common git dir (info/exclude lives here)

	// Subdir is the directory the command runs in, relative to the top of
	// the working tree, slash-separated ("" at the top).
	Subdir string
	// Now is the clock used for commit and session timestamps.
	Now func() time.Time
	// Warn reports what a command should say without failing (a dead
	// process's lock removed); nil says nothing.
	Warn func(msg string)

	getenv func(string) string
	// syncTransport, if set, moves sync's objects instead of the git
	// binary (in-memory repositories in tests).
	syncTransport remoteTransport
	trees         treeMemo
	extras        extrasMemo
	// instance is this clone's id (see instance.go), read on first use.
	instance string
	// sessGuard is the session path's check (session_path.go), made once
	// per command.
	sessGuard *sessionGuard
	// dur is core.fsync and core.fsyncMethod (objects.Durability); nil in
	// memory.
	dur *objects.Durability
	// owner is this process's lock owner file for the repository
	// (refs.OwnerFile); nil in memory.
	owner *refs.OwnerFile
}

// Open finds and opens the repository enclosing dir. It refuses, with one
// line a user can act on, repositories whose format git-hegel cannot safely
// read or write.
func Open(dir string, getenv func(string) string) (*Repo, error) {
	l, err := gitdir.Discover(dir, getenv)
	if err != nil {
		return nil, err
	}
	gitDirFS := osfs.New(l.GitDir)
	// The plain (chroot) OS filesystem: the bound one checks every path
	// component with lstat on every call (a dozen system calls per ref
	// read), and git follows symbolic links in its own directory anyway.
	// Nothing needs its files' Sync: hardened writes go through os
	// (objects.Durability).
	commonFS := osfs.New(l.CommonDir)
	cfg, err := gitdir.Load(getenv, commonFS, gitDirFS)
	if err != nil {
		return nil, err
	}
	gitdir.Resolve(l, cfg, dir, getenv)
	if l.WorkTree == "" || (cfg.Bool("core", "bare", false) && getenv("GIT_WORK_TREE") == "") {
		return nil, ErrNoWorkTree
	}
	if err := gitdir.CheckFormat(cfg, l); err != nil {
		return nil, err
	}
	shared, err := objects.ParseSharedPerm(cfg.Get("core", "", "sharedrepository"))
	if err != nil {
		return nil, err
	}
	var fs billy.Filesystem = gitDirFS
	if l.CommonDir != l.GitDir {
		// Not commonFS: a bound filesystem's TempFile returns absolute
		// names, and RepositoryFilesystem routes the temporary object's
		// rename by path, to the wrong directory.
		fs = dotgit.NewRepositoryFilesystem(gitDirFS, osfs.New(l.CommonDir))
	}
	r := &Repo{
		Layout:   *l,
		cfg:      cfg,
		shared:   shared,
		worktree: osfs.New(l.WorkTree, osfs.WithBoundOS()),
		common:   commonFS,
		getenv:   getenv,
		Now:      time.Now,
	}
	dur := objects.ParseDurability(cfg, getenv, r.warnf)
	db := objects.New(l.ObjectDir, gitdir.Alternates(l.ObjectDir, dir, getenv("GIT_ALTERNATE_OBJECT_DIRECTORIES")), shared, objects.LooseCompression(cfg), dur)
	r.storage = objects.NewStorer(filesystem.NewStorage(fs, cache.NewObjectLRUDefault()), db)
	r.objects, r.dur = db, dur
	r.owner = refs.OwnerFor(l.CommonDir, shared)
	r.refs = refs.NewFiles(commonFS, refs.Options{Perm: shared, Warn: r.warnf,
		Logs:       refs.NewReflogs(commonFS, shared, cfg, r.reflogIdent, r.commitSubject),
		Durability: dur, Flush: db.Flush, Owner: r.owner})
	if abs, err := filepath.Abs(dir); err == nil {
		if rel, err := filepath.Rel(l.WorkTree, abs); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
			r.Subdir = filepath.ToSlash(rel)
		}
	}
	return r, nil
}

// NewMemory returns an empty in-memory repository (go-git memory storage and
// a memfs working tree) with HEAD on an unborn main branch. Unit tests use it.
func NewMemory() (*Repo, error) {
	st := memory.NewStorage()
	wt := memfs.New()
	// What `git init -b main` writes: HEAD names the unborn branch. (Not
	// go-git's Init: that package links every go-git transport, ssh and
	// http client into the binary, which costs each command's start-up.)
	if err := st.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, plumbing.NewBranchReferenceName("main"))); err != nil {
		return nil, err
	}
	cfg, _ := gitdir.Load(func(string) string { return "" }, nil, nil)
	return &Repo{
		cfg:      cfg,
		storage:  st,
		objects:  objects.NewMemory(st),
		refs:     refs.NewMemory(st),
		worktree: wt,
		common:   memfs.New(),
		getenv:   func(string) string { return "" },
		Now:      time.Now,
	}, nil
}

// Config returns the configuration in effect for the repository.
func (r *Repo) Config() *gitdir.Config { return r.cfg }

// WorkTreeFS returns the working tree's filesystem.
func (r *Repo) WorkTreeFS() billy.Filesystem { return r.worktree }

// Storage returns the go-git storage (objects and refs).
func (r *Repo) Storage() storage.Storer { return r.storage }

// Objects returns the repository's object database.
func (r *Repo) Objects() *objects.Objects { return r.objects }

// Durability returns the repository's fsync settings.
func (r *Repo) Durability() *objects.Durability { return r.dur }

// SyncFile hardens f as a file of component c (see Durability.Sync), for
// packages that write git's files themselves (rollback's index).
func (r *Repo) SyncFile(c objects.FsyncComponent, f *os.File) error { return r.dur.Sync(c, f) }

// Shared returns the repository's shared permissions.
func (r *Repo) Shared() objects.SharedPerm { return r.shared }

// warnf passes msg to Warn, if set.
func (r *Repo) warnf(msg string) {
	if r.Warn != nil {
		r.Warn(msg)
	}
}

// osfsAt is an OS filesystem rooted at dir whose files expose Sync.
func osfsAt(dir string) billy.Filesystem { return osfs.New(dir, osfs.WithBoundOS()) }
