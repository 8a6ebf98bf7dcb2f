package gitstore

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/git-hegel/git-hegel/gitstore/refs"
)

// Broken refs below refs/hegel/ (refs/broken.go): a loose ref file with
// no value in it. Every listing leaves them out with a warning; doctor
// names them, and --fix puts back the newest value the ref's reflog
// records that still reads, or removes the file when there is none.
// Nothing is lost that the file held: it held no value.

// brokenRefProblems lists the broken refs below refs/hegel/ (none on
// memory storage, which has no files to break).
func (r *Repo) brokenRefProblems() ([]RefProblem, error) {
	fr, ok := r.fileRefs()
	if !ok {
		return nil, nil
	}
	broken, err := fr.ListBroken(refs.HegelRefPrefix)
	if err != nil {
		return nil, err
	}
	var out []RefProblem
	for _, b := range broken {
		rel := strings.TrimPrefix(string(b.Name), refs.HegelRefPrefix)
		p := RefProblem{Ref: string(b.Name), Kind: refKind(rel), Problem: b.Err.Error()}
		if !repairsBroken(p.Kind) {
			p.Problem += "; not a ref git-hegel writes, left alone"
			p.Note = true
		}
		out = append(out, p)
	}
	return out, nil
}

// repairsBroken says whether doctor repairs a broken ref of kind: those
// git-hegel writes, not what an earlier --fix moved aside or someone else
// put below refs/hegel/.
func repairsBroken(kind string) bool {
	return kind != "unknown" && kind != "damaged"
}

// repairBroken repairs ref, a broken ref: see above.
func (r *Repo) repairBroken(ref plumbing.ReferenceName) (*Repair, error) {
	fr, ok := r.fileRefs()
	rel := strings.TrimPrefix(string(ref), refs.HegelRefPrefix)
	if !ok || !repairsBroken(refKind(rel)) {
		return nil, fmt.Errorf("%s is not a ref doctor repairs", ref)
	}
	valid := func(h plumbing.Hash) bool { return r.wholeCommit(h) }
	if k := refKind(rel); k == "task" || k == "archive" {
		valid = func(h plumbing.Hash) bool { return r.validTask(ref, taskName(ref), h) == nil }
	}
	rep := &Repair{Ref: string(ref), Broken: true}
	log := r.readReflog(ref)
	for _, e := range slices.Backward(log) {
		if e.New.IsZero() || !valid(e.New) {
			continue
		}
		msg := fmt.Sprintf("doctor: restored %s from the reflog (the ref file held no value)", e.New.String()[:12])
		if err := fr.ReplaceBroken(ref, e.New, refs.Reflog{Msg: msg}); err != nil {
			return nil, describeRefError(ref, err)
		}
		rep.Restored = e.New.String()
		if c, err := object.GetCommit(r.storage, e.New); err == nil {
			rep.RestoredAt = c.Committer.When.UTC().Format(time.RFC3339)
			rep.RestoredMsg, _, _ = strings.Cut(c.Message, "\n")
		}
		r.dropRefCache(ref)
		return rep, nil
	}
	if err := fr.ReplaceBroken(ref, plumbing.ZeroHash, refs.Reflog{Msg: "doctor: removed the ref file, which held no value"}); err != nil {
		return nil, describeRefError(ref, err)
	}
	rep.Moved = true
	r.dropRefCache(ref)
	return rep, nil
}

// isBroken reports whether ref is a broken ref.
func (r *Repo) isBroken(ref plumbing.ReferenceName) bool {
	_, err := r.refs.Read(ref)
	return errors.Is(err, refs.ErrBroken)
}

// dropRefCache forgets what the task caches hold for ref's task.
func (r *Repo) dropRefCache(ref plumbing.ReferenceName) {
	switch refKind(strings.TrimPrefix(string(ref), refs.HegelRefPrefix)) {
	case "task":
		r.removeTaskCache(taskName(ref))
	case "archive":
		r.removeTaskCache(archiveKey(taskName(ref)))
	}
}
