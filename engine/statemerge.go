package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// Side names one side of a three-way merge of task states: ours is this
// clone's, theirs the remote's.
type Side string

// The sides a conflict can be resolved to; SideNone resolves nothing.
const (
	SideNone   Side = ""
	SideOurs   Side = "ours"
	SideTheirs Side = "theirs"
)

// FieldConflict is one field of state.json that both sides changed in
// ways that cannot both stand. Ours and Theirs are the two values as a
// person reads them.
type FieldConflict struct {
	Field        string
	Ours, Theirs string
}

// StateMerge is the result of MergeStates.
type StateMerge struct {
	// State is the merged state; nil when there are conflicts left.
	State *State
	// FromOurs and FromTheirs name the fields (state.json keys) whose
	// merged value came from that side's change, sorted.
	FromOurs, FromTheirs []string
	// Conflicts are the fields both sides changed differently; when
	// MergeStates was asked to prefer a side they are resolved to it (and
	// still listed), otherwise State is nil.
	Conflicts []FieldConflict
}

// fieldRule is how one field of state.json merges.
type fieldRule int

const (
	ruleScalar     fieldRule = iota // one side's change stands; both changed differently: conflict
	ruleLater                       // a timestamp: the later one stands
	ruleUnion                       // a list of events: union, without what one side removed
	ruleCounterMap                  // counts per key: both sides' increments add up
	ruleMap                         // per key as ruleScalar
	ruleQuestions                   // questions by (node, asked_at, question); answers as ruleScalar
	ruleStatus                      // ruleScalar, but a pause stands over another open status
	ruleAttempt                     // the node mover's attempt, else increments add up
	ruleNodeGroup                   // part of where the task is: merged as one value
	ruleLocks                       // file locks by path: MergeLocks
	ruleFixed                       // set when the run starts: a change from either side is a conflict
	ruleHolder                      // who holds the task: ruleScalar, but a holder stands over nobody
)

// stateRules says how each field merges; a field not listed (one a
// later version adds) is a scalar, so it is never silently dropped.
var stateRules = map[string]fieldRule{
	"current_node":     ruleNodeGroup,
	"history":          ruleNodeGroup,
	"phase_start_time": ruleNodeGroup,
	"pending_claim":    ruleNodeGroup,
	"subphase":         ruleNodeGroup,
	"status":           ruleStatus,
	"attempt":          ruleAttempt,
	"updated_at":       ruleLater,
	"paused_at":        ruleLater,
	"resumed_at":       ruleLater,
	"approvals":        ruleUnion,
	"rollback_history": ruleUnion,
	"phase_log":        ruleUnion,
	"overrides":        ruleUnion,
	"skipped_nodes":    ruleUnion,
	"completed_nodes":  ruleUnion,
	"failed_nodes":     ruleUnion,
	"node_moves":       ruleUnion,
	"away_log":         ruleUnion,
	"questions":        ruleQuestions,
	"retries":          ruleCounterMap,
	"node_attempts":    ruleCounterMap,
	"step_results":     ruleMap,
	"submitted":        ruleMap, // per node: what each node left is one value
	"files_locked":     ruleLocks,
	"worktree":         ruleHolder,
	"worktree_id":      ruleHolder,
	"owner_email":      ruleHolder,
	// meta_mode says what the run was started as; nothing changes it
	// while the run lasts, so two sides that differ are two runs.
	"meta_mode": ruleFixed,
}

// nodeBound are the fields that say whether the task is still at its
// node (a finish moves it to its end): when the node conflicts, they
// conflict too wherever the two sides differ.
var nodeBound = map[string]bool{"status": true, "ended_at": true}

// quiet fields are merged but not named in FromOurs/FromTheirs: every
// change moves them.
var quietFields = map[string]bool{"updated_at": true}

