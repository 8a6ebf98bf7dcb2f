package gitstore

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/git-hegel/git-hegel/gitstore/objects"
	"github.com/git-hegel/git-hegel/gitstore/refs"
)

// FormatVersion is written as the "version" blob at the root of every tree
// git-hegel stores. A reader refuses any other value rather than guess.
const FormatVersion = "1"

const versionFile = "version"

// Doc is one version of a stored document: the files of its tree (paths are
// slash-separated; "version" excluded) and the commit it was read from.
type Doc struct {
	Files  map[string][]byte
	Commit plumbing.Hash
	Tree   plumbing.Hash
}

// readDoc loads the document a ref points at. A missing ref is ErrNotFound;
// an unknown version is ErrUnknownVersion.
func (r *Repo) readDoc(ref plumbing.ReferenceName) (*Doc, error) {
	h, err := r.refs.Read(ref)
	if err != nil {
		return nil, err
	}
	return r.readDocAt(ref, h)
}

func (r *Repo) readDocAt(ref plumbing.ReferenceName, h plumbing.Hash) (*Doc, error) {
	if err := checkSize(r.storage, h, "commit "+h.String(), r.commitLimit(), "syncMaxCommitSize"); err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	c, err := object.GetCommit(r.storage, h)
	if err != nil {
		return nil, fmt.Errorf("%s points at %s, which is not a readable commit: %s", ref, h, oneLine(err.Error()))
	}
	tree, err := r.treeEntries(c.TreeHash)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot read tree %s: %s", ref, c.TreeHash, oneLine(err.Error()))
	}
	r.rememberTree(h, c.TreeHash)
	d := &Doc{Files: map[string][]byte{}, Commit: h, Tree: c.TreeHash}
	if err := r.readTreeFiles(tree, "", d.Files); err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	v, ok := d.Files[versionFile]
	if !ok {
		return nil, fmt.Errorf("%s: %w: no version blob", ref, ErrUnknownVersion)
	}
	if got := strings.TrimSpace(string(v)); got != FormatVersion {
		return nil, otherVersion(string(ref)+": ", got)
	}
	delete(d.Files, versionFile)
	return d, nil
}

func (r *Repo) readTreeFiles(t []object.TreeEntry, prefix string, out map[string][]byte) error {
	for _, e := range t {
		p := prefix + e.Name
		switch e.Mode {
		case filemode.Dir:
			sub, err := r.treeEntries(e.Hash)
			if err != nil {
				return fmt.Errorf("cannot read tree %s: %s", p, oneLine(err.Error()))
			}
			if err := r.readTreeFiles(sub, p+"/", out); err != nil {
				return err
			}
		case filemode.Regular:
			b, err := r.readBlob(e.Hash)
			if err != nil {
				return fmt.Errorf("cannot read %s: %s", p, oneLine(err.Error()))
			}
			out[p] = b
		default:
			return fmt.Errorf("unexpected entry %s (mode %s)", p, e.Mode)
		}
	}
	return nil
}

// readBlob reads a document blob, refusing one over the document limit
// before reading it.
func (r *Repo) readBlob(h plumbing.Hash) ([]byte, error) {
	if err := checkSize(r.storage, h, "blob "+h.String(), r.docLimit(), "syncMaxBlobSize"); err != nil {
		return nil, err
	}
	return r.objects.Read(plumbing.BlobObject, h)
}

// writeDoc stores files (plus the version blob) as a commit on top of
// parent and moves ref from parent to it with compare-and-swap. extra
// parents are added after the first (checkpoints use them to keep commits
// reachable). If the tree equals parent's, nothing is written and parent is
// returned: an operation that changes nothing leaves no trace.
func (r *Repo) writeDoc(ref plumbing.ReferenceName, parent plumbing.Hash, files map[string][]byte, msg string, extra ...plumbing.Hash) (plumbing.Hash, error) {
	c, _, err := r.writeDocTree(ref, parent, files, msg, extra...)
	return c, err
}

// writeDocTree is writeDoc that also returns the tree it wrote.
func (r *Repo) writeDocTree(ref plumbing.ReferenceName, parent plumbing.Hash, files map[string][]byte, msg string, extra ...plumbing.Hash) (plumbing.Hash, plumbing.Hash, error) {
	all := make(map[string][]byte, len(files)+1)
	for k, v := range files {
		all[k] = v
	}
	all[versionFile] = []byte(FormatVersion + "\n")
	tree, err := r.writeTree(all)
	if err != nil {
		return plumbing.ZeroHash, plumbing.ZeroHash, err
	}
	if !parent.IsZero() && len(extra) == 0 {
		if known, ok := r.knownTree(parent); ok {
			if known == tree {
				return parent, tree, nil
			}
		} else if pc, err := object.GetCommit(r.storage, parent); err == nil && pc.TreeHash == tree {
			return parent, tree, nil
		}
	}
	var parents []plumbing.Hash
	if !parent.IsZero() {
		parents = append(parents, parent)
	}
	parents = append(parents, extra...)
	c, err := r.writeCommit(tree, parents, msg)
	if err != nil {
		return plumbing.ZeroHash, plumbing.ZeroHash, err
	}
	if err := r.refs.UpdateMsg(ref, parent, c, refs.Reflog{Msg: msg}); err != nil {
		return plumbing.ZeroHash, plumbing.ZeroHash, err
	}
	r.rememberTree(c, tree)
	return c, tree, nil
}

