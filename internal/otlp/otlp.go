// Package otlp turns a trace of mcpi (internal/record) into OpenTelemetry
// spans, following the OpenTelemetry semantic conventions for the Model
// Context Protocol (gen-ai/mcp): a span for each request, from its sending
// to its answer, and for each notification; named `{mcp.method.name}
// {target}` (the tool or prompt, when there is one); with mcp.method.name,
// mcp.session.id, mcp.protocol.version, jsonrpc.request.id,
// gen_ai.tool.name, gen_ai.prompt.name, mcp.resource.uri,
// network.transport, and, for an error, error.type,
// rpc.response.status_code and an error status. They are children of one
// span for the session, so that a receiver shows the session as a tree.
//
// The spans are built with the collector's pdata (ptrace), whose JSON
// marshaler writes OTLP/JSON (hex ids, integer enums): the file form of
// `mcpi trace export --otlp`. Ids are derived from the trace's header, so
// that one trace always exports the same ids.
package otlp

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/record"
	"github.com/mcpi-dev/mcpi/internal/tracectx"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// MaxSpans bounds the spans of one export: a trace of a million
// notifications gives the first MaxSpans and says how many more there
// were (Stats.Dropped).
const MaxSpans = 200_000

// maxOpen bounds the requests waiting for their answer.
const maxOpen = 50_000

// Stats says what an export holds and what it left out.
type Stats struct {
	Spans      int
	Unanswered int
	// Dropped counts the spans past MaxSpans.
	Dropped int
}

// pending is a request waiting for its answer.
type pending struct {
	span ptrace.Span
}

// exporter builds the spans of one trace.
type exporter struct {
	spans    ptrace.SpanSlice
	traceID  pcommon.TraceID
	seed     [16]byte
	root     ptrace.Span
	seq      uint64
	open     map[string]pending
	stats    Stats
	session  string // mcp.session.id
	revision string // mcp.protocol.version
	network  string // network.transport
	last     time.Time
	// propagated says the requests carried the trace's context: a
	// request's span has the span id its _meta.traceparent gave the
	// server, so that the server's spans are its children.
	propagated bool
}

// FromTrace reads a trace to its end and returns its spans. version is
// mcpi's, for the instrumentation scope.
func FromTrace(r *record.Reader, version string) (ptrace.Traces, Stats, error) {
	h := r.Header()
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	attrs := rs.Resource().Attributes()
	attrs.PutStr("service.name", "mcpi")
	attrs.PutStr("service.version", h.Mcpi)
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("github.com/mcpi-dev/mcpi")
	ss.Scope().SetVersion(version)
	e := &exporter{spans: ss.Spans(), open: map[string]pending{}, revision: h.ProtocolVersion}
	sum := sha256.Sum256(fmt.Appendf(nil, "%s %s %v", h.Created.Format(time.RFC3339Nano), h.Target.Transport, h.Args))
	copy(e.traceID[:], sum[:16])
	// Span ids come from the trace's own header, not its trace id: two
	// recordings under one TRACEPARENT share the trace, never a span id.
	copy(e.seed[:], sum[16:32])
	var parent pcommon.SpanID
	if tc, err := tracectx.Parse(h.TraceParent, ""); err == nil {
		// The session went on from a trace of its own (TRACEPARENT): its
		// spans are that trace's, the session's a child of its span.
		e.traceID, parent = pcommon.TraceID(tc.TraceID), pcommon.SpanID(tc.SpanID)
		e.propagated = true
	}
	switch h.Target.Transport {
	case record.TransportStdio:
		e.network = "pipe"
	case "":
	default:
		e.network = "tcp"
	}
	e.root = e.spans.AppendEmpty()
	e.root.SetTraceID(e.traceID)
	e.root.SetSpanID(e.nextID())
	if !parent.IsEmpty() {
		e.root.SetParentSpanID(parent)
	}
	e.root.SetName("mcp session")
	e.root.SetKind(ptrace.SpanKindInternal)
	e.root.SetStartTimestamp(pcommon.NewTimestampFromTime(h.Created))
	ra := e.root.Attributes()
	if t := h.Target; len(t.Command) > 0 {
		ra.PutStr("mcpi.target.command", t.Command[0])
	} else if t.URL != "" {
		ra.PutStr("mcpi.target.url", t.URL)
	}
	e.last = h.Created
	// A trace that ends inside an event is exported up to there.
	err := r.Each(func(ev record.Event) { e.event(&ev) })
	if errors.Is(err, record.ErrTruncated) {
		err = nil
	}
	e.finish()
	return td, e.stats, err
}

