package gitstore

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/memfs"
	"github.com/go-git/go-billy/v5/osfs"
	git "github.com/go-git/go-git/v5"
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
	Layout // empty paths for in-memory repositories

	cfg      *Config
	storage  storage.Storer
	objects  *Objects
	shared   SharedPerm
	refs     refBackend
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
	gogit  *git.Repository
	trees  treeMemo
	extras extrasMemo
	// instance is this clone's id (see instance.go), read on first use.
	instance string
	// sessGuard is the session path's check (session_path.go), made once
	// per command.
	sessGuard *sessionGuard
	// dur is core.fsync and core.fsyncMethod (fsync.go); nil in memory.
	dur *Durability
	// owner is this process's lock owner file for the repository
	// (lockowner_file.go); nil in memory.
	owner *ownerFile
}

// Open finds and opens the repository enclosing dir. It refuses, with one
// line a user can act on, repositories whose format git-hegel cannot safely
// read or write.
func Open(dir string, getenv func(string) string) (*Repo, error) {
	l, err := Discover(dir, getenv)
	if err != nil {
		return nil, err
	}
	gitDirFS := osfs.New(l.GitDir)
	// The plain (chroot) OS filesystem: the bound one checks every path
	// component with lstat on every call (a dozen system calls per ref
	// read), and git follows symbolic links in its own directory anyway.
	// Nothing needs its files' Sync: hardened writes go through os
	// (fsync.go).
	commonFS := osfs.New(l.CommonDir)
	cfg, err := loadConfig(getenv, commonFS, gitDirFS)
	if err != nil {
		return nil, err
	}
	if l.WorkTree == "" {
		if wt, ok := cfg.Get("core", "", "worktree"); ok && wt != "" {
			l.WorkTree = absFrom(l.GitDir, wt)
		} else if getenv("GIT_DIR") != "" && !cfg.Bool("core", "bare", false) {
			// git's rule: GIT_DIR without a work tree makes the current
			// directory the top of the work tree.
			l.WorkTree, _ = filepath.Abs(dir)
		}
	}
	if l.WorkTree == "" || (cfg.Bool("core", "bare", false) && getenv("GIT_WORK_TREE") == "") {
		return nil, ErrNoWorkTree
	}
	l.setEnvPaths(dir, getenv)
	if err := checkFormat(cfg, l); err != nil {
		return nil, err
	}
	shared, err := parseSharedPerm(cfg.Get("core", "", "sharedrepository"))
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
	dur := parseDurability(cfg, getenv)
	objects := newDiskObjects(l.ObjectDir, alternates(l.ObjectDir, dir, getenv("GIT_ALTERNATE_OBJECT_DIRECTORIES")), shared, looseCompression(cfg), dur)
	r := &Repo{
		Layout:   *l,
		cfg:      cfg,
		storage:  newStorer(filesystem.NewStorage(fs, cache.NewObjectLRUDefault()), objects),
		objects:  objects,
		shared:   shared,
		worktree: osfs.New(l.WorkTree, osfs.WithBoundOS()),
		common:   commonFS,
		getenv:   getenv,
		Now:      time.Now,
		dur:      dur,
	}
	dur.warn = r.warnf
	r.owner = ownerFor(l.CommonDir, shared)
	refs := newFileRefs(commonFS)
	refs.perm, refs.warn, refs.logs = shared, r.warnf, newReflogs(commonFS, r)
	refs.dur, refs.flush, refs.owner = dur, objects.Flush, r.owner
	r.refs = refs
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
	g, err := git.InitWithOptions(st, wt, git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName("main")})
	if err != nil {
		return nil, err
	}
	cfg, _ := loadConfig(func(string) string { return "" }, nil, nil)
	return &Repo{
		cfg:      cfg,
		storage:  st,
		objects:  newMemoryObjects(st),
		refs:     &storerRefs{s: st},
		worktree: wt,
		common:   memfs.New(),
		getenv:   func(string) string { return "" },
		Now:      time.Now,
		gogit:    g,
	}, nil
}

