package gitstore

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// git hegel remote setup: refspecs in remote.<name>.fetch and .push so
// that plain `git fetch` brings the synced refs/hegel/* into the tracking
// namespace and plain `git push` sends them, fast-forward only. They come
// from syncNamespaces (those with gitRefspec: never the opt-in
// checkpoints). A namespace of one ref is written as a pattern ending in
// "*" (refs/hegel/stashes*): git fails a fetch or push whose exact source
// ref does not exist yet, but not a pattern that matches nothing. What
// arrives this way is merged by the next git-hegel command
// (MergePlainFetched), with the same checks as git hegel fetch.

// ConfigLine is one git config value.
type ConfigLine struct{ Key, Value string }

// setupRecordDir keeps, per remote, the lines setup added, so --undo
// removes exactly those.
const setupRecordDir = "hegel/remote-setup"

// gitRefspecs returns the lines setup adds for remote.
func gitRefspecs(remote string) []ConfigLine {
	var out []ConfigLine
	for _, ns := range syncNamespaces {
		if !ns.gitRefspec {
			continue
		}
		src := hegelPrefix + ns.rel + "*"
		dst := trackingRoot + remote + "/" + ns.rel + "*"
		out = append(out, ConfigLine{"remote." + remote + ".fetch", "+" + src + ":" + dst})
	}
	for _, ns := range syncNamespaces {
		if !ns.gitRefspec {
			continue
		}
		src := hegelPrefix + ns.rel + "*"
		out = append(out, ConfigLine{"remote." + remote + ".push", src + ":" + src})
	}
	return out
}

// RemoteSetUp reports whether remote has every refspec setup adds.
func (r *Repo) RemoteSetUp(remote string) bool {
	for _, l := range gitRefspecs(remote) {
		if !r.hasConfigValue(l) {
			return false
		}
	}
	return true
}

func (r *Repo) hasConfigValue(l ConfigLine) bool {
	section, rest, _ := strings.Cut(l.Key, ".")
	sub, key := "", rest // section.key (fetch.fsckObjects)
	if i := strings.LastIndex(rest, "."); i >= 0 {
		sub, key = rest[:i], rest[i+1:] // section.sub.key (remote.origin.fetch)
	}
	for _, v := range r.cfg.All(section, sub, strings.ToLower(key)) {
		if v == l.Value {
			return true
		}
	}
	return false
}

// SetupRemote adds the refspecs remote lacks and returns what it added
// (nothing when it was set up already). When the remote had no push
// refspec, it also adds "HEAD": with any remote.<name>.push set, plain
// git push pushes only those, so HEAD keeps it pushing the current branch
// (to the branch of the same name, as push.default=current does).
func (r *Repo) SetupRemote(remote string) ([]ConfigLine, error) {
	if _, err := r.ResolveRemote(remote); err != nil {
		return nil, err
	}
	var add []ConfigLine
	for _, l := range gitRefspecs(remote) {
		if !r.hasConfigValue(l) {
			add = append(add, l)
		}
	}
	if len(add) == 0 {
		return nil, nil
	}
	if len(r.cfg.All("remote", remote, "push")) == 0 {
		add = append(add, ConfigLine{"remote." + remote + ".push", "HEAD"})
	}
	// Record first: an interrupted setup can still be undone.
	record := append(r.setupRecord(remote), add...)
	if err := r.writeSetupRecord(remote, record); err != nil {
		return nil, err
	}
	for _, l := range add {
		if err := r.gitConfig("--add", l.Key, l.Value); err != nil {
			return nil, err
		}
	}
	return add, nil
}

// UndoRemoteSetup removes the lines setup added to remote: those it
// recorded, or, without a record, the refspecs it would add.
func (r *Repo) UndoRemoteSetup(remote string) ([]ConfigLine, error) {
	lines := r.setupRecord(remote)
	if len(lines) == 0 {
		lines = gitRefspecs(remote)
	}
	var removed []ConfigLine
	for _, l := range lines {
		if !r.hasConfigValue(l) {
			continue
		}
		if err := r.gitConfig("--fixed-value", "--unset-all", l.Key, l.Value); err != nil {
			return removed, err
		}
		removed = append(removed, l)
	}
	_ = r.common.Remove(setupRecordDir + "/" + remote)
	return removed, nil
}

func (r *Repo) setupRecord(remote string) []ConfigLine {
	b, err := readFile(r.common, setupRecordDir+"/"+remote)
	if err != nil {
		return nil
	}
	var out []ConfigLine
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, "\t"); ok {
			out = append(out, ConfigLine{k, v})
		}
	}
	return out
}

func (r *Repo) writeSetupRecord(remote string, lines []ConfigLine) error {
	var b bytes.Buffer
	for _, l := range lines {
		fmt.Fprintf(&b, "%s\t%s\n", l.Key, l.Value)
	}
	return r.writeCommon(setupRecordDir+"/"+remote, b.Bytes(), true)
}

// gitConfig runs git config on the repository: git writes its own
// configuration file (locking, format, includes).
func (r *Repo) gitConfig(args ...string) error {
	if r.GitDir == "" {
		return fmt.Errorf("git config %s: not on disk", strings.Join(args, " "))
	}
	cmd := exec.Command("git", append([]string{"--git-dir", r.GitDir, "config"}, args...)...)
	cmd.Env = cleanGitEnv(os.Environ())
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("git config %s failed: %s", strings.Join(args, " "), oneLine(string(out)+" "+err.Error()))
	}
	return nil
}

// SetupOffered reports whether git hegel push already offered to set up
// remote (so it offers once per remote and clone).
func (r *Repo) SetupOffered(remote string) bool {
	_, err := r.common.Stat(setupRecordDir + "/" + remote + ".offered")
	return err == nil
}

// MarkSetupOffered records that the offer was made.
func (r *Repo) MarkSetupOffered(remote string) {
	_ = r.writeCommon(setupRecordDir+"/"+remote+".offered", nil, true)
}

// FetchChecksObjects reports whether a plain git fetch checks what it
// brings as git fsck would (fetch.fsckObjects, else
// transfer.fsckObjects).
func (r *Repo) FetchChecksObjects() bool {
	if _, ok := r.cfg.Get("fetch", "", "fsckobjects"); ok {
		return r.cfg.Bool("fetch", "fsckobjects", false)
	}
	return r.cfg.Bool("transfer", "fsckobjects", false)
}

// EnableFetchFsck sets fetch.fsckObjects=true in the repository's
// configuration, recorded with remote's setup so that
// `git hegel remote setup --undo <remote>` removes it again. It reports
// false when git fetch checks objects already (nothing written).
func (r *Repo) EnableFetchFsck(remote string) (bool, error) {
	if r.FetchChecksObjects() {
		return false, nil
	}
	line := ConfigLine{"fetch.fsckObjects", "true"}
	if err := r.writeSetupRecord(remote, append(r.setupRecord(remote), line)); err != nil {
		return false, err
	}
	if err := r.gitConfig(line.Key, line.Value); err != nil {
		return false, err
	}
	return true, nil
}
