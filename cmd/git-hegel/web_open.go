package main

import (
	"fmt"
	"html"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// redirectPage writes a small HTML page that sends the browser on to
// address, in a new directory only this user can read (0700, the file
// 0600), and returns the page's file: URL and a function that removes
// both. `git hegel web --open` hands the browser this URL rather than the
// address: every user on the machine can read a process's command line
// (/proc/<pid>/cmdline, ps), and the address holds the access token.
func redirectPage(address string) (string, func(), error) {
	dir, err := os.MkdirTemp("", "git-hegel-web-")
	if err != nil {
		return "", nil, fmt.Errorf("cannot make the page that opens the dashboard: %v", err)
	}
	remove := func() { os.RemoveAll(dir) }
	if err := os.Chmod(dir, 0o700); err != nil {
		remove()
		return "", nil, fmt.Errorf("cannot make the page that opens the dashboard: %v", err)
	}
	p := filepath.Join(dir, "open.html")
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		remove()
		return "", nil, fmt.Errorf("cannot make the page that opens the dashboard: %v", err)
	}
	a := html.EscapeString(address)
	_, err = fmt.Fprintf(f, `<!DOCTYPE html>
<html><head><meta charset="utf-8">
<meta http-equiv="refresh" content="0;url=%s">
<title>git hegel web</title></head>
<body><p>Opening the dashboard&hellip; If nothing happens, <a href="%s">follow this link</a>.</p></body></html>
`, a, a)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		remove()
		return "", nil, fmt.Errorf("cannot make the page that opens the dashboard: %v", err)
	}
	slashed := filepath.ToSlash(p)
	if !strings.HasPrefix(slashed, "/") {
		slashed = "/" + slashed // C:/… on Windows: file:///C:/…
	}
	return (&url.URL{Scheme: "file", Path: slashed}).String(), remove, nil
}
