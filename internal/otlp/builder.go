package otlp

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpi-dev/mcpi/internal/genai"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/record"
	"github.com/mcpi-dev/mcpi/internal/tracectx"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// Span is one finished span, in the terms of the conventions: the file
// form (pdata) and the endpoint (the OpenTelemetry SDK) each take it as it
// is.
type Span struct {
	TraceID trace.TraceID
	SpanID  trace.SpanID
	// Parent is the zero id for a span without a parent.
	Parent trace.SpanID
	Name   string
	Kind   trace.SpanKind
	Start  time.Time
	End    time.Time
	Attrs  []attribute.KeyValue
	// Error and Message are the span's status: an error, and why.
	Error   bool
	Message string
	// Request says the span is a request's, from its sending to its
	// answer (a notification's span has no duration).
	Request bool
	// Events are the span's events: the changes mcpi proxy made on the
	// wire (mcpi.intercept), at most maxEvents.
	Events []Event
}

// Event is an event of a span.
type Event struct {
	Name  string
	Time  time.Time
	Attrs []attribute.KeyValue
}

// maxEvents bounds a span's events; past it they are counted
// (mcpi.events.dropped).
const maxEvents = 1000

// Attr returns the value of the attribute named key, or "".
func (s *Span) Attr(key string) string {
	for _, a := range s.Attrs {
		if string(a.Key) == key {
			return a.Value.String()
		}
	}
	return ""
}

func (s *Span) set(key, value string) {
	for i, a := range s.Attrs {
		if string(a.Key) == key {
			s.Attrs[i] = attribute.String(key, value)
			return
		}
	}
	s.Attrs = append(s.Attrs, attribute.String(key, value))
}

// Stats says what an export holds and what it left out.
type Stats struct {
	Spans      int
	Unanswered int
	// Dropped counts the spans past the Builder's Limit.
	Dropped int
}

// maxOpen bounds the requests waiting for their answer.
const maxOpen = 50_000

// A Builder turns the events of a trace, in order, into spans: a span for
// each request, from its sending to its answer, and for each notification,
// children of one span for the session. It hands each span to emit when
// the span ends (a request's at its answer, a notification's at once, the
// session's at Finish), so that a live session's spans leave as they end
// and only the requests waiting for an answer are held (at most 50,000:
// past that they are all ended as unanswered).
//
// The events are those of the trace (record.Event): a live export reads
// them from the trace writer as they are recorded, so that what a trace
// redacts, its spans redact.
type Builder struct {
	emit    func(*Span)
	traceID trace.TraceID
	seed    [16]byte
	seq     uint64
	root    Span
	open    map[string]*Span
	// models are the model's turns waiting for their answers, by id;
	// tools the execute_tool spans open, the newest last: an MCP request
	// sent while one is open is its child.
	models map[string]*Span
	tools  []*Span
	stats  Stats
	// Limit bounds the spans emitted (0: no bound); the session's span is
	// always emitted, with the count of those left out.
	Limit int

	session  string // mcp.session.id
	revision string // mcp.protocol.version
	network  string // network.transport
	last     time.Time
	// propagated says the requests carried the trace's context: a
	// request's span has the span id its _meta.traceparent gave the
	// server, so that the server's spans are its children.
	propagated bool
}

// NewBuilder starts the spans of a trace with header h.
func NewBuilder(h record.Header, emit func(*Span)) *Builder {
	b := &Builder{emit: emit, open: map[string]*Span{}, models: map[string]*Span{}, revision: h.ProtocolVersion}
	sum := sha256.Sum256(fmt.Appendf(nil, "%s %s %v", h.Created.Format(time.RFC3339Nano), h.Target.Transport, h.Args))
	copy(b.traceID[:], sum[:16])
	// Span ids come from the trace's own header, not its trace id: two
	// recordings under one TRACEPARENT share the trace, never a span id.
	copy(b.seed[:], sum[16:32])
	b.root = Span{Name: "mcp session", Kind: trace.SpanKindInternal, Start: h.Created}
	if tc, err := tracectx.Parse(h.TraceParent, ""); err == nil {
		b.traceID = trace.TraceID(tc.TraceID)
		b.propagated = true
		if h.TraceRoot {
			// mcpi began the trace: the traceparent's span is the
			// session's own.
			b.root.SpanID = trace.SpanID(tc.SpanID)
		} else {
			// The session went on from a trace of its own (TRACEPARENT):
			// the session's span is a child of its span.
			b.root.Parent = trace.SpanID(tc.SpanID)
		}
	}
	b.root.TraceID = b.traceID
	if !b.root.SpanID.IsValid() {
		b.root.SpanID = b.nextID()
	}
	switch h.Target.Transport {
	case record.TransportStdio:
		b.network = "pipe"
	case "":
	default:
		b.network = "tcp"
	}
	if t := h.Target; len(t.Command) > 0 {
		b.root.set("mcpi.target.command", t.Command[0])
	} else if t.URL != "" {
		b.root.set("mcpi.target.url", t.URL)
	}
	b.last = h.Created
	return b
}

