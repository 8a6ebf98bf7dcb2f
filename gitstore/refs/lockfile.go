package refs

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/git-hegel/git-hegel/gitstore/objects"
)

// Lock files git-hegel creates (ref locks, packed-refs.lock, HEAD.lock,
// rollback's index.lock, the session lock) hold a marker naming their
// owner, so that a lock left by a git-hegel that died can be told from a
// lock another process holds right now:
//
//	git-hegel lock pid=4242 host=build-7/5f1e… boot=8c2d… ns=4026531836 start=912345
//
// host is the host name and machine id, boot the kernel's boot id, ns the
// pid namespace (a container's), start the process's start time in clock
// ticks since boot (so a pid reused by another process is not mistaken for
// the owner). A lock is a hard link to a file holding the marker, made
// with link(2), which fails if the name exists as O_EXCL does, so a
// git-hegel lock never exists without its marker: the process's owner
// file where it can be linked (lockowner_file.go), else a temporary file
// written for that lock.
//
// Git never reads a lock file's content (a ref lock's content becomes the
// ref only when git itself renames its own lock into place), so plain git
// waits for, and reports, these locks like its own. git-hegel writes a
// ref's new value to a temporary file beside it and renames that over the
// ref, as git's packed-refs backend does with packed-refs.new, keeping the
// lock until the update is complete.

const lockMarkerPrefix = "git-hegel lock "

// legacyIndexMarker is what index.lock held before owner markers: a pid
// alone, which cannot be checked against a reboot or a container.
const legacyIndexMarker = "git-hegel pid "

// LockOwner is the process a lock's marker names.
type LockOwner struct {
	PID   int
	Host  string // host name and machine id
	Boot  string // boot id ("" where the system has none)
	NS    string // pid namespace ("" outside Linux)
	Start uint64 // start time in clock ticks since boot (0: unknown)
}

// LockState says whether a lock's owner still runs.
type LockState int

const (
	// LockUnknown: no git-hegel marker, or an owner on another host, in
	// another container, or otherwise impossible to check. Never removed.
	LockUnknown LockState = iota
	// LockAlive: the owner runs (or its pid does and cannot be told apart).
	LockAlive
	// LockDead: provably dead: this host rebooted since, or no process
	// with that pid and start time runs in this pid namespace.
	LockDead
)

func (s LockState) String() string {
	switch s {
	case LockAlive:
		return "alive"
	case LockDead:
		return "dead"
	}
	return "unknown"
}

// ThisOwner is this process, as its lock markers name it.
func ThisOwner() LockOwner { return thisOwner() }

var thisOwner = sync.OnceValue(func() LockOwner {
	return LockOwner{PID: os.Getpid(), Host: hostID(), Boot: bootID(), NS: pidNamespace(), Start: processStart(os.Getpid())}
})

// Marker is the content of a lock file o creates.
func (o LockOwner) Marker() []byte {
	var b strings.Builder
	b.WriteString(lockMarkerPrefix)
	fmt.Fprintf(&b, "pid=%d host=%s", o.PID, markerValue(o.Host))
	if o.Boot != "" {
		b.WriteString(" boot=" + markerValue(o.Boot))
	}
	if o.NS != "" {
		b.WriteString(" ns=" + markerValue(o.NS))
	}
	if o.Start != 0 {
		fmt.Fprintf(&b, " start=%d", o.Start)
	}
	b.WriteByte('\n')
	return []byte(b.String())
}

// markerValue keeps a value to one token.
func markerValue(s string) string {
	if s == "" {
		return "-"
	}
	return strings.Map(func(r rune) rune {
		if r <= ' ' || r == '=' || r == 0x7f {
			return '_'
		}
		return r
	}, s)
}

// ParseMarker reads a marker; ok is false for anything else (a lock of
// git's, or of another program).
func ParseMarker(b []byte) (LockOwner, bool) {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	s := string(line)
	if rest, ok := strings.CutPrefix(s, legacyIndexMarker); ok {
		pid, err := strconv.Atoi(strings.TrimSpace(rest))
		return LockOwner{PID: pid}, err == nil && pid > 0
	}
	rest, ok := strings.CutPrefix(s, lockMarkerPrefix)
	if !ok {
		return LockOwner{}, false
	}
	var o LockOwner
	for _, f := range strings.Fields(rest) {
		k, v, _ := strings.Cut(f, "=")
		if v == "-" {
			v = ""
		}
		switch k {
		case "pid":
			o.PID, _ = strconv.Atoi(v)
		case "host":
			o.Host = v
		case "boot":
			o.Boot = v
		case "ns":
			o.NS = v
		case "start":
			o.Start, _ = strconv.ParseUint(v, 10, 64)
		}
	}
	return o, o.PID > 0
}

