// Command startupfloor is the start-up floor of git-hegel's dependencies:
// an empty program that links, and so initialises, only what git-hegel
// must keep whatever it does about its own start-up (go-git's object and
// storage packages, go-billy, pflag, YAML). The bench times it beside
// `git-hegel version` and an empty Go program, so a start-up target can be
// set from data: what lies between this floor and git-hegel is git-hegel's
// own, what lies below it is not.
package main

import (
	"os"

	_ "github.com/go-git/go-billy/v5/osfs"
	_ "github.com/go-git/go-git/v5/plumbing/format/index"
	_ "github.com/go-git/go-git/v5/plumbing/object"
	_ "github.com/go-git/go-git/v5/storage/filesystem"
	_ "github.com/spf13/pflag"
	_ "go.yaml.in/yaml/v3"
)

func main() { os.Stdout.WriteString("") }
