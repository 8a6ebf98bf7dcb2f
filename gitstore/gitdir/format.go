package gitdir

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// knownExtensions are repository extensions that change nothing git-hegel
// reads or writes.
var knownExtensions = map[string]bool{
	"noop": true, "noop-v1": true, "worktreeconfig": true,
	"partialclone": true, "preciousobjects": true,
}

// CheckFormat refuses repositories whose objects, refs or index git-hegel
// would misread or corrupt, naming the setting and how to change it.
func CheckFormat(cfg *Config, l *Layout) error {
	if v, _ := cfg.Get("core", "", "repositoryformatversion"); strings.TrimSpace(v) != "" && v != "0" && v != "1" {
		return &UnsupportedError{fmt.Sprintf("unsupported repository format version %s", v)}
	}
	for _, l := range cfg.layers {
		if !l.HasSection("extensions") {
			continue
		}
		for _, o := range l.Section("extensions").Options {
			key, val := strings.ToLower(o.Key), strings.ToLower(strings.TrimSpace(o.Value))
			switch {
			case key == "objectformat" && val == "sha256":
				return &UnsupportedError{"sha256 repositories are not supported: go-git reads only sha1 object names"}
			case key == "objectformat" && (val == "sha1" || val == ""):
			case key == "refstorage" && val == "reftable":
				return &UnsupportedError{"reftable repositories are not supported: git-hegel needs the files ref backend (extensions.refStorage=files)"}
			case key == "refstorage" && (val == "files" || val == ""):
			case !knownExtensions[key]:
				return &UnsupportedError{fmt.Sprintf("unsupported repository extension '%s'", o.Key)}
			}
		}
	}
	if cfg.Bool("core", "splitindex", false) || hasSharedIndex(l.GitDir) {
		return &UnsupportedError{"split index is not supported: run 'git config core.splitIndex false && git update-index --no-split-index'"}
	}
	if cfg.Bool("index", "sparse", false) {
		return &UnsupportedError{"sparse index is not supported: run 'git sparse-checkout init --no-sparse-index'"}
	}
	if cfg.Bool("index", "skiphash", false) || indexSkipsHash(l.IndexFile) {
		return &UnsupportedError{"index.skipHash is not supported: run 'git config index.skipHash false && git update-index --force-write-index'"}
	}
	return nil
}

func hasSharedIndex(gitDir string) bool {
	m, _ := filepath.Glob(filepath.Join(gitDir, "sharedindex.*"))
	return len(m) > 0
}

// indexSkipsHash reads only the index's 20-byte trailer: git writes zeros
// there when index.skipHash is on (possibly set by feature.manyFiles).
func indexSkipsHash(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() < 12+20 {
		return false
	}
	var tail [20]byte
	if _, err := f.ReadAt(tail[:], fi.Size()-20); err != nil && err != io.EOF {
		return false
	}
	return tail == [20]byte{}
}
