package main

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/spf13/pflag"
)

// A command's usage lines are built from its flags, so they cannot leave
// one out or name one it does not take. The table (commands.go) gives the
// operands and the shape; the flags fill in the rest:
//
//	args "<workflow> [<node>]"        the flags not named in the form are
//	                                  appended, each in brackets
//	args "[<node> | {to} | {all}]"    {name} places a flag where it stands,
//	                                  without brackets
//	args "{...} <text>"               {...} is where the other flags go
//
// Three annotations on a flag shape how it is drawn: its value's name
// (valueName), the flags that exclude each other and share one pair of
// brackets (altFlags: [-q | --[no-]progress]), and a flag that only means
// something beside another (nestFlag: [--watch [--interval D]]).
const (
	annValue = "hegel-value"
	annAlt   = "hegel-alt"
	annNest  = "hegel-nest"
)

// valueName names a flag's value in the usage line and the options list.
func valueName(fs *pflag.FlagSet, flag, name string) {
	annotate(fs, flag, annValue, name)
}

// annotate sets a flag's annotation; the flag must be defined already (a
// mistake in the table otherwise, which every test that builds the
// command's flags then reports).
func annotate(fs *pflag.FlagSet, flag, key string, values ...string) {
	if err := fs.SetAnnotation(flag, key, values); err != nil {
		panic(err)
	}
}

// altFlags marks flags that exclude each other: they are drawn together,
// in one pair of brackets, where the first of them stands.
func altFlags(fs *pflag.FlagSet, names ...string) {
	for _, n := range names {
		annotate(fs, n, annAlt, names...)
	}
}

// nestFlag draws child inside parent's brackets: child is used with parent.
func nestFlag(fs *pflag.FlagSet, parent, child string) {
	annotate(fs, child, annNest, parent)
}

// defaultValueNames name the values of flags whose definition names none.
var defaultValueNames = map[string]string{
	"task":    "NAME",
	"message": "TEXT",
}

// flagValueName is what a flag's value is called: its annotation, else
// the `word` its help text quotes (pflag's convention), else a default
// for its name, else its name in capitals.
func flagValueName(f *pflag.Flag) string {
	if v := f.Annotations[annValue]; len(v) > 0 {
		return v[0]
	}
	if name, _ := pflag.UnquoteUsage(f); strings.Contains(f.Usage, "`") {
		return strings.ToUpper(name)
	}
	if v, ok := defaultValueNames[f.Name]; ok {
		return v
	}
	return strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
}

// isSwitch reports a flag that takes no value (a bool, or one of ours
// that acts like one).
func isSwitch(f *pflag.Flag) bool { return f.Value.Type() == "bool" }

// flagSpelling is the flag as the usage line shows it: its short name if
// it has one (as git's usage lines do), its value's name after it.
func flagSpelling(f *pflag.Flag) string {
	name := "--" + f.Name
	if f.Shorthand != "" {
		name = "-" + f.Shorthand
	}
	switch {
	case isSwitch(f):
		return name
	case f.NoOptDefVal != "":
		return "--" + f.Name + "[=" + flagValueName(f) + "]"
	}
	return name + " " + flagValueName(f)
}

// repeatable reports a flag that may be given more than once.
func repeatable(f *pflag.Flag) bool {
	t := f.Value.Type()
	return strings.HasSuffix(t, "Array") || strings.HasSuffix(t, "Slice")
}

// usageFlags are the flags a usage line may name: not the hidden common
// ones, only those that apply to sub when it is given, in the order they
// were defined with --task moved last (every task command ends the same way).
func usageFlags(fs *pflag.FlagSet, sub *subcommand) []*pflag.Flag {
	var out []*pflag.Flag
	var task *pflag.Flag
	sorted := fs.SortFlags
	fs.SortFlags = false
	fs.VisitAll(func(f *pflag.Flag) {
		switch {
		case f.Hidden || isCommonFlag(f.Name):
		case sub != nil && !contains(sub.flags, f.Name):
		case f.Name == "task":
			task = f
		default:
			out = append(out, f)
		}
	})
	fs.SortFlags = sorted
	if task != nil {
		out = append(out, task)
	}
	return out
}

