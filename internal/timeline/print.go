package timeline

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/mcpi-dev/mcpi/internal/iostreams"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/record"
	"github.com/mcpi-dev/mcpi/internal/rows"
	"github.com/mcpi-dev/mcpi/internal/safetext"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

type sentRequest struct {
	at     time.Time
	method string
}

// Print prints every event of r, a line each, what a peer said
// sanitised; with a filter, only the events it matches. At the end of the data it returns,
// unless wait is set: then it waits for more (a trace still being written)
// for as long as wait says.
func Print(w, errw io.Writer, path string, r *record.Reader, wait func() bool, filter *Filter) error {
	h := r.Header()
	fmt.Fprintf(w, "trace of mcpi %s, %s, %s", safetext.Sanitize(h.Mcpi, false), h.Created.Format(time.RFC3339), h.Target.Transport)
	if len(h.Target.Command) > 0 {
		fmt.Fprintf(w, ": %s", safetext.OneLine(strings.Join(h.Target.Command, " ")))
	}
	if h.Target.URL != "" {
		fmt.Fprintf(w, ": %s", safetext.OneLine(h.Target.URL))
	}
	fmt.Fprintln(w)
	var start time.Time
	// An MCP App's requests are paired among its own: their ids are not
	// the session's.
	pending, appPending := map[string]sentRequest{}, map[string]sentRequest{}
	// A model's turns are read as the Wire pane reads them.
	models := rows.NewParser()
	for {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) || (wait != nil && errors.Is(err, record.ErrTruncated)) {
			// A follower waits for the writer to append (or finish a line).
			if wait != nil && wait() {
				continue
			}
			return nil
		}
		if err != nil {
			var ce *record.CorruptError
			if errors.As(err, &ce) {
				fmt.Fprintf(errw, "warning: %s\n", ce.Skipped(path))
				continue
			}
			fmt.Fprintf(errw, "warning: the trace stops being readable here: %v\n", err)
			if errors.Is(err, record.ErrTruncated) {
				return nil
			}
			return err
		}
		if start.IsZero() {
			start = ev.Time
		}
		out := w
		if filter != nil && !filter.RecordEvent(ev) {
			// Described all the same: the answers after it keep their
			// latencies.
			out = io.Discard
		}
		at := fmt.Sprintf("%+9.3fs", ev.Time.Sub(start).Seconds())
		arrow := "→"
		if ev.Dir == transport.Incoming {
			arrow = "←"
		}
		switch ev.Type {
		case record.TypeFrame, record.TypeApp:
			// An App's message: "→ app" from mcpi's host to the App,
			// "← app" from the App.
			kind, pend := "", pending
			if ev.Type == record.TypeApp {
				kind, pend = "app ", appPending
			}
			msgs, _, derr := mcp.DecodeFrame(ev.Msg)
			if derr != nil {
				fmt.Fprintf(out, "%s %s %sframe %s\n", at, arrow, kind, iostreams.ByteSize(ev.Size))
				continue
			}
			for _, m := range msgs {
				fmt.Fprintf(out, "%s %s %s%s  %s\n", at, arrow, kind, describe(m, ev, pend), iostreams.ByteSize(ev.Size))
			}
		case record.TypeModel, record.TypeIntercept:
			te, _ := ev.TransportEvent()
			en := models.Event(te)
			line := fmt.Sprintf("%s %s %s %s", at, arrow, ev.Type, safetext.OneLine(en.Label()))
			if en.HasLatency {
				line += fmt.Sprintf(" (%s)", en.Latency.Round(10*time.Microsecond))
			}
			if en.Text != "" {
				line += ": " + safetext.Truncate(safetext.OneLine(en.Text), 160)
			}
			if en.ToolError {
				line += "  ✗"
			}
			fmt.Fprintln(out, line)
		case record.TypeBadFrame:
			fmt.Fprintf(out, "%s %s BAD FRAME (%s): %s\n", at, arrow, safetext.OneLine(ev.Error), safetext.Quote(ev.Data))
		case record.TypeStderr:
			fmt.Fprintf(out, "%s   stderr: %s\n", at, safetext.Sanitize(ev.Line, false))
		case record.TypeLifecycle:
			msg := ev.Text
			if ev.Error != "" {
				msg += ": " + ev.Error
			}
			fmt.Fprintf(out, "%s   %s\n", at, safetext.OneLine(msg))
		case record.TypeHTTP:
			if ev.HTTP != nil {
				fmt.Fprintf(out, "%s   http %s %s → %s\n", at, ev.HTTP.Method, safetext.OneLine(ev.HTTP.URL), safetext.OneLine(ev.Text))
			}
		case record.TypeNote:
			fmt.Fprintf(out, "%s   note %s: %s\n", at, safetext.Sanitize(ev.Kind, false), safetext.Truncate(safetext.OneLine(string(ev.Data)), 160))
		}
	}
}

// describe names a message and, for a response, the request it answers
// and how long it took.
func describe(m *mcp.Message, ev record.Event, pending map[string]sentRequest) string {
	key, _ := mcp.IDKey(m.ID)
	dirKey := fmt.Sprintf("%d:%s", ev.Dir, key)
	switch {
	case m.IsRequest():
		pending[dirKey] = sentRequest{at: ev.Time, method: m.Method}
		var p struct {
			Name string `json:"name"`
			URI  string `json:"uri"`
		}
		json.Unmarshal(m.Params, &p)
		what := safetext.Sanitize(m.Method, false)
		if p.Name != "" {
			what += " " + safetext.OneLine(p.Name)
		} else if p.URI != "" {
			what += " " + safetext.OneLine(p.URI)
		}
		return fmt.Sprintf("#%s %s", safetext.Sanitize(key, false), what)
	case m.IsResponse():
		// A response goes the other way from its request.
		other := transport.Outgoing
		if ev.Dir == transport.Outgoing {
			other = transport.Incoming
		}
		req, ok := pending[fmt.Sprintf("%d:%s", other, key)]
		status := "result"
		var r struct {
			IsError bool `json:"isError"`
		}
		switch {
		case m.Error != nil:
			status = fmt.Sprintf("error %d %s", m.Error.Code, safetext.OneLine(m.Error.Message))
		case json.Unmarshal(m.Result, &r) == nil && r.IsError:
			// A tool's result that is an error: the call failed.
			status = "result isError"
		}
		if ok {
			delete(pending, fmt.Sprintf("%d:%s", other, key))
			return fmt.Sprintf("#%s %s of %s (%s)", safetext.Sanitize(key, false), status, safetext.Sanitize(req.method, false), ev.Time.Sub(req.at).Round(10*time.Microsecond))
		}
		return fmt.Sprintf("#%s %s", safetext.Sanitize(key, false), status)
	}
	return safetext.Sanitize(m.Method, false)
}
