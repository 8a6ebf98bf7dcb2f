package web

import (
	"fmt"
	"html/template"
)

// parseTemplates parses the embedded page templates with the helpers they
// use. Called by New, never at package initialisation.
func parseTemplates() (*template.Template, error) {
	funcs := template.FuncMap{
		"f1":     func(v float64) string { return fmt.Sprintf("%.1f", v) },
		"center": func(x, w float64) float64 { return x + w/2 },
		"plus":   func(a, b float64) float64 { return a + b },
		"list":   func(v ...string) []string { return v },
		// The undo forms' box, named as their refusal names it.
		"forceLabel": func() string { return forceLabel },
	}
	return template.New("web").Funcs(funcs).ParseFS(templateFiles, "templates/*.html")
}
