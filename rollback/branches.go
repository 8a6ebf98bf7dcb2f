package rollback

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-hegel/git-hegel/gitstore"
	"github.com/git-hegel/git-hegel/gitstore/refs"
)

// A rollback puts HEAD back where the checkpoint recorded it: on the
// recorded branch at the recorded commit (the branch recreated if it was
// deleted), or detached at the recorded commit. It never moves any other
// branch: the branch checked out when the rollback starts stays where it
// is. Undoing a rollback (restoring its safety checkpoint) puts HEAD back
// and every branch the rollback moved, which the safety checkpoint records
// (Checkpoint.Moved).

// refMove is one branch a rollback moves. From and To are commits; zero
// means the branch does not exist on that side.
type refMove struct {
	Ref      plumbing.ReferenceName
	From, To plumbing.Hash
}

// MovedBranch is a branch a rollback moved, as its safety checkpoint
// records it: the commit it was at before (Commit "": it did not exist).
type MovedBranch struct {
	Ref    string `json:"ref"`
	Commit string `json:"commit,omitempty"`
}

func (b MovedBranch) commit() plumbing.Hash {
	if b.Commit == "" {
		return plumbing.ZeroHash
	}
	return plumbing.NewHash(b.Commit)
}

// BranchMove is a branch a rollback moves, for people and --json.
type BranchMove struct {
	Name string        // short name (main)
	From plumbing.Hash // zero: the rollback creates it
	To   plumbing.Hash // zero: the rollback deletes it (only when undoing a rollback that created it)
	// MovedOn: the branch is not checked out and has moved since the
	// checkpoint; the safety checkpoint keeps From reachable.
	MovedOn bool
	// Leaving are the commits the move leaves behind (reachable from From,
	// not To), newest first, at most ten of LeavingCount; LeavingMore says
	// the count stopped at its bound.
	Leaving      []LeavingCommit
	LeavingCount int
	LeavingMore  bool
}

// ErrBranch reports a rollback refused because of a branch: one it would
// have to delete, or one checked out in another worktree.
var ErrBranch = errors.New("branch conflict")

func validBranch(ref string) error {
	if !strings.HasPrefix(ref, "refs/heads/") {
		return fmt.Errorf("%q is not a branch", ref)
	}
	if err := plumbing.ReferenceName(ref).Validate(); err != nil {
		return fmt.Errorf("%q is not a valid branch name", ref)
	}
	return nil
}

// readBranch returns a branch's commit (zero when it does not exist).
func (w *workspace) readBranch(ref plumbing.ReferenceName) (plumbing.Hash, error) {
	h, err := w.r.ReadRef(string(ref))
	if errors.Is(err, gitstore.ErrNotFound) {
		return plumbing.ZeroHash, nil
	}
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("cannot read %s: %w", ref.Short(), err)
	}
	return h, nil
}

// nameFree reports an error when branch ref cannot be created because
// another branch's name contains it as a directory (refs/heads/a/b keeps
// refs/heads/a from existing) or is a directory of it: git stores both in
// the same tree of names, and the rollback would fail at its first step.
func (w *workspace) nameFree(ref plumbing.ReferenceName) error {
	taken := func(other string) error {
		return userErr(ErrBranch, "%s cannot be created again: branch %s exists, and git cannot have both names; rename it ('git branch -m %s <new-name>') and run the command again; nothing was changed",
			ref.Short(), plumbing.ReferenceName(other).Short(), plumbing.ReferenceName(other).Short())
	}
	below, err := w.r.ListRefs(string(ref) + "/")
	if err != nil {
		return fmt.Errorf("cannot read the branches: %w", err)
	}
	if len(below) > 0 {
		return taken(string(below[0].Name))
	}
	name := string(ref)
	for i := strings.LastIndexByte(name, '/'); i > len("refs/heads"); i = strings.LastIndexByte(name[:i], '/') {
		h, err := w.readBranch(plumbing.ReferenceName(name[:i]))
		if err != nil {
			return err
		}
		if !h.IsZero() {
			return taken(name[:i])
		}
	}
	return nil
}

