package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// initTimeCalls are calls that parse or compile something; at package
// level they run in every command's start-up, whether the command needs
// them or not. They belong behind sync.Once (or in the function that
// uses them).
var initTimeCalls = map[string]bool{
	"regexp.MustCompile": true, "regexp.Compile": true,
	"template.Must": true, "template.New": true,
	"raymond.Parse": true, "raymond.MustParse": true,
	"yaml.Unmarshal": true, "json.Unmarshal": true,
}

// TestNoParsingAtInit keeps git-hegel's own packages free of package-level
// parsing: a package-level variable initialised by one of initTimeCalls,
// or an init function calling one, fails.
func TestNoParsingAtInit(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			var scope ast.Node
			switch d := decl.(type) {
			case *ast.GenDecl:
				if d.Tok != token.VAR {
					continue
				}
				scope = d
			case *ast.FuncDecl:
				if d.Recv != nil || d.Name.Name != "init" {
					continue
				}
				scope = d
			default:
				continue
			}
			ast.Inspect(scope, func(n ast.Node) bool {
				if _, ok := n.(*ast.FuncLit); ok {
					return false // runs when called, not at init
				}
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				if sel, ok := call.Fun.(*ast.SelectorExpr); ok {
					if x, ok := sel.X.(*ast.Ident); ok && initTimeCalls[x.Name+"."+sel.Sel.Name] {
						t.Errorf("%s: %s.%s runs at start-up; parse it on first use (sync.OnceValue)",
							fset.Position(call.Pos()), x.Name, sel.Sel.Name)
					}
				}
				return true
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