// TraceID is the trace the spans belong to.
func (b *Builder) TraceID() trace.TraceID { return b.traceID }

func (b *Builder) nextID() trace.SpanID {
	b.seq++
	var buf [24]byte
	copy(buf[:16], b.seed[:])
	binary.BigEndian.PutUint64(buf[16:], b.seq)
	sum := sha256.Sum256(buf[:])
	var id trace.SpanID
	copy(id[:], sum[:8])
	return id
}

// Event reads the next event of the trace.
func (b *Builder) Event(ev *record.Event) {
	if !ev.Time.IsZero() {
		b.last = ev.Time
	}
	if ev.HTTP != nil && b.session == "" {
		for _, hd := range []http.Header{ev.HTTP.ResponseHeader, ev.HTTP.RequestHeader} {
			if id := hd.Get("Mcp-Session-Id"); id != "" {
				b.session = id
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
					b.revision = n.ProtocolVersion
				}
				if n.ServerInfo != nil {
					b.root.set("mcpi.server.name", n.ServerInfo.Name)
				}
			}
		}
	case record.TypeModel:
		b.model(ev)
	case record.TypeIntercept:
		b.intercept(ev)
	case record.TypeFrame:
		msgs, _, err := mcp.DecodeFrame(ev.Msg)
		if err != nil {
			return
		}
		for _, m := range msgs {
			b.message(ev, m)
		}
	}
}

// intercept adds a change mcpi proxy made on the wire as an event: on
// the span of the request it changed while that span is open, else on
// the session's.
func (b *Builder) intercept(ev *record.Event) {
	var c struct {
		Action   string          `json:"action"`
		Rule     string          `json:"rule"`
		Note     string          `json:"note"`
		Original json.RawMessage `json:"original"`
	}
	if json.Unmarshal(ev.Msg, &c) != nil || c.Action == "" {
		return
	}
	s := &b.root
	if msgs, _, err := mcp.DecodeFrame(c.Original); err == nil && len(msgs) == 1 && msgs[0].IsRequest() {
		key, _ := mcp.IDKey(msgs[0].ID)
		dir := "o"
		if ev.Dir == transport.Incoming {
			dir = "i"
		}
		if open, ok := b.open[dir+key]; ok {
			s = open
		}
	}
	if len(s.Events) >= maxEvents {
		n, _ := strconv.Atoi(s.Attr("mcpi.events.dropped"))
		s.set("mcpi.events.dropped", strconv.Itoa(n+1))
		return
	}
	s.Events = append(s.Events, Event{Name: "mcpi.intercept", Time: ev.Time, Attrs: []attribute.KeyValue{
		attribute.String("mcpi.intercept.action", c.Action), attribute.String("mcpi.intercept.rule", c.Rule),
		attribute.String("mcpi.intercept.note", c.Note)}})
}

// message starts or ends the span of one message.
func (b *Builder) message(ev *record.Event, m *mcp.Message) {
	key, _ := mcp.IDKey(m.ID)
	dir, other := "o", "i"
	if ev.Dir == transport.Incoming {
		dir, other = "i", "o"
	}
	switch {
	case m.IsRequest():
		s, ok := b.newSpan(ev, m)
		if !ok {
			return
		}
		s.Request = true
		s.set("jsonrpc.request.id", strings.Trim(key, `"`))
		if len(b.open) >= maxOpen {
			// Past the bound, every request still waiting ends, unanswered,
			// where the trace is (as the wire pane forgets them).
			for k, p := range b.open {
				b.unanswered(p)
				delete(b.open, k)
			}
		}
		if prev, ok := b.open[dir+key]; ok {
			// The id again (a restarted server counts from 1): the
			// request before it got no answer.
			b.unanswered(prev)
		}
		b.open[dir+key] = s
	case m.IsResponse():
		s, ok := b.open[other+key]
		if !ok {
			return
		}
		delete(b.open, other+key)
		s.End = ev.Time
		status(s, m)
		b.negotiated(s, m)
		b.emit(s)
	default:
		if m.Method == "notifications/cancelled" {
			b.cancelled(ev, m, other)
		}
		// A notification: a span of no duration.
		if s, ok := b.newSpan(ev, m); ok {
			s.End = s.Start
			b.emit(s)
		}
	}
}

