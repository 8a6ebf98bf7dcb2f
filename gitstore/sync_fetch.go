package gitstore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	gitstorer "github.com/go-git/go-git/v5/plumbing/storer"
)

// fetch is the network step: it brings the remote's refs/hegel/* into the
// tracking namespace, validated. A ref whose data fails a check is
// refused (s.refuse): its tracking ref does not move and none of its
// objects enter the repository, while the other refs go on. It returns
// the tracking refs it validated, so the merge step does not check them
// twice. On an error, neither the tracking refs nor the object store have
// changed.
func (s *syncer) fetch(ctx context.Context) (map[plumbing.ReferenceName]plumbing.Hash, error) {
	tr, err := s.r.transport()
	if err != nil {
		return nil, err
	}
	tracking, err := s.trackedRefs()
	if err != nil {
		return nil, err
	}
	dkinds, dlocal, _, err := s.differingRefs()
	if err != nil {
		return nil, err
	}
	// local is a ref's local value (zero: none, or damaged): a ref whose
	// two sides differ says; any other holds its tracking value.
	local := func(rel string) plumbing.Hash {
		if _, ok := dkinds[rel]; ok {
			return dlocal[rel]
		}
		return tracking[rel]
	}
	q, err := s.r.newQuarantine()
	if err != nil {
		return nil, err
	}
	defer q.discard()
	req := fetchRequest{seen: tracking, haves: s.haves(), progress: s.o.GitProgress}
	for i := range syncNamespaces {
		if ns := &syncNamespaces[i]; !ns.optIn || s.o.Checkpoints {
			req.prefixes = append(req.prefixes, ns.rel)
		}
	}
	advertised, err := tr.fetch(ctx, s.rem, req, q)
	if err != nil {
		return nil, err
	}

	// remote holds the remote's refs that changed on some side: a ref the
	// remote, the tracking ref and the local ref all hold at one value
	// has nothing to check, write or merge.
	remote := map[string]hegelRef{}
	remoteHash := map[string]plumbing.Hash{}
	kept := 0 // tracking refs the remote still has
	for name, h := range advertised {
		rel, ok := strings.CutPrefix(name, hegelPrefix)
		if !ok {
			continue
		}
		if t, ok := tracking[rel]; ok {
			kept++
			if _, differs := dkinds[rel]; t == h && !differs {
				continue
			}
		}
		ref, ok, err := classify(rel)
		if err != nil {
			if s.o.inScope(ref) {
				s.skip(name, err.Error())
			}
			continue
		}
		if !ok || !s.o.inScope(ref) {
			continue
		}
		remote[rel], remoteHash[rel] = ref, h
	}
	objects := gitstorer.EncodedObjectStorer(s.r.storage)
	if q.count > 0 {
		s.rep.Received += q.count
		objects = q.over(s.r.storage)
	}

	// Validate everything that changed before anything is written.
	s.g.s = objects
	defer func() { s.g.s = s.r.storage }()
	v := newValidator(objects, s.g, s.r.cfg)
	validated := map[plumbing.ReferenceName]plumbing.Hash{}
	var cands []candidate
	for rel, ref := range remote {
		if h := remoteHash[rel]; h == local(rel) {
			validated[ref.tracking(s.rem.Name)] = h
		}
	}
	for _, ref := range sortedRefsWhere(remote, func(rel string) bool { return remoteHash[rel] != local(rel) }) {
		h := remoteHash[ref.rel]
		objs, err := v.validate(ref, h, s.known(ref, local(ref.rel)))
		if err != nil {
			s.refuse(ref, err.Error(), "")
			continue
		}
		cands = append(cands, candidate{ref: ref, tip: h, objects: objs})
	}
	var alternates []string
	if q.dir != "" {
		alternates = []string{q.objectsDir()}
	}
	cands = s.gitCheck(cands, objects, nil, alternates...)
	var accepted []plumbing.Hash
	for _, c := range cands {
		validated[c.ref.tracking(s.rem.Name)] = c.tip
		accepted = append(accepted, c.objects...)
	}
	if q.count > 0 {
		q.checked = len(s.refused) == 0 && q.holdsOnly(accepted)
		objectsDir := ""
		if s.r.CommonDir != "" {
			objectsDir = s.r.objectsDir()
		}
		if err := q.migrate(s.r.storage, objectsDir, accepted, len(s.refused) == 0); err != nil {
			return nil, fmt.Errorf("cannot store the fetched objects: %s", oneLine(err.Error()))
		}
	}

	// Now the tracking refs. A tracking ref another process moved meanwhile
	// is left to it: the merge step reads (and validates) whatever is there.
	moved := func(rel string) bool { return s.refused[rel] || tracking[rel] != remoteHash[rel] }
	for _, ref := range sortedRefsWhere(remote, moved) {
		if s.refused[ref.rel] {
			if tracking[ref.rel] == remoteHash[ref.rel] {
				// A plain git fetch had written the refused data.
				s.dropRefusedTracking(ref, tracking[ref.rel])
			}
			continue
		}
		h := remoteHash[ref.rel]
		if old := tracking[ref.rel]; old != h {
			if err := s.r.refs.Update(ref.tracking(s.rem.Name), old, h); err != nil && !errors.Is(err, ErrConflict) {
				return nil, describeRefError(ref.tracking(s.rem.Name), err)
			}
		}
	}
	for rel, old := range tracking {
		if kept == len(tracking) {
			break // the remote has every one
		}
		if _, ok := advertised[hegelPrefix+rel]; ok {
			continue
		}
		// Gone from the remote: forget our copy of it (the local ref,
		// and the remote's history in it, stay).
		name := plumbing.ReferenceName(s.trackingPrefix() + rel)
		if err := s.r.refs.Update(name, old, plumbing.ZeroHash); err != nil && !errors.Is(err, ErrConflict) {
			return nil, describeRefError(name, err)
		}
	}
	return validated, nil
}

// haves lists more commits the remote likely has than its refs/hegel/*
// as last seen: with checkpoints (whose commits have the project's
// commits as parents), the remote-tracking branches.
func (s *syncer) haves() map[string]plumbing.Hash {
	out := map[string]plumbing.Hash{}
	if s.o.Checkpoints {
		refs, _ := s.r.refs.List("refs/remotes/" + s.rem.Name + "/")
		for _, ref := range refs {
			out[string(ref.Name)] = ref.Hash
		}
	}
	return out
}

// known lists the commits validation may take as already checked for ref:
// the local ref and, for checkpoints (whose commits have HEAD's commit as
// a parent), the local branches and remote-tracking branches, so that the
// project's own history is not walked.
func (s *syncer) known(ref hegelRef, local plumbing.Hash) []plumbing.Hash {
	out := nonZero(local)
	if !ref.ns.userFiles {
		return out
	}
	if s.codeTips == nil {
		s.codeTips = []plumbing.Hash{}
		for _, prefix := range []string{"refs/heads/", "refs/remotes/", "refs/tags/"} {
			refs, _ := s.r.refs.List(prefix)
			for _, r := range refs {
				s.codeTips = append(s.codeTips, r.Hash)
			}
		}
		if h, err := s.r.Head(); err == nil && !h.Commit.IsZero() {
			s.codeTips = append(s.codeTips, h.Commit)
		}
	}
	return append(out, s.codeTips...)
}

func nonZero(hs ...plumbing.Hash) []plumbing.Hash {
	var out []plumbing.Hash
	for _, h := range hs {
		if !h.IsZero() {
			out = append(out, h)
		}
	}
	return out
}
