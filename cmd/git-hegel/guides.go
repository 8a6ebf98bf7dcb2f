package main

import (
	"fmt"
	"strings"

	"github.com/git-hegel/git-hegel/engine/text"
	"github.com/git-hegel/git-hegel/engine/workflow"
)

// `git hegel guides [NAME]`: list the guides prompts can include with
// {{NAME}}, or print one as a prompt would include it.
func runGuides(c *cmdCtx, args []string) error {
	if err := c.wantArgs(args, 0, 1); err != nil {
		return err
	}
	r, err := c.openRepo()
	if err != nil {
		return err
	}
	s := r.Sessions()
	guides, err := workflow.Guides(s, s.GuidesDir())
	if err != nil {
		return err
	}
	if len(args) == 1 {
		name := args[0]
		for _, g := range guides {
			if g.Name == name {
				if c.boolFlag("json") {
					return writeJSON(c.Stdout, guideJSON{Schema: c.jsonSchema(), Name: g.Name, Source: g.Source, Title: g.Title, Overrides: g.Overrides, Text: g.Text})
				}
				body := g.Text
				if c.Terminal != nil && c.Terminal(c.Stdout) {
					// A guide in .hegel/guides came with the clone: on a
					// terminal its control characters are shown, not
					// obeyed (piped, it is the file's bytes).
					body = text.Visible(body)
				}
				fmt.Fprint(c.Stdout, body)
				if !strings.HasSuffix(body, "\n") {
					fmt.Fprintln(c.Stdout)
				}
				return nil
			}
		}
		if !workflow.ValidGuideName(name) && workflow.ValidGuideName(strings.ToUpper(name)) {
			return fmt.Errorf("No guide '%s'; guide names are upper case: git hegel guides %s", name, strings.ToUpper(name))
		}
		return fmt.Errorf("No guide '%s'. Run 'git hegel guides' to list them", name)
	}
	if c.boolFlag("json") {
		out := guidesJSON{Schema: c.jsonSchema(), Guides: []guideJSON{}}
		for _, g := range guides {
			out.Guides = append(out.Guides, guideJSON{Name: g.Name, Source: g.Source, Title: g.Title, Overrides: g.Overrides})
		}
		return writeJSON(c.Stdout, out)
	}
	width := 0
	for _, g := range guides {
		width = max(width, len(g.Name))
	}
	for _, g := range guides {
		src := ""
		if g.Source != "built-in" {
			src = "  (" + g.Source + ")"
		}
		// The title is the file's first line: a label, printed without
		// the control characters a terminal would act on.
		fmt.Fprintf(c.Stdout, "%-*s  %s%s\n", width, g.Name, text.Clean(g.Title), src)
	}
	return nil
}