// placeholder is {name} or {...} in a form.
var placeholder = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\{([a-z][a-z0-9-]*|\.\.\.)\}`) })

// renderForms turns a command's (or verb's) forms into usage text after
// "git hegel <name>": each {flag} is replaced by its spelling, and the
// other flags go where {...} stands (else at the end of the first form),
// each in brackets.
func renderForms(forms []string, fs *pflag.FlagSet, sub *subcommand) []string {
	flags := usageFlags(fs, sub)
	// The flags {...} leaves out: those its own form names, and those
	// another form is about (named there outside brackets: "{undo} ...").
	restForm := 0
	for i, form := range forms {
		if strings.Contains(form, "{...}") {
			restForm = i
		}
	}
	hasRest := strings.Contains(forms[restForm], "{...}")
	named := map[string]bool{}
	for i, form := range forms {
		for _, m := range placeholder().FindAllStringSubmatchIndex(form, -1) {
			name := form[m[2]:m[3]]
			if name != "..." && (i == restForm || m[0] == 0 || form[m[0]-1] != '[') {
				named[name] = true
			}
		}
	}
	byName := map[string]*pflag.Flag{}
	for _, f := range flags {
		byName[f.Name] = f
	}
	// The flags left for {...}: those no form names, nor nested in one
	// that a form names.
	var rest []*pflag.Flag
	for _, f := range flags {
		if named[f.Name] {
			continue
		}
		if p := f.Annotations[annNest]; len(p) > 0 && byName[p[0]] != nil {
			continue
		}
		rest = append(rest, f)
	}
	restText := bracketed(rest, flags)
	out := make([]string, len(forms))
	for i, form := range forms {
		if i == restForm && !hasRest && restText != "" {
			form = strings.TrimSpace(form + " {...}")
		}
		out[i] = placeholder().ReplaceAllStringFunc(form, func(m string) string {
			name := m[1 : len(m)-1]
			if name == "..." {
				return restText
			}
			f := byName[name]
			if f == nil {
				// A form naming a flag the command does not have is a
				// mistake in the table; TestUsageLinesNameEveryFlag
				// catches it by its braces.
				return m
			}
			return withNested(f, flags)
		})
		out[i] = strings.Join(strings.Fields(out[i]), " ")
	}
	return out
}

// withNested is f's spelling followed by the flags nested under it.
func withNested(f *pflag.Flag, all []*pflag.Flag) string {
	s := flagSpelling(f)
	for _, g := range all {
		if p := g.Annotations[annNest]; len(p) > 0 && p[0] == f.Name {
			s += " [" + withNested(g, all) + "]"
		}
	}
	return s
}

// bracketed draws flags as "[a] [b | c] [d [e]]": alternatives together,
// at the first of them.
func bracketed(flags, all []*pflag.Flag) string {
	var parts []string
	done := map[string]bool{}
	for _, f := range flags {
		if done[f.Name] {
			continue
		}
		alt := f.Annotations[annAlt]
		if len(alt) == 0 {
			done[f.Name] = true
			part := "[" + withNested(f, all) + "]"
			if repeatable(f) {
				part += "..."
			}
			parts = append(parts, part)
			continue
		}
		var members []string
		for _, g := range flags {
			if contains(alt, g.Name) && !done[g.Name] {
				done[g.Name] = true
				members = append(members, g.Name)
			}
		}
		byName := map[string]*pflag.Flag{}
		for _, g := range flags {
			byName[g.Name] = g
		}
		var spelled []string
		for _, n := range members {
			if strings.HasPrefix(n, "no-") && contains(members, n[3:]) {
				continue // drawn as --[no-]name with its positive
			}
			s := withNested(byName[n], all)
			if contains(members, "no-"+n) && isSwitch(byName[n]) {
				s = "--[no-]" + n
			}
			spelled = append(spelled, s)
		}
		parts = append(parts, "["+strings.Join(spelled, " | ")+"]")
	}
	return strings.Join(parts, " ")
}

// optionsText lists the flags under "Options:" in a command's help: both
// names, the value's name as the usage line shows it, and what it does.
// A default is added only where the text does not already give one and
// the value is not the flag's zero (pflag would print "(default -1)"
// for a flag whose real default comes from the configuration).
func optionsText(fs *pflag.FlagSet, sub *subcommand) string {
	var rows [][2]string
	width := 0
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden || (sub != nil && !contains(sub.flags, f.Name)) {
			return
		}
		left := "    "
		if f.Shorthand != "" {
			left = "-" + f.Shorthand + ", "
		}
		left += "--" + f.Name
		switch {
		case isSwitch(f):
		case f.NoOptDefVal != "":
			left += "[=" + flagValueName(f) + "]"
		default:
			left += " " + flagValueName(f)
		}
		_, usage := pflag.UnquoteUsage(f)
		if !isZeroDefault(f) && !strings.Contains(usage, "default") {
			usage += fmt.Sprintf(" (default %s)", f.DefValue)
		}
		if len(left) > width {
			width = len(left)
		}
		rows = append(rows, [2]string{left, usage})
	})
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "  %-*s   %s\n", width, r[0], r[1])
	}
	return b.String()
}

// isZeroDefault reports a flag whose default is its type's zero value.
func isZeroDefault(f *pflag.Flag) bool {
	switch f.DefValue {
	case "", "0", "false", "[]", "0s":
		return true
	}
	return false
}
