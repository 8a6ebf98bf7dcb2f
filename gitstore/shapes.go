package gitstore

import (
	"os"
	"path/filepath"

	"github.com/git-hegel/git-hegel/engine/workflow"
)

// Workflow shapes (workflow.Shape): what checking a task against its
// workflow needs of the definition, kept per definition text in
// <common git dir>/hegel/workflow-shapes/<sha256>.json, so `git hegel
// status` checks the current node without parsing the YAML. The key is
// the hash of the text (workflow.ShapeKey), so an entry cannot go stale; a
// damaged file is a miss and is rewritten. Deleting the directory loses
// nothing.
const shapeDir = "hegel/workflow-shapes"

var _ workflow.ShapeStore = (*Repo)(nil)

func shapePath(key string) string { return shapeDir + "/" + key + ".json" }

// validShapeKey accepts only what workflow.ShapeKey makes: 64 lower-case hex
// digits, so a key can never name another file.
func validShapeKey(key string) bool {
	if len(key) != 64 {
		return false
	}
	for _, c := range key {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// LoadShape implements workflow.ShapeStore.
func (r *Repo) LoadShape(key string) []byte {
	if !validShapeKey(key) {
		return nil
	}
	if r.CommonDir != "" {
		// Straight to the file: status pays for this read, and the
		// billy filesystem's checks of every path component (which a
		// key of hex digits does not need) cost more than the read.
		b, err := os.ReadFile(filepath.Join(r.CommonDir, filepath.FromSlash(shapePath(key))))
		if err != nil {
			return nil
		}
		return b
	}
	b, err := readFile(r.common, shapePath(key))
	if err != nil {
		return nil
	}
	return b
}

// SaveShape implements workflow.ShapeStore (best effort, no fsync: a torn
// file fails to parse and is a miss).
func (r *Repo) SaveShape(key string, data []byte) {
	if validShapeKey(key) {
		_ = r.writeCommon(shapePath(key), data, false)
	}
}