// MergeStates merges two versions of a task's state that both moved on
// from base, field by field (docs/sync.md, "How tasks merge"): a field
// only one side changed takes that change; lists of events are unions;
// counters add both sides' increments; timestamps take the later; the
// node, with the path and the time it was entered, is one value. Fields
// both sides changed differently are conflicts: with prefer SideNone the
// result has no State, otherwise each conflict takes the preferred side's
// value and everything else stays merged. A merged state that would break
// the rules every stored state obeys (ValidateState) is a conflict too;
// resolved, it takes the preferred side's state whole.
//
// base may be nil (no common version): every field both sides hold
// differently is then a conflict.
func MergeStates(base, ours, theirs *State, prefer Side) (StateMerge, error) {
	var res StateMerge
	b, err := stateFields(base)
	if err != nil {
		return res, err
	}
	o, err := stateFields(ours)
	if err != nil {
		return res, err
	}
	t, err := stateFields(theirs)
	if err != nil {
		return res, err
	}
	out := map[string]json.RawMessage{}
	keys := unionKeys(b, o, t)
	nodeMover := nodeGroupMerge(b, o, t, prefer, out, &res)
	nodeConflict := len(res.Conflicts) > 0
	for _, k := range keys {
		rule := stateRules[k]
		if rule == ruleNodeGroup {
			continue
		}
		bv, ov, tv := b[k], o[k], t[k]
		// Counters count events, and the two sides' are different
		// events even when they counted the same.
		counter := rule == ruleAttempt || rule == ruleCounterMap
		if same(ov, tv) && (!counter || same(ov, bv)) {
			put(out, k, ov)
			continue
		}
		var v json.RawMessage
		var conflict *FieldConflict
		switch {
		case nodeConflict && nodeBound[k]:
			// Where the task is conflicts: its status goes with the
			// node the resolution takes, never half of each.
			conflict = &FieldConflict{Field: k, Ours: display(ov), Theirs: display(tv)}
			v = ov
			if prefer == SideTheirs {
				v = tv
			}
		case rule == ruleAttempt:
			v = mergeAttempt(bv, ov, tv, nodeMover)
		case rule == ruleFixed:
			// Either side changing it is a change no command makes:
			// it stands only when the user picks that side.
			conflict = &FieldConflict{Field: k, Ours: display(ov), Theirs: display(tv)}
			v = ov
			if prefer == SideTheirs {
				v = tv
			}
		case same(ov, bv):
			v = tv
		case same(tv, bv):
			v = ov
		default:
			v, conflict, err = mergeBoth(k, rule, bv, ov, tv, prefer)
			if err != nil {
				return res, err
			}
		}
		if conflict != nil {
			res.Conflicts = append(res.Conflicts, *conflict)
		}
		put(out, k, v)
	}
	for _, k := range keys {
		if quietFields[k] || stateRules[k] == ruleNodeGroup && k != "current_node" {
			continue
		}
		v := out[k]
		if !same(o[k], b[k]) && !same(v, t[k]) {
			res.FromOurs = append(res.FromOurs, k)
		}
		if !same(t[k], b[k]) && !same(v, o[k]) {
			res.FromTheirs = append(res.FromTheirs, k)
		}
	}
	if len(res.Conflicts) > 0 && prefer == SideNone {
		return res, nil
	}
	merged, err := decodeFields(out)
	if err != nil {
		return res, err
	}
	tidyMerged(merged)
	if verr := ValidateState(merged, nil); verr != nil {
		var problems string
		if se, ok := verr.(*StateError); ok {
			problems = strings.Join(se.Problems, "; ")
		} else {
			problems = verr.Error()
		}
		res.Conflicts = append(res.Conflicts, FieldConflict{Field: "state", Ours: "merged: " + problems, Theirs: "merged: " + problems})
		switch prefer {
		case SideNone:
			return res, nil
		case SideOurs:
			merged = ours.Clone()
		default:
			merged = theirs.Clone()
		}
	}
	res.State = merged
	return res, nil
}

