package main

// The repository generator: deterministic trees of N files in a nested
// layout (about 100 files a directory), committed with real git, optionally
// made dirty the way a working session leaves a tree.

import (
	"bufio"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"
)

// repoSpec is what a generated repository is keyed by.
type repoSpec struct {
	Files int    // tracked files in the commit (besides README.md, .gitignore and the workflow)
	Seed  uint64 // content seed
	// Dirty: after the commit, modify 1% of the tracked files, add 0.5%
	// as untracked files, and fill the ignored build/ with 2,000 files.
	Dirty bool
	// Tmpfs puts the repository on /dev/shm, where fsync costs nothing:
	// diagnostic rows compare it with the same repository on disk.
	Tmpfs bool
}

const (
	filesPerDir    = 100
	ignoredFiles   = 2000
	modifiedEvery  = 100 // 1%
	untrackedEvery = 200 // 0.5%
)

func (s repoSpec) key() string {
	k := fmt.Sprintf("files%d-seed%d", s.Files, s.Seed)
	if s.Dirty {
		k += "-dirty"
	}
	if s.Tmpfs {
		k += "-tmpfs"
	}
	return k
}

// label is how tables name the repository: "1k", "100k".
func (s repoSpec) label() string {
	l := fmt.Sprint(s.Files)
	if s.Files%1000 == 0 {
		l = fmt.Sprintf("%dk", s.Files/1000)
	}
	if s.Tmpfs {
		l += " tmpfs"
	}
	return l
}

// filePath places file i: src/mNN/pNN/fNNN.ext, 100 files per leaf
// directory, 100 leaf directories per top directory.
func filePath(i int) string {
	d := i / filesPerDir
	exts := [...]string{".go", ".md", ".txt", ".json", ".c"}
	return fmt.Sprintf("src/m%02d/p%02d/f%03d%s", d/100, d%100, i%filesPerDir, exts[i%len(exts)])
}

var words = strings.Fields(`the of and to in is that for it as with was on be by this are
	from or at an not but have which one all were when we there can been has more if
	will would their so what about out up into only other new some could time these two
	may then first any like now such make over also back after use our how work well
	func return struct error string int nil var type package import range len map`)

