package record

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// Format is the "format" of a trace header.
const Format = "mcpi-trace"

// Version is the trace format version this package writes and the newest it
// reads. Additive changes (new fields, new event types, new note kinds) keep
// it; a change that an older reader would misread bumps it.
const Version = 1

// Event types: the "type" of each line.
const (
	TypeHeader    = "header"
	TypeFrame     = "frame"
	TypeBadFrame  = "bad-frame"
	TypeStderr    = "stderr"
	TypeLifecycle = "lifecycle"
	TypeHTTP      = "http"
	TypeNote      = "note"
	// TypeApp is a message between an MCP App and mcpi's host page: a
	// type of its own, so that a reader that does not know it skips it
	// instead of reading it as a frame of the server's session.
	TypeApp = "app"
	// TypeModel is a model in the loop (internal/genai): a request mcpi
	// made of a model provider, or a tool the model asked for, and their
	// answers; msg is the genai.Turn.
	TypeModel = "model"
	// TypeIntercept is a change mcpi proxy made on the wire: msg holds
	// the action, the rule, the original frame and what was sent instead.
	TypeIntercept = "intercept"
)

// Note kinds the session writes with Annotate.
const (
	// NoteSession carries a SessionNote once the handshake is done.
	NoteSession = "session"
)

// Roles of the recorder, in Header.Role.
const (
	// RoleClient: mcpi was the client ("send" frames are mcpi's).
	RoleClient = "client"
	// RoleProxy: mcpi sat between a host and a server ("send" frames are
	// the host's).
	RoleProxy = "proxy"
)

// Transports, in Target.Transport.
const (
	TransportStdio          = "stdio"
	TransportStreamableHTTP = "streamable-http"
	TransportSSE            = "sse"
	// TransportHTTP is an HTTP target whose transport was not known when
	// recording began (automatic fallback); a lifecycle event or a session
	// note says which one was used.
	TransportHTTP = "http"
)

// Header is the first line of a trace.
type Header struct {
	// Version is the format version. The Writer always writes Version.
	Version int `json:"version"`
	// Mcpi is the version of the mcpi that recorded the trace.
	Mcpi string `json:"mcpi"`
	// Created is when recording began. The Writer fills it in when zero.
	Created time.Time `json:"created"`
	// Role is RoleClient or RoleProxy; empty means RoleClient.
	Role   string `json:"role,omitempty"`
	Target Target `json:"target"`
	// ProtocolVersion is the revision mcpi offered or was forced to use
	// (--protocol-version), when known at start. The negotiated revision
	// is in a later NoteSession note.
	ProtocolVersion string `json:"protocolVersion,omitempty"`
	// Args is the mcpi command line that recorded the trace, without the
	// program name, redacted like the rest.
	Args []string `json:"args,omitempty"`
	// TraceParent is the W3C traceparent the session's requests went on
	// from (TRACEPARENT in mcpi's environment), when there was one: their
	// spans are its children.
	TraceParent string `json:"traceparent,omitempty"`
	// TraceRoot says mcpi began the trace itself (it exported spans, and
	// no TRACEPARENT was given): TraceParent's span is the session's own
	// span, not its parent's.
	TraceRoot bool `json:"traceRoot,omitempty"`
	// Host is where the trace was recorded. The Writer fills it in when empty.
	Host Host `json:"host"`
	// Redacted says whether secrets were removed. The Writer sets it from
	// Options.NoRedact.
	Redacted bool `json:"redacted"`

	// Raw is the header line as read, for fields this version does not
	// know. The Writer ignores it.
	Raw json.RawMessage `json:"-"`
}

// Target is the server a trace was recorded against.
type Target struct {
	// Transport is one of the Transport constants.
	Transport string `json:"transport"`
	// Command is the stdio server's command line.
	Command []string `json:"command,omitempty"`
	// URL is the HTTP server's endpoint.
	URL string `json:"url,omitempty"`
	// Server and Config name the config file entry the target came from.
	Server string `json:"server,omitempty"`
	Config string `json:"config,omitempty"`
}

// Host describes the machine that recorded a trace. It names no user and no
// host name.
type Host struct {
	OS   string `json:"os,omitempty"`
	Arch string `json:"arch,omitempty"`
	Go   string `json:"go,omitempty"`
}

// SessionNote is the data of a NoteSession note: what the handshake
// settled, which the header could not know.
type SessionNote struct {
	ProtocolVersion string `json:"protocolVersion,omitempty"`
	// Era is "legacy" (initialize handshake) or "modern" (stateless).
	Era string `json:"era,omitempty"`
	// Transport is the transport actually used, after any fallback.
	Transport  string              `json:"transport,omitempty"`
	ServerInfo *mcp.Implementation `json:"serverInfo,omitempty"`
}

