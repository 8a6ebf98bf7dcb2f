package gitstore

import (
	"go/build"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The layers of gitstore import one way (docs/architecture.md): the
// stores here, then refs, then objects, then gitdir; none imports a
// package above it, and engine only for the storage contract's sentinel
// errors. A new import that breaks the order fails here, not in review.
func TestLayersImportOneWay(t *testing.T) {
	const mod = "github.com/git-hegel/git-hegel/"
	allowed := map[string][]string{
		"gitdir":             nil,
		"objects":            {"gitstore/gitdir", "engine"},
		"refs":               {"gitstore/objects", "gitstore/gitdir", "engine"},
		"refs/refstest":      {"gitstore/refs", "engine"},
		"storetest":          {"engine"},
		"../engine/memstore": {"engine"},
	}
	for dir, ok := range allowed {
		pkg, err := build.ImportDir(filepath.FromSlash(dir), 0)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		for _, imp := range pkg.Imports {
			own, found := strings.CutPrefix(imp, mod)
			if found && !slices.Contains(ok, own) {
				t.Errorf("%s imports %s; it may import only %v of this module", dir, own, ok)
			}
		}
	}
}
