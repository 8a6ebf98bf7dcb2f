package workflow

import (
	"slices"
)

// fakeGuides is a GuideSource of fixed user files.
type fakeGuides struct {
	guides, partials, optional map[string]string
	guidePartials, templates   map[string]string
}

func (f *fakeGuides) get(m map[string]string, name string) ([]byte, error) {
	if v, ok := m[name]; ok {
		return []byte(v), nil
	}
	return nil, ErrNotFound
}

func (f *fakeGuides) UserGuideNames() ([]string, error) { return sortedKeys(f.guides), nil }

func (f *fakeGuides) UserGuide(n string) ([]byte, error) { return f.get(f.guides, n) }

func (f *fakeGuides) UserPartialNames() ([]string, error) { return sortedKeys(f.partials), nil }

func (f *fakeGuides) UserPartial(n string) ([]byte, error) { return f.get(f.partials, n) }

func (f *fakeGuides) UserGuidePartialNames() ([]string, error) {
	return sortedKeys(f.guidePartials), nil
}

func (f *fakeGuides) UserGuidePartial(n string) ([]byte, error) { return f.get(f.guidePartials, n) }

func (f *fakeGuides) UserTemplateNames() ([]string, error) { return sortedKeys(f.templates), nil }

func (f *fakeGuides) UserTemplate(n string) ([]byte, error) { return f.get(f.templates, n) }

func (f *fakeGuides) Optional(n string) ([]byte, error) { return f.get(f.optional, n) }

func sortedKeys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
