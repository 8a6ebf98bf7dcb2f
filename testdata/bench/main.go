// Command bench times whole git-hegel commands against the git commands
// they should cost about as much as, on generated repositories of 1,000 and
// 100,000 files. It builds git-hegel from the working copy into a temporary
// directory first, so it always measures the current code.
//
//	go run ./testdata/bench            # default set, ~10 minutes
//	go run ./testdata/bench -quick     # 1k-file repositories only, few runs
//	go run ./testdata/bench -only 'status|next' -runs 51
//	go run ./testdata/bench -slow      # also the slow rows (checkpoint and rollback internals)
//
// Each row compares the median wall time of a git-hegel command with a
// baseline measured in the same rounds (A,B,A,B…), so the ratio means
// something on a noisy machine even when the absolute times do not.
// docs/benchmarks.md explains every row and its target.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"time"
)

type bench struct {
	quick   bool
	runs    int
	only    *regexp.Regexp
	slow    bool
	verbose bool
	// looseRemote leaves sync-scale's remote with the loose refs the
	// pushes wrote (as the figures before 2026-11-29 were measured).
	looseRemote bool

	root     string // module root
	work     string // temporary directory: bin/, home/, repos/
	bin      string // the git-hegel built for this run
	env      []string
	launcher *launcher

	repos map[string]string // repoSpec.key() → directory
	// basePacks holds, per repository directory, the pack files it was
	// generated with.
	basePacks map[string]map[string]bool
	features  map[string]bool // git-hegel subcommands that exist
	rows      []row
	details   []*detail
	// notes are printed after the tables (the startup scenario's init
	// trace).
	notes []string

	// against is a second git-hegel binary (-against): every round is run
	// once more with it, right after (or before) the first, and twins
	// maps each git-hegel command's statistics to the other binary's.
	against    string
	againstEnv []string
	twins      map[*stats]*stats
}

func main() {
	if len(os.Args) == 2 && os.Args[1] == launcherArg {
		runLauncher()
		return
	}
	quick := flag.Bool("quick", false, "only the 1,000-file repositories, few runs")
	runs := flag.Int("runs", 0, "timed runs per command (default 61, 7 with -quick)")
	only := flag.String("only", "", "run only scenarios whose name matches this regular expression")
	keep := flag.Bool("keep", false, "keep the work directory (generated repositories, binary)")
	workdir := flag.String("workdir", "", "work directory to use (and reuse: repositories generated there before are kept); implies -keep")
	slow := flag.Bool("slow", false, "also run the slow scenarios (marked slow in the list)")
	list := flag.Bool("list", false, "list the scenarios and exit")
	verbose := flag.Bool("v", false, "print progress")
	prebuilt := flag.String("bin", "", "time this git-hegel binary instead of building ./cmd/git-hegel")
	against := flag.String("against", "", "also time this other git-hegel binary in the same rounds (a build to compare with)")
	looseRemote := flag.Bool("loose-remote", false, "sync-scale: leave the remote's refs loose, as the pushes wrote them, instead of packed as a hosting server keeps them")
	flag.Parse()

	if *list {
		for _, s := range scenarios {
			slow := ""
			if s.slow {
				slow = " (slow: needs -slow):"
			}
			fmt.Printf("%-22s%s %s\n", s.name, slow, s.doc)
		}
		return
	}
	b := &bench{quick: *quick, runs: *runs, slow: *slow, verbose: *verbose, looseRemote: *looseRemote,
		repos: map[string]string{}, basePacks: map[string]map[string]bool{}, features: map[string]bool{},
		twins: map[*stats]*stats{}}
	if b.runs <= 0 {
		b.runs = 61
		if b.quick {
			b.runs = 7
		}
	}
	if *only != "" {
		re, err := regexp.Compile(*only)
		if err != nil {
			fatalf("-only: %v", err)
		}
		b.only = re
	}
	if err := b.setup(*workdir, *prebuilt); err != nil {
		fatalf("%v", err)
	}
	if *against != "" {
		if err := b.setupAgainst(*against); err != nil {
			fatalf("-against: %v", err)
		}
	}
	if *workdir == "" && !*keep {
		defer os.RemoveAll(b.work)
		if d := b.tmpfsDir(); d != "" {
			defer os.RemoveAll(d)
		}
	} else {
		defer fmt.Fprintf(os.Stderr, "kept %s\n", b.work)
	}
	code := b.runAll()
	b.launcher.close()
	if code != 0 {
		if *workdir == "" && !*keep {
			os.RemoveAll(b.work)
			if d := b.tmpfsDir(); d != "" {
				os.RemoveAll(d)
			}
		}
		os.Exit(code)
	}
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
	os.Exit(2)
}

func (b *bench) logf(format string, args ...any) {
	if b.verbose {
		fmt.Fprintf(os.Stderr, format+"\n", args...)
	}
}

