// Command git-hegel drives stage-gated development workflows and keeps their
// state in the repository under refs/hegel/*. git runs it as `git hegel`.
//
// This package parses arguments, prints, and maps errors to exit codes; the
// engine decides and gitstore touches git.
package main

import "os"

func main() {
	catchBrokenPipes()
	env := systemEnv()
	code := run(os.Args[1:], env)
	if env.pipe.broken.Load() {
		// Standard output was closed under a command that finished its
		// work (pipe.go): end as git does, quietly.
		dieOfBrokenPipe()
	}
	os.Exit(code)
}