// nodeGroupMerge merges where the task is (its node, the path it took,
// when it entered the node, the claim and sub-phase there) as one value
// into out, and returns the side whose move stands (SideNone when
// neither moved or both reached the same node).
func nodeGroupMerge(b, o, t map[string]json.RawMessage, prefer Side, out map[string]json.RawMessage, res *StateMerge) Side {
	group := func(m map[string]json.RawMessage) string {
		var sb strings.Builder
		for _, k := range nodeGroupKeys() {
			sb.WriteString(k)
			sb.WriteByte('=')
			sb.Write(canonical(m[k]))
			sb.WriteByte('\n')
		}
		return sb.String()
	}
	take := func(m map[string]json.RawMessage) {
		for _, k := range nodeGroupKeys() {
			put(out, k, m[k])
		}
	}
	gb, gOurs, gt := group(b), group(o), group(t)
	switch {
	case gOurs == gt, gt == gb:
		take(o)
		if gOurs != gb {
			return SideOurs
		}
		return SideNone
	case gOurs == gb:
		take(t)
		return SideTheirs
	case same(o["current_node"], t["current_node"]):
		// Both reached the same node (both approved the same gate): one
		// arrival stands; nothing else differs that matters.
		if prefer == SideTheirs {
			take(t)
		} else {
			take(o)
		}
		return SideNone
	}
	res.Conflicts = append(res.Conflicts, FieldConflict{Field: "current_node", Ours: display(o["current_node"]), Theirs: display(t["current_node"])})
	if prefer == SideTheirs {
		take(t)
		return SideTheirs
	}
	take(o)
	return SideOurs
}

// nodeGroupKeys are the fields ruleNodeGroup binds together, sorted.
func nodeGroupKeys() []string {
	var ks []string
	for k, r := range stateRules {
		if r == ruleNodeGroup {
			ks = append(ks, k)
		}
	}
	sort.Strings(ks)
	return ks
}

// mergeBoth merges field k that both sides changed differently.
func mergeBoth(k string, rule fieldRule, bv, ov, tv json.RawMessage, prefer Side) (json.RawMessage, *FieldConflict, error) {
	conflict := func() (json.RawMessage, *FieldConflict, error) {
		c := &FieldConflict{Field: k, Ours: display(ov), Theirs: display(tv)}
		if prefer == SideTheirs {
			return tv, c, nil
		}
		return ov, c, nil
	}
	switch rule {
	case ruleLater:
		var ot, tt *time.Time
		if json.Unmarshal(ov, &ot) != nil || json.Unmarshal(tv, &tt) != nil || ot == nil || tt == nil {
			return conflict()
		}
		if tt.After(*ot) {
			return tv, nil, nil
		}
		return ov, nil, nil
	case ruleStatus:
		var bs, os, ts string
		_ = json.Unmarshal(bv, &bs)
		if json.Unmarshal(ov, &os) != nil || json.Unmarshal(tv, &ts) != nil {
			return conflict()
		}
		// A pause is a person stopping the task on purpose: it stands over
		// the other side's open status, whose record (a failure, a
		// question) stays in its own fields.
		open := func(s string) bool { return (&State{Status: s}).Active() }
		if os == StatusPaused && open(ts) {
			return ov, nil, nil
		}
		if ts == StatusPaused && open(os) {
			return tv, nil, nil
		}
		return conflict()
	case ruleHolder:
		// One side left the task to nobody (parked it: started or
		// switched to another task) while the other took it (claim,
		// switch): that is one takeover, and the taker holds it. Two
		// different holders are a conflict.
		oh, th := holderOf(ov), holderOf(tv)
		if oh == "" && th != "" {
			return tv, nil, nil
		}
		if th == "" && oh != "" {
			return ov, nil, nil
		}
		return conflict()
	case ruleUnion:
		v, err := unionList(bv, ov, tv)
		return v, nil, err
	case ruleLocks:
		v, err := mergeLockFields(bv, ov, tv)
		if err != nil {
			return conflict()
		}
		return v, nil, nil
	case ruleCounterMap:
		v, err := mergeCounters(bv, ov, tv)
		if err != nil {
			return conflict()
		}
		return v, nil, nil
	case ruleMap:
		return mergeMap(k, bv, ov, tv, prefer)
	case ruleQuestions:
		return mergeQuestions(bv, ov, tv, prefer)
	}
	return conflict()
}

