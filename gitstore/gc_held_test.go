package gitstore

import (
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-hegel/git-hegel/gitstore/refs"
)

func TestHeldSince(t *testing.T) {
	a, b := plumbing.NewHash("aa"), plumbing.NewHash("bb")
	z := plumbing.ZeroHash
	day := func(d int) time.Time { return time.Date(2026, 1, d, 0, 0, 0, 0, time.UTC) }
	for _, c := range []struct {
		name string
		log  []refs.ReflogEntry
		want time.Time
		ok   bool
	}{
		{"no record", nil, time.Time{}, false},
		{"created, then moved by a fetch", []refs.ReflogEntry{{Old: z, New: a, When: day(2)}, {Old: a, New: b, When: day(9)}}, day(2), true},
		{"deleted and made again", []refs.ReflogEntry{{Old: z, New: a, When: day(2)}, {Old: a, New: z, When: day(3)}, {Old: z, New: b, When: day(7)}}, day(7), true},
		{"creation expired", []refs.ReflogEntry{{Old: a, New: b, When: day(5)}, {Old: b, New: a, When: day(6)}}, day(5), true},
	} {
		got, ok := heldSince(c.log)
		if ok != c.ok || !got.Equal(c.want) {
			t.Errorf("%s: heldSince = %v, %v; want %v, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

func TestHeldAt(t *testing.T) {
	a, b := plumbing.NewHash("aa"), plumbing.NewHash("bb")
	z := plumbing.ZeroHash
	day := func(d int) time.Time { return time.Date(2026, 1, d, 0, 0, 0, 0, time.UTC) }
	for _, c := range []struct {
		name string
		log  []refs.ReflogEntry
		at   time.Time
		want plumbing.Hash
		ok   bool
	}{
		{"no record", nil, day(5), z, false},
		{"the entry before", []refs.ReflogEntry{{Old: z, New: a, When: day(2)}, {Old: a, New: b, When: day(9)}}, day(5), a, true},
		{"created at the time", []refs.ReflogEntry{{Old: z, New: a, When: day(5)}}, day(5), z, true},
		{"made again after", []refs.ReflogEntry{{Old: z, New: a, When: day(2)}, {Old: a, New: z, When: day(3)}, {Old: z, New: b, When: day(7)}}, day(5), z, true},
		{"creation expired", []refs.ReflogEntry{{Old: a, New: b, When: day(6)}}, day(5), z, true},
		{"restarted by gc after", []refs.ReflogEntry{{Old: z, New: a, When: day(6), Msg: "gc: history before x removed"}}, day(5), z, false},
		{"restarted by gc before", []refs.ReflogEntry{{Old: z, New: a, When: day(2), Msg: "gc: history before x removed"}, {Old: a, New: b, When: day(6)}}, day(5), a, true},
	} {
		got, ok := heldAt(c.log, c.at)
		if ok != c.ok || got != c.want {
			t.Errorf("%s: heldAt = %v, %v; want %v, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}
