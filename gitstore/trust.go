package gitstore

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/git-hegel/git-hegel/engine"
)

// The trust record: which workflow definitions this clone trusts to run
// commands and to instruct an agent (engine/trust.go says why). It is one
// text file in the common git directory, shared by the clone's worktrees,
// and never part of anything that syncs, so no fetch can add to it:
//
//	<git common dir>/hegel/trusted
//	<blob id> <time, RFC 3339 UTC> <how: start|trust|text> <task>
//
// one line per definition trusted (start, trust), or per text of a task
// that arrived with a fetch and was reviewed (text: its blob id is that of
// the text's bytes; a text record never makes a definition trusted, nor
// the other way round), appended with a single write (lines
// are short, so concurrent commands never interleave; a line that does
// not parse is skipped). Nothing is ever removed by git-hegel: deleting
// a line by hand takes that trust back.
const trustFile = "hegel/trusted"

// TrustFile is the trust record's path, relative to the common git dir.
const TrustFile = trustFile

// Trust is engine.TrustStore on this clone's trust record.
type Trust struct{ r *Repo }

var _ engine.TrustStore = Trust{}

// Trust returns the clone's trust record.
func (r *Repo) Trust() Trust { return Trust{r} }

// TrustedDefinitions implements engine.TrustStore.
func (t Trust) TrustedDefinitions() ([]engine.TrustRecord, error) {
	b, err := readFile(t.r.common, trustFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %s", trustFile, oneLine(err.Error()))
	}
	var out []engine.TrustRecord
	for _, line := range strings.Split(string(b), "\n") {
		if rec, ok := parseTrustLine(line); ok {
			out = append(out, rec)
		}
	}
	return out, nil
}

// TrustedDefinition implements engine.TrustStore.
func (t Trust) TrustedDefinition(id string) (*engine.TrustRecord, error) {
	return t.trusted(id, false)
}

// TrustedText implements engine.TextTrustStore.
func (t Trust) TrustedText(id string) (*engine.TrustRecord, error) {
	return t.trusted(id, true)
}

// trusted returns the first record of id that is of a text (text) or of
// a definition (!text).
func (t Trust) trusted(id string, text bool) (*engine.TrustRecord, error) {
	recs, err := t.TrustedDefinitions()
	if err != nil {
		return nil, err
	}
	for i := range recs {
		if recs[i].ID == id && (recs[i].How == engine.TrustText) == text {
			return &recs[i], nil
		}
	}
	return nil, nil
}

// TrustDefinition implements engine.TrustStore.
func (t Trust) TrustDefinition(rec engine.TrustRecord) error {
	task := rec.Task
	if task == "" {
		task = noTask // a workflow file reviewed before any task ran it
	}
	line := fmt.Sprintf("%s %s %s %s\n", rec.ID, rec.At.UTC().Format(time.RFC3339), rec.How, task)
	if _, ok := parseTrustLine(strings.TrimSuffix(line, "\n")); !ok {
		return fmt.Errorf("not a trust record: %q", strings.TrimSuffix(line, "\n"))
	}
	f, err := t.r.appendCommon(trustFile)
	if err != nil {
		return fmt.Errorf("cannot write %s: %s", trustFile, oneLine(err.Error()))
	}
	_, err = io.WriteString(f, line)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("cannot write %s: %s", trustFile, oneLine(err.Error()))
	}
	return nil
}

// parseTrustLine reads one line of the record.
func parseTrustLine(line string) (engine.TrustRecord, bool) {
	f := strings.Fields(line)
	if len(f) != 4 || !isHexID(f[0]) || (f[2] != engine.TrustStart && f[2] != engine.TrustReviewed && f[2] != engine.TrustText) ||
		!(engine.ValidTaskName(f[3]) || f[3] == noTask && f[2] != engine.TrustStart) {
		return engine.TrustRecord{}, false
	}
	at, err := time.Parse(time.RFC3339, f[1])
	if err != nil {
		return engine.TrustRecord{}, false
	}
	rec := engine.TrustRecord{ID: f[0], At: at, How: f[2], Task: f[3]}
	if rec.Task == noTask {
		rec.Task = ""
	}
	return rec, true
}

// noTask stands in a record for the task of a trust given to a workflow
// file before any task ran it (git hegel trust --workflow): no task name
// is a single dash.
const noTask = "-"

func isHexID(s string) bool {
	if len(s) != 40 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// appendCommon opens name (relative to the common git dir) for
// appending, creating it and its directory with the repository's shared
// permissions.
func (r *Repo) appendCommon(name string) (io.WriteCloser, error) {
	if r.CommonDir == "" {
		if err := r.common.MkdirAll(path.Dir(name), 0o777); err != nil {
			return nil, err
		}
		return r.common.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o666)
	}
	p := filepath.Join(r.CommonDir, filepath.FromSlash(name))
	if err := r.shared.MkdirAll(filepath.Dir(p)); err != nil {
		return nil, err
	}
	return r.shared.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE)
}
