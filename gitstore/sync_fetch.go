package gitstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/sideband"
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
	if s.fetchConn == nil {
		c, err := s.conn(s.rem.FetchURL)
		if err != nil {
			return nil, err
		}
		s.fetchConn = c
	}
	sess, adv, err := s.fetchConn.session(ctx, false)
	if err != nil {
		return nil, err
	}
	if sess != nil {
		defer sess.Close()
	}

	remote := map[string]hegelRef{}
	remoteHash := map[string]plumbing.Hash{}
	if adv != nil {
		for name, h := range adv.References {
			rel, ok := strings.CutPrefix(name, hegelPrefix)
			if !ok {
				continue
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
	}
	_, tracking, err := s.syncedRefs(s.trackingPrefix())
	if err != nil {
		return nil, err
	}
	_, local, err := s.syncedRefs(hegelPrefix)
	if err != nil {
		return nil, err
	}

	var wants []plumbing.Hash
	wanted := map[plumbing.Hash]bool{}
	for _, h := range remoteHash {
		if !wanted[h] && s.r.storage.HasEncodedObject(h) != nil {
			wanted[h] = true
			wants = append(wants, h)
		}
	}
	objects := gitstorer.EncodedObjectStorer(s.r.storage)
	var q *quarantine
	var packFail *fsckFailure
	if len(wants) > 0 {
		q, err = s.r.newQuarantine()
		if err != nil {
			return nil, err
		}
		defer q.discard()
		up, ok := sess.(interface {
			UploadPack(context.Context, *packp.UploadPackRequest) (*packp.UploadPackResponse, error)
		})
		if !ok {
			return nil, errors.New("internal error: not an upload-pack session")
		}
		req := packp.NewUploadPackRequestFromCapabilities(adv.Capabilities)
		if s.o.RemoteProgress == nil && adv.Capabilities.Supports(capability.NoProgress) {
			_ = req.Capabilities.Set(capability.NoProgress)
		}
		req.Wants = wants
		req.Haves = s.haves(tracking)
		resp, err := up.UploadPack(ctx, req)
		if err != nil {
			return nil, s.fetchConn.describe(err)
		}
		// The phase starts with the pack's first bytes, after the
		// remote's own messages (counting, compressing), as git shows it.
		cr := &countingReader{r: demux(req.Capabilities, resp, s.o.RemoteProgress), p: s.o.Progress, title: "Receiving objects"}
		packFail, err = q.receive(cr, s.checker())
		if err == nil {
			s.o.Progress.Add(q.count)
		}
		s.o.Progress.Done()
		_ = resp.Close()
		if err != nil {
			return nil, s.fetchConn.describe(err)
		}
		s.rep.Received += q.count
		objects = q.over(s.r.storage)
	}

	// Validate everything that changed before anything is written.
	s.g.s = objects
	defer func() { s.g.s = s.r.storage }()
	v := newValidator(objects, s.g, s.r.cfg)
	validated := map[plumbing.ReferenceName]plumbing.Hash{}
	var cands []candidate
	for _, ref := range sortedRefs(remote) {
		h := remoteHash[ref.rel]
		if h == local[ref.rel] {
			validated[ref.tracking(s.rem.Name)] = h
			continue
		}
		objs, err := v.validate(ref, h, s.known(ref, local[ref.rel]))
		if err != nil {
			s.refuse(ref, err.Error(), "")
			continue
		}
		cands = append(cands, candidate{ref: ref, tip: h, objects: objs})
	}
	var first *fsckCheck
	if q != nil && q.dir != "" {
		first = &fsckCheck{fail: packFail, whole: true}
	}
	var alternates []string
	if q != nil && q.dir != "" {
		alternates = []string{q.objectsDir()}
	}
	cands = s.gitCheck(cands, objects, first, alternates...)
	var accepted []plumbing.Hash
	for _, c := range cands {
		validated[c.ref.tracking(s.rem.Name)] = c.tip
		accepted = append(accepted, c.objects...)
	}
	if q != nil {
		objectsDir := ""
		if s.r.CommonDir != "" {
			objectsDir = s.checker().objects
		}
		if err := q.migrate(s.r.storage, objectsDir, accepted, len(s.refused) == 0); err != nil {
			return nil, fmt.Errorf("cannot store the fetched objects: %s", oneLine(err.Error()))
		}
	}

	// Now the tracking refs. A tracking ref another process moved meanwhile
	// is left to it: the merge step reads (and validates) whatever is there.
	for _, ref := range sortedRefs(remote) {
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
		if _, ok := remote[rel]; ok {
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

// haves lists commits the remote has, as far as we know: the tracking
// refs (the remote's refs when we last fetched or pushed) and, with
// checkpoints (whose commits have HEAD's commit as a parent), the
// remote-tracking branches. Only commits the server should have are
// offered: go-git's own server fails on a have it does not know.
func (s *syncer) haves(tracking map[string]plumbing.Hash) []plumbing.Hash {
	seen := map[plumbing.Hash]bool{}
	var out []plumbing.Hash
	add := func(h plumbing.Hash) {
		if !h.IsZero() && !seen[h] && s.r.storage.HasEncodedObject(h) == nil {
			seen[h] = true
			out = append(out, h)
		}
	}
	for _, h := range tracking {
		add(h)
	}
	if s.o.Checkpoints {
		refs, _ := s.r.refs.List("refs/remotes/" + s.rem.Name + "/")
		for _, ref := range refs {
			add(ref.Hash)
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

// demux reads the pack out of a side-band stream; the remote's progress
// messages go to progress (nil: dropped).
func demux(caps *capability.List, r io.Reader, progress io.Writer) io.Reader {
	var d *sideband.Demuxer
	switch {
	case caps.Supports(capability.Sideband64k):
		d = sideband.NewDemuxer(sideband.Sideband64k, r)
	case caps.Supports(capability.Sideband):
		d = sideband.NewDemuxer(sideband.Sideband, r)
	default:
		return r
	}
	if progress != nil {
		d.Progress = progress
	}
	return d
}

// countingReader tells p the bytes read through it, in a phase named
// title that starts with the first byte.
type countingReader struct {
	r       io.Reader
	p       Progress
	title   string
	started bool
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	if n > 0 && !c.started {
		c.started = true
		c.p.Start(c.title, 0)
	}
	c.p.AddBytes(n)
	return n, err
}

// countingWriter tells p the bytes written through it.
type countingWriter struct {
	w io.Writer
	p Progress
}

func (c countingWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.p.AddBytes(n)
	return n, err
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
