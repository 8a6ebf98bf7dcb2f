package engine

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/git-hegel/git-hegel/engine/agent"
	"github.com/git-hegel/git-hegel/engine/text"
	"github.com/git-hegel/git-hegel/engine/workflow"
)

// File locks: the files a task says it owns, so that another task (in
// another worktree, or another clone after a fetch) is stopped before it
// edits them: by the agent hooks before an edit, and at `next` by the
// locked_files guard. A lock lives in the task's state (files_locked), so
// it travels with the task through sync and ends with it: only an open
// task's locks count.

// RuleLockedFiles is the guard that stops `next` when the phase edited a
// file another open task holds; `next --force=locked_files` overrides it
// (recorded).
const RuleLockedFiles = "locked_files"

// FileLock is one locked path: a file, a directory (with a trailing
// slash: everything under it) or a glob pattern (`*`, `?`, `[...]`, as
// path.Match reads them, also matching the directories above a file).
// Paths are relative to the top of the worktree, slash-separated.
type FileLock struct {
	Path string    `json:"path"`
	At   time.Time `json:"at"`
	By   string    `json:"by,omitempty"` // who took it (git's user.name)
}

// LockCovers reports whether the lock pattern covers file. A pattern
// also covers the file (or directory) named by its own text, as a git
// pathspec does: a lock on an existing "notes[1].md" holds that file, not
// only "notes1.md".
func LockCovers(lock, file string) bool {
	if strings.HasSuffix(lock, "/") {
		if strings.HasPrefix(file, lock) || file+"/" == lock {
			return true
		}
	} else if file == lock || strings.HasPrefix(file, lock+"/") || strings.HasPrefix(lock, file+"/") {
		return true
	}
	if !IsGlob(lock) {
		return false
	}
	for p := file; p != "." && p != "/" && p != ""; p = path.Dir(p) {
		if ok, _ := path.Match(lock, p); ok {
			return true
		}
	}
	return false
}

// locksOverlap reports whether two locks can name the same file.
func locksOverlap(a, b string) bool {
	if a == b {
		return true
	}
	if IsGlob(a) && IsGlob(b) {
		return false // two patterns: only an identical one counts as the same lock
	}
	if IsGlob(b) {
		a, b = b, a
	}
	return LockCovers(a, strings.TrimSuffix(b, "/")) || (!IsGlob(a) && LockCovers(b, strings.TrimSuffix(a, "/")))
}

// IsGlob reports whether a lock path is a pattern.
func IsGlob(p string) bool { return strings.ContainsAny(p, "*?[") }

// sameLock reports whether two lock paths are one lock: "src/auth" and
// "src/auth/" cover the same files, and which one a lock stores depends
// on whether the directory existed when it was taken.
func sameLock(a, b string) bool {
	return a == b || (!IsGlob(a) && strings.TrimSuffix(a, "/") == strings.TrimSuffix(b, "/"))
}

// CheckLockPath refuses a lock path that cannot name a file in the
// worktree: empty, absolute, or climbing out with "..". The command line
// makes paths relative to the top of the worktree before this.
func CheckLockPath(p string) error {
	clean := path.Clean(strings.TrimSuffix(p, "/"))
	switch {
	case p == "" || clean == ".":
		return badNamef("'%s' is the whole worktree; lock the files or directories in it", p)
	case path.IsAbs(p) || clean == ".." || strings.HasPrefix(clean, "../"):
		return badNamef("'%s' is outside the worktree", p)
	case strings.Contains(p, "\n") || strings.Contains(p, "\x00"):
		return badNamef("%s is not a path git-hegel can lock", text.Quote(p))
	}
	if IsGlob(p) {
		if _, err := path.Match(p, ""); err != nil {
			return badNamef("'%s' is not a valid pattern", p)
		}
	}
	return nil
}

// CheckNewLockPath is CheckLockPath for a lock being taken: it also
// refuses a path inside the repository's .git (in any case of its name),
// which git never tracks, a pattern of stars alone (the whole worktree)
// and a name that is not UTF-8. A stored lock there, taken before this rule,
// is still read.
func CheckNewLockPath(p string) error {
	if err := CheckLockPath(p); err != nil {
		return err
	}
	if first, _, _ := strings.Cut(path.Clean(p), "/"); strings.EqualFold(first, ".git") {
		return badNamef("'%s' is inside .git, which git does not track; lock files of the worktree", p)
	}
	if strings.Trim(strings.TrimSuffix(p, "/"), "*") == "" {
		// "*" matches every name at the top, and so every file under it.
		return badNamef("'%s' is the whole worktree; lock the files or directories in it", p)
	}
	if !utf8.ValidString(p) {
		// A state is JSON text: the name would be stored with its bad
		// bytes replaced, a lock on no file that unlock could not name.
		return badNamef("%s is not valid UTF-8, which a lock cannot hold; lock its directory, or a pattern that matches it", text.Quote(p))
	}
	return nil
}

