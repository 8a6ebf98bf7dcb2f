package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/git-hegel/git-hegel/gitstore/gitdir"
)

// Colour follows git (color.c). This file holds the one decision whether
// output is coloured; palette.go holds the colours.
//
// The first of these that is set wins: --color[=<when>] / --no-color on
// the command line, then color.hegel, then color.ui. "always" colours,
// "never" does not, "auto" (also the default, and what true means in the
// configuration) colours only output that goes to a terminal, and then
// only when NO_COLOR is empty and TERM is set and not "dumb". NO_COLOR
// (no-color.org) thus only turns "auto" off: an explicit "always" in the
// configuration or on the command line still colours, as that convention
// asks.

// colorMode is git's colorbool.
type colorMode int

const (
	colorUnset colorMode = iota
	colorNever
	colorAlways
	colorAuto
)

// colorSettings is what the command line and the configuration said.
type colorSettings struct {
	flag    colorMode // --color / --no-color
	config  colorMode // color.hegel, else color.ui
	loaded  bool      // the configuration has been read
	palette map[string]string
}

// parseColorConfig reads color.ui or color.hegel as git_config_colorbool
// does: never, always, auto (any case), else a boolean where true means
// auto. Anything else is refused, as git refuses it.
func parseColorConfig(key, v string) (colorMode, error) {
	switch strings.ToLower(v) {
	case "never":
		return colorNever, nil
	case "always":
		return colorAlways, nil
	case "auto":
		return colorAuto, nil
	}
	b, ok := gitdir.ParseBool(v)
	if !ok {
		return colorUnset, &gitdir.UnsupportedError{Reason: fmt.Sprintf("bad boolean config value '%s' for '%s'", v, key)}
	}
	if b {
		return colorAuto, nil
	}
	return colorNever, nil
}

// useConfig reads the colour and path-quoting settings from cfg. Commands
// that open the repository call it through openRepo; a bad value is
// fatal, as in git.
func (e *Env) useConfig(cfg *gitdir.Config) error {
	e.color.loaded = true
	e.color.config = colorUnset
	for _, key := range []string{"hegel", "ui"} {
		if v, ok := cfg.Get("color", "", key); ok {
			m, err := parseColorConfig("color."+key, v)
			if err != nil {
				return err
			}
			e.color.config = m
			break
		}
	}
	p, err := paletteFromConfig(cfg)
	if err != nil {
		return err
	}
	e.color.palette = p
	full, err := cfg.StrictBool("core", "quotepath", true)
	if err != nil {
		return err
	}
	e.rawNonASCII = !full
	return nil
}

// colour reports whether output written to w is coloured.
func (e *Env) colour(w io.Writer) bool {
	if !e.color.loaded && e.color.flag == colorUnset {
		// Outside a repository: the user's own configuration still
		// counts. A broken file is reported by the commands that need
		// it; here it only means the default.
		if cfg, err := gitdir.UserConfig(e.getenv); err == nil {
			_ = e.useConfig(cfg)
		}
		e.color.loaded = true
	}
	mode := e.color.flag
	if mode == colorUnset {
		mode = e.color.config
	}
	switch mode {
	case colorNever:
		return false
	case colorAlways:
		return true
	}
	if e.getenv("NO_COLOR") != "" {
		return false
	}
	if t := e.getenv("TERM"); t == "" || t == "dumb" {
		return false
	}
	return e.Terminal != nil && e.Terminal(w)
}

// colorFlag is --color[=<when>]: always, never or auto, spelt exactly (git
// refuses "Always" here while it accepts it in the configuration). Given
// without a value it means always, as in git.
type colorFlag struct{ mode *colorMode }

func (f colorFlag) String() string { return "" }
func (f colorFlag) Type() string   { return "when" }
func (f colorFlag) Set(s string) error {
	switch s {
	case "always":
		*f.mode = colorAlways
	case "never":
		*f.mode = colorNever
	case "auto":
		*f.mode = colorAuto
	default:
		return errColorValue
	}
	return nil
}

var errColorValue = fmt.Errorf(`expects "always", "auto", or "never"`)

// noColorFlag is --no-color: --color=never. Sharing one variable with
// colorFlag makes the last of the two on the command line win.
type noColorFlag struct{ mode *colorMode }

func (f noColorFlag) String() string   { return "false" }
func (f noColorFlag) Type() string     { return "bool" }
func (f noColorFlag) IsBoolFlag() bool { return true }
func (f noColorFlag) Set(s string) error {
	if b, ok := gitdir.ParseBool(s); ok && b {
		*f.mode = colorNever
	}
	return nil
}

// commonFlags are the options every command takes. They are left out of
// each command's -h (the usage and the manual name them once) but are
// parsed and completed like the command's own.
func (e *Env) commonFlags(fs *pflag.FlagSet) {
	fs.Var(colorFlag{&e.color.flag}, "color", "colour the output: always, never or auto (default: color.hegel, color.ui, else auto)")
	fs.Lookup("color").NoOptDefVal = "always"
	fs.Var(noColorFlag{&e.color.flag}, "no-color", "do not colour the output (--color=never)")
	fs.Lookup("no-color").NoOptDefVal = "true"
	completeValues(fs, "color", kindWhen)
	for _, name := range []string{"color", "no-color"} {
		_ = fs.MarkHidden(name)
	}
}

// isCommonFlag reports whether a flag is one of commonFlags.
func isCommonFlag(name string) bool { return name == "color" || name == "no-color" }

// isCommonOption reports whether a command-line word is one of them.
func isCommonOption(arg string) bool {
	name, _, _ := strings.Cut(strings.TrimPrefix(arg, "--"), "=")
	return strings.HasPrefix(arg, "--") && isCommonFlag(name)
}
