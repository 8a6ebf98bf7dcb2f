package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/git-hegel/git-hegel/engine/text"
	"github.com/git-hegel/git-hegel/gitstore"
	"github.com/git-hegel/git-hegel/gitstore/refs"
)

// git hegel doctor: checks everything git-hegel keeps (docs/history.md,
// "Repair") and with --fix repairs what it can without losing anything:
// damaged refs go back to their newest valid version or are moved aside
// to refs/hegel/damaged/, entries are moved aside, a damaged session file
// is renamed, dead owners' locks are removed, tasks of worktrees that no
// longer exist are released. The configuration is checked too
// (doctor_config.go), never changed. Exit 0 when healthy, 1 when problems
// remain.

func doctorFlags(fs *pflag.FlagSet) {
	fs.Bool("fix", false, "repair what can be repaired (nothing is deleted: see the manual)")
	jsonFlag(fs)
}

// tempLockAge is how long a temporary file beside a lock may exist
// before doctor calls it left behind: a command keeps one for the moment
// between writing a ref's new value and renaming it over the ref.
const tempLockAge = time.Minute

// doctorProblem is one finding: what is wrong, and what --fix did.
type doctorProblem struct {
	Kind    string `json:"kind"` // ref, entry, session, lock, rollback, stash, worktree, config, note
	Where   string `json:"where"`
	Problem string `json:"problem"`
	// Fixed says what --fix did ("" when it did nothing); FixError why it
	// failed.
	Fixed    string `json:"fixed,omitempty"`
	FixError string `json:"fix_error,omitempty"`
	// Note marks information, not a problem (counts for nothing).
	Note bool `json:"note,omitempty"`
	// Restored and Lost detail a ref's repair.
	Restored  string   `json:"restored,omitempty"`
	Lost      []string `json:"lost,omitempty"`
	LostCount int      `json:"lost_count,omitempty"`
	Aside     string   `json:"aside,omitempty"`
	// Value, Origin and Accepts detail a setting: its value as written,
	// where git says it is set, and what it may be.
	Value   *string `json:"value,omitempty"`
	Origin  string  `json:"origin,omitempty"`
	Accepts string  `json:"accepts,omitempty"`
}

// remains reports a problem that is still there.
func (p *doctorProblem) remains() bool { return !p.Note && p.Fixed == "" }

type doctorJSON struct {
	Schema   int             `json:"schema"`
	Fix      bool            `json:"fix"`
	Refs     int             `json:"refs"`
	Locks    int             `json:"locks"`
	Problems []doctorProblem `json:"problems"`
	Remain   int             `json:"remaining"`
	Healthy  bool            `json:"healthy"`
}

