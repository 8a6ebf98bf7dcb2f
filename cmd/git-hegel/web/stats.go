package web

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/engine/text"
	"github.com/git-hegel/git-hegel/gitstore"
)

// The statistics page: `git hegel stats` over a period, drawn: runs per
// day (by how they ended), the success rate per day, and the median time
// spent at each node. The charts are SVG laid out here, like the graphs.

type statsData struct {
	pageData
	Days, Since string
	Error       string
	Period      string
	Total       engine.Summary
	SuccessRate string
	Average     string
	Runs        *barChart
	Rate        *lineChart
	Nodes       []nodeBar
	NodesW      float64
	Damaged     string
}

// barChart is the runs per day: one column a day, stacked by outcome.
type barChart struct {
	W, H   float64
	Bars   []bar
	Ticks  []tick // x labels
	YTicks []tick
	Legend bool
}

type bar struct {
	X, Y, W, H float64
	Class, Tip string
}

type tick struct {
	X, Y  float64
	Label string
}

// lineChart is the success rate per day (days without finished runs
// have no point).
type lineChart struct {
	W, H   float64
	Path   string
	Points []bar // X, Y: the point; Tip
	Ticks  []tick
	YTicks []tick
}

// nodeBar is one node's median time.
type nodeBar struct {
	Label, Median, Tip string
	W                  float64 // bar width in px
	Runs               int
	FailureRate        string
}

const (
	chartH     = 180.0
	chartLeft  = 40.0
	chartBot   = 24.0
	chartW     = 860.0 // the days share it, each 4 to 28 px wide
	nodeBarMax = 420.0
)

func (s *Server) stats(req *request) (string, any, error) {
	q := req.URL.Query()
	d := statsData{pageData: s.base(req, "Statistics"), Days: q.Get("days"), Since: strings.TrimSpace(q.Get("since"))}
	d.Nav = "stats"
	loc := time.Local
	now := req.now.In(loc)
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, loc)
	from := today.AddDate(0, 0, -29)
	switch {
	case d.Since != "" && d.Days != "":
		d.Error = "give either a number of days or a date to start from, not both"
	case d.Since != "":
		t, err := gitstore.ParseDate(d.Since, req.now, false)
		if err != nil {
			d.Error = "since: " + err.Error()
		} else if !t.Before(req.now) {
			d.Error = "since: " + d.Since + " is not in the past"
		} else {
			t = t.In(loc)
			from = time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, loc)
		}
	case d.Days != "":
		n, err := strconv.Atoi(d.Days)
		if err != nil || n < 1 || n > 366 {
			d.Error = "days: a number from 1 to 366, not '" + d.Days + "'"
		} else {
			from = today.AddDate(0, 0, -(n - 1))
		}
	}
	if d.Error != "" {
		return "stats.html", d, &renderedError{code: 400}
	}
	if today.Sub(from) > 366*24*time.Hour {
		from = today.AddDate(0, 0, -365) // a chart of at most a year of days
	}
	to := req.now.Add(time.Nanosecond)
	e := req.repo.Engine
	days, err := e.Stats(engine.StatsOptions{From: from, To: to, By: engine.ByDay, Loc: loc})
	if err != nil {
		return "", nil, err
	}
	all, err := e.Stats(engine.StatsOptions{From: from, To: to, Loc: loc})
	if err != nil {
		return "", nil, err
	}
	if h, ok := e.History.(*gitstore.History); ok && len(h.Damaged) > 0 {
		d.Damaged = fmt.Sprintf("%s could not be read and %s left out; 'git hegel doctor' says more",
			text.Plural(len(h.Damaged), "history entry", "history entries"), map[bool]string{true: "was", false: "were"}[len(h.Damaged) == 1])
	}
	d.Total = all[0]
	d.Period = from.Format("2006-01-02") + " to " + today.Format("2006-01-02")
	d.SuccessRate = "-" // no run ended in the period
	if d.Total.Total > 0 {
		d.SuccessRate = text.Percent(d.Total.SuccessRate)
	}
	d.Average = text.HumanDuration(time.Duration(d.Total.AverageMS) * time.Millisecond)
	byDay := map[string]engine.Summary{}
	for _, sm := range days {
		byDay[sm.Label] = sm
	}
	var series []engine.Summary
	for t := from; !t.After(today); t = t.AddDate(0, 0, 1) {
		label := t.Format(engine.HistoryDayLayout)
		sm, ok := byDay[label]
		if !ok {
			sm = engine.Summary{Label: label}
		}
		series = append(series, sm)
	}
	d.Runs = runsChart(series)
	d.Rate = rateChart(series)
	d.Nodes, d.NodesW = nodeBars(d.Total.Nodes)
	return "stats.html", d, nil
}

