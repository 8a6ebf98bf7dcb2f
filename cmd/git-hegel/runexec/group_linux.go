package runexec

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// groupAttr starts the process in a new process group, so a signal can
// reach everything it starts, and Ctrl-C at the terminal reaches only
// git-hegel, which stops the group itself. If git-hegel is killed
// outright, the kernel sends the process SIGTERM (Pdeathsig), so a step
// does not run on unwatched.
func groupAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}

// groupAlive reports whether the process group pgid has a process left
// that is not a zombie: an orphan that has exited waits for init to reap
// it, and some inits (in containers) take their time.
func groupAlive(pgid int) bool {
	if err := syscall.Kill(-pgid, 0); err == syscall.ESRCH {
		return false
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return true
	}
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:]) // state ppid pgrp ...
		if len(f) >= 3 && f[2] == strconv.Itoa(pgid) && f[0] != "Z" && f[0] != "X" {
			return true
		}
	}
	return false
}
