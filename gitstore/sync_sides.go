package gitstore

import (
	"github.com/go-git/go-git/v5/plumbing"
)

// What a sync reads of the local refs and the tracking refs. With 10,000
// tasks stored and one changed, all but one ref hold the same value on
// both sides, and there is nothing of them to merge, to send or to check:
// the steps after the network step look only at the refs whose two sides
// differ, found by walking the two listings (each sorted by name) side by
// side, a comparison per ref and no more.

// trackedRefs returns the remote's tracking refs this sync handles, by
// name relative to the tracking namespace (which is relative to
// refs/hegel/ as well). A ref of a kind sync does not know is left alone;
// one whose name git-hegel would never write is reported as skipped.
func (s *syncer) trackedRefs() (map[string]plumbing.Hash, error) {
	prefix := s.trackingPrefix()
	list, err := s.r.readRefs(prefix)
	if err != nil {
		return nil, err
	}
	out := make(map[string]plumbing.Hash, len(list))
	for _, ref := range list {
		rel := string(ref.Name)[len(prefix):]
		h, ok, err := classify(rel)
		if err != nil && s.o.inScope(h) {
			s.skip(hegelPrefix+rel, err.Error())
		}
		if ok && s.o.inScope(h) {
			out[rel] = ref.Hash
		}
	}
	return out, nil
}

// differingRefs returns the refs this sync handles whose local value
// (under refs/hegel/) is not their tracking value: their kinds, and the
// values of each side that has them (relative names). A local ref that
// cannot be synced (localDamaged) has no local value here; a tracking ref
// whose name git-hegel would never write is reported as skipped, as in
// trackedRefs. Refs both sides hold at the same value are not in the
// result.
func (s *syncer) differingRefs() (kinds map[string]hegelRef, local, tracking map[string]plumbing.Hash, err error) {
	tp := s.trackingPrefix()
	tl, err := s.r.readRefs(tp)
	if err != nil {
		return nil, nil, nil, err
	}
	ll, err := s.r.readRefs(hegelPrefix)
	if err != nil {
		return nil, nil, nil, err
	}
	kinds, local, tracking = map[string]hegelRef{}, map[string]plumbing.Hash{}, map[string]plumbing.Hash{}
	add := func(rel string, lv, tv plumbing.Hash) {
		h, ok, err := classify(rel)
		if err != nil && !tv.IsZero() && s.o.inScope(h) {
			s.skip(hegelPrefix+rel, err.Error())
		}
		if !ok || !s.o.inScope(h) {
			return
		}
		kinds[rel] = h
		if !tv.IsZero() {
			tracking[rel] = tv
		}
		if !lv.IsZero() && !s.localDamaged(h, lv) {
			local[rel] = lv
		}
	}
	// Nothing below writes a ref (localDamaged reads objects only), so
	// the listings are read without a copy. Each is sorted by full name, and all its names share its
	// prefix: sorted by relative name too.
	i, j := 0, 0
	for i < len(ll) || j < len(tl) {
		var lr, tr string
		if i < len(ll) {
			lr = string(ll[i].Name)[len(hegelPrefix):]
		}
		if j < len(tl) {
			tr = string(tl[j].Name)[len(tp):]
		}
		switch {
		case j == len(tl) || i < len(ll) && lr < tr:
			add(lr, ll[i].Hash, plumbing.ZeroHash)
			i++
		case i == len(ll) || tr < lr:
			add(tr, plumbing.ZeroHash, tl[j].Hash)
			j++
		default:
			if ll[i].Hash != tl[j].Hash {
				add(lr, ll[i].Hash, tl[j].Hash)
			}
			i++
			j++
		}
	}
	return kinds, local, tracking, nil
}

// hasKey returns a function reporting whether m holds a name.
func hasKey(m map[string]plumbing.Hash) func(string) bool {
	return func(rel string) bool {
		_, ok := m[rel]
		return ok
	}
}