// dayWidth is the width of a day in the charts.
func dayWidth(days int) float64 { return min(28, max(4, math.Floor(chartW/float64(max(days, 1))))) }

// runsChart stacks each day's completed, failed, and aborted or rolled
// back runs.
func runsChart(series []engine.Summary) *barChart {
	dayW := dayWidth(len(series))
	gap := min(4, dayW/4)
	top := 0
	for _, s := range series {
		top = max(top, s.Total)
	}
	scale := niceMax(top)
	c := &barChart{W: chartLeft + float64(len(series))*dayW + 10, H: chartH + chartBot}
	for i, s := range series {
		x := chartLeft + float64(i)*dayW + gap/2
		y := chartH
		for _, part := range []struct {
			n     int
			class string
		}{{s.Completed, "ok"}, {s.Failed, "failed"}, {s.Aborted + s.RolledBack, "other"}} {
			if part.n == 0 {
				continue
			}
			h := float64(part.n) / float64(scale) * (chartH - 10)
			y -= h
			c.Bars = append(c.Bars, bar{X: x, Y: y, W: dayW - gap, H: h, Class: part.class,
				Tip: fmt.Sprintf("%s: %d completed, %d failed, %d aborted or rolled back", s.Label, s.Completed, s.Failed, s.Aborted+s.RolledBack)})
		}
		if i%tickEvery(len(series)) == 0 {
			c.Ticks = append(c.Ticks, tick{X: x + (dayW-gap)/2, Y: chartH + 16, Label: s.Label[5:]})
		}
	}
	for _, v := range []int{0, scale / 2, scale} {
		if v == 0 && scale > 0 || v > 0 {
			c.YTicks = append(c.YTicks, tick{X: chartLeft - 6, Y: chartH - float64(v)/float64(max(scale, 1))*(chartH-10) + 4, Label: strconv.Itoa(v)})
		}
	}
	return c
}

// rateChart draws the share of finished runs that completed, per day.
func rateChart(series []engine.Summary) *lineChart {
	dayW := dayWidth(len(series))
	c := &lineChart{W: chartLeft + float64(len(series))*dayW + 10, H: chartH + chartBot}
	var path []string
	for i, s := range series {
		x := chartLeft + float64(i)*dayW + dayW/2
		if i%tickEvery(len(series)) == 0 {
			c.Ticks = append(c.Ticks, tick{X: x, Y: chartH + 16, Label: s.Label[5:]})
		}
		if s.Total == 0 {
			continue
		}
		y := chartH - s.SuccessRate*(chartH-10)
		cmd := "L"
		if len(path) == 0 {
			cmd = "M"
		}
		path = append(path, fmt.Sprintf("%s%.1f,%.1f", cmd, x, y))
		c.Points = append(c.Points, bar{X: x, Y: y, Tip: fmt.Sprintf("%s: %s of %d", s.Label, text.Percent(s.SuccessRate), s.Total)})
	}
	c.Path = strings.Join(path, " ")
	for _, v := range []float64{0, 0.5, 1} {
		c.YTicks = append(c.YTicks, tick{X: chartLeft - 6, Y: chartH - v*(chartH-10) + 4, Label: text.Percent(v)})
	}
	return c
}

// nodeBars is one bar per workflow node, longest median first.
func nodeBars(nodes []engine.NodeStats) ([]nodeBar, float64) {
	ns := slices.Clone(nodes)
	slices.SortStableFunc(ns, func(a, b engine.NodeStats) int {
		if a.MedianMS != b.MedianMS {
			if a.MedianMS > b.MedianMS {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Workflow+"/"+a.Node, b.Workflow+"/"+b.Node)
	})
	var top int64
	for _, n := range ns {
		top = max(top, n.MedianMS)
	}
	var out []nodeBar
	for _, n := range ns {
		w := 0.0
		if top > 0 {
			w = math.Max(2, float64(n.MedianMS)/float64(top)*nodeBarMax)
		}
		med := text.HumanDuration(time.Duration(n.MedianMS) * time.Millisecond)
		out = append(out, nodeBar{Label: n.Workflow + "/" + n.Node, Median: med, W: w, Runs: n.Runs, FailureRate: text.Percent(n.FailureRate),
			Tip: fmt.Sprintf("%s/%s: median %s over %d runs, %d attempts, %d retries", n.Workflow, n.Node, med, n.Runs, n.Attempts, n.Retries)})
	}
	return out, nodeBarMax
}

// tickEvery labels every day of a week, every week of a quarter, every
// month of a year.
func tickEvery(days int) int {
	switch {
	case days <= 14:
		return 1
	case days <= 120:
		return 7
	}
	return 30
}

// niceMax rounds a count up to a scale whose half is a whole number.
func niceMax(n int) int {
	if n <= 2 {
		return 2
	}
	return n + n%2
}
