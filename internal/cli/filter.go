package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcpi-dev/mcpi/internal/daemon"
	"github.com/mcpi-dev/mcpi/internal/iostreams"
	"github.com/mcpi-dev/mcpi/internal/query"
	"github.com/mcpi-dev/mcpi/internal/record"
	"github.com/mcpi-dev/mcpi/internal/rows"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// frameFilter is a --filter of replay and tail: the search language of
// the Wire pane (internal/query), matched against what the wire pane's
// parser makes of each event, so that a query means the same everywhere.
type frameFilter struct {
	q query.Query
	p *rows.Parser
	// answered holds, for a trace read twice, the requests answered
	// anywhere in it (direction and id key): status:pending is then the
	// requests never answered. Without it, a request is pending until its
	// answer has been seen.
	answered map[string]bool
}

// maxAnswered bounds the answered requests a trace's first reading keeps.
const maxAnswered = 1_000_000

// newFrameFilter parses a --filter; nil for an empty one.
func newFrameFilter(expr string) (*frameFilter, error) {
	if strings.TrimSpace(expr) == "" {
		return nil, nil
	}
	q, err := query.Parse(expr)
	if err != nil {
		return nil, flagErrorf("--filter: %v", err)
	}
	return &frameFilter{q: q, p: rows.NewParser()}, nil
}

// needsAnswers says the filter asks which requests were answered.
func (f *frameFilter) needsAnswers() bool { return f != nil && f.q.Uses("status") }

// learnAnswers reads a trace once for the requests answered in it.
func (f *frameFilter) learnAnswers(r *record.Reader) {
	f.answered = map[string]bool{}
	p := rows.NewParser()
	r.Each(func(ev record.Event) {
		te, ok := ev.TransportEvent()
		if !ok || len(f.answered) >= maxAnswered {
			return
		}
		en := p.Event(te)
		if en.Kind == rows.KindFrame && en.ID != "" && (en.Method == "response" || en.Method == "error") {
			f.answered[otherWay(en.Dir)+en.ID] = true
		}
	})
}

func otherWay(d transport.Direction) string {
	if d == transport.Incoming {
		return "o"
	}
	return "i"
}

func thisWay(d transport.Direction) string {
	if d == transport.Incoming {
		return "i"
	}
	return "o"
}

// event reports whether a trace's or session's event matches. Every event
// goes through the parser, matched or not, so that answers keep their
// latencies.
func (f *frameFilter) event(te transport.Event) bool {
	en := f.p.Event(te)
	if f.answered != nil && en.Kind == rows.KindFrame && en.ID != "" {
		en.Answered = f.answered[thisWay(en.Dir)+en.ID]
	}
	r := en.Record()
	return f.q.Match(&r)
}

// recordEvent reports whether a trace's event matches; a note (what mcpi
// says of the session: its revision, its server) is a row of kind note,
// its text the note's kind and data, so -kind:stderr keeps it and
// method:tools/call does not.
func (f *frameFilter) recordEvent(ev record.Event) bool {
	te, ok := ev.TransportEvent()
	if !ok {
		text := ev.Kind + " " + string(ev.Data)
		r := query.Record{Kind: "note", Text: text}
		return f.q.Match(&r)
	}
	return f.event(te)
}

// tail reports whether a tail's event matches: a frame as the wire pane
// sees it, a notification (a log message: kind log) as one from the
// server.
func (f *frameFilter) tail(e daemon.TailEvent) bool {
	switch e.Kind {
	case "frame":
		dir := transport.Outgoing
		if e.Dir == "recv" {
			dir = transport.Incoming
		}
		return f.event(transport.Event{Kind: transport.KindFrame, Time: e.Time, Dir: dir, Data: e.Frame})
	case "notification":
		kind := "notification"
		if e.Method == "notifications/message" {
			kind = "log"
		}
		r := query.Record{Kind: kind, In: true, Method: e.Method, Size: len(e.Params), Data: e.Params}
		return f.q.Match(&r)
	case "request":
		// A parked server request is one from the server, a frame's kind.
		data, _ := json.Marshal(e)
		r := query.Record{Kind: "frame", In: true, Method: e.Method, Size: len(data), Data: data}
		return f.q.Match(&r)
	}
	return true
}

// replayLatency prints a trace's latencies by method (and by tool): the
// Wire pane's L, for scripts.
func replayLatency(opts *ReplayOptions) error {
	r, err := record.Open(opts.Trace)
	if err != nil {
		return &FlagError{Err: fmt.Errorf("%s: %w", opts.Trace, err)}
	}
	defer r.Close()
	// The store keeps the last rows.MaxEntries rows: a longer trace is
	// summed up over its end, and says so.
	store := rows.NewStore(0, 0)
	parser := rows.NewParser()
	err = r.Each(func(ev record.Event) {
		if te, ok := ev.TransportEvent(); ok {
			store.Append(parser.Event(te))
		}
	})
	if err != nil && !errors.Is(err, record.ErrTruncated) {
		return err
	}
	keep := func(*rows.Entry) bool { return true }
	if f := opts.filter; f != nil {
		keep = func(e *rows.Entry) bool {
			rec := e.Record()
			return f.q.Match(&rec)
		}
	}
	lat := rows.Latencies(store, keep)
	if store.First() > 0 {
		fmt.Fprintf(opts.IO.ErrOut, "warning: %s has more than %d rows: these are the latencies of its last %d\n", opts.Trace, rows.MaxEntries, rows.MaxEntries)
	}
	if opts.JSON {
		type row struct {
			Method string  `json:"method"`
			Count  int     `json:"count"`
			Errors int     `json:"errors"`
			P50    float64 `json:"p50Ms"`
			P90    float64 `json:"p90Ms"`
			P99    float64 `json:"p99Ms"`
			Max    float64 `json:"maxMs"`
		}
		ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
		out := []row{}
		for _, r := range lat {
			out = append(out, row{r.Name, r.Count, r.Errors, ms(r.P50), ms(r.P90), ms(r.P99), ms(r.Max)})
		}
		return iostreams.WriteJSON(opts.IO, out)
	}
	if len(lat) == 0 {
		fmt.Fprintln(opts.IO.ErrOut, "no answer with a latency in the trace")
		return nil
	}
	tw := table(opts.IO.Out, "METHOD", "COUNT", "ERRORS", "P50", "P90", "P99", "MAX")
	for _, r := range lat {
		row(tw, r.Name, fmt.Sprint(r.Count), fmt.Sprint(r.Errors), rows.FormatLatency(r.P50), rows.FormatLatency(r.P90), rows.FormatLatency(r.P99), rows.FormatLatency(r.Max))
	}
	return tw.Flush()
}
