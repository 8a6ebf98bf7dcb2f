package agent

import "testing"

func TestGateCommand(t *testing.T) {
	for cmd, want := range map[string]string{
		"git hegel approve":                           "approve",
		"git hegel approve -y":                        "approve",
		"git -C .. -c color.ui=never hegel answer x":  "answer",
		"make && git hegel reject -m no":              "reject",
		"make;git-hegel trust t -y":                   "trust",
		"/usr/local/bin/git-hegel approve":            "approve",
		"(cd sub && /usr/bin/git hegel trust -y)":     "trust",
		"git hegel lock --force src/x.go":             "lock --force",
		"cd a && git hegel unlock --task t --force x": "unlock --force",
		"git hegel lock --force=true src/x.go":        "lock --force",
		"git hegel unlock --force=1 x":                "unlock --force",
		"git hegel lock --force=false src/x.go":       "",
		"git hegel lock src/x.go":                     "",
		"git hegel lock src/x.go && git push --force": "",
		"git hegel lock --force -h":                   "",
		"git hegel approve -h":                        "",
		"git hegel trust --list":                      "",
		"git hegel trust t --dry-run":                 "",
		"git hegel status":                            "",
		"git hegel next":                              "",
		"grep -rn approve docs/":                      "",
		"echo 'hegel approve'":                        "",
		"git approve":                                 "",
		"":                                            "",
	} {
		if got := GateCommand(cmd); got != want {
			t.Errorf("GateCommand(%q) = %q, want %q", cmd, got, want)
		}
	}
}