// LockHolder is an open task holding a lock.
type LockHolder struct {
	Task string
	Lock FileLock
	// Worktree is where that task runs ("" when parked).
	Worktree string
}

// LockedBy returns the open tasks other than except whose locks cover
// file, from the given states (a task's locks end with the task). With
// fold (core.ignorecase), names that differ only in case match too.
func LockedBy(states []*State, except, file string, fold bool) []LockHolder {
	var out []LockHolder
	folded := ""
	if fold {
		folded = FoldName(file)
	}
	for _, st := range states {
		if st == nil || st.Task == except || !st.Active() {
			continue
		}
		for _, l := range st.FilesLocked {
			// Folded as well as exact: folding a pattern's range
			// ([A-z]) can narrow it, and must never free a file the
			// lock holds as written.
			if LockCovers(l.Path, file) || fold && LockCovers(FoldName(l.Path), folded) {
				out = append(out, LockHolder{Task: st.Task, Lock: l, Worktree: st.Worktree})
				break
			}
		}
	}
	return out
}

// FoldName spells s in one case: each letter is upper-cased (as NTFS
// compares names: dotless "ı" is "I" there) and becomes the smallest of
// the letters Unicode's simple case folding makes equal to that (the
// letters strings.EqualFold takes as one, as APFS compares names), so
// "SRC", "src" and "ſrc" (long s), one name on a case-insensitive file
// system, have one spelling. Lower-casing alone would keep "ſ" and "s"
// apart. Folding more than a file system does only refuses more edits.
func FoldName(s string) string {
	return strings.Map(func(r rune) rune {
		r = unicode.ToUpper(r)
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		return least
	}, s)
}

// LockMessage is the one line that stops an edit of a locked file. It
// reaches the agent, and the lock may come from another clone: so it
// names only the file the agent itself is editing and the holder's task
// name (a valid one, or none), never the lock's own text.
func LockMessage(file string, h LockHolder) string {
	return fmt.Sprintf("'%s' is locked by task %s; leave it to that task, or ask the person you work with to take the lock over ('git hegel lock --force %s')",
		file, holderName(h.Task), file)
}

// holderName is a lock holder's task name as it may be shown: the name
// of a state read from a ref is someone else's text until it is a valid
// task name.
func holderName(task string) string {
	if ValidTaskName(task) {
		return task
	}
	return "(a task whose name is not valid)"
}

// LockError refuses a lock another open task holds.
type LockError struct {
	Path   string
	Holder LockHolder
	// Arg is the path as the command line should repeat it in the hint:
	// what the user typed, read from their directory, quoted for the
	// shell ("": Path, which is relative to the top of the worktree).
	Arg string
}

func (e *LockError) Error() string {
	arg := e.Arg
	if arg == "" {
		arg = e.Path
	}
	return fmt.Sprintf("'%s' is locked by task %s (lock %s); 'git hegel lock --force %s' takes it over",
		e.Path, holderName(e.Holder.Task), text.Quote(e.Holder.Lock.Path), arg)
}

// LockResult is what `git hegel lock` did.
type LockResult struct {
	State *State
	Added []string // paths newly locked
	Held  []string // paths the task held already
	// TakenFrom names, per path taken over with --force, the task that
	// held it.
	TakenFrom map[string][]string
}

// openStates loads every open task's state; one that cannot be read is
// skipped (doctor reports it).
func (e *Engine) openStates() ([]*State, error) {
	listed, err := e.listLive()
	if err != nil {
		return nil, err
	}
	var out []*State
	for _, l := range listed {
		if l.State != nil && l.State.Active() {
			out = append(out, l.State)
		}
	}
	return out, nil
}

// LockIndex is a TaskStore that keeps which tasks lock files, so that
// checking one edit need not read every open task.
type LockIndex interface {
	// LockStates returns the states of the live tasks that lock files.
	LockStates() ([]*State, error)
}

// LockStates is the state of every open task that locks files: all a
// check of an edited file against the locks needs (LockedBy).
func (e *Engine) LockStates() ([]*State, error) {
	var all []*State
	var err error
	if li, ok := e.Tasks.(LockIndex); ok {
		all, err = li.LockStates()
	} else {
		all, err = e.openStates()
	}
	if err != nil {
		return nil, err
	}
	var out []*State
	for _, st := range all {
		if st.Active() && len(st.FilesLocked) > 0 {
			out = append(out, st)
		}
	}
	return out, nil
}

