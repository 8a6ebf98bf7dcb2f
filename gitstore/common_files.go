package gitstore

import (
	"io"
	"os"
	"path"
	"path/filepath"

	"github.com/git-hegel/git-hegel/gitstore/gitdir"
	"github.com/git-hegel/git-hegel/gitstore/objects"
)

// writeCommon replaces name (slash-separated, relative to the common git
// dir) with data through a temporary file and a rename; durable fsyncs it
// first if core.fsync hardens references (what it writes are git-hegel's
// pointers beside the refs). On disk the shared permissions apply; in
// memory the memfs is used.
func (r *Repo) writeCommon(name string, data []byte, durable bool) error {
	if r.CommonDir == "" {
		if err := r.common.MkdirAll(path.Dir(name), 0o777); err != nil {
			return err
		}
		return writeFileAtomic(r.common, name, data, nil)
	}
	p := filepath.Join(r.CommonDir, filepath.FromSlash(name))
	if err := r.shared.MkdirAll(filepath.Dir(p)); err != nil {
		return err
	}
	var harden func(*os.File) error
	if durable && r.dur.Wants(objects.FsyncReference) {
		harden = func(f *os.File) error { return r.dur.Sync(objects.FsyncReference, f) }
	}
	return r.shared.WriteFileSync(p, data, harden)
}

// createCommon creates name (relative to the common git dir) exclusively,
// with its directories, and the shared permissions on disk.
func (r *Repo) createCommon(name string) (io.WriteCloser, error) {
	if r.CommonDir == "" {
		if err := r.common.MkdirAll(path.Dir(name), 0o777); err != nil {
			return nil, err
		}
		return r.common.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o666)
	}
	return r.shared.OpenFile(filepath.Join(r.CommonDir, filepath.FromSlash(name)), os.O_CREATE|os.O_EXCL|os.O_WRONLY)
}

// sharedPermOf is core.sharedRepository from c, or none if it is invalid
// (Open refuses such a repository; readers that only append stay quiet).
func sharedPermOf(c *gitdir.Config) objects.SharedPerm {
	v, ok := c.Get("core", "", "sharedrepository")
	s, err := objects.ParseSharedPerm(v, ok)
	if err != nil {
		return objects.SharedPerm{}
	}
	return s
}
