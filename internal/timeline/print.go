package timeline

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/mcpi-dev/mcpi/internal/iostreams"
	"github.com/mcpi-dev/mcpi/internal/record"
	"github.com/mcpi-dev/mcpi/internal/rows"
	"github.com/mcpi-dev/mcpi/internal/safetext"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

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
	// Requests and their answers are paired as the Wire pane pairs them
	// (an App's among its own); a model's turns are read the same way.
	parser := rows.NewParser()
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
			kind := ""
			if ev.Type == record.TypeApp {
				kind = "app "
			}
			te, _ := ev.TransportEvent()
			en := parser.Event(te)
			msgs := en.Batch
			if msgs == nil {
				msgs = []rows.Entry{en}
			}
			if !readable(msgs) {
				fmt.Fprintf(out, "%s %s %sframe %s\n", at, arrow, kind, iostreams.ByteSize(ev.Size))
				continue
			}
			for i := range msgs {
				fmt.Fprintf(out, "%s %s %s%s  %s\n", at, arrow, kind, describe(&msgs[i]), iostreams.ByteSize(ev.Size))
			}
		case record.TypeModel, record.TypeIntercept:
			te, _ := ev.TransportEvent()
			en := parser.Event(te)
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

// readable reports whether every message of a frame is one: a request,
// a notification or a response.
func readable(msgs []rows.Entry) bool {
	for i := range msgs {
		if m := &msgs[i]; !m.Response && (m.Method == "" || m.Method == "not JSON" || strings.HasPrefix(m.Method, "batch")) {
			return false
		}
	}
	return len(msgs) > 0
}

// describe names a message and, for a response, the request it answers
// and how long it took.
func describe(m *rows.Entry) string {
	key := safetext.Sanitize(m.ID, false)
	switch {
	case m.Response:
		status := "result"
		switch {
		case m.RPCError:
			status = fmt.Sprintf("error %d %s", m.ErrCode, safetext.OneLine(m.ErrMessage))
		case m.ToolError:
			// A tool's result that is an error: the call failed.
			status = "result isError"
		}
		if m.HasLatency {
			return fmt.Sprintf("#%s %s of %s (%s)", key, status, safetext.Sanitize(m.Answers, false), m.Latency.Round(10*time.Microsecond))
		}
		return fmt.Sprintf("#%s %s", key, status)
	case m.ID != "":
		what := safetext.Sanitize(m.Method, false)
		if m.Name != "" {
			what += " " + safetext.OneLine(m.Name)
		}
		return fmt.Sprintf("#%s %s", key, what)
	}
	return safetext.Sanitize(m.Method, false)
}
