package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/engine/workflow"
	"github.com/git-hegel/git-hegel/gitstore/gitdir"
)

// With hegel.prompt=brief the prompts that commands print leave the
// guides out: each {{GUIDE}} becomes one line saying where the text is.
// An agent that moves through many nodes reads 40-70 lines per move
// otherwise, most of them guides it has seen; 'git hegel repeat' prints
// the prompt in full whenever it wants them. What 'git hegel run' sends
// to an adapter is never shortened.

// Prompt settings (git config hegel.prompt).
const (
	promptFull  = "full"
	promptBrief = "brief"
)

// fullPromptCommands print (or send) the prompt in full whatever
// hegel.prompt says.
var fullPromptCommands = []string{"repeat", "run", "web", "hook"}

// promptSetting reads hegel.prompt; an unknown value is warned about and
// read as full.
func (c *cmdCtx) promptSetting(cfg *gitdir.Config) string {
	v, _ := cfg.Get("hegel", "", "prompt")
	if p, ok := parsePrompt(v); ok {
		return p
	}
	c.warn(fmt.Sprintf("hegel.prompt is '%s', which is neither full nor brief; the prompt is shown in full", v))
	return promptFull
}

// parsePrompt reads a value of hegel.prompt ("" is full).
func parsePrompt(v string) (string, bool) {
	switch strings.ToLower(v) {
	case "", promptFull:
		return promptFull, true
	case promptBrief:
		return promptBrief, true
	}
	return "", false
}

// briefGuides is a guide source whose guides are one line each.
type briefGuides struct{ workflow.GuideSource }

// GuideFiles lists the files behind the guides, for git hegel trust
// (engine.GuideFiles).
func (g briefGuides) GuideFiles() (map[string][]byte, error) {
	if gf, ok := g.GuideSource.(engine.GuideFiles); ok {
		return gf.GuideFiles()
	}
	return nil, nil
}

func (g briefGuides) UserGuide(name string) ([]byte, error) {
	if _, err := g.GuideSource.UserGuide(name); err != nil {
		// A guide that does not exist stays an error.
		if _, builtin := workflow.BuiltinGuide(name); !errors.Is(err, workflow.ErrNotFound) || !builtin {
			return nil, err
		}
	}
	return []byte(fmt.Sprintf("(The guide %s is left out here: 'git hegel repeat' prints this prompt with it.)", name)), nil
}