func (r *Repo) writeCommit(tree plumbing.Hash, parents []plumbing.Hash, msg string) (plumbing.Hash, error) {
	sig := r.signature()
	c := &object.Commit{
		Author:       sig,
		Committer:    sig,
		Message:      strings.TrimRight(msg, "\n") + "\n",
		TreeHash:     tree,
		ParentHashes: parents,
	}
	data, err := encodeObject(c)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	h, err := r.objects.Write(plumbing.CommitObject, data)
	if err == nil {
		// The ref update that follows logs the commit's subject: keep it
		// rather than read the file just written back.
		r.objects.Remember(h, plumbing.CommitObject, data)
	}
	return h, err
}

// encodeObject returns the content of a go-git object (a commit or tag)
// as it is stored.
func encodeObject(e interface {
	Encode(plumbing.EncodedObject) error
}) ([]byte, error) {
	o := &plumbing.MemoryObject{}
	if err := e.Encode(o); err != nil {
		return nil, err
	}
	rd, err := o.Reader()
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	return io.ReadAll(rd)
}

func (r *Repo) signature() object.Signature {
	name, email := r.getenv("GIT_COMMITTER_NAME"), r.getenv("GIT_COMMITTER_EMAIL")
	if name == "" {
		name, _ = r.cfg.Get("user", "", "name")
	}
	if email == "" {
		email, _ = r.cfg.Get("user", "", "email")
	}
	// fsck --strict refuses names and emails holding angle brackets or
	// newlines; fall back to a fixed identity rather than write a bad one.
	if name == "" || strings.ContainsAny(name, "<>\n") {
		name = "git-hegel"
	}
	if email == "" || strings.ContainsAny(email, "<>\n ") {
		email = "git-hegel@localhost"
	}
	return object.Signature{Name: name, Email: email, When: r.Now().Truncate(1e9)}
}

// writeBlob stores data and returns its hash.
func (r *Repo) writeBlob(data []byte) (plumbing.Hash, error) {
	return r.objects.Write(plumbing.BlobObject, data)
}

// writeTree stores a nested tree of regular files for slash-separated paths.
func (r *Repo) writeTree(files map[string][]byte) (plumbing.Hash, error) {
	leaves := make(map[string]leaf, len(files))
	blobs := make([]objects.Object, 0, len(files))
	for p, data := range files {
		h := objects.HashObject(plumbing.BlobObject, data)
		blobs = append(blobs, objects.Object{Type: plumbing.BlobObject, Hash: h, Data: data})
		leaves[p] = leaf{mode: filemode.Regular, hash: h}
	}
	if err := r.objects.WriteAll(blobs); err != nil {
		return plumbing.ZeroHash, err
	}
	return r.writeTreeOf(leaves)
}

// leaf is one file of a tree being built: an existing object and its mode.
type leaf struct {
	mode filemode.FileMode
	hash plumbing.Hash
}

// writeTreeOf stores the nested trees for a flat map of slash-separated
// paths to existing objects and returns the root.
func (r *Repo) writeTreeOf(leaves map[string]leaf) (plumbing.Hash, error) {
	paths := make([]string, 0, len(leaves))
	for p := range leaves {
		if p == "" || strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") || strings.Contains(p, "//") {
			return plumbing.ZeroHash, fmt.Errorf("invalid path %q", p)
		}
		paths = append(paths, p)
	}
	sort.Strings(paths)
	trees := map[plumbing.Hash][]byte{}
	root, err := objects.BuildTree(len(paths), func(i int) string { return paths[i] },
		func(i int) (filemode.FileMode, plumbing.Hash) { l := leaves[paths[i]]; return l.mode, l.hash }, trees)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if err := r.objects.WriteTrees(root, func(h plumbing.Hash) ([]byte, bool) { b, ok := trees[h]; return b, ok }); err != nil {
		return plumbing.ZeroHash, err
	}
	return root, nil
}

// sortTreeEntries orders go-git tree entries as git does.
func sortTreeEntries(es []object.TreeEntry) {
	sort.SliceStable(es, func(i, j int) bool {
		return objects.CompareTreeEntries(objects.TreeEntry{Name: es[i].Name, Mode: es[i].Mode, Hash: es[i].Hash}, objects.TreeEntry{Name: es[j].Name, Mode: es[j].Mode, Hash: es[j].Hash}) < 0
	})
}