// content returns file i's text: lines of words, 1-4 KB, a function of
// (seed, i, version) only.
func content(seed uint64, i, version int) []byte {
	rng := rand.New(rand.NewPCG(seed, uint64(i)<<8|uint64(version)))
	size := 1024 + rng.IntN(3072)
	var b strings.Builder
	b.Grow(size + 80)
	fmt.Fprintf(&b, "// file %d version %d\n", i, version)
	for b.Len() < size {
		n := 4 + rng.IntN(9)
		for w := 0; w < n; w++ {
			if w > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[rng.IntN(len(words))])
		}
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

// loopWorkflow is committed in every generated repository: a workflow whose
// only node loops on itself, so `git hegel next again` can be repeated.
const loopWorkflow = `# Benchmark workflow: node a loops on itself.
start_node: a
nodes:
  a:
    summary: Loop
    prompt: |
      Run git hegel next again to come back here.
    transitions:
      - when: again
        to: a
      - when: finish
        to: done
`

// generate builds the repository for spec in dir. git fast-import writes
// the commit straight into one pack (as a clone would have it: no loose
// objects), then git reset --hard checks it out, writing the working tree
// and the index.
func (b *bench) generate(spec repoSpec, dir string) error {
	t0 := time.Now()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if _, err := b.git(dir, "init", "-q", "-b", "main"); err != nil {
		return err
	}
	if err := b.fastImport(dir, spec); err != nil {
		return err
	}
	b.logf("  %s: fast-import of %d files in %v", spec.label(), spec.Files, time.Since(t0).Round(time.Millisecond))
	t1 := time.Now()
	if _, err := b.git(dir, "-c", "checkout.workers=0", "reset", "-q", "--hard"); err != nil {
		return err
	}
	b.logf("  %s: checkout in %v", spec.label(), time.Since(t1).Round(time.Millisecond))
	if spec.Dirty {
		t2 := time.Now()
		if err := makeDirty(dir, spec); err != nil {
			return err
		}
		b.logf("  %s: made dirty in %v", spec.label(), time.Since(t2).Round(time.Millisecond))
	}
	// Entries written in the same second as the index are "racily clean":
	// git would rehash them on every status. Let the clock move on, then
	// let git record fresh stat data.
	time.Sleep(1100 * time.Millisecond)
	if _, err := b.git(dir, "update-index", "-q", "--refresh"); err != nil && !spec.Dirty {
		return err // with modified files, --refresh exits 1 by design
	}
	b.logf("  %s: generated in %v (%s)", spec.label(), time.Since(t0).Round(time.Millisecond), dir)
	return nil
}

// fastImport commits spec's tree on main with git fast-import.
func (b *bench) fastImport(dir string, spec repoSpec) error {
	cmd := execGit(b, dir, "fast-import", "--quiet", "--done")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	w := bufio.NewWriterSize(in, 1<<20)
	file := func(path string, data []byte) {
		fmt.Fprintf(w, "M 100644 inline %s\ndata %d\n", path, len(data))
		w.Write(data)
		w.WriteByte('\n')
	}
	msg := fmt.Sprintf("Generated tree: %d files, seed %d\n", spec.Files, spec.Seed)
	const when = "1767323045 +0000" // 2026-01-02T03:04:05Z
	fmt.Fprintf(w, "commit refs/heads/main\nauthor Bench <bench@example.com> %s\ncommitter Bench <bench@example.com> %s\ndata %d\n%s",
		when, when, len(msg), msg)
	file("README.md", []byte("# Generated benchmark repository\n"))
	file(".gitignore", []byte("build/\n"))
	file(".hegel/workflows/loop.yaml", []byte(loopWorkflow))
	for i := 0; i < spec.Files; i++ {
		file(filePath(i), content(spec.Seed, i, 0))
	}
	fmt.Fprintf(w, "\ndone\n")
	werr := w.Flush()
	in.Close()
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("git fast-import: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	return werr
}

// makeDirty modifies 1% of the tracked files, adds 0.5% untracked files and
// an ignored build/ of 2,000 files.
func makeDirty(dir string, spec repoSpec) error {
	var mod []int
	for i := 42 % modifiedEvery; i < spec.Files; i += modifiedEvery {
		mod = append(mod, i)
	}
	if err := writeFiles(dir, len(mod), func(k int) (string, []byte) {
		return filePath(mod[k]), content(spec.Seed, mod[k], 1)
	}); err != nil {
		return err
	}
	nUntracked := spec.Files / untrackedEvery
	if err := writeFiles(dir, nUntracked, func(k int) (string, []byte) {
		// One new file in every other leaf directory.
		i := k * untrackedEvery
		return filepath.Join(filepath.Dir(filePath(i)), fmt.Sprintf("new%03d.txt", k%1000)), content(spec.Seed^0x5eed, k, 0)
	}); err != nil {
		return err
	}
	return writeFiles(dir, ignoredFiles, func(k int) (string, []byte) {
		return fmt.Sprintf("build/obj%02d/o%03d.o", k/filesPerDir, k%filesPerDir), content(spec.Seed^0xb1d, k, 0)
	})
}

// dirtyCounts returns how many files makeDirty modifies and adds.
func dirtyCounts(files int) (modified, untracked, ignored int) {
	for i := 42 % modifiedEvery; i < files; i += modifiedEvery {
		modified++
	}
	return modified, files / untrackedEvery, ignoredFiles
}

// writeFiles writes n files, in parallel on every core.
func writeFiles(root string, n int, file func(i int) (string, []byte)) error {
	workers := runtime.NumCPU()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += workers {
				p, c := file(i)
				if err := writeFile(filepath.Join(root, p), c); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func writeFile(p string, c []byte) error {
	err := os.WriteFile(p, c, 0o644)
	if errors.Is(err, os.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		err = os.WriteFile(p, c, 0o644)
	}
	return err
}
