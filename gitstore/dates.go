package gitstore

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ParseDate reads a date the way git's --since and --until do
// ("2.weeks.ago", "yesterday", "last monday", "2026-01-02 10:00", RFC
// 3339…), relative to now. A day alone (2026-01-02) is that day's first
// instant, or with endOfDay its last (git would take the current time of
// day, which makes --until <day> leave out most of the day). Anything
// else goes to git itself (git config --type=expiry-date, which refuses
// what it cannot read), told the time with GIT_TEST_DATE_NOW so a fixed
// clock (GIT_HEGEL_DATE) holds for relative dates too.
func ParseDate(s string, now time.Time, endOfDay bool) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, fmt.Errorf("empty date")
	}
	if d, err := time.ParseInLocation("2006-01-02", s, time.Local); err == nil {
		if endOfDay {
			return d.AddDate(0, 0, 1).Add(-time.Nanosecond), nil
		}
		return d, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if t, ok := agoDate(s, now); ok {
		return t, nil
	}
	switch strings.ToLower(s) {
	case "now":
		return now, nil
	case "never", "all":
		return time.Time{}, fmt.Errorf("not a date: '%s'", s)
	}
	cmd := exec.Command("git", "-c", "hegel.date="+s, "config", "--type=expiry-date", "hegel.date")
	cmd.Env = append(os.Environ(), "GIT_TEST_DATE_NOW="+strconv.FormatInt(now.Unix(), 10))
	cmd.Dir = os.TempDir() // outside any repository: its config does not matter
	out, err := cmd.Output()
	if err != nil {
		return time.Time{}, fmt.Errorf("not a date git understands: '%s' (try 2.weeks.ago, yesterday or 2026-01-02)", s)
	}
	sec, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil || sec <= 0 {
		return time.Time{}, fmt.Errorf("not a date: '%s'", s)
	}
	return time.Unix(sec, 0), nil
}

// agoRe matches the relative dates whose meaning is a fixed span ("2.weeks.ago",
// "3 days ago"), read here without asking git, as git reads them.
var agoRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(\d{1,9})[. ]+(second|minute|hour|day|week)s?[. ]+ago$`)
})

func agoDate(s string, now time.Time) (time.Time, bool) {
	m := agoRe().FindStringSubmatch(strings.ToLower(s))
	if m == nil {
		return time.Time{}, false
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	unit := map[string]time.Duration{"second": time.Second, "minute": time.Minute, "hour": time.Hour,
		"day": 24 * time.Hour, "week": 7 * 24 * time.Hour}[m[2]]
	// git works in whole seconds.
	return now.Truncate(time.Second).Add(-time.Duration(n) * unit), true
}
