package timeline

import (
	"encoding/json"
	"strings"

	"github.com/mcpi-dev/mcpi/internal/daemon"
	"github.com/mcpi-dev/mcpi/internal/query"
	"github.com/mcpi-dev/mcpi/internal/record"
	"github.com/mcpi-dev/mcpi/internal/rows"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// Filter is a --filter of replay and tail: the search language of the
// Wire pane (internal/query), matched against what the one parser of the
// wire (internal/rows) makes of each event, so that a query means the same
// everywhere.
type Filter struct {
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

// NewFilter parses a --filter; nil for an empty one.
func NewFilter(expr string) (*Filter, error) {
	if strings.TrimSpace(expr) == "" {
		return nil, nil
	}
	q, err := query.Parse(expr)
	if err != nil {
		return nil, err
	}
	return &Filter{q: q, p: rows.NewParser()}, nil
}

// NeedsAnswers says the filter asks which requests were answered.
func (f *Filter) NeedsAnswers() bool { return f != nil && f.q.Uses("status") }

// LearnAnswers reads a trace once for the requests answered in it.
func (f *Filter) LearnAnswers(r *record.Reader) {
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
func (f *Filter) event(te transport.Event) bool {
	en := f.p.Event(te)
	if f.answered != nil && en.Kind == rows.KindFrame && en.ID != "" {
		en.Answered = f.answered[thisWay(en.Dir)+en.ID]
	}
	r := en.Record()
	return f.q.Match(&r)
}

// RecordEvent reports whether a trace's event matches; a note (what mcpi
// says of the session: its revision, its server) is a row of kind note,
// its text the note's kind and data, so -kind:stderr keeps it and
// method:tools/call does not.
func (f *Filter) RecordEvent(ev record.Event) bool {
	te, ok := ev.TransportEvent()
	if !ok {
		text := ev.Kind + " " + string(ev.Data)
		r := query.Record{Kind: "note", Text: text}
		return f.q.Match(&r)
	}
	return f.event(te)
}

// Tail reports whether a tail's event matches: a frame as the wire pane
// sees it, a notification (a log message: kind log) as one from the
// server.
func (f *Filter) Tail(e daemon.TailEvent) bool {
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

// Entry reports whether a row matches.
func (f *Filter) Entry(e *rows.Entry) bool {
	r := e.Record()
	return f.q.Match(&r)
}
