package main

import (
	"fmt"
	"sort"
	"strings"
)

// A mistyped command gets git's answer (help.c): the commands closest to
// it by a weighted edit distance, when one is close enough.
//
//	error: 'stauts' is not a git hegel command (see 'git hegel help')
//
//	The most similar command is
//		status

// similarityFloor bounds the distance still offered: git offers a
// command when the distance plus one is at most its SIMILARITY_FLOOR, 7.
const similarityFloor = 6

// editDistance is the optimal string alignment distance with git's
// weights for a mistyped command: a swap of two neighbours costs 0, a
// substitution 2, an insertion 1, a deletion 3. A command the word starts
// (or that starts the word) counts as distance 0.
func editDistance(word, cmd string) int {
	if strings.HasPrefix(cmd, word) || strings.HasPrefix(word, cmd) {
		return 0
	}
	const swap, subst, ins, del = 0, 2, 1, 3
	a, b := []rune(word), []rune(cmd)
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i * del
	}
	for j := range d[0] {
		d[0][j] = j * ins
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			best := d[i-1][j-1]
			if a[i-1] != b[j-1] {
				best += subst
			}
			best = min(best, d[i-1][j]+del, d[i][j-1]+ins)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				best = min(best, d[i-2][j-2]+swap)
			}
			d[i][j] = best
		}
	}
	return d[len(a)][len(b)]
}

// similarCommands are the visible commands nearest to word, or none when
// the nearest is further than similarityFloor.
func similarCommands(word string) []string {
	best := similarityFloor + 1
	var out []string
	for _, c := range commands {
		if c.hidden {
			continue
		}
		switch d := editDistance(word, c.name); {
		case d < best:
			best, out = d, []string{c.name}
		case d == best:
			out = append(out, c.name)
		}
	}
	sort.Strings(out)
	return out
}

// unknownCommand is the error for a word that names no command, with the
// nearest ones when there are any.
func unknownCommand(word string) error {
	err := &usageError{msg: fmt.Sprintf("'%s' is not a git hegel command", word)}
	if near := similarCommands(word); len(near) > 0 {
		head := "The most similar command is"
		if len(near) > 1 {
			head = "The most similar commands are"
		}
		err.hint = head + "\n\t" + strings.Join(near, "\n\t")
	}
	return err
}