// planRefs works out where HEAD goes and which branches move to restore
// cp over the current HEAD cur.
func (w *workspace) planRefs(cur head, cp *Checkpoint) (head, []refMove, error) {
	to := head{Ref: plumbing.ReferenceName(cp.Branch), Commit: cp.HeadCommit()}
	if to.Ref == "" && to.Commit.IsZero() {
		return head{}, nil, fmt.Errorf("checkpoint %s records neither a branch nor a commit", cp.ID)
	}
	// A branch the rollback being undone created may be deleted again;
	// nothing else ever is.
	created := map[plumbing.ReferenceName]bool{}
	for _, b := range cp.Moved {
		if b.Commit == "" {
			created[plumbing.ReferenceName(b.Ref)] = true
		}
	}
	var moves []refMove
	seen := map[plumbing.ReferenceName]bool{}
	add := func(ref plumbing.ReferenceName, want plumbing.Hash) error {
		if seen[ref] {
			return nil
		}
		seen[ref] = true
		if err := validBranch(string(ref)); err != nil {
			return fmt.Errorf("checkpoint %s cannot be restored: %v", cp.ID, err)
		}
		now, err := w.readBranch(ref)
		if err != nil {
			return err
		}
		if now == want {
			return nil
		}
		if want.IsZero() && !created[ref] {
			return userErr(ErrBranch, "Checkpoint %s was taken before %s had any commit, and %s has commits now: a rollback never deletes a branch. "+
				"Nothing was changed. To go back to it anyway, rename the branch first ('git branch -m %s <new-name>') and run the command again",
				cp.ID, ref.Short(), ref.Short(), ref.Short())
		}
		if now.IsZero() && !want.IsZero() {
			if err := w.nameFree(ref); err != nil {
				return err
			}
		}
		moves = append(moves, refMove{Ref: ref, From: now, To: want})
		return nil
	}
	if to.Ref != "" {
		if err := add(to.Ref, to.Commit); err != nil {
			return head{}, nil, err
		}
	}
	for _, b := range cp.Moved {
		if err := add(plumbing.ReferenceName(b.Ref), b.commit()); err != nil {
			return head{}, nil, err
		}
	}
	// git refuses to move or check out a branch that another worktree has
	// checked out: its files and index would no longer match it.
	others := w.otherCheckouts()
	for _, mv := range moves {
		if wt, ok := others[mv.Ref]; ok {
			return head{}, nil, userErr(ErrBranch, "%s is checked out in %s, and the rollback would move it; nothing was changed", mv.Ref.Short(), wt)
		}
	}
	if to.Ref != "" && to.Ref != cur.Ref {
		if wt, ok := others[to.Ref]; ok {
			return head{}, nil, userErr(ErrBranch, "%s is checked out in %s, and the rollback would check it out here; nothing was changed", to.Ref.Short(), wt)
		}
	}
	return to, moves, nil
}

// otherCheckouts maps the branches other worktrees of this repository
// have checked out to those worktrees' paths.
func (w *workspace) otherCheckouts() map[plumbing.ReferenceName]string {
	out := map[plumbing.ReferenceName]string{}
	if w.memory {
		return out
	}
	read := func(gitDir string) {
		if filepath.Clean(gitDir) == filepath.Clean(w.r.GitDir) {
			return
		}
		b, err := os.ReadFile(filepath.Join(gitDir, "HEAD"))
		if err != nil {
			return
		}
		target, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "ref:")
		if !ok {
			return
		}
		where := gitDir
		if gd, err := os.ReadFile(filepath.Join(gitDir, "gitdir")); err == nil {
			where = filepath.Dir(strings.TrimSpace(string(gd)))
		} else if gitDir == w.r.CommonDir {
			where = filepath.Dir(gitDir)
		}
		out[plumbing.ReferenceName(strings.TrimSpace(target))] = where
	}
	read(w.r.CommonDir)
	ents, _ := os.ReadDir(filepath.Join(w.r.CommonDir, "worktrees"))
	for _, e := range ents {
		read(filepath.Join(w.r.CommonDir, "worktrees", e.Name()))
	}
	return out
}

// applyRefs moves the branches and then HEAD, from their "from" side to
// their "to" side. With either, a branch or HEAD already on its "to" side
// is left as it is (finishing or undoing an interrupted rollback, which
// may have moved some already); anything else that does not match is an
// error and stops before that step.
func (w *workspace) applyRefs(cur, to head, moves []refMove, msg string, either bool) error {
	for _, mv := range moves {
		if either {
			now, err := w.readBranch(mv.Ref)
			if err != nil {
				return err
			}
			if now == mv.To {
				continue
			}
		}
		// The branch's reflog entry is written with the move, under its
		// lock (gitstore's reflog writer).
		if err := w.r.UpdateRefMsg(string(mv.Ref), mv.From, mv.To, msg); err != nil {
			return fmt.Errorf("cannot move %s: %w", mv.Ref.Short(), err)
		}
	}
	if either {
		now, err := w.readHead()
		if err != nil {
			return err
		}
		if now.Ref == to.Ref && (to.Ref != "" || now.Commit == to.Commit) {
			return nil
		}
		if now.Ref != cur.Ref || (cur.Ref == "" && now.Commit != cur.Commit) {
			return fmt.Errorf("HEAD is now %s, not %s as when the rollback started; put it back ('git checkout %s') and run the command again",
				now.describe(), cur.describe(), cur.checkoutArg())
		}
	}
	return w.setHead(cur, to, moves, msg)
}