// cancelled ends the span of a request its sender gave up.
func (b *Builder) cancelled(ev *record.Event, m *mcp.Message, other string) {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
		Reason    string          `json:"reason"`
	}
	if json.Unmarshal(m.Params, &p) != nil {
		return
	}
	key, ok := mcp.IDKey(p.RequestID)
	if !ok {
		return
	}
	// The notification goes the way its request went.
	dir := "o"
	if other == "o" {
		dir = "i"
	}
	s, ok := b.open[dir+key]
	if !ok {
		return
	}
	delete(b.open, dir+key)
	s.End = ev.Time
	s.Error, s.Message = true, "cancelled"
	if p.Reason != "" {
		s.Message += ": " + p.Reason
	}
	s.set("error.type", "cancelled")
	b.emit(s)
}

// newSpan starts the span of a request or notification.
func (b *Builder) newSpan(ev *record.Event, m *mcp.Message) (*Span, bool) {
	if b.Limit > 0 && b.stats.Spans >= b.Limit {
		b.stats.Dropped++
		return nil, false
	}
	b.stats.Spans++
	s := &Span{TraceID: b.traceID, SpanID: b.nextID(), Parent: b.root.SpanID, Start: ev.Time, Name: m.Method}
	if n := len(b.tools); n > 0 && ev.Dir == transport.Outgoing && m.IsRequest() {
		// A request the model's tool call caused.
		s.Parent = b.tools[n-1].SpanID
	}
	if b.propagated && ev.Dir == transport.Outgoing {
		var meta struct {
			Meta struct {
				TraceParent string `json:"traceparent"`
			} `json:"_meta"`
		}
		json.Unmarshal(m.Params, &meta)
		if tc, err := tracectx.Parse(meta.Meta.TraceParent, ""); err == nil && trace.TraceID(tc.TraceID) == b.traceID {
			s.SpanID = trace.SpanID(tc.SpanID)
		}
	}
	// mcpi's requests and notifications are the client's; the server's
	// are received (a server span, as the conventions have it).
	if ev.Dir == transport.Outgoing {
		s.Kind = trace.SpanKindClient
	} else {
		s.Kind = trace.SpanKindServer
	}
	s.Attrs = append(s.Attrs, attribute.String("mcp.method.name", m.Method), attribute.String("jsonrpc.protocol.version", "2.0"))
	if b.session != "" {
		s.Attrs = append(s.Attrs, attribute.String("mcp.session.id", b.session))
	}
	if b.revision != "" {
		s.Attrs = append(s.Attrs, attribute.String("mcp.protocol.version", b.revision))
	}
	if b.network != "" {
		s.Attrs = append(s.Attrs, attribute.String("network.transport", b.network))
	}
	var p struct {
		Name string `json:"name"`
		URI  string `json:"uri"`
	}
	json.Unmarshal(m.Params, &p)
	switch m.Method {
	case "tools/call":
		s.Attrs = append(s.Attrs, attribute.String("gen_ai.tool.name", p.Name), attribute.String("gen_ai.operation.name", "execute_tool"))
		s.Name += " " + p.Name
	case "prompts/get":
		s.Attrs = append(s.Attrs, attribute.String("gen_ai.prompt.name", p.Name))
		s.Name += " " + p.Name
	}
	if p.URI != "" {
		s.Attrs = append(s.Attrs, attribute.String("mcp.resource.uri", p.URI))
	}
	return s, true
}

