package gitstore

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/client"
	"github.com/go-git/go-git/v5/plumbing/transport/server"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/engine/workflow"
	"github.com/git-hegel/git-hegel/gitstore/refs"
)

// In-process sync tests: go-git's server over memory storage stands for
// the remote (registered as the hegeltest:// transport), and two memory
// repositories for the user's two machines. testscript scripts
// (testdata/script/sync_*.txtar) run the same scenarios through real git
// and file://.

var syncTestRemotes = server.MapLoader{}

func init() {
	client.InstallProtocol("hegeltest", server.NewServer(syncTestRemotes))
}

type syncWorld struct {
	t      testing.TB
	remote *memory.Storage
	rem    *Remote
	a, b   *Repo
	clock  time.Time
}

func newSyncWorld(t testing.TB) *syncWorld {
	t.Helper()
	u := fmt.Sprintf("hegeltest://host/%s", strings.NewReplacer("/", "-", " ", "-").Replace(t.Name()))
	ep, err := transport.NewEndpoint(u)
	if err != nil {
		t.Fatal(err)
	}
	w := &syncWorld{t: t, remote: memory.NewStorage(), rem: &Remote{Name: "origin", FetchURL: u, PushURL: u},
		clock: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	syncTestRemotes[ep.String()] = w.remote
	t.Cleanup(func() { delete(syncTestRemotes, ep.String()) })
	w.a, w.b = w.repo(), w.repo()
	return w
}

func (w *syncWorld) repo() *Repo {
	r, err := NewMemory()
	if err != nil {
		w.t.Fatal(err)
	}
	r.Now = func() time.Time { w.clock = w.clock.Add(time.Second); return w.clock }
	r.syncTransport = &memTransport{r: r}
	return r
}

func minimalWorkflow(t testing.TB) *workflow.Definition {
	for _, wf := range workflow.Builtins() {
		if wf.Name == "minimal" {
			return wf
		}
	}
	t.Fatal("no minimal built-in")
	return nil
}

// saveTask writes task name at node (creating it, or moving it on).
func saveTask(t testing.TB, r *Repo, name, node, msg string) string {
	t.Helper()
	wf := minimalWorkflow(t)
	rev := ""
	st := &engine.State{Task: name, Workflow: "minimal", Mode: wf.Mode, CurrentNode: node, History: []string{node},
		Status: engine.StatusActive, StartedAt: r.Now(), RollbackHistory: []engine.RollbackEvent{}, Attempt: 1}
	if old, err := r.Tasks().LoadTask(name); err == nil {
		rev = old.Rev
		st.History = append(old.State.History, node)
	}
	if node == workflow.NodeDone {
		end := r.Now()
		st.Status, st.EndedAt = engine.StatusCompleted, &end
	}
	st.UpdatedAt = r.Now()
	h, err := r.Tasks().SaveTask(&engine.Task{State: st, Definition: wf.Raw, Rev: rev}, msg)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// stash pushes a stash entry with message msg and returns its id.
func stash(t testing.TB, r *Repo, msg string) string {
	t.Helper()
	wf := minimalWorkflow(t)
	task := "t-" + strings.ReplaceAll(msg, " ", "-")
	st := &engine.Stash{Message: msg, Timestamp: r.Now(), Task: task, Worktree: "/w",
		Definition: wf.Raw, State: &engine.State{Task: task, Workflow: "minimal", Mode: wf.Mode, CurrentNode: "spec",
			History: []string{"spec"}, Status: engine.StatusActive, RollbackHistory: []engine.RollbackEvent{}}}
	if err := r.Stashes().PushStash(st, st.Label()); err != nil {
		t.Fatal(err)
	}
	return st.ID
}

// messages lists the stash messages, newest first.
func messages(t testing.TB, r *Repo) []string {
	t.Helper()
	list, err := r.Stashes().ListStashes()
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, s := range list {
		if s.Damaged != "" {
			t.Fatalf("damaged stash %s: %s", s.ID, s.Damaged)
		}
		out = append(out, s.Message)
	}
	return out
}

func (w *syncWorld) sync(r *Repo) *engine.SyncReport {
	w.t.Helper()
	rep, err := r.Sync(context.Background(), w.rem, SyncOptions{})
	if err != nil {
		w.t.Fatalf("sync: %v", err)
	}
	return rep
}

// localRefs returns refs/hegel/* (not the tracking refs).
func localRefs(t testing.TB, r *Repo) map[string]plumbing.Hash {
	t.Helper()
	m := map[string]plumbing.Hash{}
	for k, v := range hegelRefs(t, r) {
		if strings.HasPrefix(k, "refs/hegel/") {
			m[k] = v
		}
	}
	return m
}

// hegelRefs returns refs/hegel/* and refs/hegel-remotes/*.
func hegelRefs(t testing.TB, r *Repo) map[string]plumbing.Hash {
	t.Helper()
	refs, err := r.refs.List("refs/hegel")
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]plumbing.Hash{}
	for _, ref := range refs {
		m[string(ref.Name)] = ref.Hash
	}
	return m
}

func TestSyncStashesUnion(t *testing.T) {
	w := newSyncWorld(t)
	for _, m := range []string{"a1", "a2", "a3"} {
		stash(t, w.a, m)
	}
	for _, m := range []string{"b1", "b2"} {
		stash(t, w.b, m)
	}
	w.sync(w.a)
	rep := w.sync(w.b)
	if rep.Stashes.Added != 3 || rep.Stashes.Dropped != 0 {
		t.Errorf("B's sync: %+v, want 3 added", rep.Stashes)
	}
	if got := rep.FetchSummary(); got != "3 stashes added" {
		t.Errorf("summary %q", got)
	}
	rep = w.sync(w.a)
	if rep.Stashes.Added != 2 {
		t.Errorf("A's second sync: %+v, want 2 added", rep.Stashes)
	}
	want := []string{"b2", "b1", "a3", "a2", "a1"}
	for _, r := range []*Repo{w.a, w.b} {
		if got := messages(t, r); !reflect.DeepEqual(got, want) {
			t.Errorf("stash list %v, want %v (newest first)", got, want)
		}
	}
	if a, b := hegelRefs(t, w.a)["refs/hegel/stashes"], hegelRefs(t, w.b)["refs/hegel/stashes"]; a != b {
		t.Errorf("stash refs differ after syncing: %s %s", a, b)
	}
	// The merge is a merge commit with both parents.
	c, err := object.GetCommit(w.a.storage, hegelRefs(t, w.a)["refs/hegel/stashes"])
	if err != nil {
		t.Fatal(err)
	}
	if len(c.ParentHashes) != 2 || !strings.HasPrefix(c.Message, "stash merge: ") {
		t.Errorf("tip has %d parents, message %q", len(c.ParentHashes), c.Message)
	}
	// A third sync changes nothing.
	for _, r := range []*Repo{w.a, w.b} {
		before := hegelRefs(t, r)
		rep := w.sync(r)
		if rep.FetchSummary() != "" || len(rep.Pushed) != 0 || rep.Received != 0 {
			t.Errorf("idle sync did something: %+v", rep)
		}
		if !reflect.DeepEqual(before, hegelRefs(t, r)) {
			t.Errorf("idle sync moved refs")
		}
	}
}

func TestSyncDropPropagates(t *testing.T) {
	w := newSyncWorld(t)
	ids := []string{stash(t, w.a, "one"), stash(t, w.a, "two"), stash(t, w.a, "three")}
	w.sync(w.a)
	w.sync(w.b)
	if err := w.a.Stashes().RemoveStash(ids[1], engine.StashOpDrop, "two"); err != nil {
		t.Fatal(err)
	}
	stash(t, w.b, "four") // B moves on meanwhile
	w.sync(w.a)
	rep := w.sync(w.b)
	if rep.Stashes.Dropped != 1 {
		t.Errorf("B: %+v, want 1 dropped", rep.Stashes)
	}
	w.sync(w.a)
	want := []string{"four", "three", "one"}
	for _, r := range []*Repo{w.a, w.b} {
		if got := messages(t, r); !reflect.DeepEqual(got, want) {
			t.Errorf("stash list %v, want %v", got, want)
		}
	}
	// The drop is still restorable on B, which learned it by syncing.
	dropped, err := w.b.Stashes().DroppedStashes(time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(dropped) != 1 || dropped[0].ID != ids[1] {
		t.Errorf("B's dropped list %+v, want %s", dropped, ids[1])
	}
}

// A drop on one side and a pop of the same entry on the other: gone on
// both; the pop's restore of the task stays.
func TestSyncConcurrentDropAndPop(t *testing.T) {
	w := newSyncWorld(t)
	id := stash(t, w.a, "shared")
	keep := stash(t, w.a, "kept")
	w.sync(w.a)
	w.sync(w.b)
	if err := w.a.Stashes().RemoveStash(id, engine.StashOpDrop, "shared"); err != nil {
		t.Fatal(err)
	}
	if err := w.b.Stashes().RemoveStash(id, engine.StashOpPop, "shared"); err != nil {
		t.Fatal(err)
	}
	saveTask(t, w.b, "t-shared", "plan", "stash pop: restored")
	w.sync(w.a)
	w.sync(w.b)
	w.sync(w.a)
	for _, r := range []*Repo{w.a, w.b} {
		ids, err := r.Stashes().StashIDs()
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(ids, []string{keep}) {
			t.Errorf("stash ids %v, want only %s", ids, keep)
		}
		task, err := r.Tasks().LoadTask("t-shared")
		if err != nil || task.State.CurrentNode != "plan" {
			t.Errorf("restored task: %v %v", task, err)
		}
	}
}

// A stash entry dropped on one side and changed on the other (only a
// hand-made blob can change) is kept.
func TestSyncDropLosesToChange(t *testing.T) {
	w := newSyncWorld(t)
	id := stash(t, w.a, "x")
	w.sync(w.a)
	w.sync(w.b)
	if err := w.a.Stashes().RemoveStash(id, engine.StashOpDrop, "x"); err != nil {
		t.Fatal(err)
	}
	// B rewrites the entry's blob under the same id.
	s := w.b.Stashes()
	d, err := s.DroppedStashes(time.Time{})
	if err != nil || len(d) != 0 {
		t.Fatal(d, err)
	}
	err = s.update(func(tip *stashTip) ([]object.TreeEntry, string, error) {
		i := tip.find(id)
		blob, _ := s.r.readBlob(tip.entries[i].Hash)
		nb, _ := s.r.writeBlob([]byte(strings.Replace(string(blob), `"x"`, `"x (edited)"`, 1)))
		out := append([]object.TreeEntry(nil), tip.entries...)
		out[i].Hash = nb
		return out, "stash edit: x", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	w.sync(w.b)
	w.sync(w.a)
	if got := messages(t, w.a); !reflect.DeepEqual(got, []string{"x (edited)"}) {
		t.Errorf("A: %v, want the edited entry kept", got)
	}
}

func TestSyncTaskFastForwardAndDiverge(t *testing.T) {
	w := newSyncWorld(t)
	saveTask(t, w.a, "auth-fix", "spec", "start: minimal at spec")
	w.sync(w.a)
	rep := w.sync(w.b)
	if len(rep.Tasks) != 1 || rep.Tasks[0].Change != engine.TaskAdded {
		t.Errorf("B: %+v", rep.Tasks)
	}
	saveTask(t, w.b, "auth-fix", "plan", "next: spec -> plan")
	w.sync(w.b)
	rep = w.sync(w.a)
	if got := rep.FetchSummary(); got != "task auth-fix fast-forwarded" {
		t.Errorf("A: %q", got)
	}

	// Both move the node on, to different places: a conflict. Nothing
	// changes on either side and the task is not pushed.
	saveTask(t, w.a, "auth-fix", "done", "next: plan -> done (A)")
	saveTask(t, w.b, "auth-fix", "spec", "prev: plan -> spec (B)")
	w.sync(w.b)
	before := localRefs(t, w.a)
	rep = w.sync(w.a)
	if len(rep.Tasks) != 1 || rep.Tasks[0].Change != engine.TaskConflicted || len(rep.Tasks[0].Conflicts) == 0 || rep.Tasks[0].Conflicts[0].Field != "current_node" {
		t.Fatalf("A: %+v", rep.Tasks)
	}
	if notes := rep.ConflictNotes(); len(notes) != 1 || !strings.Contains(notes[0], "current_node is \"done\" here, \"spec\" at origin") || !strings.Contains(notes[0], "git hegel sync --theirs auth-fix") {
		t.Errorf("notes %q", notes)
	}
	if !reflect.DeepEqual(localRefs(t, w.a), before) {
		t.Error("a conflicted merge changed a local ref")
	}
	if ids, _ := w.a.Stashes().StashIDs(); len(ids) != 0 {
		t.Errorf("a conflict left stash entries %v", ids)
	}
	// Resolved to theirs: B's node, A's chain and B's as parents.
	rep, err := w.a.Sync(context.Background(), w.rem, SyncOptions{Resolve: map[string]engine.Side{"auth-fix": engine.SideTheirs}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Tasks) != 1 || rep.Tasks[0].Change != engine.TaskMerged || rep.Tasks[0].Resolved != engine.SideTheirs {
		t.Fatalf("A resolved: %+v", rep.Tasks)
	}
	task, err := w.a.Tasks().LoadTask("auth-fix")
	if err != nil || task.State.CurrentNode != "spec" || task.State.Status != engine.StatusActive {
		t.Fatalf("A's merged state: %+v %v", task, err)
	}
	if n := parents(t, w.a, TaskRef("auth-fix")); n != 2 {
		t.Errorf("the merge commit has %d parents", n)
	}
	// B takes it as a fast-forward; then both agree.
	rep = w.sync(w.b)
	if got := rep.FetchSummary(); got != "task auth-fix fast-forwarded" {
		t.Errorf("B: %q", got)
	}
	rep = w.sync(w.a)
	if rep.FetchSummary() != "" {
		t.Errorf("A again: %q", rep.FetchSummary())
	}
	if !reflect.DeepEqual(hegelRefs(t, w.a), hegelRefs(t, w.b)) {
		t.Errorf("refs differ after syncing")
	}
}

// parents counts the parents of the commit ref points at.
func parents(t testing.TB, r *Repo, ref plumbing.ReferenceName) int {
	t.Helper()
	h, err := r.refs.Read(ref)
	if err != nil {
		t.Fatal(err)
	}
	c, err := object.GetCommit(r.storage, h)
	if err != nil {
		t.Fatal(err)
	}
	return len(c.ParentHashes)
}

// The remote moves between the fetch and the push: the push notices (the
// lease), fetches, merges and tries again; nothing is lost.
func TestSyncRemoteMovedBeforePush(t *testing.T) {
	w := newSyncWorld(t)
	stash(t, w.a, "a1")
	stash(t, w.b, "b1")
	s := w.a.newSyncer(w.rem, SyncOptions{})
	moved := false
	s.beforePush = func() {
		if !moved {
			moved = true
			w.sync(w.b)
		}
	}
	validated, err := s.fetch(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.merge(validated); err != nil {
		t.Fatal(err)
	}
	if err := s.push(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s.rep.Retries != 1 {
		t.Errorf("retries %d, want 1", s.rep.Retries)
	}
	w.sync(w.b)
	for _, r := range []*Repo{w.a, w.b} {
		if got := messages(t, r); len(got) != 2 {
			t.Errorf("stash list %v, want both", got)
		}
	}
}

// git hegel push alone: when the remote moved since the last fetch, it
// fetches and merges first.
func TestPushFetchesWhenStale(t *testing.T) {
	w := newSyncWorld(t)
	stash(t, w.b, "b1")
	if _, err := w.b.Push(context.Background(), w.rem, SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	stash(t, w.a, "a1")
	rep, err := w.a.Push(context.Background(), w.rem, SyncOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Retries != 1 || rep.Stashes.Added != 1 {
		t.Errorf("report %+v", rep)
	}
	if got := messages(t, w.a); len(got) != 2 {
		t.Errorf("A %v", got)
	}
}

// racingRefs makes a local command write refs/hegel/stashes just before
// the merge's compare-and-swap, once.
type racingRefs struct {
	refs.Backend
	race func()
}

func (r *racingRefs) Update(name plumbing.ReferenceName, old, new plumbing.Hash) error {
	r.fire(name)
	return r.Backend.Update(name, old, new)
}

// UpdateMsg races too: sync's merge writes its reflog message with it.
func (r *racingRefs) UpdateMsg(name plumbing.ReferenceName, old, new plumbing.Hash, u refs.Reflog) error {
	r.fire(name)
	return r.Backend.UpdateMsg(name, old, new, u)
}

func (r *racingRefs) fire(name plumbing.ReferenceName) {
	if name == StashRef && r.race != nil {
		f := r.race
		r.race = nil
		f()
	}
}

func TestSyncMergeRetriesOnLocalRace(t *testing.T) {
	w := newSyncWorld(t)
	stash(t, w.a, "a1")
	stash(t, w.b, "b1")
	w.sync(w.b)
	rr := &racingRefs{Backend: w.a.refs}
	w.a.refs = rr
	rr.race = func() { stash(t, w.a, "a2-racing") }
	w.sync(w.a)
	got := messages(t, w.a)
	sort.Strings(got)
	if want := []string{"a1", "a2-racing", "b1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("A %v, want %v", got, want)
	}
}

// The fetch step and the merge step are separable: tracking refs written
// by someone else (plain git fetch) merge the same way.
func TestMergeFromTrackingRefs(t *testing.T) {
	w := newSyncWorld(t)
	stash(t, w.a, "a1")
	saveTask(t, w.a, "t1", "spec", "start")
	w.sync(w.a)
	// Copy the remote's refs and objects into B's tracking namespace by
	// hand, as git fetch origin 'refs/hegel/*:refs/hegel-remotes/origin/*'.
	iter, _ := w.remote.IterEncodedObjects(plumbing.AnyObject)
	_ = iter.ForEach(func(o plumbing.EncodedObject) error {
		_, err := w.b.storage.SetEncodedObject(o)
		return err
	})
	refs, _ := w.remote.IterReferences()
	_ = refs.ForEach(func(ref *plumbing.Reference) error {
		if rel, ok := strings.CutPrefix(string(ref.Name()), "refs/hegel/"); ok {
			return w.b.refs.Update(plumbing.ReferenceName("refs/hegel-remotes/origin/"+rel), plumbing.ZeroHash, ref.Hash())
		}
		return nil
	})
	rep, err := w.b.MergeTracking(w.rem, SyncOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.FetchSummary(); got != "1 stash added, task t1 added" {
		t.Errorf("%q", got)
	}
	// And a network fetch afterwards has nothing to transfer.
	rep, err = w.b.Fetch(context.Background(), w.rem, SyncOptions{})
	if err != nil || rep.Received != 0 || rep.FetchSummary() != "" {
		t.Errorf("fetch after: %+v %v", rep, err)
	}
}

// Incremental sync moves only the new objects: commit, root tree,
// entries/ tree and the new blob.
func TestSyncIncrementalObjects(t *testing.T) {
	w := newSyncWorld(t)
	for i := 0; i < 20; i++ {
		stash(t, w.a, fmt.Sprintf("s%d", i))
	}
	w.sync(w.a)
	w.sync(w.b)
	stash(t, w.a, "new")
	rep := w.sync(w.a)
	if rep.Sent != 4 {
		t.Errorf("sent %d objects, want 4", rep.Sent)
	}
	rep = w.sync(w.b)
	if rep.Received != 4 {
		t.Errorf("received %d objects, want 4", rep.Received)
	}
}

func TestSyncCheckpoints(t *testing.T) {
	w := newSyncWorld(t)
	cp := plumbing.ReferenceName(CheckpointRefPrefix + "t1")
	mk := func(r *Repo, parent plumbing.Hash, id string) plumbing.Hash {
		h, err := r.writeDoc(cp, parent, map[string][]byte{"checkpoint.json": []byte(`{"id":"` + id + `"}` + "\n")}, "checkpoint "+id)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	ctx := context.Background()
	o := SyncOptions{Checkpoints: true}
	a1 := mk(w.a, plumbing.ZeroHash, "c1")
	stash(t, w.a, "s")
	w.sync(w.a)
	if _, ok := hegelRefs(t, w.b)[string(cp)]; ok {
		t.Fatal("checkpoints travelled without --checkpoints")
	}
	if _, err := w.a.Push(ctx, w.rem, o); err != nil {
		t.Fatal(err)
	}
	if _, err := w.b.Sync(ctx, w.rem, o); err != nil {
		t.Fatal(err)
	}
	if b1 := hegelRefs(t, w.b)[string(cp)]; b1 != a1 {
		t.Fatalf("B's checkpoints %s, want %s", b1, a1)
	}

	// Both sides add one. Without rollback's merger, each keeps its own,
	// says so, and pushes everything else.
	a2 := mk(w.a, a1, "c2")
	mk(w.b, a1, "c3")
	if _, err := w.b.Sync(ctx, w.rem, o); err != nil {
		t.Fatal(err)
	}
	stash(t, w.a, "s2")
	rep, err := w.a.Sync(ctx, w.rem, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.CheckpointsKept) == 0 || hegelRefs(t, w.a)[string(cp)] != a2 || len(rep.Pushed) != 1 {
		t.Errorf("without a merger: %+v", rep)
	}
	if n := rep.CheckpointNotes(); len(n) != 1 || !strings.Contains(n[0], "refs/hegel-remotes/origin/checkpoints/t1") {
		t.Errorf("notes %q", n)
	}

	// With one, the merged commit is stored and pushed.
	var gotBases []plumbing.Hash
	o.MergeCheckpoints = func(task string, bases []plumbing.Hash, local, remote plumbing.Hash) (plumbing.Hash, engine.MergeCounts, error) {
		gotBases = bases
		n, _ := newGraph(w.a.storage).node(local)
		h, err := w.a.writeCommit(n.tree, []plumbing.Hash{local, remote}, "checkpoint merge")
		return h, engine.MergeCounts{Added: 1}, err
	}
	rep, err = w.a.Sync(ctx, w.rem, o)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Checkpoints.Added != 1 || len(gotBases) != 1 || gotBases[0] != a1 || len(rep.Pushed) != 1 {
		t.Errorf("with a merger: %+v, bases %v", rep, gotBases)
	}
	// A merger that loses the remote's version is refused.
	mk(w.b, hegelRefs(t, w.b)[string(cp)], "c4")
	good := SyncOptions{Checkpoints: true, MergeCheckpoints: func(_ string, _ []plumbing.Hash, local, remote plumbing.Hash) (plumbing.Hash, engine.MergeCounts, error) {
		n, _ := newGraph(w.b.storage).node(local)
		h, err := w.b.writeCommit(n.tree, []plumbing.Hash{local, remote}, "checkpoint merge")
		return h, engine.MergeCounts{}, err
	}}
	if _, err := w.b.Sync(ctx, w.rem, good); err != nil {
		t.Fatal(err)
	}
	bad := SyncOptions{Checkpoints: true, MergeCheckpoints: func(_ string, _ []plumbing.Hash, local, _ plumbing.Hash) (plumbing.Hash, engine.MergeCounts, error) {
		return local, engine.MergeCounts{}, nil
	}}
	mk(w.a, hegelRefs(t, w.a)[string(cp)], "c5")
	if _, err := w.a.Fetch(ctx, w.rem, bad); err == nil || !strings.Contains(err.Error(), "does not contain") {
		t.Errorf("lossy merger: %v", err)
	}
}

func TestSyncErrors(t *testing.T) {
	w := newSyncWorld(t)
	_, err := w.a.Fetch(context.Background(), &Remote{Name: "gone", FetchURL: "hegeltest://host/nothing-here"}, SyncOptions{})
	if err == nil || !strings.Contains(err.Error(), "repository not found") || strings.Contains(err.Error(), "\n") {
		t.Errorf("missing repository: %v", err)
	}
	if _, err := w.a.ResolveRemote("nope"); !errors.Is(err, ErrNoRemote) {
		t.Errorf("unknown remote: %v", err)
	}
	if _, err := w.a.ResolveRemote(""); !errors.Is(err, ErrNoRemote) || !strings.Contains(err.Error(), "'origin'") {
		t.Errorf("default remote: %v", err)
	}
}

// hostile builds refs on the remote that must be rejected.
type hostile struct {
	name string
	ref  string
	// build writes objects into the remote and returns what ref points at.
	build func(h *hostileKit) plumbing.Hash
	want  string
}

type hostileKit struct {
	t testing.TB
	s *memory.Storage
}

func (k *hostileKit) blob(data string) plumbing.Hash {
	o := k.s.NewEncodedObject()
	o.SetType(plumbing.BlobObject)
	w, _ := o.Writer()
	_, _ = w.Write([]byte(data))
	_ = w.Close()
	h, err := k.s.SetEncodedObject(o)
	if err != nil {
		k.t.Fatal(err)
	}
	return h
}

// rawTree writes entries as given, in the given order and modes.
func (k *hostileKit) rawTree(ents ...[3]string) plumbing.Hash {
	var b []byte
	for _, e := range ents {
		h := plumbing.NewHash(e[2])
		b = append(b, []byte(e[0]+" "+e[1]+"\x00")...)
		b = append(b, h[:]...)
	}
	return k.raw(plumbing.TreeObject, string(b))
}

func (k *hostileKit) raw(t plumbing.ObjectType, data string) plumbing.Hash {
	o := k.s.NewEncodedObject()
	o.SetType(t)
	w, _ := o.Writer()
	_, _ = w.Write([]byte(data))
	_ = w.Close()
	h, err := k.s.SetEncodedObject(o)
	if err != nil {
		k.t.Fatal(err)
	}
	return h
}

func (k *hostileKit) commit(tree plumbing.Hash) plumbing.Hash {
	return k.raw(plumbing.CommitObject, "tree "+tree.String()+"\nauthor E <e@x> 1 +0000\ncommitter E <e@x> 1 +0000\n\nevil\n")
}

// stashTree is a valid stash list tree holding one entry blob.
func (k *hostileKit) stashTree(entry string, name string) plumbing.Hash {
	e := k.rawTree([3]string{"100644", name, k.blob(entry).String()})
	return k.rawTree([3]string{"40000", "entries", e.String()}, [3]string{"100644", "version", k.blob("1\n").String()})
}

const goodID = "20260102T030405.000000000Z-0a0b0c0d"

func goodEntry(t testing.TB) string {
	wf := minimalWorkflow(t)
	return fmt.Sprintf(`{"version":1,"message":"m","timestamp":"2026-01-02T03:04:05Z","task":"t1","worktree":"/w",
"workflow_state":{"task":"t1","workflow":"minimal","mode":"minimal","current_node":"spec","history":["spec"],"status":"active"},
"workflow":%q}`, wf.Raw)
}

func TestSyncRejectsHostileData(t *testing.T) {
	cases := []hostile{
		{"malformed JSON", "refs/hegel/stashes", func(k *hostileKit) plumbing.Hash {
			return k.commit(k.stashTree(`{"version":1,`, goodID+".json"))
		}, "invalid JSON"},
		{"unknown stash version", "refs/hegel/stashes", func(k *hostileKit) plumbing.Hash {
			return k.commit(k.stashTree(strings.Replace(goodEntry(k.t), `"version":1`, `"version":7`, 1), goodID+".json"))
		}, "unknown version 7"},
		{"unknown format version", "refs/hegel/stashes", func(k *hostileKit) plumbing.Hash {
			return k.commit(k.rawTree([3]string{"100644", "version", k.blob("9\n").String()}))
		}, `unknown format version "9"`},
		{"ref to a blob", "refs/hegel/stashes", func(k *hostileKit) plumbing.Hash {
			return k.blob("not a commit")
		}, "points at a blob, not a commit"},
		{"ref to a tree", "refs/hegel/tasks/t1", func(k *hostileKit) plumbing.Hash {
			return k.rawTree([3]string{"100644", "version", k.blob("1\n").String()})
		}, "points at a tree, not a commit"},
		{"dot-dot entry", "refs/hegel/history", func(k *hostileKit) plumbing.Hash {
			return k.commit(k.rawTree([3]string{"100644", "..", k.blob("x").String()}, [3]string{"100644", "version", k.blob("1\n").String()}))
		}, `an entry is named ".."`},
		{"dot-git entry", "refs/hegel/checkpoints/t1", func(k *hostileKit) plumbing.Hash {
			sub := k.rawTree([3]string{"100644", "config", k.blob("[core]\n").String()})
			return k.commit(k.rawTree([3]string{"40000", ".GIT", sub.String()}, [3]string{"100644", "version", k.blob("1\n").String()}))
		}, "names the repository directory"},
		{"slash in a name", "refs/hegel/history", func(k *hostileKit) plumbing.Hash {
			return k.commit(k.rawTree([3]string{"100644", "/etc/passwd", k.blob("x").String()}, [3]string{"100644", "version", k.blob("1\n").String()}))
		}, "contains a slash"},
		{"huge blob", "refs/hegel/history", func(k *hostileKit) plumbing.Hash {
			return k.commit(k.rawTree([3]string{"100644", "big", k.blob(strings.Repeat("x", defaultDocBlobLimit+1)).String()},
				[3]string{"100644", "version", k.blob("1\n").String()}))
		}, "exceeds the 4 MiB limit"},
		{"unsorted tree", "refs/hegel/history", func(k *hostileKit) plumbing.Hash {
			return k.commit(k.rawTree([3]string{"100644", "version", k.blob("1\n").String()}, [3]string{"100644", "a", k.blob("x").String()}))
		}, "out of order"},
		{"bad commit header", "refs/hegel/history", func(k *hostileKit) plumbing.Hash {
			tree := k.rawTree([3]string{"100644", "version", k.blob("1\n").String()})
			return k.raw(plumbing.CommitObject, "tree "+tree.String()+"\nauthor <no name> 1 +0000\ncommitter E <e@x> 1 +0000\n\nx\n")
		}, "bad or missing author"},
		{"task state names another task", "refs/hegel/tasks/t1", func(k *hostileKit) plumbing.Hash {
			st := `{"task":"other","workflow":"minimal","mode":"minimal","current_node":"spec"}`
			return k.commit(k.rawTree([3]string{"100644", "state.json", k.blob(st).String()},
				[3]string{"100644", "version", k.blob("1\n").String()},
				[3]string{"100644", "workflow.yaml", k.blob(string(minimalWorkflow(k.t).Raw)).String()}))
		}, `names task "other"`},
		{"invalid workflow", "refs/hegel/tasks/t1", func(k *hostileKit) plumbing.Hash {
			st := `{"task":"t1","workflow":"minimal","mode":"minimal","current_node":"spec"}`
			return k.commit(k.rawTree([3]string{"100644", "state.json", k.blob(st).String()},
				[3]string{"100644", "version", k.blob("1\n").String()},
				[3]string{"100644", "workflow.yaml", k.blob("nodes: [").String()}))
		}, "invalid workflow definition"},
		{"executable in a task", "refs/hegel/tasks/t1", func(k *hostileKit) plumbing.Hash {
			return k.commit(k.rawTree([3]string{"100755", "version", k.blob("1\n").String()}))
		}, "has mode 100755"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newSyncWorld(t)
			stash(t, w.a, "mine")
			w.sync(w.a)
			k := &hostileKit{t: t, s: w.remote}
			target := c.build(k)
			if err := w.remote.SetReference(plumbing.NewHashReference(plumbing.ReferenceName(c.ref), target)); err != nil {
				t.Fatal(err)
			}
			before := hegelRefs(t, w.a)
			objects := len(w.a.storage.(*memory.Storage).ObjectStorage.Objects)
			_, err := w.a.Fetch(context.Background(), w.rem, SyncOptions{Checkpoints: true})
			var rej *RefusedError
			if !errors.As(err, &rej) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.ref) {
				t.Fatalf("got %v, want a rejection of %s mentioning %q", err, c.ref, c.want)
			}
			t.Log(err)
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("message is not one line: %q", err)
			}
			if after := hegelRefs(t, w.a); !reflect.DeepEqual(before, after) {
				t.Errorf("refs changed:\n%v\n%v", before, after)
			}
			if n := len(w.a.storage.(*memory.Storage).ObjectStorage.Objects); n != objects {
				t.Errorf("the object store grew from %d to %d objects", objects, n)
			}
			// The merge step refuses it too when it arrives by other means.
			{
				copyObjects(t, w.remote, w.a)
				tn := plumbing.ReferenceName("refs/hegel-remotes/origin/" + strings.TrimPrefix(c.ref, "refs/hegel/"))
				old, _ := readRefOrZero(w.a.refs, tn)
				if err := w.a.refs.Update(tn, old, target); err != nil {
					t.Fatal(err)
				}
				localBefore := localRefs(t, w.a)
				_, err := w.a.MergeTracking(w.rem, SyncOptions{Checkpoints: true})
				if !errors.As(err, &rej) || !strings.Contains(err.Error(), c.want) {
					t.Errorf("merge step: %v", err)
				}
				if !reflect.DeepEqual(localBefore, localRefs(t, w.a)) {
					t.Errorf("merge step changed local refs")
				}
			}
		})
	}
}

func copyObjects(t testing.TB, from *memory.Storage, to *Repo) {
	iter, _ := from.IterEncodedObjects(plumbing.AnyObject)
	if err := iter.ForEach(func(o plumbing.EncodedObject) error {
		_, err := to.storage.SetEncodedObject(o)
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

func TestCheckTreeRules(t *testing.T) {
	h := plumbing.NewHash("1111111111111111111111111111111111111111")
	e := func(mode, name string) rawEntry {
		fm, _ := filemode.New(mode)
		return rawEntry{mode: mode, fm: fm, name: name, hash: h}
	}
	ok := [][]rawEntry{
		{e("100644", "a"), e("40000", "a-b"), e("100644", "a.b"), e("40000", "ab")},
		{e("100644", "a-b"), e("40000", "a")},
		{e("100644", ".gitignore"), e("100644", "git")},
	}
	for _, ents := range ok {
		if err := checkTree(ents, false); err != nil {
			t.Errorf("%v: %v", ents, err)
		}
	}
	bad := map[string][]rawEntry{
		"dup":          {e("100644", "a"), e("100644", "a")},
		"file and dir": {e("100644", "a"), e("100644", "a-b"), e("40000", "a")},
		"order":        {e("100644", "b"), e("100644", "a")},
		"dotgit":       {e("40000", ".git")},
		"dotgit ntfs":  {e("40000", ".git. ")},
		"dotgit 8.3":   {e("40000", "GIT~1")},
		"dotgit hfs":   {e("40000", ".g\u200cit")},
		"dot":          {e("40000", ".")},
		"empty":        {e("100644", "")},
		"nul":          {e("100644", "a\x00b")},
		"backslash":    {e("100644", `..\x`)},
		"padded mode":  {e("040000", "d")},
		"symlink":      {e("120000", "l")},
	}
	for name, ents := range bad {
		if err := checkTree(ents, false); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if err := checkTree([]rawEntry{e("120000", "l"), e("160000", "sub"), e("100755", "x")}, true); err != nil {
		t.Errorf("checkpoint modes: %v", err)
	}
}

// One refused ref never stops the others: the good ones are fetched and
// merged, the bad one's local and tracking refs stay, and the error lists
// it; a ref name git-hegel never writes is skipped with a note.
func TestSyncRefusesOnlyTheBadRef(t *testing.T) {
	w := newSyncWorld(t)
	stash(t, w.b, "from b")
	saveTask(t, w.b, "good", "spec", "start")
	w.sync(w.b)
	k := &hostileKit{t: t, s: w.remote}
	bad := k.commit(k.rawTree([3]string{"100644", "..", k.blob("x").String()}, [3]string{"100644", "version", k.blob("1\n").String()}))
	for _, ref := range []string{"refs/hegel/history", "refs/hegel/tasks/a/b"} {
		if err := w.remote.SetReference(plumbing.NewHashReference(plumbing.ReferenceName(ref), bad)); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := w.a.Fetch(context.Background(), w.rem, SyncOptions{})
	var refused *RefusedError
	if !errors.As(err, &refused) || len(refused.Refs) != 1 || refused.Refs[0].Ref != "refs/hegel/history" {
		t.Fatalf("got %v", err)
	}
	if got := rep.FetchSummary(); got != "1 stash added, task good added" {
		t.Errorf("merged %q", got)
	}
	if len(rep.Skipped) != 1 || rep.Skipped[0].Ref != "refs/hegel/tasks/a/b" {
		t.Errorf("skipped %+v", rep.Skipped)
	}
	refs := hegelRefs(t, w.a)
	for _, name := range []string{"refs/hegel/history", "refs/hegel-remotes/origin/history", "refs/hegel/tasks/a/b"} {
		if _, ok := refs[name]; ok {
			t.Errorf("%s was written", name)
		}
	}
	if _, ok := refs["refs/hegel/tasks/good"]; !ok {
		t.Error("the good task did not arrive")
	}
	// Sync pushes A's own refs but not over the refused one.
	stash(t, w.a, "from a")
	rep, err = w.a.Sync(context.Background(), w.rem, SyncOptions{})
	if !errors.As(err, &refused) {
		t.Fatalf("sync: %v", err)
	}
	if !reflect.DeepEqual(rep.Pushed, []string{"refs/hegel/stashes"}) {
		t.Errorf("pushed %v", rep.Pushed)
	}
}
