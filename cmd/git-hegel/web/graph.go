package web

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/git-hegel/git-hegel/engine/workflow"
)

// The workflow drawn as a graph, laid out here and rendered as SVG by the
// page template: nodes in rows by their distance from the start node,
// forward transitions downwards, transitions back to an earlier row on
// the left, longer jumps forward on the right, loops beside their node.
// Nothing runs in the browser and nothing is fetched.

// Graph is a laid-out workflow.
type Graph struct {
	W, H  float64
	Nodes []GraphNode
	Edges []GraphEdge
}

// GraphNode is one box.
type GraphNode struct {
	Name, Label string
	X, Y, W, H  float64
	Class       string // "node" plus current, visited, skipped, typeskip, terminal, gate
	Badges      string // second line: gate, conditional, skipped types, checks
	Tip         string // the node's summary and details, shown on hover
}

// GraphEdge is one transition (several claims between the same two nodes
// share one edge).
type GraphEdge struct {
	D              string // SVG path
	LabelX, LabelY float64
	Anchor         string // text-anchor of the label
	Label          string
	Class          string // "edge" plus back, jump, loop, taken
}

// Geometry, in SVG user units (pixels at 100%).
const (
	nodeH     = 46.0
	rowGap    = 64.0
	colGap    = 36.0
	margin    = 24.0
	arcStep   = 16.0
	charWidth = 7.4 // of the 13px labels, roughly
	badgeChar = 6.2 // of the 11px badges
)

// GraphMarks says what to highlight: a task's position and path.
type GraphMarks struct {
	Current  string
	Visited  map[string]bool
	Skipped  map[string]bool   // skipped by this task (recorded)
	TypeSkip map[string]bool   // its task type skips them
	Taken    map[[2]string]int // transitions the task took (from, to), and how often
}

