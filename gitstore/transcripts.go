package gitstore

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"

	"github.com/git-hegel/git-hegel/engine/agent"
)

// Agents write their token usage to a transcript file, not into hook
// payloads. When the agent stops, the hook reads what the transcript
// gained since the last stop: the offsets live in hegel-transcripts.json
// in the worktree's git dir (deleting it only makes the next stop read a
// transcript from its start).
const transcriptsFile = "hegel-transcripts.json"

// maxTranscriptRead bounds one read, so a huge transcript never makes an
// agent wait: a longer gap is skipped, losing only its token counts.
const maxTranscriptRead = 16 << 20

type transcriptMark struct {
	Offset int64  `json:"offset"`
	LastID string `json:"last_id,omitempty"`
}

// TranscriptUsage returns the token usage the transcript at path gained
// since the last call, and records how far it has been read.
func (r *Repo) TranscriptUsage(agentName, path string) (agent.Usage, error) {
	var u agent.Usage
	if path == "" || !filepath.IsAbs(path) {
		return u, nil
	}
	marksPath := filepath.Join(r.GitDir, transcriptsFile)
	marks := map[string]transcriptMark{}
	if b, err := os.ReadFile(marksPath); err == nil {
		_ = json.Unmarshal(b, &marks) // a damaged file starts over
	}
	f, err := os.Open(path)
	if err != nil {
		return u, nil // no transcript (yet): nothing to count
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return u, nil
	}
	m := marks[path]
	if m.Offset > fi.Size() {
		m = transcriptMark{} // a new transcript at the same path
	}
	if fi.Size()-m.Offset > maxTranscriptRead {
		m.Offset = fi.Size() - maxTranscriptRead
	}
	buf := make([]byte, fi.Size()-m.Offset)
	n, err := f.ReadAt(buf, m.Offset)
	if err != nil && err != io.EOF {
		return u, nil
	}
	buf = buf[:n]
	end := bytes.LastIndexByte(buf, '\n')
	if end < 0 {
		return u, nil // no complete line yet
	}
	u, m.LastID = agent.TranscriptUsage(agentName, buf[:end+1], m.LastID)
	m.Offset += int64(end + 1)
	marks[path] = m
	if len(marks) > 200 {
		marks = map[string]transcriptMark{path: m} // forget old sessions
	}
	b, err := json.Marshal(marks)
	if err != nil {
		return u, nil
	}
	_ = r.shared.WriteFile(marksPath, b, false)
	return u, nil
}
