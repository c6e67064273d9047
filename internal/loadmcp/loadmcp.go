// Package loadmcp makes a load run's steps of MCP requests: one tool call,
// or the steps of a collection, each worker on its connection; it
// classifies what each request came to as a load.Outcome, and counts what
// the server said besides answers. internal/load runs the steps and knows
// nothing of MCP; `mcpi bench` gives the flags and prints the report.
package loadmcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpi-dev/mcpi/internal/bounds"
	"github.com/mcpi-dev/mcpi/internal/collection"
	"github.com/mcpi-dev/mcpi/internal/load"
	"github.com/mcpi-dev/mcpi/internal/loadreport"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/record"
	"github.com/mcpi-dev/mcpi/internal/safetext"
	"github.com/mcpi-dev/mcpi/internal/session"
)

// Conn is one connection of the run, with the answers it gives to the
// server's requests when a collection says them (nil otherwise).
type Conn struct {
	Client  *session.Client
	Answers *collection.Handler
}

// ToolSteps is the iteration of one call of tool with args (coerced and
// checked once by the caller), worker w on conns[w % len(conns)].
func ToolSteps(tool string, args json.RawMessage, conns []Conn) []load.Step {
	params := mcp.CallToolParams{Name: tool, Arguments: args}
	do := func(ctx context.Context, worker int) load.Outcome {
		c := conns[worker%len(conns)].Client
		raw, err := c.CallToolRaw(ctx, params, nil)
		if err != nil {
			return Outcome(c, err)
		}
		if succeeded(raw) {
			return load.Outcome{}
		}
		var res struct {
			IsError bool          `json:"isError"`
			Content []mcp.Content `json:"content"`
		}
		if err := json.Unmarshal(raw, &res); err != nil {
			return load.Outcome{Kind: load.Invalid, Message: "the result is not a CallToolResult: " + err.Error()}
		}
		if res.IsError {
			return load.Outcome{Kind: load.ToolError, Message: contentText(res.Content)}
		}
		return load.Outcome{}
	}
	return []load.Step{{Name: "call " + tool, Do: do}}
}

// succeeded reports, without decoding it, that a CallToolResult is no
// error: its isError absent or false, its content an array. Any other
// result (an error, or one that cannot be told this way) is decoded.
func succeeded(raw []byte) bool {
	isErr, ok := mcp.MemberRaw(raw, "isError")
	if !ok || (isErr != nil && string(isErr) != "false") {
		return false
	}
	content, ok := mcp.MemberRaw(raw, "content")
	return ok && len(content) > 0 && content[0] == '['
}

// contentText is a result's text blocks, for an error's example.
func contentText(blocks []mcp.Content) string {
	var b strings.Builder
	for _, c := range blocks {
		if c.Type == "text" {
			b.WriteString(c.Text)
			if b.Len() > bounds.MaxText {
				break
			}
		}
	}
	return b.String()
}

// CollectionSteps is the iteration of a collection: its steps in order,
// each of the workers with its own captures, the environment env, and what
// the steps say crossing red.
func CollectionSteps(file *collection.File, workers int, conns []Conn, env func(string) (string, bool), red *record.Redactor) []load.Step {
	runners := make([]*collection.Runner, workers)
	for w := range runners {
		bc := conns[w%len(conns)]
		runners[w] = collection.NewRunner(bc.Client, bc.Answers, env, red.String)
	}
	steps := make([]load.Step, len(file.Steps))
	for i := range file.Steps {
		written := &file.Steps[i]
		steps[i] = load.Step{Name: written.Title(), Do: func(ctx context.Context, worker int) load.Outcome {
			r := runners[worker]
			if i == 0 {
				clear(r.Vars.Captures)
			}
			rep, err := r.Step(ctx, written)
			var out load.Outcome
			if err != nil {
				out = Outcome(r.Client, err)
			} else {
				out = stepOutcome(rep)
			}
			out.Message = red.Text(out.Message)
			return out
		}}
	}
	return steps
}

// Answers reports whether a step of file answers the server's requests.
func Answers(file *collection.File) bool {
	for _, s := range file.Steps {
		if s.Answers != nil {
			return true
		}
	}
	return false
}

// stepOutcome classifies a collection step's report.
func stepOutcome(rep collection.StepReport) load.Outcome {
	if rep.OK {
		// An error the step expected is a pass.
		return load.Outcome{}
	}
	var re *session.RPCError
	if errors.As(rep.RPCErr, &re) {
		return load.Outcome{Kind: load.RPC, Code: re.Code, Message: re.Error()}
	}
	kind := load.Expectation
	for _, f := range rep.Failures {
		if f.Path == "isError" {
			kind = load.ToolError
		}
	}
	return load.Outcome{Kind: kind, Message: rep.Failures[0].Message}
}

// timedOut reports whether a request's error is its clock's end (not the
// run's interruption).
func timedOut(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, session.ErrTaskCancelled) {
		return false
	}
	return errors.Is(err, session.ErrTimeout) || errors.Is(err, context.DeadlineExceeded)
}

// Outcome classifies a failed request on c; a connection that is gone
// ends the run (every later call on it would fail at once).
func Outcome(c *session.Client, err error) load.Outcome {
	var re *session.RPCError
	switch {
	case errors.As(err, &re):
		return load.Outcome{Kind: load.RPC, Code: re.Code, Message: re.Error()}
	case timedOut(err):
		return load.Outcome{Kind: load.Timeout, Message: err.Error()}
	}
	// A request that failed because the server went away often fails a
	// moment before the connection knows it has ended: give it that
	// moment, or every worker goes on failing at once until it does.
	timer := time.NewTimer(goneWait)
	defer timer.Stop()
	select {
	case <-c.Done():
		if end := c.Err(); end != nil && !errors.Is(err, session.ErrDisconnected) {
			err = end // why it ended (the exit status, stderr), not a write's failure
		}
		return load.Outcome{Kind: load.Transport, Message: err.Error(), Fatal: err}
	case <-timer.C:
	}
	return load.Outcome{Kind: load.Transport, Message: err.Error()}
}

// goneWait is how long a failed request waits to learn whether its
// connection ended.
const goneWait = 500 * time.Millisecond

// Heard counts what the server sent besides answers: notifications, and
// the warnings about its frames, each kind said once at the end. Its
// methods are the session's hooks.
type Heard struct {
	notifications atomic.Int64
	mu            sync.Mutex
	warnings      map[string]int64
	order         []string
}

// Notified counts a notification.
func (b *Heard) Notified(session.Notification) { b.notifications.Add(1) }

// Notifications is how many notifications were heard.
func (b *Heard) Notifications() int64 { return b.notifications.Load() }

// Warned counts a warning by its message; past load.MaxKinds kinds, the
// rest are "other warnings".
func (b *Heard) Warned(w session.Warning) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.warnings == nil {
		b.warnings = map[string]int64{}
	}
	k := bounds.Clip(safetext.OneLine(w.Message))
	if _, ok := b.warnings[k]; !ok && len(b.warnings) >= load.MaxKinds {
		k = "other warnings"
	}
	if _, ok := b.warnings[k]; !ok {
		b.order = append(b.order, k)
	}
	b.warnings[k]++
}

// SayWarnings writes each kind of warning once, with its count, crossing
// red.
func (b *Heard) SayWarnings(w io.Writer, red *record.Redactor) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, k := range b.order {
		n := b.warnings[k]
		if n == 1 {
			fmt.Fprintf(w, "warning: %s\n", red.Clean(k))
		} else {
			fmt.Fprintf(w, "warning (%s times): %s\n", loadreport.Count(n), red.Clean(k))
		}
	}
}
