package gitstore

import (
	"errors"
	"fmt"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/engine/workflow"
)

// The user's guides, partials and optional context live beside the
// workflows in the worktree's .hegel directory (a team may commit them):
//
//	.hegel/guides/NAME.md             {{NAME}}
//	.hegel/guides/partials/name.hbs   {{> name}}
//	.hegel/guides/name.hbs            {{> name}}, when partials/ has none
//	.hegel/guides/templates/name.md   {{templates/name}}
//	.hegel/context/name.md            {{?name}}, {{context.name}}
//
// Every name is checked before it becomes a path, so no name reaches a
// file outside its directory.
const (
	guidesDir    = "guides"
	partialsDir  = "guides/partials"
	templatesDir = "guides/templates"
	contextDir   = "context"
)

var _ workflow.GuideSource = (*Sessions)(nil)

// GuidesDir is where the user's guides live, relative to the top of the
// work tree.
func (s *Sessions) GuidesDir() string { return path.Join(s.dir, guidesDir) }

// UserGuideNames implements workflow.GuideSource.
func (s *Sessions) UserGuideNames() ([]string, error) {
	return s.names(guidesDir, ".md", workflow.ValidGuideName)
}

// UserGuide implements workflow.GuideSource.
func (s *Sessions) UserGuide(name string) ([]byte, error) {
	if !workflow.ValidGuideName(name) {
		return nil, fmt.Errorf("guide %q: %w", name, engine.ErrNotFound)
	}
	return s.read(path.Join(guidesDir, name+".md"))
}

// UserPartialNames implements workflow.GuideSource.
func (s *Sessions) UserPartialNames() ([]string, error) {
	return s.names(partialsDir, ".hbs", workflow.ValidPartialName)
}

// UserPartial implements workflow.GuideSource.
func (s *Sessions) UserPartial(name string) ([]byte, error) {
	if !workflow.ValidPartialName(name) {
		return nil, fmt.Errorf("partial %q: %w", name, engine.ErrNotFound)
	}
	return s.read(path.Join(partialsDir, name+".hbs"))
}

// UserGuidePartialNames implements workflow.GuideSource.
func (s *Sessions) UserGuidePartialNames() ([]string, error) {
	return s.names(guidesDir, ".hbs", workflow.ValidPartialName)
}

// UserGuidePartial implements workflow.GuideSource.
func (s *Sessions) UserGuidePartial(name string) ([]byte, error) {
	if !workflow.ValidPartialName(name) {
		return nil, fmt.Errorf("partial %q: %w", name, engine.ErrNotFound)
	}
	return s.read(path.Join(guidesDir, name+".hbs"))
}

// UserTemplateNames implements workflow.GuideSource.
func (s *Sessions) UserTemplateNames() ([]string, error) {
	return s.names(templatesDir, ".md", workflow.ValidTemplateName)
}

// UserTemplate implements workflow.GuideSource.
func (s *Sessions) UserTemplate(name string) ([]byte, error) {
	if !workflow.ValidTemplateName(name) {
		return nil, fmt.Errorf("template %q: %w", name, engine.ErrNotFound)
	}
	return s.read(path.Join(templatesDir, name+".md"))
}

// Optional implements workflow.GuideSource.
func (s *Sessions) Optional(name string) ([]byte, error) {
	if !validContextName(name) {
		return nil, fmt.Errorf("context %q: %w", name, engine.ErrNotFound)
	}
	return s.read(path.Join(contextDir, name+".md"))
}

// validContextName reports whether name can name a context file: no
// separator, no leading dot.
func validContextName(name string) bool {
	return !strings.ContainsAny(name, "/\\") && !strings.HasPrefix(name, ".")
}

func (s *Sessions) read(rel string) ([]byte, error) {
	p := path.Join(s.dir, rel)
	b, err := readFile(s.r.worktree, p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", p, engine.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %s", p, oneLine(err.Error()))
	}
	if s.vet != nil {
		b = s.vet(p, b)
	}
	return b, nil
}

// WithVet returns the guides as a prompt reads them: every file read
// passes through vet with its path (engine.CommittedText).
func (s *Sessions) WithVet(vet func(path string, b []byte) []byte) *Sessions {
	c := *s
	c.vet = vet
	return &c
}

var _ engine.GuideFiles = (*Sessions)(nil)

// GuideFiles implements engine.GuideFiles: every guide, partial, template
// and context file, as it is on disk.
func (s *Sessions) GuideFiles() (map[string][]byte, error) {
	out := map[string][]byte{}
	raw := *s
	raw.vet = nil
	for _, kind := range []struct {
		dir, ext string
		valid    func(string) bool
	}{
		{guidesDir, ".md", workflow.ValidGuideName},
		{partialsDir, ".hbs", workflow.ValidPartialName},
		{guidesDir, ".hbs", workflow.ValidPartialName},
		{templatesDir, ".md", workflow.ValidTemplateName},
		{contextDir, ".md", validContextName},
	} {
		names, err := raw.names(kind.dir, kind.ext, kind.valid)
		if err != nil {
			return nil, err
		}
		for _, n := range names {
			rel := path.Join(kind.dir, n+kind.ext)
			b, err := raw.read(rel)
			if err != nil {
				return nil, err
			}
			out[path.Join(s.dir, rel)] = b
		}
	}
	return out, nil
}

func (s *Sessions) names(dir, ext string, valid func(string) bool) ([]string, error) {
	infos, err := s.r.worktree.ReadDir(path.Join(s.dir, dir))
	if err != nil {
		return nil, nil // no directory: none
	}
	var out []string
	for _, fi := range infos {
		if n, ok := strings.CutSuffix(fi.Name(), ext); ok && !fi.IsDir() && valid(n) {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out, nil
}