// setHead points HEAD at to's branch, or detaches it at to's commit, and
// writes HEAD's reflog entry. cur is where HEAD is now; moves are the
// branch moves already made (HEAD's commit before and after follows from
// them).
func (w *workspace) setHead(cur, to head, moves []refMove, msg string) error {
	fromCommit, toCommit := cur.Commit, to.Commit
	for _, mv := range moves {
		if mv.Ref == cur.Ref && cur.Ref != "" {
			fromCommit = mv.From
		}
	}
	if cur.Ref == to.Ref && cur.Ref != "" {
		// Same branch: HEAD itself does not change; its log follows the branch.
		if fromCommit != toCommit && !toCommit.IsZero() {
			w.reflog("HEAD", fromCommit, toCommit, msg)
		}
		return nil
	}
	if cur.Ref == "" && to.Ref == "" {
		if cur.Commit == to.Commit {
			return nil
		}
		if err := w.r.UpdateDetachedHead(cur.Commit, to.Commit); err != nil {
			return fmt.Errorf("cannot move HEAD: %w", err)
		}
		w.reflog("HEAD", cur.Commit, to.Commit, msg)
		return nil
	}
	old := refs.HeadState{Branch: cur.Ref, Commit: cur.Commit}
	if cur.Ref != "" {
		old.Commit = plumbing.ZeroHash
	}
	next := refs.HeadState{Branch: to.Ref}
	if to.Ref == "" {
		next.Commit = to.Commit
	}
	if err := w.r.SetHead(old, next); err != nil {
		return fmt.Errorf("cannot move HEAD: %w", err)
	}
	if !toCommit.IsZero() {
		w.reflog("HEAD", fromCommit, toCommit, msg)
	}
	return nil
}

func (h head) describe() string {
	switch {
	case h.Ref != "" && h.Commit.IsZero():
		return "on " + h.Ref.Short() + " (no commits)"
	case h.Ref != "":
		return "on " + h.Ref.Short()
	}
	return "detached at " + h.Commit.String()[:7]
}

func (h head) checkoutArg() string {
	if h.Ref != "" {
		return h.Ref.Short()
	}
	return "--detach " + h.Commit.String()[:7]
}

// movedAway lists, for a safety checkpoint, the branches a rollback moves
// that it must put back on undo: every branch but the one checked out
// when it starts (the checkpoint's own Branch and Head record that one),
// and that one too when the rollback creates it.
func movedAway(cur head, moves []refMove) []MovedBranch {
	var out []MovedBranch
	for _, mv := range moves {
		if mv.Ref == cur.Ref && !mv.From.IsZero() {
			continue
		}
		b := MovedBranch{Ref: string(mv.Ref)}
		if !mv.From.IsZero() {
			b.Commit = mv.From.String()
		}
		out = append(out, b)
	}
	return out
}

// branchMoves describes moves for people.
func branchMoves(cur head, moves []refMove, cp *Checkpoint) []BranchMove {
	out := make([]BranchMove, 0, len(moves))
	for _, mv := range moves {
		bm := BranchMove{Name: mv.Ref.Short(), From: mv.From, To: mv.To}
		bm.MovedOn = mv.Ref != cur.Ref && !mv.From.IsZero() && !mv.To.IsZero() &&
			string(mv.Ref) == cp.Branch && cp.Kind != KindSafety
		out = append(out, bm)
	}
	return out
}

// journalMoves and movesOf convert moves to and from the journal's form.
func journalMoves(moves []refMove) []journalMove {
	out := make([]journalMove, 0, len(moves))
	for _, mv := range moves {
		out = append(out, journalMove{Ref: string(mv.Ref), From: hexOf(mv.From), To: hexOf(mv.To)})
	}
	return out
}

func movesOf(js []journalMove) []refMove {
	out := make([]refMove, 0, len(js))
	for _, j := range js {
		out = append(out, refMove{Ref: plumbing.ReferenceName(j.Ref), From: hashOf(j.From), To: hashOf(j.To)})
	}
	return out
}

func reverseMoves(moves []refMove) []refMove {
	out := make([]refMove, len(moves))
	for i, mv := range moves {
		out[len(moves)-1-i] = refMove{Ref: mv.Ref, From: mv.To, To: mv.From}
	}
	return out
}

func hexOf(h plumbing.Hash) string {
	if h.IsZero() {
		return ""
	}
	return h.String()
}

func hashOf(s string) plumbing.Hash {
	if !plumbing.IsHash(s) {
		return plumbing.ZeroHash
	}
	return plumbing.NewHash(s)
}
