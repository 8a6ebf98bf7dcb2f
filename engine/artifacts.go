package engine

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/git-hegel/git-hegel/engine/text"
	"github.com/git-hegel/git-hegel/engine/workflow"
)

// Each task has a folder of its own for its work product, so one task's
// SPEC.md never passes another task's gate: hegel.artifactDir, a path
// that may name the task's fields (workflow.ArtifactFields, all but
// {{task.dir}}), filled in when the task starts and kept in its state,
// so a teammate's clone and a later change of the setting find the files
// where the task wrote them.
const DefaultArtifactDir = "hegel-tasks/{{task.name}}"

// CheckArtifactDir refuses a hegel.artifactDir that could leave the
// worktree, names a field that is not fixed before the folder is, or
// does not name the task (two tasks would share their files).
func CheckArtifactDir(p string) error {
	if strings.Contains(p, "task.dir") {
		return fmt.Errorf("%s names {{task.dir}}, which is what it defines", text.Quote(p))
	}
	if !strings.Contains(p, "task.name") {
		return fmt.Errorf("%s does not name {{task.name}}, so tasks would share their files", text.Quote(p))
	}
	return workflow.CheckArtifactPattern(p)
}

// newArtifactDir is the folder of a task being started.
func (e *Engine) newArtifactDir(st *State) (string, error) {
	pat := e.ArtifactDir
	if pat == "" {
		pat = DefaultArtifactDir
	}
	if err := CheckArtifactDir(pat); err != nil {
		return "", fmt.Errorf("hegel.artifactDir: %w", err)
	}
	dir, err := workflow.ExpandArtifact(pat, taskFields(st, ""))
	if err != nil {
		return "", fmt.Errorf("hegel.artifactDir: %w", err)
	}
	return dir, nil
}

// TaskDir is the folder of task st's files: the one recorded when it
// started, else (a task started before folders were recorded) the
// default one.
func TaskDir(st *State) string {
	if st.ArtifactDir != "" && workflow.CheckArtifactPath(st.ArtifactDir) == nil {
		return st.ArtifactDir
	}
	d, err := workflow.ExpandArtifact(DefaultArtifactDir, taskFields(st, ""))
	if err != nil {
		return ""
	}
	return d
}

// taskFields are the values an artifact path may name.
func taskFields(st *State, dir string) map[string]string {
	return map[string]string{"name": st.Task, "type": st.TaskType, "workflow": st.Workflow, "dir": dir}
}

// ArtifactPaths returns the files node keeps with the task (its
// artifacts and the files it produces) with st's fields filled in. A
// path that would not stay inside the worktree is left out, with the
// reason.
func ArtifactPaths(st *State, wf *workflow.Definition, node string) (paths []string, bad []error) {
	n, ok := wf.Nodes[node]
	if !ok {
		return nil, nil
	}
	return expandPaths(st, n.Kept())
}

func expandPaths(st *State, pats []string) (paths []string, bad []error) {
	fields := taskFields(st, TaskDir(st))
	for _, p := range pats {
		q, err := workflow.ExpandArtifact(p, fields)
		if err != nil {
			bad = append(bad, err)
			continue
		}
		paths = append(paths, q)
	}
	return paths, bad
}

// allArtifacts returns every artifact of st's workflow, filled in, each
// once, in node order, with the first node that names it.
func allArtifacts(st *State, wf *workflow.Definition) (paths []string, producer map[string]string) {
	producer = map[string]string{}
	for _, node := range wf.Order {
		ps, _ := ArtifactPaths(st, wf, node)
		for _, p := range ps {
			if _, ok := producer[p]; !ok {
				producer[p] = node
				paths = append(paths, p)
			}
		}
	}
	return paths, producer
}

// Submitted is one artifact as it was when its node ended, kept in the
// task's tree at SubmittedPath(node, name) and indexed in state.json's
// "submitted" by node: the clone that fetches the task gets exactly what
// was submitted.
type Submitted struct {
	Path string    `json:"path"` // in the worktree, as the node wrote it
	Blob string    `json:"blob"` // the git blob id of its content
	Size int64     `json:"size"`
	At   time.Time `json:"at"`
}

// Name is the file name the artifact is known by.
func (s Submitted) Name() string { return workflow.ArtifactName(s.Path) }

// submittedDir is the task tree's folder of submitted artifacts.
const submittedDir = "submitted/"

// SubmittedPath is where node's artifact name lies in the task's tree.
func SubmittedPath(node, name string) string { return submittedDir + node + "/" + name }

// BlobID is git's object id of a blob holding data, as DefinitionID
// computes it, so an approval can name the content it approved without
// asking the store.
func BlobID(data []byte) string { return DefinitionID(data) }

// submit reads node's artifacts from this worktree and records them in
// st and put (tree entries of the same commit), replacing what the node
// submitted before. Files that may not leave this machine (an untrusted
// definition, an ignored file, a link, a file over MaxArtifactSize) are
// not submitted, with a warning; a node that submits nothing keeps no
// entry. put's earlier submitted/ entries (a retried update) are dropped
// first.
func (e *Engine) submit(st *State, wf *workflow.Definition, node string, put map[string][]byte) {
	for k := range put {
		if strings.HasPrefix(k, submittedDir) {
			delete(put, k)
		}
	}
	if st.Submitted != nil {
		delete(st.Submitted, node)
	}
	paths, bad := ArtifactPaths(st, wf, node)
	for _, err := range bad {
		e.warn(err.Error())
	}
	if len(paths) == 0 || e.Files == nil {
		return
	}
	files := e.readArtifacts(st.Task, wf, paths, "submitted")
	if len(files) == 0 {
		return
	}
	if st.Submitted == nil {
		st.Submitted = map[string][]Submitted{}
	}
	var list []Submitted
	for _, f := range files {
		list = append(list, Submitted{Path: f.Path, Blob: BlobID(f.Data), Size: int64(len(f.Data)), At: e.now().UTC()})
		put[SubmittedPath(node, workflow.ArtifactName(f.Path))] = f.Data
	}
	st.Submitted[node] = list
}

// submittedOf finds artifact name (a file name or a path) among what st
// submitted: at node when it is given, else at the node that submitted
// it last in the task's path (ambiguous names need --node).
func submittedOf(st *State, name, node string) (string, Submitted, error) {
	var nodes []string
	for _, n := range slices.Sorted(maps.Keys(st.Submitted)) {
		if node != "" && n != node {
			continue
		}
		for _, s := range st.Submitted[n] {
			if s.Path == name || s.Name() == name {
				nodes = append(nodes, n)
			}
		}
	}
	switch {
	case len(nodes) == 0 && node != "":
		return "", Submitted{}, fmt.Errorf("task %s has no artifact %s submitted by node %s: %w", st.Task, text.Quote(name), node, ErrNotFound)
	case len(nodes) == 0:
		return "", Submitted{}, fmt.Errorf("task %s has no submitted artifact %s: %w", st.Task, text.Quote(name), ErrNotFound)
	case len(nodes) > 1:
		return "", Submitted{}, fmt.Errorf("nodes %s of task %s both submitted %s; name one with --node", text.JoinQuoted(nodes), st.Task, text.Quote(name))
	}
	for _, s := range st.Submitted[nodes[0]] {
		if s.Path == name || s.Name() == name {
			return nodes[0], s, nil
		}
	}
	return "", Submitted{}, fmt.Errorf("%s: %w", name, ErrNotFound)
}
