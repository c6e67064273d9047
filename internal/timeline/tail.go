package timeline

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/mcpi-dev/mcpi/internal/daemon"
	"github.com/mcpi-dev/mcpi/internal/iostreams"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/mcptext"
	"github.com/mcpi-dev/mcpi/internal/safetext"
)

// Tail is mcpi tail following a session: what it reads, where from, and
// how it prints (JSON Lines with JSON).
type Tail struct {
	IO     *iostreams.IOStreams
	JSON   bool
	Held   *daemon.Held
	Sub    *daemon.Tail
	Filter *Filter
}

// Follow prints the session's events as they come, until the session
// ends or ctx does.
func (t *Tail) Follow(ctx context.Context) error {
	h := t.Held
	for {
		select {
		case <-t.Sub.Ready():
			if err := t.drain(); err != nil {
				return err
			}
		case <-h.Gone():
			why := "the connection ended"
			if err := h.Client().Err(); err != nil {
				why = safetext.OneLine(err.Error())
			}
			return t.ended(why)
		case <-h.Ended():
			// Stopped, or its idle timeout passed.
			return t.ended(h.End().Reason)
		case <-ctx.Done():
			if st := h.End(); st != nil {
				// The daemon cancels what runs once the session
				// ended: that is the session's end, not Ctrl-C.
				return t.ended(st.Reason)
			}
			t.dropped()
			return ctx.Err()
		}
	}
}

// drain prints the events that wait, each after the count of those
// dropped before it.
func (t *Tail) drain() error {
	for {
		e, ok := t.Sub.TryPop()
		if !ok {
			return nil
		}
		if err := t.dropped(); err != nil {
			return err
		}
		if t.Filter != nil && !t.Filter.Tail(e) {
			continue
		}
		var err error
		if t.JSON {
			err = iostreams.WriteJSONLine(t.IO, e)
		} else {
			_, err = fmt.Fprintln(t.IO.Out, TailText(e))
		}
		if err != nil {
			return err
		}
	}
}

// dropped says how many events the tail missed, if any, since it last
// said so.
func (t *Tail) dropped() error {
	n := t.Sub.Dropped()
	if n == 0 {
		return nil
	}
	if t.JSON {
		return iostreams.WriteJSONLine(t.IO, daemon.TailEvent{Time: time.Now(), Kind: "dropped", Dropped: n})
	}
	_, err := fmt.Fprintf(t.IO.ErrOut, "mcpi: %d event(s) dropped: this tail read too slowly\n", n)
	return err
}

// ended says the session ended, and why.
func (t *Tail) ended(why string) error {
	t.dropped()
	fmt.Fprintf(t.IO.ErrOut, "mcpi: session %s ended: %s\n", t.Held.Name(), why)
	return nil
}

// TailText is an event as one line of text.
func TailText(e daemon.TailEvent) string {
	ts := e.Time.Format("15:04:05.000")
	switch e.Kind {
	case "frame":
		arrow := "→"
		if e.Dir == "recv" {
			arrow = "←"
		}
		return fmt.Sprintf("%s %s %s", ts, arrow, safetext.OneLine(string(e.Frame)))
	case "request":
		// A parked server request, under the number mcpi pending and
		// mcpi answer use.
		line := fmt.Sprintf("%s request #%d %s %s", ts, e.Request, safetext.OneLine(e.Method), e.State)
		if e.Command != "" {
			line += " for: " + safetext.OneLine(e.Command)
		}
		if e.Summary != "" {
			line += ": " + safetext.OneLine(e.Summary)
		}
		return line
	}
	switch e.Method {
	case "notifications/message":
		var m mcp.LoggingMessageParams
		if json.Unmarshal(e.Params, &m) == nil {
			data := string(m.Data)
			var s string
			if json.Unmarshal(m.Data, &s) == nil {
				data = s
			}
			logger := ""
			if m.Logger != "" {
				logger = " [" + safetext.OneLine(m.Logger) + "]"
			}
			return fmt.Sprintf("%s log %s%s %s", ts, safetext.OneLine(string(m.Level)), logger, safetext.OneLine(data))
		}
	case "notifications/tasks", "notifications/tasks/status":
		// A task's status (the 2026-07-28 extension; 2025-11-25 tasks).
		var t mcp.Task
		if json.Unmarshal(e.Params, &t) == nil && t.TaskID != "" {
			return ts + " " + mcptext.TaskLine(t)
		}
	case "notifications/progress":
		var p mcp.ProgressParams
		if json.Unmarshal(e.Params, &p) == nil {
			n := fmt.Sprint(p.Progress)
			if p.Total != nil {
				n += fmt.Sprintf("/%v", *p.Total)
			}
			return strings.TrimSpace(fmt.Sprintf("%s progress %s %s %s", ts, safetext.OneLine(string(p.ProgressToken)), n, safetext.OneLine(p.Message)))
		}
	}
	return fmt.Sprintf("%s %s %s", ts, safetext.OneLine(e.Method), safetext.OneLine(string(e.Params)))
}