func (e *exporter) nextID() pcommon.SpanID {
	e.seq++
	var b [24]byte
	copy(b[:16], e.seed[:])
	binary.BigEndian.PutUint64(b[16:], e.seq)
	sum := sha256.Sum256(b[:])
	var id pcommon.SpanID
	copy(id[:], sum[:8])
	return id
}

func (e *exporter) event(ev *record.Event) {
	if !ev.Time.IsZero() {
		e.last = ev.Time
	}
	if ev.HTTP != nil && e.session == "" {
		for _, hd := range []http.Header{ev.HTTP.ResponseHeader, ev.HTTP.RequestHeader} {
			if id := hd.Get("Mcp-Session-Id"); id != "" {
				e.session = id
				break
			}
		}
	}
	switch ev.Type {
	case record.TypeNote:
		if ev.Kind == record.NoteSession {
			var n record.SessionNote
			if ev.DecodeNote(&n) == nil {
				if n.ProtocolVersion != "" {
					e.revision = n.ProtocolVersion
				}
				if n.ServerInfo != nil {
					e.root.Attributes().PutStr("mcpi.server.name", n.ServerInfo.Name)
				}
			}
		}
	case record.TypeFrame:
		msgs, _, err := mcp.DecodeFrame(ev.Msg)
		if err != nil {
			return
		}
		for _, m := range msgs {
			e.message(ev, m)
		}
	}
}

// message makes or ends the span of one message.
func (e *exporter) message(ev *record.Event, m *mcp.Message) {
	key, _ := mcp.IDKey(m.ID)
	dir := "o"
	if ev.Dir == transport.Incoming {
		dir = "i"
	}
	switch {
	case m.IsRequest():
		s, ok := e.newSpan(ev, m)
		if !ok {
			return
		}
		s.Attributes().PutStr("jsonrpc.request.id", strings.Trim(key, `"`))
		if len(e.open) >= maxOpen {
			// Requests that never got an answer end where the trace does.
			e.stats.Unanswered += len(e.open)
			for _, p := range e.open {
				e.unanswered(p.span)
			}
			clear(e.open)
		}
		e.open[dir+key] = pending{span: s}
	case m.IsResponse():
		other := "i"
		if dir == "i" {
			other = "o"
		}
		p, ok := e.open[other+key]
		if !ok {
			return
		}
		delete(e.open, other+key)
		p.span.SetEndTimestamp(pcommon.NewTimestampFromTime(ev.Time))
		e.status(p.span, m)
	default:
		// A notification: a span of no duration.
		s, ok := e.newSpan(ev, m)
		if ok {
			s.SetEndTimestamp(s.StartTimestamp())
		}
	}
}