// State checks whether o still runs, from this process's point of view.
func (o LockOwner) State() LockState {
	me := thisOwner()
	if o.Host == "" || o.Host != me.Host {
		return LockUnknown // the legacy marker, or another machine
	}
	if o.Boot != "" && me.Boot != "" && o.Boot != me.Boot {
		return LockDead // this host has rebooted since
	}
	if o.Boot != me.Boot || o.NS != me.NS {
		return LockUnknown // another container (or a system without ids)
	}
	if o.PID == me.PID && (o.Start == 0 || o.Start == me.Start) {
		return LockAlive
	}
	switch processState(o.PID, o.Start) {
	case procGone:
		return LockDead
	case procRuns:
		return LockAlive
	}
	return LockUnknown
}

func (o LockOwner) String() string {
	host, _, _ := strings.Cut(o.Host, "/")
	if host == "" {
		host = "an unknown host"
	}
	return fmt.Sprintf("git-hegel process %d on %s", o.PID, host)
}

// LockInfo describes one lock file.
type LockInfo struct {
	Path    string
	ModTime time.Time
	// Owner is the process its git-hegel marker names, nil for a lock with
	// no marker (git's own, or of unknown origin).
	Owner *LockOwner
	State LockState
	// Temporary is set for a file git-hegel writes beside a lock for a
	// moment (see Locks).
	Temporary bool
}

// InspectLock reads the lock file at path.
func InspectLock(path string) (LockInfo, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return LockInfo{}, err
	}
	li := LockInfo{Path: path, ModTime: fi.ModTime()}
	if !fi.Mode().IsRegular() {
		return li, nil
	}
	b, err := readHead(path, 4096)
	if err != nil {
		return LockInfo{}, err
	}
	if o, ok := ParseMarker(b); ok {
		li.Owner = &o
		li.State = o.State()
	}
	return li, nil
}

func readHead(path string, n int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, n)
	k, err := f.Read(b)
	if err != nil && k == 0 && !errors.Is(err, os.ErrClosed) {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return b[:0], nil
	}
	return b[:k], nil
}

// Describe says who holds the lock and how to remove it by hand, for an
// error message.
func (li LockInfo) Describe() string {
	var who string
	switch {
	case li.Owner == nil:
		who = "no git-hegel marker: git's lock, or another program's"
	case li.State == LockAlive:
		who = "held by " + li.Owner.String() + ", which is running"
	case li.State == LockDead:
		who = "left by " + li.Owner.String() + ", which is no longer running"
	default:
		who = "held by " + li.Owner.String() + ", which cannot be checked from here"
	}
	return fmt.Sprintf("%s exists (%s); if no other git process (git or git-hegel) is running in this repository, remove it by hand: rm '%s'", li.Path, who, li.Path)
}

// RemoveDeadLock removes the lock file at path if its marker shows that
// git-hegel created it and that its owner is dead, and reports whether it
// did. Concurrent removers of locks in the same directory serialize on
// that directory (flock), and each reads the lock again first: a lock is
// replaced only after being removed, so the one removed is the dead one,
// never a live lock taken meanwhile. Locks without a marker, or whose
// owner is alive or cannot be checked, are never removed.
func RemoveDeadLock(path string) (LockInfo, bool, error) {
	unlock, err := lockDir(filepath.Dir(path))
	if err != nil {
		return LockInfo{}, false, nil // cannot serialize: leave it
	}
	defer unlock()
	li, err := InspectLock(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return LockInfo{}, false, nil
		}
		return LockInfo{}, false, err
	}
	if li.Owner == nil || li.State != LockDead {
		return li, false, nil
	}
	if err := os.Remove(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return li, false, nil
		}
		return li, false, err
	}
	return li, true, nil
}

// RemovedMessage is the warning printed when a dead owner's lock goes.
func (li LockInfo) RemovedMessage() string {
	return fmt.Sprintf("removed %s, left by %s, which is no longer running", li.Path, li.Owner)
}

// lockTempSuffix marks the temporary file a marker is written to before it
// is linked as the lock; it ends in ".lock" so that git's ref walks skip
// it like any lock.
func lockTemp(lockPath string) string {
	base := strings.TrimSuffix(lockPath, LockSuffix)
	return base + ".hegel-" + strconv.Itoa(os.Getpid()) + "-" + objects.NewID()[:8] + LockSuffix
}

