package workflow

import (
	"crypto/sha1"
	"encoding/hex"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// blobID is git hash-object of data.
func blobID(data []byte) string {
	h := sha1.New()
	h.Write([]byte("blob " + strconv.Itoa(len(data)) + "\x00"))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// TestFormerBuiltinsListed checks builtin_former.txt against this
// repository's history: every version a built-in workflow ever had is
// either a built-in today or listed there, so a task started from it
// before an upgrade is still trusted; and every line there names a
// version of that built-in, so nothing else is trusted as one. It skips
// where there is no history to read (no git, an exported tree, a shallow
// clone).
func TestFormerBuiltinsListed(t *testing.T) {
	git := func(args ...string) (string, bool) {
		out, err := exec.Command("git", args...).Output()
		return strings.TrimSpace(string(out)), err == nil
	}
	top, ok := git("rev-parse", "--show-toplevel")
	if !ok {
		t.Skip("not in a git checkout: no history of the built-ins to check")
	}
	if shallow, _ := git("-C", top, "rev-parse", "--is-shallow-repository"); shallow != "false" {
		t.Skip("a shallow clone: the built-ins' earlier versions are not all here")
	}
	// Each change to a built-in names the blob before and after it; -m
	// covers versions a merge wrote.
	raw, ok := git("-C", top, "log", "-m", "--format=", "--raw", "--no-abbrev", "HEAD", "--", "engine/builtin", "engine/workflow/builtin")
	if !ok {
		t.Fatal("git log of the built-ins failed")
	}
	known := FormerBuiltinIDs()
	for _, raw := range BuiltinSources() {
		known[blobID(raw)] = "today's"
	}
	missing := map[string]string{}
	shipped := map[string]bool{} // "<id> <name>" of every version in the history
	for _, line := range strings.Split(raw, "\n") {
		meta, path, ok := strings.Cut(line, "\t")
		if !ok || !strings.HasSuffix(path, ".yaml") {
			continue
		}
		f := strings.Fields(meta)
		if len(f) < 4 {
			continue
		}
		for _, id := range f[2:4] {
			if strings.Trim(id, "0") == "" {
				continue
			}
			shipped[id+" "+strings.TrimSuffix(path[strings.LastIndex(path, "/")+1:], ".yaml")] = true
			if _, ok := known[id]; !ok {
				missing[id] = path
			}
		}
	}
	for id, path := range missing {
		t.Errorf("%s: version %s is neither a built-in nor in builtin_former.txt", path, id)
	}
	// The other way round: a line is trusted as a built-in everywhere,
	// so one that names no version a built-in had (a definition slipped
	// into the list) must not pass unseen.
	for id, name := range FormerBuiltinIDs() {
		if !shipped[id+" "+name] {
			t.Errorf("builtin_former.txt: %s %s is not a version of the built-in %s in this repository's history", id, name, name)
		}
	}
	if len(known) < len(BuiltinSources())+1 {
		t.Errorf("builtin_former.txt lists nothing: %d ids known", len(known))
	}
}

// A line of the list that does not parse would trust nothing.
func TestFormerBuiltinIDsParse(t *testing.T) {
	ids := FormerBuiltinIDs()
	if len(ids) == 0 {
		t.Fatal("no former built-in ids")
	}
	for id, name := range ids {
		if len(id) != 40 || strings.Trim(id, "0123456789abcdef") != "" || name == "" {
			t.Errorf("line %q %q: want a blob id and a name", id, name)
		}
	}
}

// TestBuiltinsCheckedOutAsCommitted checks that git never converts the
// built-in workflows' line ends on checkout (core.autocrlf is on by
// default on Windows): the binary embeds the files of the checkout, and
// a built-in is trusted by the blob id of its bytes, so a build from a
// converted checkout would trust neither its own earlier versions
// (builtin_former.txt lists the committed bytes) nor a teammate's tasks.
func TestBuiltinsCheckedOutAsCommitted(t *testing.T) {
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skip("not in a git checkout")
	}
	dir := strings.TrimSpace(string(top))
	for _, p := range []string{"engine/workflow/builtin/minimal.yaml", "engine/workflow/builtin_meta/standard.yaml"} {
		out, err := exec.Command("git", "-C", dir, "check-attr", "text", "--", p).Output()
		if err != nil {
			t.Fatalf("git check-attr: %v", err)
		}
		if got := strings.TrimSpace(string(out)); got != p+": text: unset" {
			t.Errorf("%s: want no line-end conversion on checkout (-text in .gitattributes), git says %q", p, got)
		}
	}
}
