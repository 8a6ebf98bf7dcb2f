package engine

import (
	"fmt"
	"sort"
)

// The guides, partials, templates and optional context a prompt includes
// are files of the worktree (.hegel/guides, .hegel/context). A team may
// commit them, so in a clone they are whoever wrote the commit's words,
// and one named after a built-in guide takes its place in a built-in
// workflow's prompt. Like a committed workflow file (trust.go), such a
// file reaches the agent only once this machine trusts its bytes: until
// then the prompt carries a one-line notice in its place. A file written
// or changed here is the user's own and is included as it is. Trusting
// goes through git hegel trust, which lists these files beside the task's
// fetched texts and records their blob ids as it records texts.

// GuideFiles lists the worktree's guide, partial, template and context
// files, by path from the top of the worktree.
type GuideFiles interface {
	GuideFiles() (map[string][]byte, error)
}

// originCommit is FetchedText.Remote for a file a commit brought.
const originCommit = "a commit"

// CommittedText is b, the file at path (from the top of the worktree)
// that a prompt includes, as the agent may read it: when it is exactly
// as a commit brought it and this machine does not trust its bytes, a
// one-line notice.
func (e *Engine) CommittedText(path string, b []byte) []byte {
	if e.Committed == nil || e.Trust == nil || !e.Committed(path, b) || e.textTrusted(string(b)) {
		return b
	}
	return []byte(fmt.Sprintf("(%s came with a commit and is not shown to the agent until this machine trusts it: review it with 'git hegel trust'.)", path))
}

// untrustedGuides lists the worktree's prompt files that CommittedText
// withholds, by path.
func (e *Engine) untrustedGuides() ([]FetchedText, error) {
	gf, ok := e.Guides.(GuideFiles)
	if !ok || e.Committed == nil || e.Trust == nil {
		return nil, nil
	}
	files, err := gf.GuideFiles()
	if err != nil {
		return nil, err
	}
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var out []FetchedText
	for _, p := range paths {
		b := files[p]
		if e.Committed(p, b) && !e.textTrusted(string(b)) {
			out = append(out, FetchedText{Field: p, Remote: originCommit, Text: string(b), ID: DefinitionID(b)})
		}
	}
	return out, nil
}
