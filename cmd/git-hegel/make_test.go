package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestMakeHelpShowsPrefix: make help prints the PREFIX install would use,
// not the variable's name.
func TestMakeHelpShowsPrefix(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make not installed")
	}
	for _, prefix := range []string{"/opt/hegel", `/opt/it's "odd" & spaced`} {
		out, err := exec.Command("make", "-s", "-C", "../..", "help", "PREFIX="+prefix).CombinedOutput()
		if err != nil {
			t.Fatalf("make help: %v\n%s", err, out)
		}
		if !strings.Contains(string(out), "(PREFIX="+prefix+")") || strings.Contains(string(out), "$(") {
			t.Errorf("PREFIX=%s: make help says\n%s", prefix, out)
		}
	}
}
