package workflow

import (
	"slices"
	"strconv"

	"go.yaml.in/yaml/v3"

	"github.com/git-hegel/git-hegel/engine/text"
)

// The workflow keys of a node's stage metadata (display name, artifacts,
// task types, skips), gates and retries. They are parsed here, apart from
// the core keys in load.go, so each group of keys stays in one place.

// Keys this file adds to the lists load.go checks against.
var (
	metaTopKeys        = []string{"task_types", "default_task_type", "max_rollbacks"}
	metaNodeKeys       = []string{"display_name", "description", "artifact", "produces", "requires", "conditional", "skip_for", "gate", "approvers", "max_attempts", "subphases"}
	metaTransitionKeys = []string{"confirm"}
)

func init() {
	topKeys = append(topKeys, metaTopKeys...)
	nodeKeys = append(nodeKeys, metaNodeKeys...)
	transitionKeys = append(transitionKeys, metaTransitionKeys...)
}

// draftMeta is the workflow-level metadata as written.
type draftMeta struct {
	types       []string
	typePos     []*yaml.Node
	typesKey    *yaml.Node
	defaultType string
	defaultPos  *yaml.Node
	// maxRollbacks is max_rollbacks (0: not given).
	maxRollbacks int
}

// nodeMetaPos remembers where a node's metadata was written, for the
// checks that need the whole file.
type nodeMetaPos struct {
	skipFor   []*yaml.Node
	approvers *yaml.Node
}

// maxMetaItems bounds the lists (task types, requires, skip_for,
// approvers): they name a handful of things, and a bound keeps a
// hostile file from costing much.
const maxMetaItems = 100

func (p *parser) topMeta(d *draft, f field) error {
	var err error
	switch f.name {
	case "task_types":
		d.meta.typesKey = f.key
		d.meta.types, d.meta.typePos, err = p.nameList(f.value, "", "task_types", "task type")
		if err == nil && len(d.meta.types) == 0 {
			err = p.errAt(f.value, "%q is empty; leave it out if the workflow has no task types", "task_types")
		}
	case "default_task_type":
		d.meta.defaultPos = f.value
		if d.meta.defaultType, err = p.line(f.value, "", "default_task_type", true); err == nil && !validName(d.meta.defaultType) {
			err = p.errAt(f.value, "invalid task type %s: %s", text.Quote(d.meta.defaultType), nameRule)
		}
	case "max_rollbacks":
		d.meta.maxRollbacks, err = p.rollbacksValue(f.value)
	}
	return err
}

// rollbacksValue reads max_rollbacks: a whole number from 1 to
// MaxRollbacksLimit, or "off" (-1) for no cap.
func (p *parser) rollbacksValue(n *yaml.Node) (int, error) {
	d := deref(n)
	if d.Kind == yaml.ScalarNode && d.ShortTag() == "!!str" && d.Value == "off" {
		return -1, nil
	}
	if d.Kind == yaml.ScalarNode && d.ShortTag() == "!!int" {
		if v, err := strconv.Atoi(d.Value); err == nil && v >= 1 && v <= MaxRollbacksLimit {
			return v, nil
		}
	}
	return 0, p.errAt(n, "%q must be a whole number from 1 to %d, or off, got %s", "max_rollbacks", MaxRollbacksLimit, describe(d))
}

func (p *parser) nodeMeta(dn *draftNode, f field, prefix string) error {
	m := &dn.node.StageMeta
	var err error
	switch f.name {
	case "run", "check":
		return p.nodeRun(dn, f, prefix)
	case "display_name":
		m.DisplayName, err = p.line(f.value, prefix, f.name, true)
	case "description":
		var s string
		if s, err = p.scalar(f.value, prefix, f.name); err == nil {
			m.Description = trimText(s)
		}
	case "artifact", "produces":
		var items []string
		var pos []*yaml.Node
		if items, pos, err = p.stringList(f.value, prefix, f.name); err == nil {
			for i, it := range items {
				if perr := CheckArtifactPattern(it); perr != nil {
					return p.errAt(pos[i], "%s%s %v", prefix, f.name, perr)
				}
				// The task's tree keeps a node's artifacts by file name.
				n := ArtifactName(it)
				if slices.ContainsFunc(append(slices.Clone(m.Artifacts), m.Produces...), func(o string) bool { return ArtifactName(o) == n }) {
					return p.errAt(pos[i], "%s%s %s: another artifact of this node has the file name %s", prefix, f.name, text.Quote(it), text.Quote(n))
				}
				if f.name == "artifact" {
					m.Artifacts = append(m.Artifacts, it)
				} else {
					m.Produces = append(m.Produces, it)
				}
			}
		}
	case "requires":
		var items []string
		var pos []*yaml.Node
		if items, pos, err = p.stringList(f.value, prefix, f.name); err == nil {
			for i, it := range items {
				if perr := CheckArtifactPattern(it); perr != nil {
					return p.errAt(pos[i], "%srequires: %v", prefix, perr)
				}
			}
			m.Requires = items
		}
	case "conditional":
		m.Conditional, err = p.boolean(f.value, prefix, f.name)
	case "skip_for":
		m.SkipFor, dn.meta.skipFor, err = p.nameList(f.value, prefix, f.name, "task type")
	case "gate":
		var g string
		if g, err = p.line(f.value, prefix, f.name, true); err == nil {
			if g != GateApproval {
				return p.errAt(f.value, "%sunknown gate %s (the gate a node may have: %q)", prefix, text.Quote(g), GateApproval)
			}
			m.Gate = g
		}
	case "approvers":
		dn.meta.approvers = f.key
		m.Approvers, _, err = p.stringList(f.value, prefix, f.name)
	case "max_attempts":
		m.MaxAttempts, err = p.attemptsValue(f.value, prefix, f.name)
	case "subphases":
		m.Subphases, _, err = p.nameList(f.value, prefix, f.name, "sub-phase")
	}
	return err
}