// Lock records paths as locked by the task o selects. A path another open
// task holds is refused unless takeOver (lock --force), which removes
// the lock from that task, recording there who took it. A task another
// worktree owns is refused unless o.Force, before anything is written.
// The caller's locks are written before the holders' are dropped: a
// failure between the writes leaves a path locked twice, never unlocked.
// With FoldCase (core.ignorecase), a lock on the same name in another
// case is held by that task too: the agent hook stops an edit under
// either spelling, and the hint it gives (lock --force, with the agent's
// spelling) must take that lock over.
func (e *Engine) Lock(o TaskOptions, paths []string, takeOver bool) (*LockResult, error) {
	for _, p := range paths {
		if err := CheckNewLockPath(p); err != nil {
			return nil, err
		}
	}
	cur, err := e.Current(o.Task)
	if err != nil {
		return nil, err
	}
	if err := e.allowed(cur.State, "lock"); err != nil {
		return nil, err
	}
	// A task another worktree owns is refused before any lock is taken
	// over from a third task: a refusal changes nothing.
	if _, err := e.checkOwner(cur.State, updateOpts{call: o}); err != nil {
		return nil, err
	}
	states, err := e.LockStates()
	if err != nil {
		return nil, err
	}
	res := &LockResult{TakenFrom: map[string][]string{}}
	// Every conflict is found before anything is written, so a refusal
	// changes nothing.
	take := map[string][]string{} // holder task -> its lock paths to drop
	for _, p := range paths {
		for _, st := range states {
			if st.Task == cur.State.Task {
				continue
			}
			for _, l := range st.FilesLocked {
				if !e.locksMeet(l.Path, p) {
					continue
				}
				h := LockHolder{Task: st.Task, Lock: l, Worktree: st.Worktree}
				if !takeOver {
					return nil, &LockError{Path: p, Holder: h}
				}
				if !slices.Contains(take[st.Task], l.Path) {
					take[st.Task] = append(take[st.Task], l.Path)
				}
				if !slices.Contains(res.TakenFrom[p], st.Task) {
					res.TakenFrom[p] = append(res.TakenFrom[p], st.Task) // named once, however many of its locks cover p
				}
			}
		}
	}
	// The caller's locks are written first, then each holder's are
	// dropped: a failure in between leaves a path locked by both tasks
	// (both agents stopped, and lock --force again finishes the take
	// over), never by neither.
	st, _, err := e.update(o, func(st *State, _ *workflow.Definition) (string, error) {
		if err := e.allowed(st, "lock"); err != nil {
			return "", err
		}
		res.Added, res.Held = nil, nil
		now := e.now()
		for _, p := range paths {
			if slices.ContainsFunc(st.FilesLocked, func(l FileLock) bool { return e.sameOwnLock(l.Path, p) }) {
				res.Held = append(res.Held, p)
				continue
			}
			st.FilesLocked = append(st.FilesLocked, FileLock{Path: p, At: now, By: e.lockUser()})
			res.Added = append(res.Added, p)
		}
		if len(res.Added) == 0 {
			return "", errNothingToLock
		}
		return "lock: " + strings.Join(res.Added, ", "), nil
	})
	if errors.Is(err, errNothingToLock) {
		t, lerr := e.Current(o.Task)
		if lerr != nil {
			return nil, lerr
		}
		st, err = t.State, nil
	}
	if err != nil {
		return nil, err
	}
	res.State = st
	for _, holder := range lockKeys(take) {
		drop := take[holder]
		_, _, err := e.updateOpts(updateOpts{call: TaskOptions{Task: holder}, anyOwner: true}, func(hst *State, _ *workflow.Definition) (string, error) {
			now := e.now()
			hst.FilesLocked = slices.DeleteFunc(hst.FilesLocked, func(l FileLock) bool { return slices.Contains(drop, l.Path) })
			hst.Overrides = append(hst.Overrides, Override{Node: hst.CurrentNode, What: "lock",
				Reason: fmt.Sprintf("%s taken over by task %s", text.JoinQuoted(drop), st.Task), At: now})
			return "lock: " + strings.Join(drop, ", ") + " taken over by task " + st.Task, nil
		})
		if err != nil {
			return nil, fmt.Errorf("task %s holds its locks now, but task %s still holds %s too (taking them over failed: %w); 'git hegel lock --force' with the same paths again finishes the take over",
				st.Task, holder, text.JoinQuoted(drop), err)
		}
	}
	return res, nil
}

