package rollback

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// git converts files between the repository and the working tree: line
// endings (the text and eol attributes, core.autocrlf), clean/smudge
// filters (git-lfs, git-crypt), $Id$ expansion (ident) and
// working-tree-encoding. A checkpoint stores a file that matches the index
// as the index's blob (repository form) and a modified file as the bytes
// on disk. Writing the first kind back byte for byte would leave LF where
// git writes CRLF, or an LFS pointer where the user had the content, and
// git would then call the file clean. So a restore asks git which of the
// paths it writes from the index's blob need a conversion (git
// check-attr), has git write exactly those (git checkout-index from a
// temporary index holding just them, into a temporary directory), and
// writes git's bytes into place like any other file. Everything else is
// written as stored. When no attributes exist anywhere and core.autocrlf is
// off, which is the common case, git is not run at all.

// restorePass is what the file writer needs to know about the restore
// under way: the index entry each path will have (to tell files stored in
// repository form), and which paths git converts.
type restorePass struct {
	ixTo     map[string]leaf // index entries the restore changes
	idx      *gitIndex       // the index before it
	converts map[string]bool // paths whose content git converts on checkout
	gate     bool            // attributes or core.autocrlf may apply
}

// beginPass prepares the file writer for restoring r.
func (w *workspace) beginPass(r restore) {
	p := &restorePass{ixTo: make(map[string]leaf, len(r.ix)), idx: r.idx}
	for _, c := range r.ix {
		p.ixTo[c.path] = c.to
	}
	p.gate = w.attrSeen || w.conversionConfigured()
	for _, c := range r.wt {
		if pathBase(c.path) == ".gitattributes" {
			p.gate = true
		}
	}
	w.pass = p
}

func pathBase(p string) string { return p[strings.LastIndexByte(p, '/')+1:] }

// conversionConfigured reports whether git may convert files with no
// .gitattributes file in the working tree: core.autocrlf, or attributes
// from $GIT_DIR/info/attributes, core.attributesFile or the default
// global attributes file.
func (w *workspace) conversionConfigured() bool {
	if w.memory {
		return false
	}
	c := w.r.Config()
	if v, _ := c.Get("core", "", "autocrlf"); strings.EqualFold(strings.TrimSpace(v), "true") {
		return true
	}
	files := []string{filepath.Join(w.r.CommonDir, "info", "attributes")}
	if v, _ := c.Get("core", "", "attributesfile"); strings.TrimSpace(v) != "" {
		v = strings.TrimSpace(v)
		if strings.HasPrefix(v, "~/") {
			v = filepath.Join(w.getenv("HOME"), v[2:])
		}
		files = append(files, v)
	} else {
		xdg := w.getenv("XDG_CONFIG_HOME")
		if xdg == "" && w.getenv("HOME") != "" {
			xdg = filepath.Join(w.getenv("HOME"), ".config")
		}
		if xdg != "" {
			files = append(files, filepath.Join(xdg, "git", "attributes"))
		}
	}
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil && fi.Size() > 0 {
			return true
		}
	}
	return false
}

// indexBlob returns the blob the index will hold for p after the restore.
func (p *restorePass) indexBlob(path string) (plumbing.Hash, bool) {
	if l, ok := p.ixTo[path]; ok {
		return l.hash, l.mode != 0
	}
	es := p.idx.Entries
	i := sort.Search(len(es), func(i int) bool { return es[i].Name >= path })
	for ; i < len(es) && es[i].Name == path; i++ {
		if es[i].stage() == 0 && !es[i].intentToAdd() {
			return es[i].Hash, true
		}
	}
	return plumbing.ZeroHash, false
}

// converts reports whether git converts p's content on checkout (only
// known for the paths of the restore under way).
func (w *workspace) converts(p string) bool {
	return w.pass != nil && w.pass.converts[p]
}

// conversionCandidates returns the paths of writes that git may have to
// write: regular files stored in repository form (the blob the index will
// hold for them). Nil when no attributes or core.autocrlf can apply.
func (w *workspace) conversionCandidates(writes []leaf) []string {
	p := w.pass
	if p == nil || !p.gate {
		return nil
	}
	var out []string
	for _, l := range writes {
		if l.mode != filemode.Regular && l.mode != filemode.Executable {
			continue
		}
		if h, ok := p.indexBlob(l.path); ok && h == l.hash && pathBase(l.path) != ".gitattributes" {
			out = append(out, l.path)
		}
	}
	return out
}