func runDoctor(c *cmdCtx, args []string) error {
	if err := c.wantArgs(args, 0, 0); err != nil {
		return err
	}
	r, err := c.openRepo()
	if err != nil {
		return err
	}
	fix := c.boolFlag("fix")
	now := c.Now()
	var ps []doctorProblem

	// The configuration first: a bad value explains what else fails.
	ps = append(ps, configProblems(c, r, fix)...)

	// Refs, and the entries of the history and the stash list.
	refProblems, nrefs, err := r.CheckRefs()
	if err != nil {
		return err
	}
	repaired := map[string]bool{}
	for _, rp := range refProblems {
		p := doctorProblem{Kind: "ref", Where: rp.Ref, Problem: rp.Problem, Note: rp.Note}
		if rp.Entry != "" {
			p.Kind, p.Where = "entry", rp.Ref+":"+rp.Entry
		}
		if rp.Note {
			p.Kind = "note"
		}
		if fix && !rp.Note {
			switch {
			case rp.Newer:
				p.FixError = "left as it is: a newer git-hegel may have written it, and going back would undo its work; upgrade git-hegel to read it ('git update-ref -d " + rp.Ref + "' removes it if it is damage)"
				if rp.Entry != "" {
					p.FixError = "left as it is: a newer git-hegel may have written it; upgrade git-hegel to read it"
				}
			case rp.Entry != "":
				if aside, err := r.MoveEntryAside(rp.Ref, rp.Entry, now); err != nil {
					p.FixError = oneLineErr(err)
				} else {
					p.Aside = aside
					p.Fixed = "removed from " + rp.Ref + "; kept as " + orMissingRef(aside)
				}
			case repaired[rp.Ref]:
			default:
				repaired[rp.Ref] = true
				rep, err := r.RepairRef(rp.Ref, now)
				if err != nil {
					p.FixError = oneLineErr(err)
					break
				}
				p.Restored, p.Lost, p.LostCount, p.Aside = rep.Restored, rep.Lost, rep.LostCount, rep.Aside
				p.Fixed = describeRepair(rep)
			}
		}
		ps = append(ps, p)
	}

	// The session file of this worktree.
	s := r.Sessions()
	if err := s.Check(); err != nil {
		p := doctorProblem{Kind: "session", Where: s.Path(), Problem: strings.TrimPrefix(oneLineErr(err), s.Path()+": ")}
		if fix {
			if to, err := s.MoveAside(now); err != nil {
				p.FixError = oneLineErr(err)
			} else {
				p.Fixed = "moved aside to " + to + "; the next command starts a fresh session and finds this worktree's task in the refs"
			}
		}
		ps = append(ps, p)
	}

	// Lock files: only a provably dead owner's is removed.
	locks, err := r.Locks()
	if err != nil {
		return err
	}
	for _, li := range locks {
		p := doctorProblem{Kind: "lock", Where: li.Path}
		switch {
		case li.State == refs.LockAlive:
			p.Note, p.Problem = true, "held by "+li.Owner.String()+", which is running; left alone"
		case li.State == refs.LockDead:
			p.Problem = "left by " + li.Owner.String() + ", which is no longer running"
			if fix {
				if _, ok, err := refs.RemoveDeadLock(li.Path); err != nil {
					p.FixError = oneLineErr(err)
				} else if ok {
					p.Fixed = "removed"
				} else {
					p.FixError = "not removed: it changed meanwhile (run 'git hegel doctor' again)"
				}
			}
		case li.Owner == nil && li.Temporary:
			// A ref's new value, written beside its lock and renamed
			// over the ref a moment later: no marker, and in use.
			pid := refs.TempLockPID(li.Path)
			if time.Since(li.ModTime) < tempLockAge {
				p.Note, p.Problem = true, fmt.Sprintf("a temporary file git-hegel process %d writes beside a lock while it moves a ref; left alone", pid)
			} else {
				p.Problem = fmt.Sprintf("a temporary file of git-hegel process %d, left since %s: if no git-hegel command runs in this repository, remove it by hand: rm '%s'",
					pid, li.ModTime.UTC().Format(time.RFC3339), li.Path)
			}
		case li.Owner == nil:
			p.Problem = "no git-hegel marker (git's lock, or another program's): if no git process runs in this repository, remove it by hand: rm '" + li.Path + "'"
		default:
			p.Problem = "held by " + li.Owner.String() + ", which cannot be checked from here: if it no longer runs, remove it by hand: rm '" + li.Path + "'"
		}
		ps = append(ps, p)
	}

	// An interrupted rollback (left as it is: finishing it or undoing it is
	// the user's choice).
	if rec, err := c.snapshots(r).Interrupted(); err != nil {
		ps = append(ps, doctorProblem{Kind: "rollback", Where: "rollback", Problem: oneLineErr(err)})
	} else if rec != nil {
		ps = append(ps, doctorProblem{Kind: "rollback", Where: "rollback", Problem: rec.InterruptedError().Error()})
	}

	// A stash's file operation cut short: any other command finishes or
	// undoes it; doctor says so, and --fix does it.
	if rec, err := c.snapshots(r).InterruptedParking(); err != nil {
		ps = append(ps, doctorProblem{Kind: "stash", Where: "stash", Problem: oneLineErr(err)})
	} else if rec != nil {
		p := doctorProblem{Kind: "stash", Where: "stash",
			Problem: rec.Interrupted() + "; 'git hegel doctor --fix', or any other git hegel command, finishes or undoes it"}
		if fix {
			if note, err := c.newEngine(r).RecoverParking(); err != nil {
				p.FixError = oneLineErr(err)
			} else {
				p.Fixed = note
			}
		}
		ps = append(ps, p)
	}

	// Open tasks whose worktree no longer exists.
	e := c.newEngine(r)
	orphans, err := e.Orphans(func(p, id string) bool {
		// git's record of the worktree says where it is now ('git
		// worktree move' leaves the task naming the old path); without
		// one, the path the task names decides.
		if _, name, ok := strings.Cut(id, ":"); ok {
			if top, ok := r.WorktreeTop(name); ok {
				p = top
			}
		}
		_, err := os.Stat(p)
		return errors.Is(err, fs.ErrNotExist)
	})
	if err != nil {
		return err
	}
	for _, o := range orphans {
		p := doctorProblem{Kind: "worktree", Where: gitstore.TaskRefPrefix + o.Task,
			Problem: fmt.Sprintf("task %s is owned by the worktree %s, which no longer exists", o.Task, o.Worktree)}
		if fix {
			if err := e.Release(o); err != nil {
				p.FixError = oneLineErr(err)
			} else {
				p.Fixed = "released: any worktree can take it up with 'git hegel switch " + o.Task + "'"
			}
		}
		ps = append(ps, p)
	}

	// Stashed tasks no stash entry holds: reported, and ended only by
	// --fix (never by a fetch, which may be what removed the entry).
	stashOrphans, err := e.StashOrphans()
	if err != nil {
		// The unreadable ref is reported above; this says what it hid.
		ps = append(ps, doctorProblem{Kind: "note", Where: gitstore.StashRef.String(), Note: true, Problem: "stashed tasks not checked against the stash list: " + oneLineErr(err)})
	}
	for _, o := range stashOrphans {
		p := doctorProblem{Kind: "stash", Where: gitstore.TaskRefPrefix + o.Task, Problem: o.Problem()}
		if fix {
			if err := e.EndStashOrphan(o); err != nil {
				p.FixError = oneLineErr(err)
			} else {
				p.Fixed = "ended: archived as aborted (refs/hegel/archive/" + o.Task + "); 'git hegel start --task " + o.Task + "' can use the name again"
			}
		}
		ps = append(ps, p)
	}

	remain := 0
	for i := range ps {
		if ps[i].remains() {
			remain++
		}
	}
	if c.boolFlag("json") {
		if ps == nil {
			ps = []doctorProblem{}
		}
		if err := writeJSON(c.Stdout, doctorJSON{Schema: c.jsonSchema(), Fix: fix, Refs: nrefs, Locks: len(locks), Problems: ps, Remain: remain, Healthy: remain == 0}); err != nil {
			return err
		}
	} else {
		printDoctor(c, ps, nrefs, len(locks), remain, fix)
	}
	if remain > 0 {
		return &silentError{code: exitFailed}
	}
	return nil
}

