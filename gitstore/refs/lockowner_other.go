//go:build !linux

package refs

import (
	"os"
)

func hostID() string {
	h, _ := os.Hostname()
	return h
}

// Outside Linux there is no boot id, pid namespace or start time to read
// cheaply: a lock is then dead only if no process has its pid.
func bootID() string          { return "" }
func pidNamespace() string    { return "" }
func processStart(int) uint64 { return 0 }

type procState int

const (
	procUnknown procState = iota
	procRuns
	procGone
)

func processState(pid int, start uint64) procState { return pidState(pid) }
