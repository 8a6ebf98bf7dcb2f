package main

import (
	"fmt"
	"io"
	"strings"

	hegeltext "github.com/git-hegel/git-hegel/engine/text"
)

// unifiedDiff writes the difference between two texts as `diff -u` does,
// with three lines of context: what `hooks install --dry-run` shows.
func unifiedDiff(w io.Writer, oldName, newName, a, b string) {
	styledDiff(w, oldName, newName, a, b, nil)
}

// styledDiff is unifiedDiff passing each line it prints (without its
// newline) through style, with the line's kind (' ', '-', '+') and its
// 1-based number in a and in b (0 where it has none): `git hegel trust`
// highlights the lines that run commands. nil style prints them as they
// are.
func styledDiff(w io.Writer, oldName, newName, a, b string, style func(kind byte, aLine, bLine int, line string) string) {
	x, y := splitKeep(a), splitKeep(b)
	ops := lineOps(x, y)
	if len(ops) == 0 {
		return
	}
	fmt.Fprintf(w, "--- %s\n+++ %s\n", oldName, newName)
	const ctx = 3
	// Group changes whose context overlaps into hunks.
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		start := max(i-ctx, 0)
		end := i
		for j := i; j < len(ops); j++ {
			if ops[j].kind != ' ' {
				end = j
			} else if j-end > 2*ctx {
				break
			}
		}
		stop := min(end+ctx+1, len(ops))
		aStart, bStart, aLen, bLen := ops[start].ai, ops[start].bi, 0, 0
		for _, o := range ops[start:stop] {
			if o.kind != '+' {
				aLen++
			}
			if o.kind != '-' {
				bLen++
			}
		}
		fmt.Fprintf(w, "@@ -%s +%s @@\n", hunkRange(aStart, aLen), hunkRange(bStart, bLen))
		for _, o := range ops[start:stop] {
			text, nl := strings.CutSuffix(o.text, "\n")
			// The text may be a fetched definition under review: a
			// carriage return or an escape sequence in it is written out,
			// so it cannot draw over the lines around it.
			line := string(o.kind) + hegeltext.Visible(text)
			if style != nil {
				aLine, bLine := 0, 0
				if o.kind != '+' {
					aLine = o.ai + 1
				}
				if o.kind != '-' {
					bLine = o.bi + 1
				}
				line = style(o.kind, aLine, bLine, line)
			}
			fmt.Fprintln(w, line)
			if !nl {
				fmt.Fprintln(w, "\\ No newline at end of file")
			}
		}
		i = stop
	}
}

func hunkRange(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	if n == 1 {
		return fmt.Sprint(start + 1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

type lineOp struct {
	kind   byte // ' ', '-', '+'
	text   string
	ai, bi int // 0-based positions in a and b before this line
}

// lineOps is a longest-common-subsequence diff of two line lists; the
// settings files it compares are small.
func lineOps(a, b []string) []lineOp {
	n, m := len(a), len(b)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var ops []lineOp
	changed := false
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			ops = append(ops, lineOp{' ', a[i], i, j})
			i, j = i+1, j+1
		case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
			ops = append(ops, lineOp{'+', b[j], i, j})
			j++
			changed = true
		default:
			ops = append(ops, lineOp{'-', a[i], i, j})
			i++
			changed = true
		}
	}
	if !changed {
		return nil
	}
	return ops
}

// splitKeep splits text into lines, each keeping its newline.
func splitKeep(s string) []string {
	out := strings.SplitAfter(s, "\n")
	if len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}
