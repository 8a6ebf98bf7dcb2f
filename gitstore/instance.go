package gitstore

import (
	"errors"
	"os"
	"strings"
	"time"

	"github.com/git-hegel/git-hegel/gitstore/objects"
)

// The instance id tells this copy of a repository from its clones: every
// clone's main worktree is "main", and tasks travel between clones with
// push and fetch, so a worktree's identity must name the clone too. It
// lives in the common git dir, so moving the repository keeps it.
const instanceFile = "hegel/instance"

// WorktreeID identifies this worktree across clones and moves:
// "<instance>:main" or "<instance>:worktrees/<name>". Tasks record it; a
// worktree only treats its own tasks as active.
func (r *Repo) WorktreeID() (string, error) {
	if r.instance == "" {
		id, err := r.loadInstance()
		if err != nil {
			return "", err
		}
		r.instance = id
	}
	return r.instance + ":" + r.Layout.WorktreeName(), nil
}

// ExistingWorktreeID is WorktreeID for a command that writes nothing: it
// reads the instance id but never creates it, and is "" while this clone
// has none. No task can name a worktree of a clone without an instance id
// as its owner, so "" matches no owner.
func (r *Repo) ExistingWorktreeID() (string, error) {
	if r.instance == "" {
		b, err := readFile(r.common, instanceFile)
		if errors.Is(err, os.ErrNotExist) {
			return "", nil
		}
		id := strings.TrimSpace(string(b))
		if err != nil || len(id) != 16 {
			// Unreadable or damaged: the writing path reports it.
			return r.WorktreeID()
		}
		r.instance = id
	}
	return r.instance + ":" + r.Layout.WorktreeName(), nil
}

// loadInstance reads the instance id, creating it on first use. Two
// processes creating it at once agree: the file is created exclusively and
// the loser reads the winner's.
func (r *Repo) loadInstance() (string, error) {
	for i := 0; i < 100; i++ {
		if b, err := readFile(r.common, instanceFile); err == nil {
			if id := strings.TrimSpace(string(b)); len(id) == 16 {
				return id, nil
			}
		}
		f, err := r.createCommon(instanceFile)
		if errors.Is(err, os.ErrExist) {
			time.Sleep(time.Millisecond) // another process is writing it; read theirs
			continue
		}
		if err != nil {
			return "", errors.New("cannot create the repository's instance id: " + oneLine(err.Error()))
		}
		id := objects.NewID()[:16]
		_, err = f.Write([]byte(id + "\n"))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return "", errors.New("cannot write the repository's instance id: " + oneLine(err.Error()))
		}
		return id, nil
	}
	return "", errors.New("the repository's instance id (" + instanceFile + " in the git directory) is unreadable; remove it and try again")
}