// attrConversions asks git which of paths it converts on checkout.
func (w *workspace) attrConversions(paths []string) (map[string]bool, error) {
	var in bytes.Buffer
	for _, p := range paths {
		in.WriteString(p)
		in.WriteByte(0)
	}
	out, err := w.runGit(&in, nil, "check-attr", "-z", "--stdin", "text", "eol", "filter", "ident", "working-tree-encoding")
	if err != nil {
		return nil, err
	}
	type attrs struct{ text, eol, filter, ident, enc string }
	got := map[string]*attrs{}
	f := strings.Split(string(out), "\x00")
	for i := 0; i+2 < len(f); i += 3 {
		a := got[f[i]]
		if a == nil {
			a = &attrs{}
			got[f[i]] = a
		}
		switch f[i+1] {
		case "text":
			a.text = f[i+2]
		case "eol":
			a.eol = f[i+2]
		case "filter":
			a.filter = f[i+2]
		case "ident":
			a.ident = f[i+2]
		case "working-tree-encoding":
			a.enc = f[i+2]
		}
	}
	c := w.r.Config()
	autocrlf, _ := c.Get("core", "", "autocrlf")
	autocrlf = strings.ToLower(strings.TrimSpace(autocrlf))
	coreEOL, _ := c.Get("core", "", "eol")
	coreEOL = strings.ToLower(strings.TrimSpace(coreEOL))
	specified := func(v string) bool { return v != "" && v != "unspecified" && v != "unset" }
	out2 := map[string]bool{}
	for p, a := range got {
		need := false
		switch {
		case specified(a.filter), a.ident == "set", specified(a.enc):
			need = true
		case a.text == "unset":
			// binary: never converted
		case a.eol == "crlf":
			need = true
		case (a.text == "set" || a.text == "auto") && (autocrlf == "true" || coreEOL == "crlf"):
			need = true
		case a.text == "unspecified" && autocrlf == "true":
			need = true
		}
		if need {
			out2[p] = true
		}
	}
	return out2, nil
}

// convertAll has git write the files in converted (as checkout would) and
// puts its bytes in place.
func (w *workspace) convertAll(converted []leaf, pc *parentsChecked, out map[string]written) error {
	if len(converted) == 0 {
		return nil
	}
	removeStaleCheckouts(w.r.GitDir, time.Now())
	tmp, err := os.MkdirTemp(w.r.GitDir, checkoutDirPrefix)
	if err != nil {
		return fmt.Errorf("cannot convert files for the working tree: %w", err)
	}
	defer os.RemoveAll(tmp)
	idx := &gitIndex{Version: 2}
	var in bytes.Buffer
	for _, l := range converted {
		idx.Entries = append(idx.Entries, idxEntry{Name: l.path, Hash: l.hash, Mode: uint32(l.mode)})
		in.WriteString(l.path)
		in.WriteByte(0)
	}
	sortEntries(idx.Entries)
	idxFile := filepath.Join(tmp, "index")
	f, err := os.Create(idxFile)
	if err == nil {
		err = encodeIndex(f, idx)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return fmt.Errorf("cannot convert files for the working tree: %w", err)
	}
	prefix := filepath.Join(tmp, "files") + string(filepath.Separator)
	if _, err := w.runGit(&in, []string{"GIT_INDEX_FILE=" + idxFile}, "checkout-index", "-f", "-q", "-z", "--stdin", "--prefix="+prefix); err != nil {
		return err
	}
	for _, l := range converted {
		data, err := os.ReadFile(prefix + filepath.FromSlash(l.path))
		if err != nil {
			return fmt.Errorf("cannot restore %s: git did not write it: %w", quotePath(l.path), err)
		}
		if err := w.checkParents(l.path, pc); err != nil {
			return err
		}
		st, err := w.writeBytes(l, data)
		if err != nil {
			return err
		}
		out[l.path] = written{leaf: l, st: st, converted: true}
	}
	return nil
}

// checkoutDirPrefix names convertAll's scratch directories in the git dir.
const checkoutDirPrefix = "hegel-checkout-"

// staleCheckoutAge is the age past which a scratch directory is one a
// killed restore left (a restore takes seconds; a younger one may be
// another process's, at work).
const staleCheckoutAge = 24 * time.Hour

// removeStaleCheckouts removes the scratch directories killed restores
// left in gitDir: copies of files git converted, which nothing reads.
func removeStaleCheckouts(gitDir string, now time.Time) {
	ents, err := os.ReadDir(gitDir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), checkoutDirPrefix) {
			continue // a link is never followed
		}
		if fi, err := e.Info(); err == nil && now.Sub(fi.ModTime()) > staleCheckoutAge {
			_ = os.RemoveAll(filepath.Join(gitDir, e.Name()))
		}
	}
}

// runGit runs git on this repository with the index git-hegel is about to
// replace hidden (GIT_INDEX_FILE, unless env sets it): attributes then
// come from the working tree as the restore leaves it.
func (w *workspace) runGit(stdin *bytes.Buffer, env []string, args ...string) ([]byte, error) {
	full := append([]string{"--git-dir", w.r.GitDir, "--work-tree", w.r.WorkTree}, args...)
	cmd := exec.Command("git", full...)
	cmd.Dir = w.r.WorkTree
	cmd.Env = os.Environ()
	hasIndex := false
	for _, kv := range env {
		hasIndex = hasIndex || strings.HasPrefix(kv, "GIT_INDEX_FILE=")
	}
	if !hasIndex {
		cmd.Env = append(cmd.Env, "GIT_INDEX_FILE="+filepath.Join(w.r.GitDir, "hegel-no-index-"+strconv.Itoa(os.Getpid())))
	}
	cmd.Env = append(cmd.Env, env...)
	if stdin != nil {
		cmd.Stdin = stdin
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		if msg == "" {
			msg = err.Error()
		}
		return nil, fmt.Errorf("git %s failed: %s", args[0], msg)
	}
	return stdout.Bytes(), nil
}

