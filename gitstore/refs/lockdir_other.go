//go:build !unix

package refs

import "errors"

// lockDir is not available here: dead locks are then never removed.
func lockDir(string) (func(), error) { return nil, errors.New("no directory locks on this system") }

func pidState(int) procState { return procUnknown }