// mergeAttempt: the attempt number belongs to the node, so the side that
// moved the node brings its number; otherwise both sides' added attempts
// count.
func mergeAttempt(bv, ov, tv json.RawMessage, mover Side) json.RawMessage {
	switch mover {
	case SideOurs:
		return ov
	case SideTheirs:
		return tv
	}
	var b, o, t int
	_ = json.Unmarshal(bv, &b)
	_ = json.Unmarshal(ov, &o)
	_ = json.Unmarshal(tv, &t)
	n := max(o+t-b, 0)
	v, _ := json.Marshal(n)
	return v
}

// unionList merges two lists of events: every element either side holds,
// except those one side removed (held in base, gone from that side).
// Elements are compared whole; ours' order first, then theirs' additions.
func unionList(bv, ov, tv json.RawMessage) (json.RawMessage, error) {
	var b, o, t []json.RawMessage
	for _, x := range []struct {
		raw  json.RawMessage
		into *[]json.RawMessage
	}{{bv, &b}, {ov, &o}, {tv, &t}} {
		if len(x.raw) > 0 && string(x.raw) != "null" {
			if err := json.Unmarshal(x.raw, x.into); err != nil {
				return nil, err
			}
		}
	}
	has := func(list []json.RawMessage, e json.RawMessage) bool {
		return slices.ContainsFunc(list, func(x json.RawMessage) bool { return same(x, e) })
	}
	removed := func(side []json.RawMessage, e json.RawMessage) bool { return has(b, e) && !has(side, e) }
	var out []json.RawMessage
	for _, side := range [][]json.RawMessage{o, t} {
		for _, e := range side {
			if removed(o, e) || removed(t, e) || has(out, e) {
				continue
			}
			out = append(out, e)
		}
	}
	return marshalOrNull(out)
}

// mergeCounters merges counts per key: base plus both sides' increments.
func mergeCounters(bv, ov, tv json.RawMessage) (json.RawMessage, error) {
	var b, o, t map[string]int
	for _, x := range []struct {
		raw  json.RawMessage
		into *map[string]int
	}{{bv, &b}, {ov, &o}, {tv, &t}} {
		if len(x.raw) > 0 && string(x.raw) != "null" {
			if err := json.Unmarshal(x.raw, x.into); err != nil {
				return nil, err
			}
		}
	}
	out := map[string]int{}
	for k := range o {
		out[k] = max(o[k]+t[k]-b[k], 0)
	}
	for k := range t {
		out[k] = max(o[k]+t[k]-b[k], 0)
	}
	for k, n := range out {
		if n == 0 && o[k] == 0 && t[k] == 0 {
			delete(out, k)
		}
	}
	if len(out) == 0 {
		return json.RawMessage("null"), nil
	}
	return json.Marshal(out)
}