// Config returns the configuration in effect for the repository.
func (r *Repo) Config() *Config { return r.cfg }

// WorkTreeFS returns the working tree's filesystem.
func (r *Repo) WorkTreeFS() billy.Filesystem { return r.worktree }

// Storage returns the go-git storage (objects and refs).
func (r *Repo) Storage() storage.Storer { return r.storage }

// GoGit returns a go-git Repository over the same storage and working tree,
// opened once on first use; only commands that touch the worktree need it.
func (r *Repo) GoGit() (*git.Repository, error) {
	if r.gogit != nil {
		return r.gogit, nil
	}
	g, err := git.Open(r.storage, r.worktree)
	if err != nil {
		return nil, fmt.Errorf("cannot open repository: %s", oneLine(err.Error()))
	}
	r.gogit = g
	return g, nil
}

// knownExtensions are repository extensions that change nothing git-hegel
// reads or writes.
var knownExtensions = map[string]bool{
	"noop": true, "noop-v1": true, "worktreeconfig": true,
	"partialclone": true, "preciousobjects": true,
}

// checkFormat refuses repositories whose objects, refs or index git-hegel
// would misread or corrupt, naming the setting and how to change it.
func checkFormat(cfg *Config, l *Layout) error {
	if v, _ := cfg.Get("core", "", "repositoryformatversion"); strings.TrimSpace(v) != "" && v != "0" && v != "1" {
		return &UnsupportedError{fmt.Sprintf("unsupported repository format version %s", v)}
	}
	for _, l := range cfg.layers {
		if !l.HasSection("extensions") {
			continue
		}
		for _, o := range l.Section("extensions").Options {
			key, val := strings.ToLower(o.Key), strings.ToLower(strings.TrimSpace(o.Value))
			switch {
			case key == "objectformat" && val == "sha256":
				return &UnsupportedError{"sha256 repositories are not supported: go-git reads only sha1 object names"}
			case key == "objectformat" && (val == "sha1" || val == ""):
			case key == "refstorage" && val == "reftable":
				return &UnsupportedError{"reftable repositories are not supported: git-hegel needs the files ref backend (extensions.refStorage=files)"}
			case key == "refstorage" && (val == "files" || val == ""):
			case !knownExtensions[key]:
				return &UnsupportedError{fmt.Sprintf("unsupported repository extension '%s'", o.Key)}
			}
		}
	}
	if cfg.Bool("core", "splitindex", false) || hasSharedIndex(l.GitDir) {
		return &UnsupportedError{"split index is not supported: run 'git config core.splitIndex false && git update-index --no-split-index'"}
	}
	if cfg.Bool("index", "sparse", false) {
		return &UnsupportedError{"sparse index is not supported: run 'git sparse-checkout init --no-sparse-index'"}
	}
	if cfg.Bool("index", "skiphash", false) || indexSkipsHash(l.IndexFile) {
		return &UnsupportedError{"index.skipHash is not supported: run 'git config index.skipHash false && git update-index --force-write-index'"}
	}
	return nil
}

func hasSharedIndex(gitDir string) bool {
	m, _ := filepath.Glob(filepath.Join(gitDir, "sharedindex.*"))
	return len(m) > 0
}

// indexSkipsHash reads only the index's 20-byte trailer: git writes zeros
// there when index.skipHash is on (possibly set by feature.manyFiles).
func indexSkipsHash(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() < 12+20 {
		return false
	}
	var tail [20]byte
	if _, err := f.ReadAt(tail[:], fi.Size()-20); err != nil && err != io.EOF {
		return false
	}
	return tail == [20]byte{}
}

// warnf passes msg to Warn, if set.
func (r *Repo) warnf(msg string) {
	if r.Warn != nil {
		r.Warn(msg)
	}
}

// osfsAt is an OS filesystem rooted at dir whose files expose Sync.
func osfsAt(dir string) billy.Filesystem { return osfs.New(dir, osfs.WithBoundOS()) }
