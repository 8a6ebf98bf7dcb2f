package rollback

import (
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// A checkpoint whose metadata disagrees with its commit (a head that is
// not the commit's last parent, metadata that does not parse) is skipped
// and reported; the other checkpoints of the chain keep working (the next
// checkpoint written rewrites the chain without it). A version this build
// does not know still fails: a newer git-hegel's chain is not rewritten. Checkpoints travel between
// clones (git hegel fetch --checkpoints), so one damaged entry must not
// make the whole list, and every automatic checkpoint, fail.

// damagedCheckpoint is one such entry.
type damagedCheckpoint struct {
	commit plumbing.Hash
	id     string // "" when the metadata does not say
	why    string
	// prev is the checkpoint below it (its first parent, when that is a
	// checkpoint commit), where reading the chain goes on.
	prev plumbing.Hash
}

func (d *damagedCheckpoint) Error() string {
	return fmt.Sprintf("checkpoint %s: %s", d.commit, d.why)
}

func (m *Manager) damaged(c *object.Commit, id, why string) error {
	d := &damagedCheckpoint{commit: c.Hash, id: id, why: why}
	if len(c.ParentHashes) > 0 && m.isCheckpointCommit(c.ParentHashes[0]) {
		d.prev = c.ParentHashes[0]
	}
	return d
}

// headIsParent checks that the HEAD commit a checkpoint records is its
// commit's last parent, as every checkpoint git-hegel writes has it (the
// parent keeps that commit reachable).
func headIsParent(cp *Checkpoint, c *object.Commit) error {
	if cp.Head == "" {
		return nil
	}
	if n := len(c.ParentHashes); n == 0 || c.ParentHashes[n-1] != cp.HeadCommit() {
		return fmt.Errorf("its head %s is not a parent of its commit", cp.Head)
	}
	return nil
}

// isCheckpointCommit reports whether h is a commit whose tree holds a
// checkpoint (and not, say, the project commit a checkpoint recorded).
func (m *Manager) isCheckpointCommit(h plumbing.Hash) bool {
	c, err := m.commit(h)
	if err != nil {
		return false
	}
	data, err := m.w.obj.read(plumbing.TreeObject, c.TreeHash)
	if err != nil {
		return false
	}
	ents, err := parseTree(data, true)
	if err != nil {
		return false
	}
	for _, e := range ents {
		if e.Name == metaFile {
			return true
		}
	}
	return false
}

// skipDamaged reports a damaged checkpoint of the chain called name once
// per command.
func (m *Manager) skipDamaged(name string, d *damagedCheckpoint) {
	if m.warned[d.commit] {
		return
	}
	if m.warned == nil {
		m.warned = map[plumbing.Hash]bool{}
	}
	m.warned[d.commit] = true
	what := "a checkpoint"
	if d.id != "" {
		what = "checkpoint " + d.id
	}
	m.warn(fmt.Sprintf("skipped %s of %s (commit %s): %s", what, name, d.commit.String()[:12], d.why))
}
