package refs

import (
	"os"
	"strconv"
	"strings"
)

// hostID is the host name and the machine id: two machines sharing a
// repository over a network filesystem rarely share both.
func hostID() string {
	h, _ := os.Hostname()
	for _, p := range []string{"/etc/machine-id", "/var/lib/dbus/machine-id"} {
		if b, err := os.ReadFile(p); err == nil {
			if id := strings.TrimSpace(string(b)); id != "" {
				return h + "/" + id
			}
		}
	}
	return h
}

// bootID changes at every boot (containers share their host's).
func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// pidNamespace identifies the pid namespace: pids are only comparable
// within one (a container has its own).
func pidNamespace() string {
	l, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return ""
	}
	l = strings.TrimPrefix(l, "pid:[")
	return strings.TrimSuffix(l, "]")
}

// processStart is a process's start time in clock ticks since boot
// (field 22 of /proc/<pid>/stat), 0 if unknown.
func processStart(pid int) uint64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	return statStart(b)
}

func statStart(b []byte) uint64 {
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	// Fields after the command: state is field 3, starttime field 22.
	if len(f) < 20 {
		return 0
	}
	n, _ := strconv.ParseUint(f[19], 10, 64)
	return n
}

type procState int

const (
	procUnknown procState = iota
	procRuns
	procGone
)

// processState says whether the process pid, started at start (0:
// unknown), runs in this pid namespace.
func processState(pid int, start uint64) procState {
	if pid <= 0 {
		return procUnknown
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		// No /proc, or one mounted with hidepid (another user's processes
		// are invisible there): ask the kernel, which answers EPERM for a
		// process that exists but is not ours.
		return pidState(pid)
	}
	if start != 0 {
		if got := statStart(b); got != 0 && got != start {
			return procGone // the pid was reused by another process
		}
	}
	return procRuns
}
