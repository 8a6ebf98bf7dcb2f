package gitstore

import (
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-hegel/git-hegel/engine"
)

// Where a task's definitions came from (engine.DefinitionHistory): the
// task's chain says which commit brought each definition in, and this
// clone's reflog of the task's ref says whether a fetch brought that
// commit (sync writes "fetch <remote>: ..." there), which the chain alone
// cannot: anyone can write any author into a commit.

var _ engine.DefinitionHistory = Tasks{}

// maxDefinitionWalk bounds the commits read to find where definitions
// changed (a task's chain is one commit per operation).
const maxDefinitionWalk = MaxTaskLog

// maxReflogDefinitions bounds the reflog entries looked at for a remote.
const maxReflogDefinitions = 1000

// DefinitionVersions implements engine.DefinitionHistory.
func (s Tasks) DefinitionVersions(task string, max int) ([]engine.DefinitionVersion, error) {
	r := s.r
	ref := TaskRef(task)
	h, err := readRefOrZero(r.refs, ref)
	if err != nil {
		return nil, err
	}
	if h.IsZero() {
		ref = ArchiveRef(task)
		if h, err = r.refs.Read(ref); err != nil {
			return nil, err
		}
	}
	type run struct {
		id     plumbing.Hash
		oldest plumbing.Hash
		ci     chainCommit
	}
	var runs []run
	for i := 0; !h.IsZero() && i < maxDefinitionWalk; i++ {
		ci, err := r.readChainCommit(h)
		if err != nil {
			break // a chain that ends early (shallow, damaged) ends the list
		}
		id, err := r.definitionIn(ci.tree)
		if err != nil {
			break
		}
		if n := len(runs); n > 0 && runs[n-1].id == id {
			runs[n-1].oldest, runs[n-1].ci = h, ci
		} else {
			if max > 0 && n == max {
				break
			}
			runs = append(runs, run{id: id, oldest: h, ci: ci})
		}
		h = r.definitionParent(ci, id)
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("%s: no definition found", ref)
	}
	remotes := r.definitionRemotes(ref)
	out := make([]engine.DefinitionVersion, 0, len(runs))
	for _, rn := range runs {
		data, err := r.readBlob(rn.id)
		if err != nil {
			return nil, fmt.Errorf("%s: definition %s: %s", ref, rn.id, oneLine(err.Error()))
		}
		subject, _, _ := strings.Cut(rn.ci.message, "\n")
		out = append(out, engine.DefinitionVersion{ID: rn.id.String(), Commit: rn.oldest.String(), Author: rn.ci.author,
			At: rn.ci.when, Subject: strings.TrimSpace(subject), Remote: remotes[rn.id], Data: data})
	}
	return out, nil
}

// definitionParent is the parent of ci to follow to the commit that
// brought definition id in: the first, unless ci is a merge whose first
// parent holds another definition and a later parent holds id. A sync
// merge takes the remote's definition from its second parent, and the
// merge commit is this clone's (its author the person syncing), so
// stopping there would name them as the definition's author, whoever
// wrote it.
func (r *Repo) definitionParent(ci chainCommit, id plumbing.Hash) plumbing.Hash {
	if len(ci.others) == 0 || r.definitionAt(ci.parent) == id {
		return ci.parent
	}
	for _, p := range ci.others {
		if r.definitionAt(p) == id {
			return p
		}
	}
	return ci.parent
}

// definitionAt is the definition commit c of a chain holds (zero when it
// cannot be read).
func (r *Repo) definitionAt(c plumbing.Hash) plumbing.Hash {
	if c.IsZero() {
		return plumbing.ZeroHash
	}
	ci, err := r.readChainCommit(c)
	if err != nil {
		return plumbing.ZeroHash
	}
	id, _ := r.definitionIn(ci.tree)
	return id
}

// definitionIn returns the blob id of workflow.yaml in a task's tree.
func (r *Repo) definitionIn(tree plumbing.Hash) (plumbing.Hash, error) {
	ents, err := readTree(r.storage, tree)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	for _, e := range ents {
		if e.name == workflowFile {
			return e.hash, nil
		}
	}
	return plumbing.ZeroHash, fmt.Errorf("tree %s has no %s", tree, workflowFile)
}

// definitionRemotes reads ref's reflog and returns, for each definition
// a fetch brought in, the remote it came from: the entry that first
// pointed the ref at a commit holding that definition, where the one
// before held another, says "fetch <remote>: ...". A definition a command
// here brought in maps to "".
func (r *Repo) definitionRemotes(ref plumbing.ReferenceName) map[plumbing.Hash]string {
	log := r.readReflog(ref)
	if len(log) > maxReflogDefinitions {
		log = log[len(log)-maxReflogDefinitions:]
	}
	out := map[plumbing.Hash]string{}
	ids := map[plumbing.Hash]plumbing.Hash{}
	defOf := func(c plumbing.Hash) plumbing.Hash {
		if c.IsZero() {
			return plumbing.ZeroHash
		}
		if id, ok := ids[c]; ok {
			return id
		}
		var id plumbing.Hash
		if ci, err := r.readChainCommit(c); err == nil {
			id, _ = r.definitionIn(ci.tree)
		}
		ids[c] = id
		return id
	}
	for _, e := range log {
		to := defOf(e.New)
		if to.IsZero() || to == defOf(e.Old) {
			continue
		}
		out[to] = fetchRemote(e.Msg)
	}
	return out
}

// fetchRemote returns the remote a "fetch <remote>: ..." reflog message
// names (engine.StashElsewhere for a task restored from another clone's
// stash, whose words are that clone's), "" for any other message.
func fetchRemote(msg string) string {
	if strings.HasPrefix(msg, engine.StashElsewhereMsg) {
		return engine.StashElsewhere
	}
	rest, ok := strings.CutPrefix(msg, "fetch ")
	if !ok {
		return ""
	}
	name, _, ok := strings.Cut(rest, ": ")
	if !ok || name == "" || strings.ContainsAny(name, " \t") {
		return ""
	}
	return name
}
