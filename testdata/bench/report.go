package main

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"
)

// row is one line of the result table.
type row struct {
	scenario string
	repo     string
	hegel    string // the git-hegel figure
	base     string // the baseline figure
	ratio    float64
	minRatio float64 // the same ratio of the fastest runs (time rows only)
	target   string
	limit    float64 // ratio the row passes at or under; 0: information only
	low      float64 // and at or over (0: no lower bound)
	note     string
	// h and b are the statistics compared (nil for rows built otherwise);
	// kind says how ("time", "size", "rss"), so that withTwins can build
	// the same row for the -against binary.
	h, b *stats
	kind string
}

// detail is one command's statistics, printed under the table.
type detail struct {
	scenario, repo string
	s              *stats
}

func (r row) result() string {
	switch {
	case r.note != "" && strings.HasPrefix(r.note, "ERROR"):
		return "ERROR"
	case r.limit == 0 || math.IsNaN(r.ratio):
		return "info"
	case r.ratio <= r.limit && r.ratio >= r.low:
		return "PASS"
	}
	return "FAIL"
}

func fmtRatio(x float64) string {
	if math.IsNaN(x) || x == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f×", x)
}

// timeRow compares the median wall times of h and base.
func timeRow(scenario, repo string, h, base *stats, limit float64) row {
	r := row{scenario: scenario, repo: repo, hegel: fmtDur(h.median()), base: fmtDur(base.median()),
		ratio: ratio(h.median(), base.median()), minRatio: ratio(h.min(), base.min()), limit: limit,
		h: h, b: base, kind: "time"}
	if limit > 0 {
		r.target = fmt.Sprintf("≤ %.3g×", limit)
	}
	return r
}

// sizeRow compares one command's medians on two repository sizes: they
// must be within limit of each other, whichever is faster.
func sizeRow(scenario, repos string, big, small *stats, limit float64) row {
	r := timeRow(scenario, repos, big, small, limit)
	r.kind = "size"
	r.low = 1 / limit
	r.target = fmt.Sprintf("%.2f–%.2f×", r.low, limit)
	return r
}

// rssRow compares peak RSS.
func rssRow(scenario, repo string, h, base *stats, limit float64) row {
	r := row{scenario: scenario, repo: repo, hegel: fmtKiB(h.peakRSS()), base: fmtKiB(base.peakRSS()), limit: limit,
		h: h, b: base, kind: "rss"}
	if base.peakRSS() > 0 {
		r.ratio = float64(h.peakRSS()) / float64(base.peakRSS())
	}
	if limit > 0 {
		r.target = fmt.Sprintf("RSS ≤ %.2g×", limit)
	}
	return r
}

// absRow checks a median against an absolute bound; the ratio column
// holds median/bound.
func absRow(scenario, repo string, h *stats, bound time.Duration) row {
	return row{scenario: scenario, repo: repo, hegel: fmtDur(h.median()), base: "-",
		ratio: ratio(h.median(), bound), limit: 1, target: "< " + fmtDur(bound)}
}

func ratio(a, b time.Duration) float64 {
	if b <= 0 {
		return math.NaN()
	}
	return float64(a) / float64(b)
}

func (b *bench) keep(scenario, repo string, ss ...*stats) {
	for _, s := range ss {
		b.details = append(b.details, &detail{scenario, repo, s})
		if t := b.twins[s]; t != nil {
			b.details = append(b.details, &detail{scenario, repo, t})
		}
	}
}

// withTwins follows each row whose git-hegel side has an -against twin
// with the same row for that binary, and a row comparing the two builds.
func (b *bench) withTwins(rows []row) []row {
	if b.against == "" {
		return rows
	}
	twin := func(s *stats) *stats {
		if t := b.twins[s]; t != nil {
			return t
		}
		return s
	}
	var out []row
	compared := map[*stats]bool{}
	for _, r := range rows {
		out = append(out, r)
		if r.h == nil || (b.twins[r.h] == nil && b.twins[r.b] == nil) {
			continue
		}
		var t row
		switch r.kind {
		case "time":
			t = timeRow(r.scenario, r.repo, twin(r.h), twin(r.b), r.limit)
		case "size":
			t = sizeRow(r.scenario, r.repo, twin(r.h), twin(r.b), r.limit)
		case "rss":
			t = rssRow(r.scenario, r.repo, twin(r.h), twin(r.b), r.limit)
		}
		t.scenario += againstMark
		t.target = r.target
		out = append(out, t)
		if r.kind == "time" && b.twins[r.h] != nil && !compared[r.h] {
			compared[r.h] = true
			c := timeRow(r.h.label+": this build vs -against", r.repo, r.h, b.twins[r.h], 0)
			out = append(out, c)
		}
	}
	return out
}

func (b *bench) print(w io.Writer, skipped []string) {
	header := []string{"scenario", "repo", "git-hegel", "baseline", "ratio", "min ratio", "target", "result"}
	var cells [][]string
	for _, r := range b.rows {
		res := r.result()
		if r.note != "" {
			res += " (" + r.note + ")"
		}
		cells = append(cells, []string{r.scenario, r.repo, r.hegel, r.base, fmtRatio(r.ratio), fmtRatio(r.minRatio), r.target, res})
	}
	table(w, header, cells)
	for _, s := range skipped {
		fmt.Fprintf(w, "\n%s", s)
	}
	if len(skipped) > 0 {
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
	header = []string{"scenario", "repo", "command", "runs", "median", "min", "peak RSS"}
	cells = nil
	for _, d := range b.details {
		cells = append(cells, []string{d.scenario, d.repo, d.s.label, fmt.Sprint(len(d.s.walls)),
			fmtDur(d.s.median()), fmtDur(d.s.min()), fmtKiB(d.s.peakRSS())})
	}
	table(w, header, cells)
	for _, n := range b.notes {
		fmt.Fprintln(w)
		fmt.Fprint(w, n)
	}
}

// table prints a Markdown table with aligned columns.
func table(w io.Writer, header []string, rows [][]string) {
	width := make([]int, len(header))
	for i, h := range header {
		width[i] = len([]rune(h))
	}
	for _, r := range rows {
		for i, c := range r {
			width[i] = max(width[i], len([]rune(c)))
		}
	}
	line := func(cells []string) {
		var sb strings.Builder
		sb.WriteString("|")
		for i, c := range cells {
			sb.WriteString(" " + c + strings.Repeat(" ", width[i]-len([]rune(c))) + " |")
		}
		fmt.Fprintln(w, sb.String())
	}
	line(header)
	sep := make([]string, len(header))
	for i := range sep {
		sep[i] = strings.Repeat("-", width[i])
	}
	line(sep)
	for _, r := range rows {
		line(r)
	}
}
