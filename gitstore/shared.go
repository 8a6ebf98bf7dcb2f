package gitstore

import (
	"os"
	"strconv"
	"strings"
)

// Files git-hegel creates in the git directory honour core.sharedRepository
// as git's own files do, so a repository shared by a group stays writable
// by the group. (A helper for this is being added to gitstore for every
// file in the git dir; this one covers the agent journal and its caches
// until then.)

// sharedPerm returns the mode git would give a new file under the
// configured core.sharedRepository, and whether it must be set explicitly
// (the umask would otherwise strip group bits).
func sharedPerm(cfg *Config) (os.FileMode, bool) {
	v, ok := cfg.Get("core", "", "sharedrepository")
	if !ok {
		return 0o644, false
	}
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "false", "umask", "0", "no", "off":
		return 0o644, false
	case "group", "true", "1", "yes", "on":
		return 0o664, true
	case "all", "world", "everybody", "2":
		return 0o664, true
	}
	if n, err := strconv.ParseUint(v, 8, 32); err == nil {
		// An octal mode: git uses it for files without the execute bits.
		return os.FileMode(n) & 0o666, true
	}
	return 0o644, false
}

// createShared creates (or opens) name with flags, applying the shared mode.
func createShared(name string, flags int, mode os.FileMode, set bool) (*os.File, error) {
	f, err := os.OpenFile(name, flags|os.O_CREATE, mode)
	if err != nil {
		return nil, err
	}
	if set {
		_ = f.Chmod(mode) // best effort: a filesystem without modes still works
	}
	return f, nil
}
