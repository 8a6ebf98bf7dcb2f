package engine

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/git-hegel/git-hegel/engine/workflow"
)

func TestBadName(t *testing.T) {
	if !errors.Is(CheckTaskName("a b"), ErrBadName) || CheckTaskName("ok-1") != nil {
		t.Error("CheckTaskName")
	}
	plain := errors.New("x")
	if err := BadName(plain); !errors.Is(err, ErrBadName) || err.Error() != "x" {
		t.Errorf("BadName = %v", err)
	}
	if BadName(nil) != nil {
		t.Error("BadName(nil) != nil")
	}
	if _, err := ParseStashSelector("stash@{x}"); !errors.Is(err, ErrBadName) {
		t.Errorf("a malformed stash selector: %v", err)
	}
	if err := fmt.Errorf("wrapped: %w", ErrBadName); !errors.Is(err, ErrBadName) {
		t.Error("wrapping")
	}
}

// TestBadNamesFromCommands: the names a command line gives that cannot be
// right whatever the state are bad names; a well-formed name that does
// not exist is not.
func TestBadNamesFromCommands(t *testing.T) {
	te := newTestEngine(t, nil)
	for what, err := range map[string]error{
		"unknown workflow": func() error { _, err := te.Start("nope", "", ""); return err }(),
		"unknown node":     func() error { _, err := te.Start("discovery", "nowhere", ""); return err }(),
		"bad task name":    func() error { _, err := te.Start("discovery", "", "bad/name"); return err }(),
		"bad switch name":  func() error { _, err := te.Switch("a..b"); return err }(),
	} {
		if !errors.Is(err, ErrBadName) {
			t.Errorf("%s: %v is not a bad name", what, err)
		}
	}
	if _, err := te.Switch("no-such-task"); err == nil || errors.Is(err, ErrBadName) {
		t.Errorf("a missing task is not a bad name: %v", err)
	}
}

func TestWorkflowFileNamesQuoted(t *testing.T) {
	r, _ := workflow.NewRegistry(map[string][]byte{".hegel/workflows/a\nb.yaml": []byte("nodes: {}\n")})
	b := r.Broken()
	if len(b) != 1 {
		t.Fatalf("broken = %v", b)
	}
	if err := b[0].Err; strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), `".hegel/workflows/a\nb.yaml":1: `) {
		t.Errorf("error = %q", err)
	}
}
