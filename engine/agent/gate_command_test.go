package agent

import "testing"

func TestGateCommand(t *testing.T) {
	for cmd, want := range map[string]string{
		"git hegel approve":                          "approve",
		"git hegel approve -y":                       "approve",
		"git -C .. -c color.ui=never hegel answer x": "answer",
		"make && git hegel reject -m no":             "reject",
		"make;git-hegel trust t -y":                  "trust",
		"/usr/local/bin/git-hegel approve":           "approve",
		"(cd sub && /usr/bin/git hegel trust -y)":    "trust",
		"git hegel approve -h":                       "",
		"git hegel trust --list":                     "",
		"git hegel trust t --dry-run":                "",
		"git hegel status":                           "",
		"git hegel next":                             "",
		"grep -rn approve docs/":                     "",
		"echo 'hegel approve'":                       "",
		"git approve":                                "",
		"":                                           "",
	} {
		if got := GateCommand(cmd); got != want {
			t.Errorf("GateCommand(%q) = %q, want %q", cmd, got, want)
		}
	}
}