// setup finds the module, makes the work directory and a hermetic git
// environment, and builds git-hegel.
func (b *bench) setup(workdir, prebuilt string) error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	b.root = root
	if workdir != "" {
		b.work, err = filepath.Abs(workdir)
		if err == nil {
			err = os.MkdirAll(b.work, 0o755)
		}
	} else {
		b.work, err = os.MkdirTemp("", "git-hegel-bench-")
	}
	if err != nil {
		return err
	}
	home := filepath.Join(b.work, "home")
	if err := os.MkdirAll(filepath.Join(home, ".config"), 0o755); err != nil {
		return err
	}
	gitconfig := filepath.Join(home, ".gitconfig")
	// gc.auto=0: an automatic gc in the middle of a timed run would time
	// the gc. Repositories are packed once, when generated.
	const cfg = "[user]\n\tname = Bench\n\temail = bench@example.com\n" +
		"[init]\n\tdefaultBranch = main\n" +
		"[gc]\n\tauto = 0\n[maintenance]\n\tauto = false\n" +
		"[advice]\n\tdetachedHead = false\n"
	if err := os.WriteFile(gitconfig, []byte(cfg), 0o644); err != nil {
		return err
	}
	bin := filepath.Join(b.work, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return err
	}
	b.env = []string{
		"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=" + gitconfig,
		"GIT_AUTHOR_DATE=2026-01-02T03:04:05Z",
		"GIT_COMMITTER_DATE=2026-01-02T03:04:05Z",
		"GIT_TERMINAL_PROMPT=0",
		"TZ=UTC", "LANG=C", "LC_ALL=C", "NO_COLOR=1", "TERM=dumb",
	}
	if tmp := os.Getenv("TMPDIR"); tmp != "" {
		b.env = append(b.env, "TMPDIR="+tmp)
	}
	if b.launcher, err = startLauncher(); err != nil {
		return err
	}
	b.bin = filepath.Join(bin, "git-hegel")
	t0 := time.Now()
	if prebuilt != "" {
		data, err := os.ReadFile(prebuilt)
		if err != nil {
			return err
		}
		if err := os.WriteFile(b.bin, data, 0o755); err != nil {
			return err
		}
	} else {
		build := exec.Command("go", "build", "-o", b.bin, "./cmd/git-hegel")
		build.Dir = root
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("go build ./cmd/git-hegel: %v", err)
		}
		b.logf("built %s in %v", b.bin, time.Since(t0).Round(time.Millisecond))
	}
	if err := b.buildNoop(bin); err != nil {
		fmt.Fprintf(os.Stderr, "bench: no empty-program reference row: %v\n", err)
	}
	floor := exec.Command("go", "build", "-o", filepath.Join(bin, "git-benchfloor"), "./testdata/bench/startupfloor")
	floor.Dir = root
	if out, err := floor.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "bench: no dependency-floor row: go build: %v: %s\n", err, out)
	}
	// Which of the commands being built exist in this binary?
	for _, sub := range []string{"stash", "checkpoint", "rollback", "hook", "undo", "remote", "tasks", "log", "run", "mcp"} {
		c := exec.Command(b.bin, "help", sub)
		c.Env = b.env
		b.features[sub] = c.Run() == nil
	}
	return nil
}

// setupAgainst copies the binary to compare with into its own directory,
// which its rounds put first on PATH.
func (b *bench) setupAgainst(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	dir := filepath.Join(b.work, "bin-against")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b.against = filepath.Join(dir, "git-hegel")
	if err := os.WriteFile(b.against, data, 0o755); err != nil {
		return err
	}
	b.againstEnv = []string{"PATH=" + dir + string(os.PathListSeparator) + strings.TrimPrefix(b.env[0], "PATH=")}
	return nil
}

// buildNoop builds git-benchnoop, an empty Go program, as the floor any Go
// subcommand pays (runtime start-up, and git's dispatch to it).
func (b *bench) buildNoop(bin string) error {
	src := filepath.Join(b.work, "noop")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return err
	}
	files := map[string]string{
		"go.mod":  "module benchnoop\n\ngo 1.21\n",
		"main.go": "package main\n\nimport \"os\"\n\nfunc main() { os.Stdout.WriteString(\"\") }\n",
	}
	for name, c := range files {
		if err := os.WriteFile(filepath.Join(src, name), []byte(c), 0o644); err != nil {
			return err
		}
	}
	cmd := exec.Command("go", "build", "-o", filepath.Join(bin, "git-benchnoop"), ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %v: %s", err, out)
	}
	return nil
}

// moduleRoot walks up from the working directory to git-hegel's go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && bytes.Contains(b, []byte("module github.com/git-hegel/git-hegel\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("run from inside the git-hegel module (no go.mod for github.com/git-hegel/git-hegel above the working directory)")
		}
		dir = parent
	}
}