func printDoctor(c *cmdCtx, ps []doctorProblem, nrefs, nlocks, remain int, fix bool) {
	w := c.Stdout
	fmt.Fprintf(w, "Checked %s under refs/hegel/, the session file, %s, rollbacks, task owners and the configuration\n",
		text.Plural(nrefs, "ref", "refs"), text.Plural(nlocks, "lock file", "lock files"))
	for _, p := range ps {
		mark := "problem"
		if p.Note {
			mark = "note"
		}
		fmt.Fprintf(w, "%s: %s: %s\n", mark, p.Where, p.Problem)
		switch {
		case p.Fixed != "":
			fmt.Fprintf(w, "  fixed: %s\n", p.Fixed)
		case p.FixError != "":
			fmt.Fprintf(w, "  not fixed: %s\n", p.FixError)
		}
	}
	switch {
	case remain == 0:
		fmt.Fprintln(w, "No problems found")
		if fix && len(ps) > 0 {
			fmt.Fprintln(w, "(after the repairs above)")
		}
	case fix:
		fmt.Fprintf(w, "%s left that --fix cannot repair (see above)\n", text.Plural(remain, "problem", "problems"))
	case configOnly(ps):
		// --fix changes no configuration: pointing at it would only
		// print the same problems again.
		fmt.Fprintf(w, "%s, in the configuration; edit it with 'git config'\n", text.Plural(remain, "problem", "problems"))
	default:
		fmt.Fprintf(w, "%s; 'git hegel doctor --fix' repairs what it can\n", text.Plural(remain, "problem", "problems"))
	}
}

// configOnly reports whether every problem left is in the configuration,
// which --fix does not change.
func configOnly(ps []doctorProblem) bool {
	for _, p := range ps {
		if !p.Note && p.Fixed == "" && p.Kind != "config" {
			return false
		}
	}
	return true
}

// describeRepair says what RepairRef did, in one line.
func describeRepair(rep *gitstore.Repair) string {
	var b strings.Builder
	switch {
	case rep.Broken && rep.Moved:
		return "its reflog holds no version that reads; the file was removed"
	case rep.Broken:
		fmt.Fprintf(&b, "restored the version %s of %s (%s) from its reflog", short(rep.Restored), rep.RestoredAt, rep.RestoredMsg)
	case rep.Moved:
		b.WriteString("no valid version found; the ref was removed and its value kept as " + orMissingRef(rep.Aside))
		return b.String()
	case rep.RestoredAt != "":
		fmt.Fprintf(&b, "restored the version %s of %s (%s)", short(rep.Restored), rep.RestoredAt, rep.RestoredMsg)
	case rep.RestoredMsg == "":
		// A checkpoint chain rewritten without its damaged entries.
		fmt.Fprintf(&b, "rewrote the chain, now at %s", short(rep.Restored))
	default:
		fmt.Fprintf(&b, "kept as %s: %s", short(rep.Restored), rep.RestoredMsg)
	}
	if rep.LostCount > 0 {
		fmt.Fprintf(&b, "; lost %s: %s", text.Plural(rep.LostCount, "change", "changes"), strings.Join(rep.Lost, "; "))
		if rep.LostCount > len(rep.Lost) {
			b.WriteString("; …")
		}
	}
	if rep.Aside != "" {
		b.WriteString("; the damaged value is kept as " + rep.Aside)
	}
	return b.String()
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

func orMissingRef(s string) string {
	if s == "" {
		return "nothing (its object is missing)"
	}
	return s
}