// sameOwnLock is sameLock as the agent hook compares names: with
// core.ignorecase, "Docs" and "docs/" are one lock of the task, to take
// again or to unlock. A pattern stays as written (folding its range can
// narrow it).
func (e *Engine) sameOwnLock(a, b string) bool {
	return sameLock(a, b) || e.FoldCase && !IsGlob(a) && !IsGlob(b) && sameLock(FoldName(a), FoldName(b))
}

// errNothingToLock stops a lock that adds nothing from writing a commit.
var errNothingToLock = errors.New("nothing to lock")

// Unlock removes the task's locks on paths (all of them when all). A path
// the task does not hold is refused, and nothing changes.
func (e *Engine) Unlock(o TaskOptions, paths []string, all bool) (*State, []string, error) {
	var removed []string
	st, _, err := e.update(o, func(st *State, _ *workflow.Definition) (string, error) {
		removed = nil
		if all {
			if len(st.FilesLocked) == 0 {
				return "", fmt.Errorf("Task %s holds no locks", st.Task)
			}
			for _, l := range st.FilesLocked {
				removed = append(removed, l.Path)
			}
			st.FilesLocked = nil
		} else {
			for _, p := range paths {
				// Every lock p names: an older version could hold "dir"
				// and "dir/" both.
				n := len(removed)
				st.FilesLocked = slices.DeleteFunc(st.FilesLocked, func(l FileLock) bool {
					if e.sameOwnLock(l.Path, p) {
						removed = append(removed, l.Path)
						return true
					}
					return false
				})
				if len(removed) == n && !slices.ContainsFunc(removed, func(r string) bool { return e.sameOwnLock(r, p) }) {
					return "", fmt.Errorf("Task %s holds no lock on '%s' ('git hegel status' lists its locks)", st.Task, p)
				}
			}
			if len(st.FilesLocked) == 0 {
				st.FilesLocked = nil
			}
		}
		return "unlock: " + strings.Join(removed, ", "), nil
	})
	return st, removed, err
}

// lockUser names who takes a lock ("" when user.name is not set: a lock
// needs no name, unlike a decision at a gate).
func (e *Engine) lockUser() string {
	u, _ := e.user()
	return u
}

// MergeLocks is the three-way merge of a task's files_locked: a union
// with removal. A path is locked in the result when either side holds it,
// unless one side removed it (it was in base and that side no longer has
// it); a path both sides added keeps the earlier lock. The result is
// sorted by path. This is the merge rule sync applies to this field.
func MergeLocks(base, ours, theirs []FileLock) []FileLock {
	in := func(ls []FileLock, p string) bool {
		return slices.ContainsFunc(ls, func(l FileLock) bool { return l.Path == p })
	}
	removed := func(side []FileLock, p string) bool { return in(base, p) && !in(side, p) }
	byPath := map[string]FileLock{}
	for _, side := range [][]FileLock{ours, theirs} {
		for _, l := range side {
			if removed(ours, l.Path) || removed(theirs, l.Path) {
				continue
			}
			if old, ok := byPath[l.Path]; !ok || l.At.Before(old.At) {
				byPath[l.Path] = l
			}
		}
	}
	if len(byPath) == 0 {
		return nil
	}
	out := make([]FileLock, 0, len(byPath))
	for _, p := range lockKeys(byPath) {
		out = append(out, byPath[p])
	}
	return out
}

func lockKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// lockViolations are the phase's edits of files another open task has
// locked, as guard violations of the locked_files rule (one per file).
func (e *Engine) lockViolations(st *State, evs []agent.Event) ([]agent.Violation, error) {
	var files []string
	for i := range evs {
		if ev := &evs[i]; ev.IsEdit() && !slices.Contains(files, ev.File) {
			files = append(files, ev.File)
		}
	}
	if len(files) == 0 {
		return nil, nil
	}
	states, err := e.LockStates()
	if err != nil {
		return nil, err
	}
	var out []agent.Violation
	for _, f := range files {
		hs := LockedBy(states, st.Task, f, e.FoldCase)
		if len(hs) == 0 {
			continue
		}
		out = append(out, agent.Violation{
			Rule:    workflow.Rule{Type: RuleLockedFiles},
			Node:    st.CurrentNode,
			Summary: LockMessage(f, hs[0]),
			Comply:  fmt.Sprintf("undo the change to '%s', or have the person you work with take the lock over ('git hegel lock --force %s'), or override with 'git hegel next --force=%s'", f, f, RuleLockedFiles),
		})
	}
	return out, nil
}
