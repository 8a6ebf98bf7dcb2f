package gitstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"
	"github.com/go-git/go-git/v5/plumbing/transport"
)

// ErrRemoteMoved reports a push that kept finding the remote changed by
// someone else: every attempt fetched and merged, so nothing is lost.
var ErrRemoteMoved = errors.New("the remote kept changing")

// push sends every local ref the remote lacks, fast-forward only and with
// a lease, fetching and merging and trying again when the remote moved.
func (s *syncer) push(ctx context.Context) error {
	if s.pushConn == nil {
		c, err := s.conn(s.rem.PushURL)
		if err != nil {
			return err
		}
		s.pushConn = c
	}
	var lastRefused map[string]string
	for attempt := 0; ; attempt++ {
		if s.beforePush != nil {
			s.beforePush()
		}
		done, refused, err := s.pushOnce(ctx)
		if err != nil || done {
			return err
		}
		if attempt+1 >= pushAttempts {
			return fmt.Errorf("%w: %s changed again during each of %d attempts to push; everything it had is merged locally, run 'git hegel push' again", ErrRemoteMoved, s.rem.Name, pushAttempts)
		}
		if len(refused) > 0 && sameRefusals(refused, lastRefused) {
			// Refused twice for the same reason with nothing new to merge in
			// between: not a race. Say what the server said.
			return refusedError(s.rem.Name, refused)
		}
		lastRefused = refused
		s.rep.Retries++
		validated, err := s.fetch(ctx)
		if err != nil {
			return err
		}
		if err := s.merge(validated); err != nil {
			return err
		}
	}
}