// LayoutWorkflow lays wf out. marks may be nil.
func LayoutWorkflow(wf *workflow.Definition, marks *GraphMarks) *Graph {
	if marks == nil {
		marks = &GraphMarks{}
	}
	// The nodes: the workflow's, then the ends that transitions reach.
	names := slices.Clone(wf.Order)
	targets := map[string]bool{}
	for _, n := range wf.Order {
		for _, t := range wf.Nodes[n].Transitions {
			targets[t.To] = true
		}
	}
	for _, end := range []string{workflow.NodeDone, workflow.NodeAborted} {
		if targets[end] && wf.Nodes[end] == nil {
			names = append(names, end)
		}
	}
	index := map[string]int{}
	for i, n := range names {
		index[n] = i
	}
	// Edges, merged per (from, to).
	type edge struct {
		from, to int
		claims   []string
	}
	var edges []*edge
	byPair := map[[2]int]*edge{}
	for _, n := range wf.Order {
		for _, t := range wf.Nodes[n].Transitions {
			to, ok := index[t.To]
			if !ok {
				continue
			}
			key := [2]int{index[n], to}
			claim := t.When
			if t.Confirm {
				claim += " (confirm)"
			}
			if e := byPair[key]; e != nil {
				e.claims = append(e.claims, claim)
				continue
			}
			e := &edge{from: index[n], to: to, claims: []string{claim}}
			byPair[key] = e
			edges = append(edges, e)
		}
	}
	out := make([][]int, len(names))
	for _, e := range edges {
		out[e.from] = append(out[e.from], e.to)
	}
	// Depth-first from the start node (then from any node not reached),
	// in file order: an edge to a node on the stack goes back.
	back := map[[2]int]bool{}
	state := make([]int, len(names)) // 0 new, 1 on the stack, 2 done
	var order []int
	var visit func(v int)
	visit = func(v int) {
		state[v] = 1
		order = append(order, v)
		for _, w := range out[v] {
			switch state[w] {
			case 0:
				visit(w)
			case 1:
				back[[2]int{v, w}] = true
			}
		}
		state[v] = 2
	}
	if s, ok := index[wf.StartNode]; ok {
		visit(s)
	}
	for v := range names {
		if state[v] == 0 {
			visit(v)
		}
	}
	// Rows: the longest forward path from a root.
	rank := make([]int, len(names))
	for changed, rounds := true, 0; changed && rounds <= len(names); rounds++ {
		changed = false
		for _, e := range edges {
			if e.from == e.to || back[[2]int{e.from, e.to}] {
				continue
			}
			if rank[e.to] < rank[e.from]+1 {
				rank[e.to] = rank[e.from] + 1
				changed = true
			}
		}
	}
	// The ends sit on the last row.
	last := 0
	for _, r := range rank {
		last = max(last, r)
	}
	for _, end := range []string{workflow.NodeDone, workflow.NodeAborted} {
		if i, ok := index[end]; ok {
			rank[i] = last
		}
	}
	rows := make([][]int, last+1)
	for _, v := range order {
		rows[rank[v]] = append(rows[rank[v]], v)
	}
	// Sizes.
	g := &Graph{}
	g.Nodes = make([]GraphNode, len(names))
	for i, name := range names {
		n := GraphNode{Name: name, Label: name, H: nodeH, Class: "node"}
		var tip []string
		if node := wf.Nodes[name]; node != nil {
			n.Label = wf.Label(name)
			n.Badges = strings.Join(badges(wf, node), " · ")
			if node.Summary != "" {
				tip = append(tip, node.Summary)
			}
			if k := node.Kept(); len(k) > 0 {
				tip = append(tip, "produces "+strings.Join(k, ", "))
			}
			if node.Terminal {
				n.Class += " terminal"
			}
			if node.Gate != "" {
				n.Class += " gate"
			}
		} else {
			n.Class += " terminal"
			tip = append(tip, wf.Summary(name))
		}
		if n.Label != name {
			tip = append([]string{name}, tip...)
		}
		n.Tip = strings.Join(tip, "\n")
		switch {
		case name == marks.Current:
			n.Class += " current"
		case marks.Skipped[name]:
			n.Class += " skipped"
		case marks.Visited[name]:
			n.Class += " visited"
		}
		if marks.TypeSkip[name] {
			n.Class += " typeskip"
		}
		n.W = max(110, float64(len([]rune(n.Label)))*charWidth+28, float64(len([]rune(n.Badges)))*badgeChar+20)
		g.Nodes[i] = n
	}
	// Margins for the arcs and their labels.
	var nBack, nJump int
	var backLabel, jumpLabel float64
	for _, e := range edges {
		l := float64(len(strings.Join(e.claims, " / "))) * badgeChar
		switch {
		case e.from == e.to || rank[e.to] > rank[e.from]+1 || rank[e.to] == rank[e.from] && !back[[2]int{e.from, e.to}]:
			nJump++
			jumpLabel = max(jumpLabel, l)
		case back[[2]int{e.from, e.to}]:
			nBack++
			backLabel = max(backLabel, l)
		}
	}
	left := margin + float64(nBack)*arcStep + backLabel + 20
	right := margin + float64(nJump)*arcStep + jumpLabel + 20
	widest := 0.0
	rowW := make([]float64, len(rows))
	for r, row := range rows {
		for k, v := range row {
			rowW[r] += g.Nodes[v].W
			if k > 0 {
				rowW[r] += colGap
			}
		}
		widest = max(widest, rowW[r])
	}
	center := left + widest/2
	for r, row := range rows {
		x := center - rowW[r]/2
		for _, v := range row {
			g.Nodes[v].X = x
			g.Nodes[v].Y = margin + float64(r)*(nodeH+rowGap)
			x += g.Nodes[v].W + colGap
		}
	}
	g.W = left + widest + right
	g.H = margin*2 + float64(len(rows))*nodeH + float64(max(len(rows)-1, 0))*rowGap
	// Edges.
	minX, maxX := math.Inf(1), math.Inf(-1)
	for _, n := range g.Nodes {
		minX = min(minX, n.X)
		maxX = max(maxX, n.X+n.W)
	}
	kBack, kJump := 0, 0
	for _, e := range edges {
		a, b := &g.Nodes[e.from], &g.Nodes[e.to]
		ge := GraphEdge{Label: strings.Join(e.claims, " / "), Class: "edge"}
		if n := marks.Taken[[2]string{names[e.from], names[e.to]}]; n > 0 {
			ge.Class += " taken"
			if n > 1 {
				ge.Label += fmt.Sprintf(" ×%d", n)
			}
		}
		switch {
		case e.from == e.to:
			x, y := a.X+a.W, a.Y+nodeH/2
			ge.D = fmt.Sprintf("M%.1f,%.1f C%.1f,%.1f %.1f,%.1f %.1f,%.1f", x, y-10, x+48, y-34, x+48, y+34, x+2, y+10)
			ge.LabelX, ge.LabelY, ge.Anchor = x+44, y+4, "start"
			ge.Class += " loop"
		case back[[2]int{e.from, e.to}]:
			kBack++
			cx := minX - 28 - float64(kBack)*arcStep
			x1, y1 := a.X, a.Y+nodeH/2
			x2, y2 := b.X, b.Y+nodeH/2
			ge.D = fmt.Sprintf("M%.1f,%.1f C%.1f,%.1f %.1f,%.1f %.1f,%.1f", x1, y1, cx, y1, cx, y2, x2-2, y2)
			mx := (x1 + 3*cx + 3*cx + x2) / 8
			ge.LabelX, ge.LabelY, ge.Anchor = mx-6, (y1+y2)/2+4, "end"
			ge.Class += " back"
		case rank[e.to] == rank[e.from]+1:
			outs := out[e.from]
			k := slices.Index(outs, e.to)
			spread := (float64(k) - float64(len(outs)-1)/2) * 14
			x1, y1 := a.X+a.W/2+spread, a.Y+nodeH
			x2, y2 := b.X+b.W/2, b.Y-2
			ge.D = fmt.Sprintf("M%.1f,%.1f C%.1f,%.1f %.1f,%.1f %.1f,%.1f", x1, y1, x1, y1+rowGap/2, x2, y2-rowGap/2, x2, y2)
			ge.LabelX, ge.LabelY, ge.Anchor = (x1+x2)/2+8, (y1+y2)/2+4, "start"
		default:
			kJump++
			cx := maxX + 28 + float64(kJump)*arcStep
			x1, y1 := a.X+a.W, a.Y+nodeH/2
			x2, y2 := b.X+b.W+2, b.Y+nodeH/2
			ge.D = fmt.Sprintf("M%.1f,%.1f C%.1f,%.1f %.1f,%.1f %.1f,%.1f", x1, y1, cx, y1, cx, y2, x2, y2)
			mx := (x1 + 3*cx + 3*cx + x2) / 8
			ge.LabelX, ge.LabelY, ge.Anchor = mx+6, (y1+y2)/2+4, "start"
			ge.Class += " jump"
		}
		g.Edges = append(g.Edges, ge)
	}
	return g
}

// badges is the second line of a node's box: what stops or skips it.
func badges(wf *workflow.Definition, n *workflow.Node) []string {
	var out []string
	if n.Gate != "" {
		g := "gate: " + n.Gate
		if len(n.Approvers) > 0 {
			g += " (" + strings.Join(n.Approvers, ", ") + ")"
		}
		out = append(out, g)
	}
	if n.Conditional {
		out = append(out, "conditional")
	}
	if len(n.SkipFor) > 0 {
		out = append(out, "skipped for "+strings.Join(n.SkipFor, ", "))
	}
	if len(n.Rules) > 0 {
		out = append(out, plural(len(n.Rules), "1 rule", fmt.Sprintf("%d rules", len(n.Rules))))
	}
	if n.Terminal {
		out = append(out, "ends the run")
	}
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
