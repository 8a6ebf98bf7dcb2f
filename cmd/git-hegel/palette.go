package main

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/git-hegel/git-hegel/gitstore/gitdir"
)

// The palette: every colour git-hegel prints, named by what it marks. Each
// can be changed with git's colour syntax, as color.status.<slot> changes
// git status: git config color.hegel.node "bold magenta".
var palette = map[string]string{
	"node":    "\x1b[1;36m", // the current node (status, the prompt header)
	"id":      "\x1b[33m",   // checkpoint ids, as git log shows commit names
	"added":   "\x1b[32m",   // a rollback creates this file
	"deleted": "\x1b[31m",   // a rollback deletes this file
	"hint":    "\x1b[33m",   // "hint: " advice lines, git's color.advice.hint
	"command": "\x1b[1;31m", // a definition's lines that run commands (git hegel trust)
}

// colorReset ends a coloured span, as git writes it.
const colorReset = "\x1b[m"

// paint colours s for slot when output to w is coloured (see colour.go).
func (e *Env) paint(w io.Writer, slot, s string) string {
	if s == "" || !e.colour(w) {
		return s
	}
	code, ok := e.color.palette[slot]
	if !ok {
		code = palette[slot]
	}
	if code == "" {
		return s
	}
	return code + s + colorReset
}

// hint prints advice on stderr, as git prints its "hint: " lines.
func (e *Env) hint(msg string) {
	fmt.Fprintln(e.Stderr, e.paint(e.Stderr, "hint", "hint: "+msg))
}

// paletteFromConfig reads color.hegel.<slot> overrides.
func paletteFromConfig(cfg *gitdir.Config) (map[string]string, error) {
	var out map[string]string
	for slot := range palette {
		v, ok := cfg.Get("color", "hegel", slot)
		if !ok {
			continue
		}
		code, err := parseGitColor(v)
		if err != nil {
			return nil, &gitdir.UnsupportedError{Reason: fmt.Sprintf("invalid color value: %s (in color.hegel.%s)", v, slot)}
		}
		if out == nil {
			out = map[string]string{}
		}
		out[slot] = code
		termSequences.allow(code)
	}
	return out, nil
}

// parseGitColor reads a colour the way git's color_parse does: up to two
// colours (foreground, then background: normal, default, black, red,
// green, yellow, blue, magenta, cyan, white, each also bright..., a number
// 0-255 or #rrggbb) and any attributes (bold, dim, italic, ul, blink,
// reverse, strike, each also no-... or no..., and reset), in any order. It
// returns the escape sequence ("" for nothing at all).
func parseGitColor(v string) (string, error) {
	attrs := map[string]int{"bold": 1, "dim": 2, "italic": 3, "ul": 4, "blink": 5, "reverse": 7, "strike": 9}
	off := map[string]int{"bold": 22, "dim": 22, "italic": 23, "ul": 24, "blink": 25, "reverse": 27, "strike": 29}
	var set []int // attributes, written in numeric order as git does
	var codes, colors []string
	reset := false
	for _, w := range strings.Fields(strings.ToLower(v)) {
		if w == "reset" {
			reset = true
			continue
		}
		if n, ok := attrs[w]; ok {
			set = append(set, n)
			continue
		}
		if rest, ok := strings.CutPrefix(w, "no"); ok {
			if n, ok := off[strings.TrimPrefix(rest, "-")]; ok {
				set = append(set, n)
				continue
			}
		}
		if len(colors) == 2 {
			return "", fmt.Errorf("too many colours")
		}
		c, err := colorCode(w, len(colors) == 1)
		if err != nil {
			return "", err
		}
		colors = append(colors, c)
	}
	sort.Ints(set)
	for i, n := range set {
		if i == 0 || n != set[i-1] {
			codes = append(codes, strconv.Itoa(n))
		}
	}
	for _, c := range colors {
		if c != "" {
			codes = append(codes, c)
		}
	}
	if reset {
		codes = append([]string{""}, codes...)
	}
	if len(codes) == 0 {
		return "", nil
	}
	return "\x1b[" + strings.Join(codes, ";") + "m", nil
}

// colorCode is one colour word as an SGR parameter ("" for normal).
func colorCode(w string, background bool) (string, error) {
	base := 30
	if background {
		base = 40
	}
	names := []string{"black", "red", "green", "yellow", "blue", "magenta", "cyan", "white"}
	switch w {
	case "normal":
		return "", nil
	case "default":
		return strconv.Itoa(base + 9), nil
	}
	name, bright := strings.CutPrefix(w, "bright")
	for i, n := range names {
		if n == name {
			if bright {
				return strconv.Itoa(base + 60 + i), nil
			}
			return strconv.Itoa(base + i), nil
		}
	}
	if strings.HasPrefix(w, "#") && len(w) == 7 {
		if rgb, err := strconv.ParseUint(w[1:], 16, 32); err == nil {
			return fmt.Sprintf("%d;2;%d;%d;%d", base+8, rgb>>16, rgb>>8&0xff, rgb&0xff), nil
		}
	}
	if n, err := strconv.Atoi(w); err == nil && n >= -1 && n <= 255 {
		switch {
		case n == -1:
			return "", nil
		case n < 8:
			return strconv.Itoa(base + n), nil
		case n < 16:
			return strconv.Itoa(base + 60 + n - 8), nil
		}
		return fmt.Sprintf("%d;5;%d", base+8, n), nil
	}
	return "", fmt.Errorf("unknown colour %q", w)
}
