package gitstore

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// ErrRemoteMoved reports a push that kept finding the remote changed by
// someone else: every attempt fetched and merged, so nothing is lost.
var ErrRemoteMoved = errors.New("the remote kept changing")

// push sends every local ref the remote lacks, fast-forward only and with
// a lease, fetching and merging and trying again when the remote moved.
func (s *syncer) push(ctx context.Context) error {
	tr, err := s.r.transport()
	if err != nil {
		return err
	}
	var lastRefused map[string]string
	mergedTracking := false
	for attempt := 0; ; attempt++ {
		if s.beforePush != nil {
			s.beforePush()
		}
		done, diverged, refused, err := s.pushOnce(ctx, tr)
		if err != nil || done {
			return err
		}
		if diverged && !mergedTracking {
			// A local ref does not contain the remote's version this
			// clone fetched before (a conflict left unresolved, or what a
			// plain git fetch brought): the remote did not move, so merge
			// that version, as a fetch would, and try again; it is no
			// retry, and the push does not say the remote moved.
			mergedTracking = true
			s.rep.MergedFetched = true
			if err := s.merge(nil); err != nil {
				return err
			}
			continue
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
//
// A ref is pushed when it moved here since the remote's value was last
// seen (its tracking ref) and contains that value; the lease makes the
// remote check, under its ref lock, that it still holds it. A ref that
// does not contain it diverged: it is fetched and merged first.
//
// diverged is true when a local ref does not contain the remote's value
// as last fetched: it has to be merged before it can be pushed.
func (s *syncer) pushOnce(ctx context.Context, tr remoteTransport) (done, diverged bool, refused map[string]string, err error) {
	// Only a local ref that differs from the remote's value as last seen
	// has anything to send (and is checked).
	kinds, local, tracking, err := s.differingRefs()
	if err != nil {
		return false, false, nil, err
	}

	var ups []refUpdate
	stale := false
	for _, ref := range sortedRefsWhere(kinds, hasKey(local)) {
		if s.conflicted[ref.rel] {
			continue // not merged: ours is not a fast-forward of theirs
		}
		if s.refused[ref.rel] {
			// The remote's version was refused: it cannot be merged, so
			// ours cannot be pushed over it as a fast-forward.
			continue
		}
		lv, tv := local[ref.rel], tracking[ref.rel]
		if lv == tv {
			continue // nothing new here
		}
		if !tv.IsZero() {
			ff, err := s.g.isAncestor(tv, lv)
			if err != nil {
				return false, false, nil, fmt.Errorf("%s: %s", ref.local(), oneLine(err.Error()))
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
		ups = append(ups, refUpdate{name: ref.local(), old: tv, new: lv})
	}
	if stale {
		return false, true, nil, nil
	}
	if len(ups) == 0 {
		return true, false, nil, nil
	}

	res, err := tr.push(ctx, s.rem, ups, s.o.GitProgress)
	if err != nil {
		return false, false, nil, err
	}
	for _, u := range ups {
		if !res.moved[u.name] && !res.uptodate[u.name] {
			continue
		}
		rel := strings.TrimPrefix(string(u.name), hegelPrefix)
		_ = s.r.refs.Update(plumbing.ReferenceName(s.trackingPrefix()+rel), u.old, u.new)
		if res.moved[u.name] {
			s.rep.Pushed = append(s.rep.Pushed, string(u.name))
		}
	}
	if len(res.refused) > 0 {
		return false, false, res.refused, nil
	}
	if len(res.stale) > 0 {
		return false, false, nil, nil
	}
	s.rep.Sent += res.sent
	return true, false, nil, nil
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
