package web

import (
	"bytes"
	"net/http/httptest"
	"strings"
	"testing"
)

// The server's log line for a refused request names its path, which any
// web page in the browser can choose (an image pointing at the port needs
// no token): an escape sequence or a line break in it must reach the
// terminal written out, as one line.
func TestLogLinesAreInert(t *testing.T) {
	var log bytes.Buffer
	s, err := New(Options{Addr: "127.0.0.1:8765", Token: strings.Repeat("ab", 32), Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	for _, host := range []string{"127.0.0.1:8765", "evil.example:8765"} {
		req := httptest.NewRequest("GET", "/%1b%5d52;c;ZWNobyBoaQ==%07%9b2J%0d%0agit%20hegel%20web:%20forged%ff", nil)
		req.Host = host
		s.ServeHTTP(httptest.NewRecorder(), req)
	}
	out := log.String()
	log.Reset()
	s.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/"+strings.Repeat("x", 100<<10), nil))
	if n := log.Len(); n > 1000 {
		t.Errorf("a refused request with a 100 KiB path wrote a %d-byte line", n)
	}
	if strings.Count(out, "\n") != 2 || strings.ContainsAny(out, "\x1b\x07\r\u009b") || strings.Contains(out, "\ngit hegel web: forged") || !strings.Contains(out, `\x1b]52;c;`) || !strings.Contains(out, `\xff`) {
		t.Errorf("log:\n%q", out)
	}
}
