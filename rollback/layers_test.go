package rollback

import (
	"go/build"
	"slices"
	"strings"
	"testing"
)

// rollback is the worktree mechanism and knows nothing of workflows: it
// imports gitstore's layers and never engine or its sub-packages
// (docs/architecture.md). A new import that breaks this fails here.
func TestImportsNoEngine(t *testing.T) {
	const mod = "github.com/git-hegel/git-hegel/"
	ok := []string{"gitstore", "gitstore/objects", "gitstore/refs", "gitstore/gitdir"}
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range append(append([]string(nil), pkg.Imports...), pkg.TestImports...) {
		own, found := strings.CutPrefix(imp, mod)
		if found && !slices.Contains(ok, own) {
			t.Errorf("rollback imports %s; it may import only %v of this module", own, ok)
		}
	}
}
