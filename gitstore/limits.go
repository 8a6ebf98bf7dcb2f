package gitstore

import (
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"
	gitstorer "github.com/go-git/go-git/v5/plumbing/storer"
)

// Size limits (docs/storage.md, "Limits"). Everything fetched is checked
// against them before it is read, and so is what git-hegel loads to show
// a task or a stash: a remote (or a plain git fetch) must not make a
// command read a 100 MB commit message into memory. A document blob (a
// task's state or workflow, a stash entry, a history record) is small: 4
// MiB is hundreds of times what git-hegel writes. So is a commit, whose
// message git-hegel writes as one line. A checkpoint holds the user's
// files, so its blobs may be as large as a hosting service accepts. All
// three can be changed with git config.
const (
	defaultDocBlobLimit        = 4 << 20
	defaultCheckpointBlobLimit = 100 << 20
	defaultCommitLimit         = 1 << 20
	maxTreeDepth               = 64
	// maxCommitHeader bounds what the graph walks read of any commit:
	// its header, never its message.
	maxCommitHeader = 1 << 20
	// largeObject: objects above it are read from packs as streams, not
	// into memory at once (go-git's LargeObjectThreshold).
	largeObject = 1 << 20
)

// docLimit is the largest document blob git-hegel reads.
func (r *Repo) docLimit() int64 {
	return r.cfg.Int("hegel", "syncmaxblobsize", defaultDocBlobLimit)
}

// commitLimit is the largest commit git-hegel fetches or reads.
func (r *Repo) commitLimit() int64 {
	return r.cfg.Int("hegel", "syncmaxcommitsize", defaultCommitLimit)
}

// TooLargeError is an object over a size limit; it was not read.
type TooLargeError struct {
	What  string // "commit 1234…", "blob 1234…", or a path
	Size  int64
	Limit int64
	Key   string // the git config key that sets the limit
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is %d bytes, over the %s limit (git config hegel.%s)", e.What, e.Size, byteSize(e.Limit), e.Key)
}

// checkSize returns a *TooLargeError when object h is larger than limit,
// without reading it; a missing object is left to the read that follows.
func checkSize(s gitstorer.EncodedObjectStorer, h plumbing.Hash, what string, limit int64, key string) error {
	if limit <= 0 {
		return nil
	}
	n, err := s.EncodedObjectSize(h)
	if err != nil {
		return nil
	}
	if n > limit {
		return &TooLargeError{What: what, Size: n, Limit: limit, Key: key}
	}
	return nil
}