// newSpan starts the span of a request or notification.
func (e *exporter) newSpan(ev *record.Event, m *mcp.Message) (ptrace.Span, bool) {
	if e.stats.Spans >= MaxSpans {
		e.stats.Dropped++
		return ptrace.Span{}, false
	}
	e.stats.Spans++
	s := e.spans.AppendEmpty()
	s.SetTraceID(e.traceID)
	s.SetSpanID(e.nextID())
	if e.propagated && ev.Dir == transport.Outgoing {
		var meta struct {
			Meta struct {
				TraceParent string `json:"traceparent"`
			} `json:"_meta"`
		}
		json.Unmarshal(m.Params, &meta)
		if tc, err := tracectx.Parse(meta.Meta.TraceParent, ""); err == nil && pcommon.TraceID(tc.TraceID) == e.traceID {
			s.SetSpanID(pcommon.SpanID(tc.SpanID))
		}
	}
	s.SetParentSpanID(e.root.SpanID())
	// mcpi's requests and notifications are the client's; the server's
	// are received (a server span, as the conventions have it).
	if ev.Dir == transport.Outgoing {
		s.SetKind(ptrace.SpanKindClient)
	} else {
		s.SetKind(ptrace.SpanKindServer)
	}
	s.SetStartTimestamp(pcommon.NewTimestampFromTime(ev.Time))
	a := s.Attributes()
	a.PutStr("mcp.method.name", m.Method)
	a.PutStr("jsonrpc.protocol.version", "2.0")
	if e.session != "" {
		a.PutStr("mcp.session.id", e.session)
	}
	if e.revision != "" {
		a.PutStr("mcp.protocol.version", e.revision)
	}
	if e.network != "" {
		a.PutStr("network.transport", e.network)
	}
	var p struct {
		Name string `json:"name"`
		URI  string `json:"uri"`
	}
	json.Unmarshal(m.Params, &p)
	name := m.Method
	switch m.Method {
	case "tools/call":
		a.PutStr("gen_ai.tool.name", p.Name)
		a.PutStr("gen_ai.operation.name", "execute_tool")
		name += " " + p.Name
	case "prompts/get":
		a.PutStr("gen_ai.prompt.name", p.Name)
		name += " " + p.Name
	}
	if p.URI != "" {
		a.PutStr("mcp.resource.uri", p.URI)
	}
	s.SetName(name)
	return s, true
}

// status records how a request ended: an error answer or a tool's
// isError is an error.
func (e *exporter) status(s ptrace.Span, m *mcp.Message) {
	a := s.Attributes()
	if m.Error != nil {
		code := strconv.Itoa(m.Error.Code)
		a.PutStr("error.type", code)
		a.PutStr("rpc.response.status_code", code)
		s.Status().SetCode(ptrace.StatusCodeError)
		s.Status().SetMessage(m.Error.Message)
		return
	}
	var r struct {
		IsError bool `json:"isError"`
	}
	if json.Unmarshal(m.Result, &r) == nil && r.IsError {
		a.PutStr("error.type", "tool_error")
		s.Status().SetCode(ptrace.StatusCodeError)
		s.Status().SetMessage("the tool's result is an error (isError)")
	}
}

// unanswered ends a request the trace never answers, at its end.
func (e *exporter) unanswered(s ptrace.Span) {
	s.SetEndTimestamp(pcommon.NewTimestampFromTime(e.last))
	s.Attributes().PutBool("mcpi.unanswered", true)
	s.Status().SetCode(ptrace.StatusCodeError)
	s.Status().SetMessage("no answer in the trace")
}

func (e *exporter) finish() {
	e.stats.Unanswered += len(e.open)
	for _, p := range e.open {
		e.unanswered(p.span)
	}
	e.root.SetEndTimestamp(pcommon.NewTimestampFromTime(e.last))
	if e.session != "" {
		e.root.Attributes().PutStr("mcp.session.id", e.session)
	}
	if e.revision != "" {
		e.root.Attributes().PutStr("mcp.protocol.version", e.revision)
	}
	if e.stats.Dropped > 0 {
		e.root.Attributes().PutInt("mcpi.spans.dropped", int64(e.stats.Dropped))
	}
}

// JSON is the spans as OTLP/JSON.
func JSON(td ptrace.Traces) ([]byte, error) {
	m := &ptrace.JSONMarshaler{}
	return m.MarshalTraces(td)
}
