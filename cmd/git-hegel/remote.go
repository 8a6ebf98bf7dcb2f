package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/git-hegel/git-hegel/gitstore"
)

// git hegel remote setup [<remote>] [--fsck-objects] [--undo] (docs/sync.md, "Plain git").

// remoteSubs are the verbs of git hegel remote.
var remoteSubs = []*subcommand{
	{name: "setup", args: "[<remote>]", flags: []string{"fsck-objects", "undo"}, operands: []valueKind{kindRemote}, run: runRemoteSetup},
}

func remoteFlags(fs *pflag.FlagSet) {
	fs.Bool("fsck-objects", false, "also set fetch.fsckObjects=true, so that git fetch refuses objects git fsck would refuse (asked on a terminal)")
	fs.Bool("undo", false, "remove what setup added")
}

func runRemoteSetup(c *cmdCtx, args []string) error {
	r, err := c.openRepo()
	if err != nil {
		return err
	}
	rem, err := r.ResolveRemote(optArg(args))
	if err != nil {
		return err
	}
	if c.boolFlag("undo") {
		if c.boolFlag("fsck-objects") {
			return usagef(c.name, "--fsck-objects and --undo cannot be used together")
		}
		removed, err := r.UndoRemoteSetup(rem.Name)
		if err != nil {
			return err
		}
		if len(removed) == 0 {
			fmt.Fprintf(c.Stdout, "Remote %s has no refspecs of git hegel remote setup\n", rem.Name)
			return nil
		}
		fmt.Fprintf(c.Stdout, "Removed from remote %s:\n", rem.Name)
		printConfigLines(c, removed)
		return nil
	}
	return c.setupRemote(r, rem.Name)
}

func (c *cmdCtx) setupRemote(r *gitstore.Repo, remote string) error {
	added, err := r.SetupRemote(remote)
	if err != nil {
		return err
	}
	if len(added) == 0 {
		fmt.Fprintf(c.Stdout, "Remote %s is set up already: plain git fetch and git push carry workflow state\n", remote)
	} else {
		fmt.Fprintf(c.Stdout, "Set up remote %s: plain 'git fetch' brings workflow state into refs/hegel-remotes/%s/ (the next git hegel command merges it) and 'git push' sends it, fast-forward only. Added:\n", remote, remote)
		printConfigLines(c, added)
	}
	if err := c.offerFetchFsck(r, remote); err != nil {
		return err
	}
	if len(added) > 0 {
		fmt.Fprintf(c.Stdout, "Undo with 'git hegel remote setup --undo %s'\n", remote)
	}
	return nil
}

// offerFetchFsck offers fetch.fsckObjects=true: without it a plain git
// fetch stores whatever the remote sends, and what git-hegel then refuses
// stays in the object store (git fsck --strict fails until it is pruned).
// --fsck-objects sets it; on a terminal the user is asked; otherwise one
// hint says how.
func (c *cmdCtx) offerFetchFsck(r *gitstore.Repo, remote string) error {
	if r.FetchChecksObjects() {
		return nil
	}
	if !c.boolFlag("fsck-objects") {
		if !c.inputIsTerminal() {
			c.hintFetchFsck(r)
			return nil
		}
		ok, err := c.confirm("git fetch stores what it brings without checking it. Also set fetch.fsckObjects=true, so that git fetch refuses objects git fsck would refuse? It applies to every remote of this repository, and a fetch that brings one such object fails whole. [y/N] ", "set")
		if err != nil || !ok {
			fmt.Fprintln(c.Stdout, "fetch.fsckObjects not set; 'git hegel remote setup --fsck-objects' sets it later")
			return nil
		}
	}
	if _, err := r.EnableFetchFsck(remote); err != nil {
		return err
	}
	fmt.Fprintln(c.Stdout, "Set fetch.fsckObjects=true: git fetch now refuses objects git fsck would refuse, from every remote of this repository")
	return nil
}

// hintFetchFsck says, once per command, how to make git fetch check what
// it brings.
func (c *cmdCtx) hintFetchFsck(r *gitstore.Repo) {
	if c.fsckHinted || r.FetchChecksObjects() {
		return
	}
	c.fsckHinted = true
	fmt.Fprintln(c.Stderr, "hint: git fetch stores what it brings unchecked; 'git hegel remote setup --fsck-objects' sets fetch.fsckObjects=true, so that it refuses objects git fsck would refuse")
}

func printConfigLines(c *cmdCtx, lines []gitstore.ConfigLine) {
	for _, l := range lines {
		fmt.Fprintf(c.Stdout, "  %s %s\n", l.Key, l.Value)
	}
}

// offerSetup runs after git hegel push and sync: once per remote and
// clone, it offers to set the remote up. On a terminal it asks; otherwise
// it prints one hint and never waits for an answer.
func (c *cmdCtx) offerSetup(r *gitstore.Repo, remote string) {
	if r.SetupOffered(remote) || r.RemoteSetUp(remote) {
		return
	}
	r.MarkSetupOffered(remote)
	if !c.inputIsTerminal() {
		fmt.Fprintf(c.Stderr, "hint: 'git hegel remote setup %s' makes plain git fetch and git push carry workflow state too\n", remote)
		return
	}
	ok, err := c.confirm(fmt.Sprintf("Also carry workflow state with plain 'git fetch' and 'git push' to %s (adds refspecs to remote.%s)? [y/N] ", remote, remote), "set up")
	if err != nil || !ok {
		fmt.Fprintf(c.Stdout, "Not set up; 'git hegel remote setup %s' does it later\n", remote)
		return
	}
	if err := c.setupRemote(r, remote); err != nil {
		c.warn(err.Error())
	}
}

// mergePlainFetched merges what a plain git fetch brought into the
// tracking refs of set-up remotes, before the command runs. Nothing is
// read beyond the tracking refs and a small record when nothing arrived.
// Its output goes to stderr (stdout may be JSON); a problem is a warning:
// it never stops the command the user ran.
func (c *cmdCtx) mergePlainFetched(r *gitstore.Repo) {
	for _, name := range r.PlainFetchedRemotes() {
		rep, err := r.MergePlainFetched(name)
		var refused *gitstore.RefusedError
		if rep != nil {
			if s := rep.FetchSummary(); s != "" {
				fmt.Fprintf(c.Stderr, "From %s (git fetch): %s\n", rep.Remote, s)
			}
			for _, n := range append(append(append(rep.MergeNotes(), rep.ConflictNotes()...), rep.HeldNotes()...), rep.CheckpointNotes()...) {
				fmt.Fprintln(c.Stderr, n)
			}
			e := c.newEngine(r)
			for _, n := range append(e.DefinitionNotes(rep), e.LockConflictNotes(rep)...) {
				fmt.Fprintln(c.Stderr, n)
			}
			for _, w := range rep.Warnings {
				c.warn(w)
			}
			for _, sk := range rep.Skipped {
				c.warn(fmt.Sprintf("skipped %s from %s: %s", sk.Ref, name, sk.Reason))
			}
			if errors.As(err, &refused) {
				for _, x := range rep.Refused {
					if x.RemovedTracking != "" {
						c.warn(gitstore.RefusedLine(name, x))
						continue
					}
					c.warn(gitstore.RefusedLine(name, x) + fmt.Sprintf(" (not merged; 'git hegel fetch %s' tries again)", name))
				}
				c.hintFetchFsck(r)
				continue
			}
		}
		if err != nil {
			c.warn(fmt.Sprintf("cannot merge what git fetch brought from %s: %s", name, strings.TrimSuffix(err.Error(), ".")))
		}
	}
}
