package objects

import (
	"strings"
	"testing"
)

// What git 2.39's parse_fsync_components makes of core.fsync values
// (config.c): each value starts from the default, names add, "-name"
// removes, a name matches every component it is a prefix of, and "none"
// counts only as the whole rest of the value.
func TestFsyncComponentsAsGitParsesThem(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  FsyncComponent
		warn  string
	}{
		{"", fsyncDefault, ""},
		{"reference", fsyncDefault | FsyncReference, ""},
		{"none", 0, ""},
		{"none,reference", fsyncDefault | FsyncReference, "unknown core.fsync component 'none'"},
		{"reference,none", FsyncReference, ""}, // none resets the base, not what was named
		{"committed", fsyncDefault | FsyncLooseObject | FsyncReference, ""},
		{"added", fsyncAdded | fsyncDefault, ""},
		{"all", fsyncAll, ""},
		{"-pack", FsyncCommitGraph, ""}, // "pack" is a prefix of pack-metadata too
		{"pack", fsyncDefault | FsyncPack | FsyncPackMetadata, ""},
		{"ref", fsyncDefault | FsyncReference, ""},
		{"loose-object, -loose-object", fsyncDefault | FsyncLooseObject, ""},
		{"objects,index", fsyncDefault | FsyncLooseObject | FsyncIndex, ""},
		{"bogus", fsyncDefault, "unknown core.fsync component 'bogus'"},
		{"-", fsyncDefault, "invalid value for variable core.fsync"},
	} {
		d := &Durability{}
		got := d.parseComponents(tc.value)
		if got != tc.want {
			t.Errorf("core.fsync=%q: %06b, want %06b", tc.value, got, tc.want)
		}
		warned := strings.Join(d.warnings, "; ")
		if (tc.warn == "") != (warned == "") || !strings.Contains(warned, tc.warn) {
			t.Errorf("core.fsync=%q: warnings %q, want %q", tc.value, warned, tc.warn)
		}
	}
}