// IsTempLock matches the temporary files git-hegel writes beside a lock
// (lockTemp): "<name>.hegel-<pid>-<8 hex>.lock".
func IsTempLock(p string) bool {
	base, ok := strings.CutSuffix(filepath.Base(p), LockSuffix)
	if !ok || len(base) < 9 || base[len(base)-9] != '-' {
		return false
	}
	for _, c := range base[len(base)-8:] {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return false
		}
	}
	i := strings.LastIndex(base[:len(base)-9], ".hegel-")
	if i < 0 || i+len(".hegel-") == len(base)-9 {
		return false
	}
	for _, c := range base[i+len(".hegel-") : len(base)-9] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// TempLockPID is the pid a temporary file beside a lock names (lockTemp),
// 0 when p is no such file.
func TempLockPID(p string) int {
	if !IsTempLock(p) {
		return 0
	}
	base := strings.TrimSuffix(filepath.Base(p), LockSuffix)
	base = base[:len(base)-9]
	pid, _ := strconv.Atoi(base[strings.LastIndex(base, ".hegel-")+len(".hegel-"):])
	return pid
}

// createLock creates lockPath exclusively holding this process's marker:
// the marker goes to a temporary file that is then hard-linked to the
// lock's name (link fails if the name exists, like O_EXCL). Where hard
// links are not supported, the lock is created with O_EXCL and the marker
// written into it. An existing lock is reported as fs.ErrExist.
func createLock(lockPath string, perm objects.SharedPerm) error {
	marker := thisOwner().Marker()
	tmp := lockTemp(lockPath)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return err
	}
	_, err = f.Write(marker)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = perm.Adjust(tmp)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	err = os.Link(tmp, lockPath)
	os.Remove(tmp)
	if err == nil || errors.Is(err, fs.ErrExist) || errors.Is(err, fs.ErrNotExist) {
		return err
	}
	// No hard links here (some network and FUSE filesystems).
	f, err = os.OpenFile(lockPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return err
	}
	_, err = f.Write(marker)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = perm.Adjust(lockPath)
	}
	if err != nil {
		os.Remove(lockPath)
	}
	return err
}

// CreateLock creates lockPath as a link to the process's owner file
// (lockowner_file.go), or with a marker file of its own where that cannot
// be done.
func CreateLock(own *OwnerFile, lockPath string, perm objects.SharedPerm) error {
	if err := own.linkTo(lockPath); !errors.Is(err, errNoLink) {
		return err
	}
	return createLock(lockPath, perm)
}

// lockWait is how long a lock held by someone else is waited for before
// giving up (git's core.filesRefLockTimeout is 100 ms; git-hegel
// processes hold their locks for a few file operations each).
const lockWait = 3 * time.Second

// AcquireLock creates lockPath, waiting up to timeout with jittered
// backoff while another process holds it. A lock whose marker proves its
// owner dead is removed at once, with a warning, instead of waited for.
// The error on timeout (wrapping ErrLocked) names the lock, its owner,
// and how to remove it by hand.
func AcquireLock(lockPath string, perm objects.SharedPerm, timeout time.Duration, warn func(string), own *OwnerFile) error {
	deadline := time.Now().Add(timeout)
	backoff := lockBackoffStart
	checked := false
	for missing := 0; ; {
		err := CreateLock(own, lockPath, perm)
		if err == nil {
			return nil
		}
		switch {
		case errors.Is(err, fs.ErrExist):
			left := time.Until(deadline)
			if !checked || left <= 0 {
				checked = true
				if li, removed, _ := RemoveDeadLock(lockPath); removed {
					if warn != nil {
						warn(li.RemovedMessage())
					}
					continue
				}
			}
			if left <= 0 {
				li, ierr := InspectLock(lockPath)
				if ierr != nil {
					continue // it went away just now
				}
				return fmt.Errorf("%w: %s", ErrLocked, li.Describe())
			}
			time.Sleep(min(jitter(backoff), left))
			backoff = min(backoff*2, lockBackoffMax)
		case errors.Is(err, fs.ErrNotExist) && missing < 10:
			// A concurrent delete removed the (empty) parent directory.
			missing++
			if err := perm.MkdirAll(filepath.Dir(lockPath)); err != nil {
				return err
			}
		default:
			return err
		}
	}
}

// jitter spreads a wait over 0.75–1.25 of d, like git, so that waiters do
// not retry in lockstep.
func jitter(d time.Duration) time.Duration {
	return time.Duration(float64(d) * (0.75 + rand.Float64()/2))
}

// LockError describes the lock file at path for a command that cannot
// take it: who holds it, and how to remove it by hand.
func LockError(path string) string {
	li, err := InspectLock(path)
	if err != nil {
		return path + " exists; if no other git process (git or git-hegel) is running in this repository, remove it by hand: rm '" + path + "'"
	}
	return li.Describe()
}