// pushOnce makes one attempt. done is false when the remote moved (before
// or during the push): the caller fetches, merges and tries again. refused
// holds the server's reasons for the refs it refused, if any.
func (s *syncer) pushOnce(ctx context.Context) (done bool, refused map[string]string, err error) {
	sess, adv, err := s.pushConn.session(ctx, true)
	if err != nil {
		return false, nil, err
	}
	defer sess.Close()
	rp, ok := sess.(transport.ReceivePackSession)
	if !ok || adv == nil {
		return false, nil, errors.New("internal error: not a receive-pack session")
	}
	advertised := map[string]plumbing.Hash{}
	if adv != nil {
		for name, h := range adv.References {
			advertised[name] = h
		}
	}
	kinds, local, err := s.syncedRefs(hegelPrefix)
	if err != nil {
		return false, nil, err
	}
	_, tracking, err := s.syncedRefs(s.trackingPrefix())
	if err != nil {
		return false, nil, err
	}

	var cmds []*packp.Command
	stale := false
	for _, ref := range sortedRefs(kinds) {
		if s.conflicted[ref.rel] {
			continue // not merged: ours is not a fast-forward of theirs
		}
		if s.refused[ref.rel] {
			// The remote's version was refused: it cannot be merged, so
			// ours cannot be pushed over it as a fast-forward.
			continue
		}
		name := string(ref.local())
		lv, rv := local[ref.rel], advertised[name]
		switch {
		case rv == lv:
			if tracking[ref.rel] != rv {
				// The remote has it already (pushed by someone else, or by
				// a push whose answer was lost): just note it.
				_ = s.r.refs.Update(ref.tracking(s.rem.Name), tracking[ref.rel], rv)
			}
			continue
		case rv != tracking[ref.rel]:
			stale = true // the lease: the remote moved since we last merged it
			continue
		case !rv.IsZero():
			ff, err := s.g.isAncestor(rv, lv)
			if err != nil {
				return false, nil, fmt.Errorf("%s: %s", name, oneLine(err.Error()))
			}
			if !ff && ref.ns.merge == mergeCheckpointChains && s.o.MergeCheckpoints == nil {
				// Diverged, and only rollback could merge them: keep them
				// here, say so, push the rest.
				s.rep.CheckpointsKept = append(s.rep.CheckpointsKept, ref.task())
				continue
			}
			if !ff {
				stale = true // fetched but not merged yet
				continue
			}
		}
		cmds = append(cmds, &packp.Command{Name: ref.local(), Old: rv, New: lv})
	}
	if stale {
		return false, nil, nil
	}
	if len(cmds) == 0 {
		return true, nil, nil
	}

	hashes, err := s.objectsToPush(cmds, advertised)
	if err != nil {
		return false, nil, err
	}
	req := packp.NewReferenceUpdateRequestFromCapabilities(adv.Capabilities)
	if adv.Capabilities.Supports(capability.Atomic) {
		_ = req.Capabilities.Set(capability.Atomic)
	}
	req.Commands = cmds
	pr, pw := io.Pipe()
	req.Packfile = pr
	encoded := make(chan error, 1)
	s.o.Progress.Start("Writing objects", len(hashes))
	go func() {
		enc := packfile.NewEncoder(countingWriter{pw, s.o.Progress}, s.r.storage, !adv.Capabilities.Supports(capability.OFSDelta))
		_, err := enc.Encode(hashes, 10)
		encoded <- pw.CloseWithError(err)
	}()
	rs, err := rp.ReceivePack(ctx, req)
	_ = pr.Close()
	eerr := <-encoded
	if eerr == nil {
		s.o.Progress.Add(len(hashes))
	}
	s.o.Progress.Done()
	if eerr != nil && err == nil {
		err = eerr
	}
	if rs == nil && err != nil {
		return false, nil, s.pushConn.describe(err)
	}
	refused = map[string]string{}
	okRefs := map[plumbing.ReferenceName]bool{}
	if rs != nil {
		if rs.UnpackStatus != "ok" {
			return false, nil, fmt.Errorf("%s could not store what was pushed: %s", s.rem.Name, rs.UnpackStatus)
		}
		for _, cs := range rs.CommandStatuses {
			if cs.Status == "ok" {
				okRefs[cs.ReferenceName] = true
			} else {
				refused[string(cs.ReferenceName)] = cs.Status
			}
		}
	} else {
		for _, c := range cmds {
			okRefs[c.Name] = true // no report-status: success is all we know
		}
	}
	for _, c := range cmds {
		if !okRefs[c.Name] {
			continue
		}
		rel := strings.TrimPrefix(string(c.Name), hegelPrefix)
		tn := plumbing.ReferenceName(s.trackingPrefix() + rel)
		_ = s.r.refs.Update(tn, tracking[rel], c.New)
		s.rep.Pushed = append(s.rep.Pushed, string(c.Name))
	}
	if len(refused) > 0 {
		return false, refused, nil
	}
	s.rep.Sent += len(hashes)
	return true, nil, nil
}

// objectsToPush lists the objects the pushed commits bring that the
// remote's refs (those it advertised and we have) do not reach.
func (s *syncer) objectsToPush(cmds []*packp.Command, advertised map[string]plumbing.Hash) ([]plumbing.Hash, error) {
	var tips, known []plumbing.Hash
	for _, c := range cmds {
		tips = append(tips, c.New)
	}
	for name, h := range advertised {
		// Checkpoint commits have HEAD's commit as a parent: the remote's
		// branches tell which of those it has.
		if strings.HasPrefix(name, hegelPrefix) || (s.o.Checkpoints && strings.HasPrefix(name, "refs/")) {
			if s.r.storage.HasEncodedObject(h) == nil {
				known = append(known, h)
			}
		}
	}
	news, err := s.g.newCommits(tips, known)
	if err != nil {
		return nil, err
	}
	w := newObjectWalk(s.r.storage)
	if err := w.addCommits(s.g, news, boundaryOf(news)); err != nil {
		return nil, err
	}
	return w.out, nil
}

func sameRefusals(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func refusedError(remote string, refused map[string]string) error {
	names := make([]string, 0, len(refused))
	for n := range refused {
		names = append(names, n)
	}
	sort.Strings(names)
	return fmt.Errorf("%s refused %s: %s", remote, names[0], oneLine(refused[names[0]]))
}