// model starts or ends the span of a model's turn (OpenTelemetry GenAI: a
// "chat {model}" client span with the request's and the answer's
// attributes) or of a tool the model asked for ("execute_tool {tool}", an
// internal span: the MCP requests it causes are its children).
func (b *Builder) model(ev *record.Event) {
	t, ok := genai.Decode(ev.Msg)
	if !ok {
		return
	}
	key := t.Op + "\x00" + t.ID
	if ev.Dir == transport.Outgoing {
		if b.Limit > 0 && b.stats.Spans >= b.Limit {
			b.stats.Dropped++
			return
		}
		b.stats.Spans++
		s := &Span{TraceID: b.traceID, SpanID: b.nextID(), Parent: b.root.SpanID, Start: ev.Time}
		s.Attrs = append(s.Attrs, attribute.String("gen_ai.operation.name", t.Op))
		if t.Purpose != "" {
			s.Attrs = append(s.Attrs, attribute.String("mcpi.purpose", t.Purpose))
		}
		switch t.Op {
		case genai.OpExecuteTool:
			s.Name, s.Kind = "execute_tool "+t.Tool, trace.SpanKindInternal
			s.Attrs = append(s.Attrs, attribute.String("gen_ai.tool.name", t.Tool), attribute.String("gen_ai.tool.call.id", t.ID))
			b.tools = append(b.tools, s)
		default:
			s.Name, s.Kind = t.Op+" "+t.Model, trace.SpanKindClient
			s.Attrs = append(s.Attrs, attribute.String("gen_ai.provider.name", t.Provider), attribute.String("gen_ai.request.model", t.Model))
		}
		if old, ok := b.models[key]; ok {
			b.unanswered(old)
		}
		b.models[key] = s
		return
	}
	s, ok := b.models[key]
	if !ok {
		return
	}
	delete(b.models, key)
	b.tools = slices.DeleteFunc(b.tools, func(x *Span) bool { return x == s })
	s.End = ev.Time
	if t.Model != "" && t.Op == genai.OpChat {
		s.set("gen_ai.response.model", t.Model)
	}
	if u := t.Usage; u != nil {
		s.Attrs = append(s.Attrs, attribute.Int64("gen_ai.usage.input_tokens", u.InputTokens), attribute.Int64("gen_ai.usage.output_tokens", u.OutputTokens))
	}
	if len(t.FinishReasons) > 0 {
		s.Attrs = append(s.Attrs, attribute.StringSlice("gen_ai.response.finish_reasons", t.FinishReasons))
	}
	switch {
	case t.Error != "":
		s.set("error.type", "model_error")
		s.Error, s.Message = true, t.Error
	case t.Denied:
		s.set("error.type", "denied")
		s.Error, s.Message = true, "the tool call was refused"
	}
	b.emit(s)
}

// negotiated takes the revision an initialize answer names: it is the
// session's from then on, and the initialize span, which started before it
// was known, carries it too (as does any span that started before it).
func (b *Builder) negotiated(s *Span, m *mcp.Message) {
	if s.Attr("mcp.method.name") == "initialize" && m.Error == nil {
		var r struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		if json.Unmarshal(m.Result, &r) == nil && r.ProtocolVersion != "" {
			b.revision = r.ProtocolVersion
		}
	}
	if b.revision != "" && s.Attr("mcp.protocol.version") == "" {
		s.set("mcp.protocol.version", b.revision)
	}
}

// status records how a request ended: an error answer or a tool's
// isError is an error.
func status(s *Span, m *mcp.Message) {
	if m.Error != nil {
		code := strconv.Itoa(m.Error.Code)
		s.set("error.type", code)
		s.set("rpc.response.status_code", code)
		s.Error, s.Message = true, m.Error.Message
		return
	}
	var r struct {
		IsError bool `json:"isError"`
	}
	if json.Unmarshal(m.Result, &r) == nil && r.IsError {
		s.set("error.type", "tool_error")
		s.Error, s.Message = true, "the tool's result is an error (isError)"
	}
}

// streams are requests answered only when they end: the 2026-07-28
// subscription stream stays open for the session's life.
var streams = map[string]bool{"subscriptions/listen": true}

// unanswered ends a request the trace never answers, where the trace is:
// an error, but for a stream, which was open when the session ended.
func (b *Builder) unanswered(s *Span) {
	b.stats.Unanswered++
	s.End = b.last
	if streams[s.Attr("mcp.method.name")] {
		s.Attrs = append(s.Attrs, attribute.Bool("mcpi.open_at_end", true))
		b.emit(s)
		return
	}
	s.Attrs = append(s.Attrs, attribute.Bool("mcpi.unanswered", true))
	s.Error, s.Message = true, "no answer in the trace"
	b.emit(s)
}

// Finish ends the requests still waiting for an answer and the session's
// span, at the last event seen, and says what the spans held.
func (b *Builder) Finish() Stats {
	for k, s := range b.open {
		b.unanswered(s)
		delete(b.open, k)
	}
	for k, s := range b.models {
		b.unanswered(s)
		delete(b.models, k)
	}
	b.tools = nil
	b.root.End = b.last
	if b.session != "" {
		b.root.set("mcp.session.id", b.session)
	}
	if b.revision != "" {
		b.root.set("mcp.protocol.version", b.revision)
	}
	if b.stats.Dropped > 0 {
		b.root.Attrs = append(b.root.Attrs, attribute.Int("mcpi.spans.dropped", b.stats.Dropped))
	}
	root := b.root
	b.emit(&root)
	return b.stats
}