// mayConvert reports whether git may convert files between the
// repository and the working tree here (attributes or core.autocrlf).
func (w *workspace) mayConvert() bool {
	return !w.memory && (w.attrSeen || w.conversionConfigured())
}

// cleanBytes returns data, the bytes of path in the working tree, as git
// would store them (git hash-object --path: clean filters, line endings).
func (w *workspace) cleanBytes(path string, data []byte) ([]byte, error) {
	out, err := w.runGit(bytes.NewBuffer(data), nil, "hash-object", "-w", "--path="+path, "--stdin")
	if err != nil {
		return nil, err
	}
	h := strings.TrimSpace(string(out))
	if !plumbing.IsHash(h) {
		return nil, fmt.Errorf("git hash-object gave %q for %s", h, quotePath(path))
	}
	return w.runGit(nil, nil, "cat-file", "blob", h)
}

// smudgeBlob returns the stored blob h as git would write it to path in
// the working tree (git cat-file --filters: smudge filters, line endings).
func (w *workspace) smudgeBlob(path string, h plumbing.Hash) ([]byte, error) {
	return w.runGit(nil, nil, "cat-file", "--filters", "--path="+path, h.String())
}

// cleanHashes returns the blob git would store for each of paths as the
// working tree has them (git hash-object, through the clean conversions
// of their attributes). Names --stdin-paths cannot carry (it reads lines,
// and unquotes a name in double quotes) are given as arguments.
func (w *workspace) cleanHashes(paths []string) (map[string]plumbing.Hash, error) {
	res := map[string]plumbing.Hash{}
	var lines, args []string
	for _, p := range paths {
		if strings.ContainsAny(p, "\n\"\\") {
			args = append(args, p)
		} else {
			lines = append(lines, p)
		}
	}
	read := func(names []string, out []byte) {
		sc := bufio.NewScanner(bytes.NewReader(out))
		for i := 0; sc.Scan() && i < len(names); i++ {
			if plumbing.IsHash(sc.Text()) {
				res[names[i]] = plumbing.NewHash(sc.Text())
			}
		}
	}
	if len(lines) > 0 {
		var in bytes.Buffer
		for _, p := range lines {
			in.WriteString(p)
			in.WriteByte('\n')
		}
		out, err := w.runGit(&in, nil, "hash-object", "--stdin-paths")
		if err != nil {
			return nil, err
		}
		read(lines, out)
	}
	if len(args) > 0 {
		out, err := w.runGit(nil, nil, append([]string{"hash-object", "--"}, args...)...)
		if err != nil {
			return nil, err
		}
		read(args, out)
	}
	return res, nil
}

// sameAfterConversion sorts out, among the paths a replay found edited,
// those whose files hold, once git's clean conversion is applied, the blob
// of one side of the replay (a file the interrupted rollback wrote
// through git, whose bytes differ from the blob): they were not edited.
// It returns the paths as the "from" side has them (still to write), and
// those still edited.
func (w *workspace) sameAfterConversion(edited []string, wt []change) (fromSide map[string]bool, still []string) {
	if w.memory || !(w.attrSeen || w.conversionConfigured()) {
		return nil, edited
	}
	byPath := make(map[string]*change, len(wt))
	for i := range wt {
		byPath[wt[i].path] = &wt[i]
	}
	var files []string
	for _, p := range edited {
		if st, err := w.fs.lstat(p); err == nil && st.kind == kindFile {
			files = append(files, p)
		}
	}
	if len(files) == 0 {
		return nil, edited
	}
	clean, err := w.cleanHashes(files)
	if err != nil {
		return nil, edited
	}
	fromSide = map[string]bool{}
	for _, p := range edited {
		c := byPath[p]
		h, ok := clean[p]
		switch {
		case ok && c != nil && h == c.to.hash:
			// as the target has it
		case ok && c != nil && h == c.from.hash:
			fromSide[p] = true
		default:
			still = append(still, p)
		}
	}
	return fromSide, still
}

// writeBytes writes l with data instead of its blob's content, replacing
// what is there (see writeLeaf).
func (w *workspace) writeBytes(l leaf, data []byte) (fstat, error) {
	if st, err := w.fs.lstat(l.path); err == nil {
		var rerr error
		if st.kind == kindDir {
			rerr = w.removeEmptyTree(l.path)
		} else {
			rerr = w.fs.remove(l.path)
		}
		if rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			return fstat{}, fmt.Errorf("cannot restore %s: %w", quotePath(l.path), rerr)
		}
	}
	st, err := w.fs.writeFile(l.path, data, l.mode == filemode.Executable)
	if err != nil {
		return fstat{}, fmt.Errorf("cannot restore %s: %w", quotePath(l.path), err)
	}
	return st, nil
}