// repo returns the directory of the repository for spec, generating it on
// first use (or reusing one generated in -workdir before).
func (b *bench) repo(spec repoSpec) (string, error) {
	key := spec.key()
	if d, ok := b.repos[key]; ok {
		return d, nil
	}
	base := filepath.Join(b.work, "repos")
	if spec.Tmpfs {
		base = b.tmpfsDir()
		if base == "" {
			return "", errors.New("no tmpfs at /dev/shm")
		}
	}
	dir := filepath.Join(base, key)
	marker := filepath.Join(base, key+".ok")
	packs, err := os.ReadFile(marker)
	if err != nil || len(packs) == 0 {
		fmt.Fprintf(os.Stderr, "generating the %s repository...\n", spec.label())
		if err := os.RemoveAll(dir); err != nil {
			return "", err
		}
		if err := b.generate(spec, dir); err != nil {
			return "", fmt.Errorf("generating %s: %w", spec.label(), err)
		}
		names, err := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "pack-*"))
		if err != nil || len(names) == 0 {
			return "", fmt.Errorf("generating %s: no pack written", spec.label())
		}
		for i := range names {
			names[i] = filepath.Base(names[i])
		}
		packs = []byte(strings.Join(names, "\n"))
		// The marker lists the generated pack's files: resetHegel removes
		// every other pack, so scenarios start from the same object store.
		if err := os.WriteFile(marker, packs, 0o644); err != nil {
			return "", err
		}
		b.settle()
	}
	b.basePacks[dir] = map[string]bool{}
	for _, n := range strings.Split(string(packs), "\n") {
		b.basePacks[dir][n] = true
	}
	b.repos[key] = dir
	return dir, nil
}

// tmpfsDir is where tmpfs repositories go ("" without /dev/shm). It is
// named after the work directory, and removed with it.
func (b *bench) tmpfsDir() string {
	if fi, err := os.Stat("/dev/shm"); err != nil || !fi.IsDir() {
		return ""
	}
	return filepath.Join("/dev/shm", filepath.Base(b.work))
}

// settle flushes dirty pages to disk before measuring: generating a
// repository leaves hundreds of MiB to write back, and every fsync a timed
// command makes would wait behind that writeback (on ext4 a journal commit
// flushes the data of every inode in the transaction).
func (b *bench) settle() {
	t0 := time.Now()
	syncDisks()
	b.logf("  sync in %v", time.Since(t0).Round(time.Millisecond))
}

// sizes are the repository sizes the size-dependent scenarios run on.
func (b *bench) sizes() []int {
	if b.quick {
		return []int{1000}
	}
	return []int{1000, 100000}
}

func (b *bench) runAll() int {
	start := time.Now()
	load0 := loadAvg()
	var skipped []string
	failed := false
	for _, s := range scenarios {
		if b.only != nil && !b.only.MatchString(s.name) {
			continue
		}
		if s.slow && !b.slow {
			skipped = append(skipped, fmt.Sprintf("%s: slow (run with -slow)", s.name))
			continue
		}
		if s.needs != "" && !b.features[s.needs] {
			skipped = append(skipped, fmt.Sprintf("%s: skipped: %s not built yet", s.name, s.needs))
			continue
		}
		fmt.Fprintf(os.Stderr, "scenario %s...\n", s.name)
		t0 := time.Now()
		b.settle()
		rows, err := s.run(b)
		if err != nil {
			fmt.Fprintf(os.Stderr, "scenario %s: ERROR: %v\n", s.name, err)
			b.rows = append(b.rows, row{scenario: s.name, repo: "-", note: "ERROR: " + firstLine(err.Error())})
			failed = true
			continue
		}
		b.logf("scenario %s took %v", s.name, time.Since(t0).Round(time.Millisecond))
		b.rows = append(b.rows, b.withTwins(rows)...)
	}
	b.print(os.Stdout, skipped)
	against := ""
	if b.against != "" {
		against = "; rows marked [against] are the -against binary's, timed in the same rounds"
	}
	fmt.Printf("\n%s; %s; %s/%s, %d CPUs; %d runs per command; total %v; load average %s at start, %s at end%s\n",
		gitVersion(b), goVersion(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), b.runs, time.Since(start).Round(time.Second), load0, loadAvg(), against)
	if failed {
		return 1
	}
	return 0
}

// loadAvg is the 1-minute load average ("?" where /proc has none): a busy
// machine explains noisy figures.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return "?"
	}
	return f[0]
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

func gitVersion(b *bench) string {
	out, err := b.output(b.work, "git", "--version")
	if err != nil {
		return "git ?"
	}
	return strings.TrimSpace(out)
}

func goVersion() string {
	out, err := exec.Command("go", "version").Output()
	if err != nil {
		return runtime.Version()
	}
	return strings.TrimSpace(string(out))
}
