//go:build !unix

package main

import "os"

// syncDisks does nothing where there is no sync(2).
func syncDisks() {}

// maxRSS is 0 where the system reports no peak resident set: the report
// leaves the column empty.
func maxRSS(ps *os.ProcessState) int64 { return 0 }