// HTTPMeta is the HTTP side of an event.
type HTTPMeta struct {
	Method     string `json:"method,omitempty"`
	URL        string `json:"url,omitempty"`
	StatusCode int    `json:"status,omitempty"`
	// RequestHeader and ResponseHeader map each name to its values, in the
	// order they were sent.
	RequestHeader  http.Header `json:"requestHeaders,omitempty"`
	ResponseHeader http.Header `json:"responseHeaders,omitempty"`
	// Exchange numbers the HTTP request the event belongs to: a request,
	// its status and the frames of its answer share it.
	Exchange uint64 `json:"exchange,omitempty"`
	// SSEEventID and SSEEvent are the id and event type of the SSE event
	// that carried a frame.
	SSEEventID string `json:"sseEventId,omitempty"`
	SSEEvent   string `json:"sseEvent,omitempty"`
}

// Event is one line of a trace after the header, as the Reader returns it.
type Event struct {
	// Type is one of the Type constants. The Reader returns only the types
	// it knows; it skips the others.
	Type string
	// Time is when the transport saw the event (zero if not recorded).
	Time time.Time
	// Seq numbers the events of a trace from 1, in the order they were
	// written.
	Seq int64
	// Dir is the direction of a frame, bad frame or HTTP exchange: Outgoing
	// ("send") goes to the server, Incoming ("recv") comes from it.
	Dir transport.Direction
	// Size is the length of the frame or bad frame on the wire, before any
	// redaction.
	Size int
	// Msg is the frame, byte for byte as it went over the wire (unless
	// Redacted). Set for TypeFrame only.
	Msg json.RawMessage
	// Data is the bad frame's bytes, the body of an HTTP exchange, or, for a
	// note, the note's data as raw JSON.
	Data []byte
	// Line is a stderr line, without its line ending.
	Line string
	// Text describes a lifecycle or HTTP event; Error says what went wrong
	// (why a bad frame is bad, why a request failed).
	Text  string
	Error string
	// Kind is a note's kind (NoteSession, ...).
	Kind string
	HTTP *HTTPMeta
	// Redacted says that redaction changed Msg, Data, Line, Text or Error:
	// they are no longer the bytes that went over the wire.
	Redacted bool

	// LineNo and Offset locate the event in the trace: its line number
	// (the header is line 1) and the byte offset where the line starts.
	LineNo int
	Offset int64
}

// DecodeNote decodes a note's data into v.
func (e *Event) DecodeNote(v any) error {
	return json.Unmarshal(e.Data, v)
}

// TransportEvent returns the tap event e was recorded from, so that a
// replay can feed the consumers of a live tap (the TUI's wire pane). Notes
// have no tap event: ok is false for them.
func (e *Event) TransportEvent() (ev transport.Event, ok bool) {
	ev = transport.Event{Time: e.Time, Dir: e.Dir, Text: e.Text, Err: e.Error, Data: e.Data}
	switch e.Type {
	case TypeFrame:
		ev.Kind, ev.Data = transport.KindFrame, e.Msg
	case TypeApp:
		ev.Kind, ev.Data = transport.KindApp, e.Msg
	case TypeModel:
		ev.Kind, ev.Data = transport.KindModel, e.Msg
	case TypeIntercept:
		ev.Kind, ev.Data = transport.KindIntercept, e.Msg
	case TypeBadFrame:
		ev.Kind = transport.KindBadFrame
	case TypeStderr:
		ev.Kind, ev.Data = transport.KindStderr, []byte(e.Line)
	case TypeLifecycle:
		ev.Kind = transport.KindLifecycle
	case TypeHTTP:
		ev.Kind = transport.KindHTTP
	default:
		return transport.Event{}, false
	}
	if h := e.HTTP; h != nil {
		ev.HTTP = &transport.HTTPMeta{
			Method:         h.Method,
			URL:            h.URL,
			StatusCode:     h.StatusCode,
			RequestHeader:  h.RequestHeader,
			ResponseHeader: h.ResponseHeader,
			SSEEventID:     h.SSEEventID,
			SSEEvent:       h.SSEEvent,
			Exchange:       h.Exchange,
		}
	}
	return ev, true
}

func dirString(d transport.Direction) string {
	switch d {
	case transport.Outgoing:
		return "send"
	case transport.Incoming:
		return "recv"
	}
	return ""
}

func parseDir(s string) transport.Direction {
	switch s {
	case "send":
		return transport.Outgoing
	case "recv":
		return transport.Incoming
	}
	return 0
}
