package gitstore

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
)

// ConfigOrigins asks git where each value of key comes from (git config
// --show-scope --show-origin): value to "the local file <path>" or "the
// command line", the last setting of a value winning. Empty when git
// cannot say (no git, no repository on disk): the origin only helps the
// reader find the line.
func (r *Repo) ConfigOrigins(key string) map[string]string {
	out := map[string]string{}
	if r.GitDir == "" {
		return out
	}
	cmd := exec.Command("git", "--git-dir", r.GitDir, "config", "--show-scope", "--show-origin", "--get-all", "-z", key)
	cmd.Env = cleanGitEnv(os.Environ())
	b, err := cmd.Output()
	if err != nil {
		return out
	}
	// -z: scope NUL origin NUL value NUL, for each value.
	f := bytes.Split(b, []byte{0})
	for i := 0; i+2 < len(f); i += 3 {
		out[string(f[i+2])] = describeOrigin(string(f[i]), string(f[i+1]))
	}
	return out
}

// describeOrigin says where git's scope and origin put a value: "the
// local file /repo/.git/config", "the command line".
func describeOrigin(scope, origin string) string {
	if p, ok := strings.CutPrefix(origin, "file:"); ok {
		return strings.TrimSpace("the "+scope+" file") + " " + p
	}
	if origin == "command line:" {
		return "the command line"
	}
	return strings.TrimSuffix(origin, ":")
}