// mergeMap merges a map per key, each key as a scalar.
func mergeMap(field string, bv, ov, tv json.RawMessage, prefer Side) (json.RawMessage, *FieldConflict, error) {
	var b, o, t map[string]json.RawMessage
	for _, x := range []struct {
		raw  json.RawMessage
		into *map[string]json.RawMessage
	}{{bv, &b}, {ov, &o}, {tv, &t}} {
		if len(x.raw) > 0 && string(x.raw) != "null" {
			if err := json.Unmarshal(x.raw, x.into); err != nil {
				return nil, nil, err
			}
		}
	}
	out := map[string]json.RawMessage{}
	var first *FieldConflict
	for _, k := range unionKeys(b, o, t) {
		bk, ok, tk := b[k], o[k], t[k]
		switch {
		case same(ok, tk), same(tk, bk):
			put(out, k, ok)
		case same(ok, bk):
			put(out, k, tk)
		default:
			if first == nil {
				first = &FieldConflict{Field: fmt.Sprintf("%s[%q]", field, k), Ours: display(ok), Theirs: display(tk)}
			}
			if prefer == SideTheirs {
				put(out, k, tk)
			} else {
				put(out, k, ok)
			}
		}
	}
	if len(out) == 0 {
		return json.RawMessage("null"), first, nil
	}
	v, err := json.Marshal(out)
	return v, first, err
}

// mergeQuestions merges the questions asked: a question either side
// asked stands; an answer given on one side stands; the same question
// answered differently on both sides is a conflict.
func mergeQuestions(bv, ov, tv json.RawMessage, prefer Side) (json.RawMessage, *FieldConflict, error) {
	var b, o, t []Question
	for _, x := range []struct {
		raw  json.RawMessage
		into *[]Question
	}{{bv, &b}, {ov, &o}, {tv, &t}} {
		if len(x.raw) > 0 && string(x.raw) != "null" {
			if err := json.Unmarshal(x.raw, x.into); err != nil {
				return nil, nil, err
			}
		}
	}
	key := func(q Question) string {
		return q.Node + "\x00" + q.AskedAt.UTC().Format(time.RFC3339Nano) + "\x00" + q.Question
	}
	index := func(qs []Question) map[string]Question {
		m := make(map[string]Question, len(qs))
		for _, q := range qs {
			m[key(q)] = q
		}
		return m
	}
	bm, om, tm := index(b), index(o), index(t)
	eq := func(x, y Question) bool {
		xa, _ := json.Marshal(x)
		ya, _ := json.Marshal(y)
		return bytes.Equal(xa, ya)
	}
	var out []Question
	var conflict *FieldConflict
	seen := map[string]bool{}
	for _, side := range [][]Question{o, t} {
		for _, q := range side {
			k := key(q)
			if seen[k] {
				continue
			}
			seen[k] = true
			bq, inB := bm[k]
			oq, inO := om[k]
			tq, inT := tm[k]
			switch {
			case inO && inT && eq(oq, tq):
				out = append(out, oq)
			case inO && inT && inB && eq(oq, bq):
				out = append(out, tq)
			case inO && inT && inB && eq(tq, bq):
				out = append(out, oq)
			case inO && inT:
				if conflict == nil {
					conflict = &FieldConflict{Field: fmt.Sprintf("questions[%q]", firstLine(q.Question)), Ours: answerText(oq), Theirs: answerText(tq)}
				}
				if prefer == SideTheirs {
					out = append(out, tq)
				} else {
					out = append(out, oq)
				}
			case inB:
				// One side removed it: it goes, unless the other changed it.
				if inO && !eq(oq, bq) {
					out = append(out, oq)
				} else if inT && !eq(tq, bq) {
					out = append(out, tq)
				}
			default:
				out = append(out, q)
			}
		}
	}
	v, err := marshalOrNull(out)
	return v, conflict, err
}

func answerText(q Question) string {
	if q.AnsweredAt == nil {
		return "(not answered)"
	}
	return fmt.Sprintf("%q", firstLine(q.Answer))
}

