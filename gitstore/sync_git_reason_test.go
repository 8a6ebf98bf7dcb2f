package gitstore

import "testing"

// git's reason for a failed fetch or push, as the one line a person reads.
func TestGitReason(t *testing.T) {
	for _, c := range []struct{ stderr, want string }{
		{"fatal: unable to connect to 127.0.0.1:\n127.0.0.1[0: 127.0.0.1]: errno=Connection refused\n\n",
			"unable to connect to 127.0.0.1: Connection refused"},
		{"fatal: unable to connect to localhost:\nlocalhost[0: ::1]: errno=Connection refused\nlocalhost[1: 127.0.0.1]: errno=Connection refused\n",
			"unable to connect to localhost: Connection refused"},
		{"fatal: the remote end hung up unexpectedly\n", "the remote end hung up unexpectedly"},
		{"fatal: '/srv/x.git' does not appear to be a git repository\nfatal: Could not read from remote repository.\n\nPlease make sure you have the correct access rights\nand the repository exists.\n",
			"'/srv/x.git' does not appear to be a git repository"},
		{"fatal: unable to look up host:\n", "unable to look up host:"},
	} {
		if got := gitReason(c.stderr); got != c.want {
			t.Errorf("gitReason(%q) = %q, want %q", c.stderr, got, c.want)
		}
	}
}
