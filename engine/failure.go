package engine

import (
	"fmt"
	"strings"

	"github.com/git-hegel/git-hegel/engine/workflow"
)

// Fail records a failed attempt at the current node: the attempt number
// goes up, retries[node] counts it, and last_failure keeps the reason so
// the next attempt's prompt can say what went wrong. The attempt that
// reaches the node's max_attempts fails the task instead (recoverable):
// `next` refuses until it is resumed.
func (e *Engine) Fail(o TaskOptions, reason string) (*View, error) {
	reason = strings.TrimSpace(reason)
	st, wf, err := e.update(o, func(st *State, wf *workflow.Definition) (string, error) {
		if err := e.allowed(st, "fail"); err != nil {
			return "", err
		}
		why := reason
		if why == "" {
			why = fmt.Sprintf("attempt %d failed (no reason given)", max1(st.Attempt))
		}
		return "fail: " + e.failAttempt(st, wf, why), nil
	})
	if err != nil {
		return nil, err
	}
	return e.view(st, wf), nil
}

// failAttempt records a failed attempt at st's node: the attempt that
// reaches the node's max_attempts fails the task. It returns the history
// message after the command's name ("code attempt 1 of 3 (why)").
func (e *Engine) failAttempt(st *State, wf *workflow.Definition, why string) string {
	node := st.CurrentNode
	max := wf.Attempts(node, e.MaxAttempts)
	attempt := max1(st.Attempt)
	if st.Retries == nil {
		st.Retries = map[string]int{}
	}
	st.Retries[node]++
	st.LastFailure = why
	if attempt >= max {
		now := e.now().UTC()
		st.Status = StatusFailed
		st.Error = &TaskError{Node: node, Message: why, Timestamp: now, Recoverable: true}
		st.FailedNodes = appendOnce(st.FailedNodes, node)
		return fmt.Sprintf("%s attempt %d of %d; task failed (%s)", node, attempt, max, firstLine(why))
	}
	st.Attempt = attempt + 1
	st.countAttempt(node)
	return fmt.Sprintf("%s attempt %d of %d (%s)", node, attempt, max, firstLine(why))
}

// max1 reads a missing attempt number (a state written before attempts
// were counted) as 1.
func max1(n int) int {
	if n < 1 {
		return 1
	}
	return n
}