// tidyMerged orders the merged lists of events by time, as each side
// appends them, and bounds the phase log.
func tidyMerged(st *State) {
	sort.SliceStable(st.Approvals, func(i, j int) bool { return st.Approvals[i].At.Before(st.Approvals[j].At) })
	sort.SliceStable(st.RollbackHistory, func(i, j int) bool {
		return st.RollbackHistory[i].Timestamp.Before(st.RollbackHistory[j].Timestamp)
	})
	sort.SliceStable(st.PhaseLog, func(i, j int) bool { return st.PhaseLog[i].Start.Before(st.PhaseLog[j].Start) })
	if n := len(st.PhaseLog); n > MaxPhaseLog {
		st.PhaseLog = slices.Clone(st.PhaseLog[n-MaxPhaseLog:])
	}
	sort.SliceStable(st.Overrides, func(i, j int) bool { return st.Overrides[i].At.Before(st.Overrides[j].At) })
	sort.SliceStable(st.AwayLog, func(i, j int) bool { return st.AwayLog[i].At.Before(st.AwayLog[j].At) })
	if n := len(st.AwayLog); n > MaxAwayLog {
		st.AwayLog = slices.Clone(st.AwayLog[n-MaxAwayLog:])
	}
	sort.SliceStable(st.SkippedNodes, func(i, j int) bool { return st.SkippedNodes[i].At.Before(st.SkippedNodes[j].At) })
	sort.SliceStable(st.Questions, func(i, j int) bool { return st.Questions[i].AskedAt.Before(st.Questions[j].AskedAt) })
	if st.History == nil {
		st.History = []string{}
	}
}

// stateFields is st as its state.json keys; nil is no keys.
func stateFields(st *State) (map[string]json.RawMessage, error) {
	m := map[string]json.RawMessage{}
	if st == nil {
		return m, nil
	}
	raw, err := json.Marshal(st)
	if err != nil {
		return nil, err
	}
	return m, json.Unmarshal(raw, &m)
}

func decodeFields(m map[string]json.RawMessage) (*State, error) {
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	var st State
	if err := json.Unmarshal(raw, &st); err != nil {
		return nil, err
	}
	return &st, nil
}

// put sets k to v, leaving an absent or null value out (as omitempty).
func put(m map[string]json.RawMessage, k string, v json.RawMessage) {
	if len(v) == 0 || string(v) == "null" {
		delete(m, k)
		return
	}
	m[k] = v
}

func marshalOrNull[T any](v []T) (json.RawMessage, error) {
	if len(v) == 0 {
		return json.RawMessage("null"), nil
	}
	return json.Marshal(v)
}

// same compares two JSON values, an absent one equal to null and to an
// empty list or object (omitempty writes neither).
func same(a, b json.RawMessage) bool {
	return bytes.Equal(canonical(a), canonical(b))
}

func canonical(v json.RawMessage) []byte {
	v = bytes.TrimSpace(v)
	switch string(v) {
	case "", "null", "[]", "{}", `""`, "0", "false":
		return nil
	}
	return v
}

// display is a field's value as one short line.
func display(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		if s == "" {
			return "(none)"
		}
		return fmt.Sprintf("%q", firstLine(s))
	}
	if len(canonical(v)) == 0 {
		return "(none)"
	}
	out := string(v)
	if len(out) > 60 {
		out = out[:57] + "..."
	}
	return out
}

func unionKeys[V any](ms ...map[string]V) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range ms {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	sort.Strings(out)
	return out
}

// mergeLockFields merges files_locked as MergeLocks does: a union by
// path, without what one side removed.
func mergeLockFields(bv, ov, tv json.RawMessage) (json.RawMessage, error) {
	var b, o, t []FileLock
	for _, x := range []struct {
		raw json.RawMessage
		to  *[]FileLock
	}{{bv, &b}, {ov, &o}, {tv, &t}} {
		if len(x.raw) == 0 || string(x.raw) == "null" {
			continue
		}
		if err := json.Unmarshal(x.raw, x.to); err != nil {
			return nil, err
		}
	}
	m := MergeLocks(b, o, t)
	if m == nil {
		return nil, nil
	}
	return json.Marshal(m)
}

// holderOf is a holder field's value ("" when absent or empty); a value
// that is not a string counts as a holder, so it never wins by default.
func holderOf(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return string(raw)
	}
	return s
}
