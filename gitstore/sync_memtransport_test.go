package gitstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/sideband"
	"github.com/go-git/go-git/v5/plumbing/revlist"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/client"
	"github.com/go-git/go-git/v5/storage/memory"
)

// memTransport moves sync's objects for an in-memory repository through
// go-git's protocol client and server (the hegeltest:// remotes of
// sync_test.go), with the contract of the git binary's transport: the
// remote's refs under the prefixes, the missing objects in the
// quarantine, pushes with leases, all or none.
type memTransport struct{ r *Repo }

var _ remoteTransport = (*memTransport)(nil)

func (t *memTransport) session(ctx context.Context, u string, push bool) (transport.Session, *packp.AdvRefs, error) {
	ep, err := transport.NewEndpoint(u)
	if err != nil {
		return nil, nil, err
	}
	cl, err := client.NewClient(ep)
	if err != nil {
		return nil, nil, err
	}
	var sess transport.Session
	if push {
		sess, err = cl.NewReceivePackSession(ep, nil)
	} else {
		sess, err = cl.NewUploadPackSession(ep, nil)
	}
	if err != nil {
		return nil, nil, err
	}
	adv, err := sess.AdvertisedReferencesContext(ctx)
	if errors.Is(err, transport.ErrEmptyRemoteRepository) {
		return sess, nil, nil
	}
	if err != nil {
		_ = sess.Close()
		return nil, nil, err
	}
	return sess, adv, nil
}

func memFailure(rem *Remote, u string, err error) error {
	if errors.Is(err, transport.ErrRepositoryNotFound) {
		return fmt.Errorf("Cannot reach remote '%s' (%s): repository not found", rem.Name, u)
	}
	return fmt.Errorf("Cannot reach remote '%s' (%s): %s", rem.Name, u, oneLine(err.Error()))
}

func (t *memTransport) fetch(ctx context.Context, rem *Remote, req fetchRequest, q *quarantine) (map[string]plumbing.Hash, error) {
	sess, adv, err := t.session(ctx, rem.FetchURL, false)
	if err != nil {
		return nil, memFailure(rem, rem.FetchURL, err)
	}
	defer sess.Close()
	out := map[string]plumbing.Hash{}
	if adv == nil {
		return out, nil
	}
	var wants []plumbing.Hash
	wanted := map[plumbing.Hash]bool{}
	for name, h := range adv.References {
		rel, ok := strings.CutPrefix(name, hegelPrefix)
		if !ok {
			continue
		}
		for _, p := range req.prefixes {
			if strings.HasPrefix(rel, p) {
				out[name] = h
				if !wanted[h] && t.r.storage.HasEncodedObject(h) != nil {
					wanted[h] = true
					wants = append(wants, h)
				}
				break
			}
		}
	}
	if len(wants) == 0 {
		return out, nil
	}
	ur := packp.NewUploadPackRequestFromCapabilities(adv.Capabilities)
	if adv.Capabilities.Supports(capability.NoProgress) {
		_ = ur.Capabilities.Set(capability.NoProgress)
	}
	ur.Wants = wants
	for _, h := range req.seen {
		// go-git's server fails on a have it does not know.
		if t.r.storage.HasEncodedObject(h) == nil {
			ur.Haves = append(ur.Haves, h)
		}
	}
	resp, err := sess.(interface {
		UploadPack(context.Context, *packp.UploadPackRequest) (*packp.UploadPackResponse, error)
	}).UploadPack(ctx, ur)
	if err != nil {
		return nil, memFailure(rem, rem.FetchURL, err)
	}
	defer resp.Close()
	var rd io.Reader = resp
	switch {
	case ur.Capabilities.Supports(capability.Sideband64k):
		rd = sideband.NewDemuxer(sideband.Sideband64k, resp)
	case ur.Capabilities.Supports(capability.Sideband):
		rd = sideband.NewDemuxer(sideband.Sideband, resp)
	}
	var hdr [12]byte
	if _, err := io.ReadFull(rd, hdr[:]); err != nil || !bytes.Equal(hdr[:4], []byte("PACK")) {
		return nil, fmt.Errorf("the remote did not send a pack: %v", err)
	}
	q.store = memory.NewStorage()
	q.count = int(binary.BigEndian.Uint32(hdr[8:12]))
	if err := packfile.UpdateObjectStorage(q.store, io.MultiReader(bytes.NewReader(hdr[:]), rd)); err != nil {
		return nil, fmt.Errorf("reading the pack: %w", err)
	}
	return out, nil
}

func (t *memTransport) push(ctx context.Context, rem *Remote, ups []refUpdate, _ io.Writer) (*pushResult, error) {
	res := &pushResult{moved: map[plumbing.ReferenceName]bool{}, uptodate: map[plumbing.ReferenceName]bool{},
		stale: map[plumbing.ReferenceName]bool{}, refused: map[string]string{}}
	sess, adv, err := t.session(ctx, rem.PushURL, true)
	if err != nil {
		return nil, memFailure(rem, rem.PushURL, err)
	}
	defer sess.Close()
	advertised := map[string]plumbing.Hash{}
	if adv != nil {
		for n, h := range adv.References {
			advertised[n] = h
		}
	}
	var cmds []*packp.Command
	var tips []plumbing.Hash
	for _, u := range ups {
		switch rv := advertised[string(u.name)]; {
		case rv == u.new:
			res.uptodate[u.name] = true
		case rv != u.old:
			res.stale[u.name] = true
		default:
			cmds = append(cmds, &packp.Command{Name: u.name, Old: u.old, New: u.new})
			tips = append(tips, u.new)
		}
	}
	if len(res.stale) > 0 || len(cmds) == 0 {
		return res, nil // atomic: a failed lease fails the push
	}
	var known []plumbing.Hash
	for _, h := range advertised {
		if t.r.storage.HasEncodedObject(h) == nil {
			known = append(known, h)
		}
	}
	hashes, err := revlist.Objects(t.r.storage, tips, known)
	if err != nil {
		return nil, err
	}
	caps := capability.NewList()
	if adv != nil {
		caps = adv.Capabilities
	}
	rq := packp.NewReferenceUpdateRequestFromCapabilities(caps)
	if caps.Supports(capability.Atomic) {
		_ = rq.Capabilities.Set(capability.Atomic)
	}
	rq.Commands = cmds
	var pack bytes.Buffer
	if _, err := packfile.NewEncoder(&pack, t.r.storage, false).Encode(hashes, 10); err != nil {
		return nil, err
	}
	rq.Packfile = io.NopCloser(&pack)
	rs, err := sess.(transport.ReceivePackSession).ReceivePack(ctx, rq)
	if err != nil && rs == nil {
		return nil, memFailure(rem, rem.PushURL, err)
	}
	if rs != nil {
		for _, cs := range rs.CommandStatuses {
			if cs.Status == "ok" {
				res.moved[cs.ReferenceName] = true
			} else {
				res.refused[string(cs.ReferenceName)] = cs.Status
			}
		}
	} else {
		for _, c := range cmds {
			res.moved[c.Name] = true
		}
	}
	res.sent = len(hashes)
	return res, nil
}
