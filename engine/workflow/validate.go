package workflow

import (
	"github.com/git-hegel/git-hegel/engine/text"
)

// check validates what can only be judged with the whole file read: the
// graph. Each pass reports the first problem in file order.
func (p *parser) check(d *draft) error {
	if len(d.nodes) == 0 {
		if d.nodesKey == nil {
			return &defError{p.file, d.line, "missing nodes"}
		}
		return p.errAt(d.nodesKey, "no nodes defined")
	}
	if d.startNode == nil {
		return &defError{p.file, d.line, "missing start_node"}
	}
	defined := make(map[string]*draftNode, len(d.nodes))
	for _, dn := range d.nodes {
		defined[dn.node.Name] = dn
	}
	if _, ok := defined[d.start]; !ok {
		return p.errAt(d.startNode, "start_node %s is not a defined node", text.Quote(d.start))
	}
	for _, dn := range d.nodes {
		for i, t := range dn.node.Transitions {
			if _, ok := defined[t.To]; !ok && t.To != NodeDone && t.To != NodeAborted {
				return p.errAt(dn.toPos[i], "node %q: transition to unknown node %s", dn.node.Name, text.Quote(t.To))
			}
		}
	}
	if err := p.checkTemplates(d); err != nil {
		return err
	}
	if err := p.checkResultEnv(d); err != nil {
		return err
	}
	reach := reachable(d.start, func(n string) []string {
		var out []string
		if dn, ok := defined[n]; ok {
			for _, t := range dn.node.Transitions {
				out = append(out, t.To)
			}
		}
		return out
	})
	for _, dn := range d.nodes {
		if !reach[dn.node.Name] {
			return p.errAt(dn.key, "node %q is unreachable from start_node %q", dn.node.Name, d.start)
		}
	}
	// A node that cannot get to an end traps a task until someone runs
	// abort or restart_cycle. hegel's files use such loops on purpose, so
	// it is a warning.
	preds := map[string][]string{}
	var seeds []string
	for _, dn := range d.nodes {
		for _, t := range dn.node.Transitions {
			preds[t.To] = append(preds[t.To], dn.node.Name)
		}
		if dn.node.Terminal {
			seeds = append(seeds, dn.node.Name)
		}
	}
	ends := map[string]bool{}
	for _, s := range append([]string{NodeDone, NodeAborted}, seeds...) {
		for n := range reachable(s, func(n string) []string { return preds[n] }) {
			ends[n] = true
		}
	}
	for _, dn := range d.nodes {
		if !ends[dn.node.Name] {
			p.warnAt(dn.key, "node %q has no path to done: a task there can only leave with restart_cycle or abort", dn.node.Name)
		}
	}
	return nil
}

// reachable returns every name reachable from start (start included).
func reachable(start string, next func(string) []string) map[string]bool {
	seen := map[string]bool{start: true}
	queue := []string{start}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, m := range next(n) {
			if !seen[m] {
				seen[m] = true
				queue = append(queue, m)
			}
		}
	}
	return seen
}