func (p *parser) transitionMeta(t *Transition, f field, prefix string) error {
	if f.name == "confirm" {
		var err error
		t.Confirm, err = p.boolean(f.value, prefix, f.name)
		return err
	}
	return nil
}

// checkMeta checks what needs the whole file: the task types named by
// skip_for and default_task_type are declared, approvers come with a gate.
func (p *parser) checkMeta(d *draft) error {
	types := d.meta.types
	if d.meta.defaultPos != nil {
		if len(types) == 0 {
			return p.errAt(d.meta.defaultPos, "default_task_type %s, but the workflow declares no task_types", text.Quote(d.meta.defaultType))
		}
		if !slices.Contains(types, d.meta.defaultType) {
			return p.errAt(d.meta.defaultPos, "default_task_type %s is not one of task_types (%s)", text.Quote(d.meta.defaultType), text.JoinQuoted(types))
		}
	} else if len(types) > 0 {
		d.meta.defaultType = types[0]
	}
	for _, dn := range d.nodes {
		for i, t := range dn.node.SkipFor {
			if !slices.Contains(types, t) {
				if len(types) == 0 {
					return p.errAt(dn.meta.skipFor[i], "node %q: skip_for names task type %s, but the workflow declares no task_types", dn.node.Name, text.Quote(t))
				}
				return p.errAt(dn.meta.skipFor[i], "node %q: skip_for names task type %s, which task_types does not declare (%s)", dn.node.Name, text.Quote(t), text.JoinQuoted(types))
			}
		}
		if dn.meta.approvers != nil && dn.node.Gate == "" {
			return p.errAt(dn.meta.approvers, "node %q: approvers without a gate; add \"gate: approval\"", dn.node.Name)
		}
	}
	return p.checkSkipLoops(d)
}

// checkSkipLoops refuses skip_for lists that would leave a task of some
// type nowhere to go: a skipped node is passed over along its first
// transition, so those must reach a node the type runs, or an end.
func (p *parser) checkSkipLoops(d *draft) error {
	byName := map[string]*draftNode{}
	for _, dn := range d.nodes {
		byName[dn.node.Name] = dn
	}
	for _, t := range d.meta.types {
		for _, dn := range d.nodes {
			seen := map[string]bool{}
			for n := dn; n != nil && slices.Contains(n.node.SkipFor, t) && len(n.node.Transitions) > 0; n = byName[n.node.Transitions[0].To] {
				if seen[n.node.Name] {
					return p.errAt(dn.key, "node %q: for task type %q every node after it is skipped in a loop, so such a task could never leave it", dn.node.Name, t)
				}
				seen[n.node.Name] = true
			}
		}
	}
	return nil
}

// nameList parses a list of distinct names (task types).
func (p *parser) nameList(n *yaml.Node, prefix, key, what string) ([]string, []*yaml.Node, error) {
	items, pos, err := p.stringList(n, prefix, key)
	if err != nil {
		return nil, nil, err
	}
	for i, it := range items {
		if !validName(it) {
			return nil, nil, p.errAt(pos[i], "%sinvalid %s %s: %s", prefix, what, text.Quote(it), nameRule)
		}
		for j := range i {
			if items[j] == it {
				return nil, nil, p.errAt(pos[i], "%s%s lists %s twice", prefix, key, text.Quote(it))
			}
		}
	}
	return items, pos, nil
}

// stringList parses a list of one-line strings; a single string counts
// as a list of one.
func (p *parser) stringList(n *yaml.Node, prefix, key string) ([]string, []*yaml.Node, error) {
	d := deref(n)
	if isNull(d) {
		return nil, nil, nil
	}
	elems := []*yaml.Node{n}
	if d.Kind == yaml.SequenceNode {
		elems = d.Content
	}
	if len(elems) > maxMetaItems {
		return nil, nil, p.errAt(n, "%s%q has more than %d entries", prefix, key, maxMetaItems)
	}
	var out []string
	for _, e := range elems {
		s, err := p.line(e, prefix, key, true)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, s)
	}
	return out, elems, nil
}

func (p *parser) boolean(n *yaml.Node, prefix, key string) (bool, error) {
	d := deref(n)
	if d.Kind == yaml.ScalarNode && d.ShortTag() == "!!bool" {
		if b, err := strconv.ParseBool(d.Value); err == nil {
			return b, nil
		}
	}
	return false, p.errAt(n, "%s%q must be true or false, got %s", prefix, key, describe(d))
}

func (p *parser) attemptsValue(n *yaml.Node, prefix, key string) (int, error) {
	d := deref(n)
	if d.Kind == yaml.ScalarNode && d.ShortTag() == "!!int" {
		if v, err := strconv.Atoi(d.Value); err == nil {
			if v < 1 {
				return 0, p.errAt(n, "%s%q must be at least 1, got %d", prefix, key, v)
			}
			if v > 1000 {
				return 0, p.errAt(n, "%s%q must be at most 1000, got %d", prefix, key, v)
			}
			return v, nil
		}
	}
	return 0, p.errAt(n, "%s%q must be a whole number, got %s", prefix, key, describe(d))
}

// trimText drops the trailing newline of block scalars and surrounding
// blank space.
func trimText(s string) string {
	for len(s) > 0 && (s[len(s)-1] == '\n' || s[len(s)-1] == ' ' || s[len(s)-1] == '\t' || s[len(s)-1] == '\r') {
		s = s[:len(s)-1]
	}
	for len(s) > 0 && (s[0] == '\n' || s[0] == ' ') {
		s = s[1:]
	}
	return s
}
