package rollback

import "syscall"

// systemName is uname -s, which git puts in the untracked cache's ident.
func systemName() string {
	var u syscall.Utsname
	if syscall.Uname(&u) != nil {
		return ""
	}
	b := make([]byte, 0, len(u.Sysname))
	for _, c := range u.Sysname {
		if c == 0 {
			break
		}
		b = append(b, byte(c))
	}
	return string(b)
}
