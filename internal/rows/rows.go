// Package rows is the one reading of the wire below the UI: every event the
// transport tap saw (frames both ways, bad frames, stderr, lifecycle, HTTP,
// an MCP App's messages) and every warning of the session becomes one Entry,
// its kind from one table, a response paired with its request once by the
// Parser (latency, the method and name it answers), and kept in a bounded
// Store. The Wire, Log and Timeline panes, replay, tail --filter and the
// latency summaries all read these entries; Record is what the search
// language (internal/query) matches.
package rows

import (
	"bytes"
	"cmp"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mcpi-dev/mcpi/internal/genai"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/tracectx"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// Memory bounds. The store keeps at most MaxEntries rows (the oldest go
// first); each row keeps at most MaxEntryBytes of its data for display (its
// full size is still shown), and all rows together keep at most
// MaxTotalBytes of data: past that, the data of the oldest rows is released
// while their rows stay. A 50 MB frame therefore costs 128 KiB, and a flood
// of a million small frames costs the newest 200,000 rows.
const (
	MaxEntries    = 200_000
	MaxEntryBytes = 128 << 10
	MaxTotalBytes = 64 << 20
)

// Kind is what a row shows: a kind of the transport's tap events (the one
// table of them is transport.EventKind), or a warning of the session.
type Kind uint8

// Kinds of rows: the transport's event kinds, with their values, and
// session warnings after them.
const (
	KindFrame     = Kind(transport.KindFrame)
	KindBadFrame  = Kind(transport.KindBadFrame)
	KindStderr    = Kind(transport.KindStderr)
	KindLifecycle = Kind(transport.KindLifecycle)
	KindHTTP      = Kind(transport.KindHTTP)
	// KindApp is a message between an MCP App and mcpi's host of it
	// (Outgoing: to the App; Incoming: from it).
	KindApp = Kind(transport.KindApp)
	// KindModel is a model's turn (internal/genai).
	KindModel = Kind(transport.KindModel)
	// KindIntercept is a change mcpi proxy made on the wire
	// (internal/intercept).
	KindIntercept = Kind(transport.KindIntercept)
	// KindWarning is a warning of the session (not a tap event).
	KindWarning = Kind(transport.KindLast + 1)
)

func (k Kind) String() string {
	if k == KindWarning {
		return "warning"
	}
	return transport.EventKind(k).String()
}

// Entry is one row of the wire: what the panes, replay and tail show.
type Entry struct {
	Seq  int64
	Time time.Time
	Kind Kind
	Dir  transport.Direction
	// HasLatency says Latency is set; RPCError marks error responses;
	// InputRequired marks a 2026-07-28 result that asks for input
	// (resultType "input_required": the request will be sent again).
	HasLatency    bool
	RPCError      bool
	InputRequired bool
	// ToolError marks a result with isError; Answered a request whose
	// answer the store has seen (for status:pending).
	ToolError bool
	Answered  bool
	// Truncated and Released: see Data.
	Truncated bool
	Released  bool
	// Method is the frame's method, "response" or "error" for responses,
	// "batch(n)" for batches.
	Method string
	// Name is what a request is about: params.name (a tool or prompt),
	// params.uri (a resource) or params.taskId. On a response, the name of
	// the request it answers.
	Name string
	// Answers is, on a response, the method of the request it answers
	// (when that request was seen).
	Answers string
	// ID is the id key of a request or response (mcp.IDKey).
	ID string
	// Size is the size of the data as it arrived.
	Size int
	// Latency is the time since the request a response answers.
	Latency time.Duration
	// Data is the start of the data (see MaxEntryBytes); nil once released
	// (see MaxTotalBytes). Truncated says it was clipped.
	Data []byte
	// TraceID is the W3C trace id (32 hex digits) of a request that
	// carried params._meta.traceparent.
	TraceID string
	Err     string // why a bad frame is bad, or a lifecycle error
	Text    string // lifecycle and HTTP descriptions, warning messages
	HTTP    *transport.HTTPMeta
	// Response marks a response (Method "response" or "error").
	Response bool
	// ErrCode and ErrMessage are a JSON-RPC error response's code and
	// message.
	ErrCode    int
	ErrMessage string
	// Batch holds, for a batch, a row of each of its messages (the row
	// itself stands for the whole batch).
	Batch []Entry
}

// Parser turns tap events into entries and matches responses to requests by
// id to compute latencies. It is used by one goroutine at a time.
type Parser struct {
	// open requests by direction and id key: an outgoing request is
	// answered by an incoming response, and the other way round.
	open map[string]openRequest
	// appOpen are an App's requests and the host's: their ids are theirs,
	// not the session's.
	appOpen map[string]openRequest
	// modelOpen are the model's turns waiting for their answers, by id.
	modelOpen map[string]openRequest
	// names interns methods and names, by their JSON text (see str).
	names map[string]string
}

type openRequest struct {
	t            time.Time
	method, name string
}

// maxNames and maxNameLen bound the interned strings; past them, strings
// are kept as they come.
const (
	maxNames   = 4096
	maxNameLen = 256
)

// maxOpen bounds the requests waiting for a match; requests that never get
// an answer must not grow it forever.
const maxOpen = 50_000

// NewParser returns a parser.
func NewParser() *Parser {
	return &Parser{open: make(map[string]openRequest), appOpen: make(map[string]openRequest), names: make(map[string]string)}
}

// maxHeadObject bounds the params or result object looked into for the
// few strings a row shows; a bigger one is not.
const maxHeadObject = 64 << 10

// member keeps a JSON member's text without copying it: encoding/json
// hands an Unmarshaler a slice of its input, so the slice is valid while
// the frame it comes from is (during Parser.frame). A null is "null".
type member []byte

func (m *member) UnmarshalJSON(b []byte) error { *m = b; return nil }

type frameHead struct {
	ID     json.RawMessage `json:"id"`
	Method member          `json:"method"`
	Params member          `json:"params"`
	Result member          `json:"result"`
	Error  member          `json:"error"`
}

// isError says the frame has an error member (null included).
func (h *frameHead) isError() bool { return len(h.Error) > 0 }

// str is the value of a JSON string member ("" for anything else),
// interned: a session repeats a few methods and names a million times, and
// one seen before costs no allocation.
func (p *Parser) str(raw member) string {
	if len(raw) < 2 || raw[0] != '"' {
		return ""
	}
	if v, ok := p.names[string(raw)]; ok {
		return v
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	if len(p.names) < maxNames && len(raw) <= maxNameLen {
		p.names[string(raw)] = s
	}
	return s
}

// nameOf is what a request is about: params.name (a tool or prompt),
// params.uri (a resource), params.taskId, or the name or uri of params.ref
// (completion/complete).
func (p *Parser) nameOf(params member) string { return p.nameIn(params, true) }

func (p *Parser) nameIn(params member, orRef bool) string {
	if len(params) == 0 || params[0] != '{' || len(params) > maxHeadObject ||
		!(bytes.Contains(params, []byte(`"name"`)) || bytes.Contains(params, []byte(`"uri"`)) || bytes.Contains(params, []byte(`"taskId"`))) {
		return ""
	}
	var v struct {
		Name   member `json:"name"`
		URI    member `json:"uri"`
		TaskID member `json:"taskId"`
		Ref    member `json:"ref"` // completion/complete: the prompt or template
	}
	if json.Unmarshal(params, &v) != nil {
		return ""
	}
	if n := cmp.Or(p.str(v.Name), p.str(v.URI), p.str(v.TaskID)); n != "" || !orRef {
		return n
	}
	return p.nameIn(v.Ref, false)
}

// inputRequired reports whether a result asks for input (2026-07-28
// resultType "input_required"), reading that one member by scanning.
func (p *Parser) inputRequired(result member) bool {
	if len(result) == 0 || result[0] != '{' || !bytes.Contains(result, []byte("input_required")) {
		return false
	}
	if rt, ok := mcp.MemberString(result, "resultType"); ok {
		return rt == mcp.ResultInputRequired
	}
	var v struct {
		ResultType member `json:"resultType"`
	}
	return len(result) <= maxHeadObject && json.Unmarshal(result, &v) == nil && p.str(v.ResultType) == mcp.ResultInputRequired
}

// traceID is the trace id of params._meta.traceparent, when it holds a
// well-formed one (a malformed or oversized value shows no id).
func traceID(params member) string {
	if len(params) == 0 || params[0] != '{' || len(params) > maxHeadObject || !bytes.Contains(params, []byte(`"traceparent"`)) {
		return ""
	}
	var v struct {
		Meta struct {
			TraceParent string `json:"traceparent"`
		} `json:"_meta"`
	}
	if json.Unmarshal(params, &v) != nil {
		return ""
	}
	c, err := tracectx.Parse(v.Meta.TraceParent, "")
	if err != nil {
		return ""
	}
	return hex.EncodeToString(c.TraceID[:])
}

// toolError reports whether a result says isError: true.
func toolError(result member) bool {
	if len(result) == 0 || result[0] != '{' || !bytes.Contains(result, []byte(`"isError"`)) {
		return false
	}
	var v struct {
		IsError bool `json:"isError"`
	}
	return len(result) <= maxHeadObject && json.Unmarshal(result, &v) == nil && v.IsError
}

// Event parses one tap event.
func (p *Parser) Event(e transport.Event) Entry {
	en := Entry{Time: e.Time, Dir: e.Dir, Size: len(e.Data), Err: e.Err, Text: e.Text, HTTP: e.HTTP}
	en.Kind = Kind(e.Kind)
	switch e.Kind {
	case transport.KindFrame:
		p.frame(&en, e.Data)
	case transport.KindBadFrame:
		en.Method = "bad frame"
	case transport.KindApp:
		// Read as a frame, its requests and answers paired among the
		// App's own.
		p.open, p.appOpen = p.appOpen, p.open
		p.frame(&en, e.Data)
		p.open, p.appOpen = p.appOpen, p.open
	case transport.KindModel:
		p.model(&en, e.Data)
	case transport.KindIntercept:
		interceptRow(&en, e.Data)
	}
	en.Data, en.Truncated = clip(e.Data)
	return en
}

// Warning makes a row of a session warning.
func (p *Parser) Warning(w session.Warning) Entry {
	en := Entry{Time: w.Time, Kind: KindWarning, Dir: transport.Incoming, Method: w.Kind, Text: w.Message, Size: len(w.Data)}
	en.Data, en.Truncated = clip(w.Data)
	return en
}

func clip(data []byte) ([]byte, bool) {
	if len(data) == 0 {
		return nil, false
	}
	if len(data) > MaxEntryBytes {
		return bytes.Clone(data[:MaxEntryBytes]), true
	}
	return bytes.Clone(data), false
}

func (p *Parser) frame(en *Entry, data []byte) {
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '[' {
		var batch []frameHead
		if json.Unmarshal(trimmed, &batch) != nil {
			en.Method = "batch"
			return
		}
		en.Method = "batch(" + strconv.Itoa(len(batch)) + ")"
		var ids []string
		en.Batch = make([]Entry, len(batch))
		for i := range batch {
			part := &en.Batch[i]
			part.Time, part.Kind, part.Dir = en.Time, en.Kind, en.Dir
			p.head(part, &batch[i])
			if part.ID != "" {
				ids = append(ids, part.ID)
			}
			en.RPCError = en.RPCError || part.RPCError
			if part.HasLatency {
				en.Latency, en.HasLatency = part.Latency, true
			}
		}
		en.ID = strings.Join(ids, ",")
		// One row stands for the whole batch: it answers no single request.
		en.Answers, en.Name = "", ""
		return
	}
	var h frameHead
	if json.Unmarshal(trimmed, &h) != nil {
		// Only an outgoing frame gets here unread (the composer sends
		// what it is given); incoming ones are bad frames already.
		en.Method = "not JSON"
		return
	}
	p.head(en, &h)
}

// head reads one message into en: a request or notification (its method
// and name), or a response paired with its request.
func (p *Parser) head(en *Entry, h *frameHead) {
	method, name := p.str(h.Method), ""
	if method != "" {
		name = p.nameOf(h.Params)
		en.TraceID = traceID(h.Params)
	}
	en.ID = p.message(en, h, method, name)
	switch {
	case method != "":
		en.Method, en.Name = method, name
	case h.isError():
		en.Method, en.Response = "error", true
		en.RPCError = true
		var e struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		}
		if len(h.Error) <= maxHeadObject && json.Unmarshal(h.Error, &e) == nil {
			en.ErrCode, en.ErrMessage = e.Code, e.Message
		}
	case h.Result != nil:
		en.Method, en.Response = "response", true
		en.InputRequired = p.inputRequired(h.Result)
		en.ToolError = toolError(h.Result)
	}
}

// message notes a request (method and name) or matches a response; it
// returns the id key.
func (p *Parser) message(en *Entry, h *frameHead, method, name string) string {
	key, ok := mcp.IDKey(h.ID)
	if !ok {
		return ""
	}
	dir := "o"
	other := "i"
	if en.Dir == transport.Incoming {
		dir, other = "i", "o"
	}
	switch {
	case method != "":
		if len(p.open) >= maxOpen {
			clear(p.open)
		}
		p.open[dir+key] = openRequest{t: en.Time, method: method, name: name}
	case h.Result != nil || h.isError():
		if r, ok := p.open[other+key]; ok {
			delete(p.open, other+key)
			en.Latency = en.Time.Sub(r.t)
			en.HasLatency = true
			en.Answers, en.Name = r.method, r.name
		}
		if h.isError() {
			en.RPCError = true
		}
	}
	return key
}

// model reads a model's turn (internal/genai): a request is a row of its
// operation (chat, execute_tool) about its model or tool; an answer is a
// response to it, paired by the turn's id, an error when the turn failed.
func (p *Parser) model(en *Entry, data []byte) {
	t, ok := genai.Decode(data)
	if !ok {
		en.Method, en.Err = "model", "not a model turn"
		return
	}
	name := t.Model
	if t.Op == genai.OpExecuteTool {
		name = t.Tool
	}
	en.ID = strconv.Quote(t.ID)
	if p.modelOpen == nil {
		p.modelOpen = map[string]openRequest{}
	}
	if en.Dir == transport.Outgoing {
		en.Method, en.Name = t.Op, name
		en.Text = turnText(&t, true)
		if len(p.modelOpen) >= maxOpen {
			clear(p.modelOpen)
		}
		p.modelOpen[en.ID] = openRequest{t: en.Time, method: t.Op, name: name}
		return
	}
	en.Method, en.Answers, en.Name = "response", t.Op, name
	if r, ok := p.modelOpen[en.ID]; ok {
		delete(p.modelOpen, en.ID)
		en.Latency, en.HasLatency = en.Time.Sub(r.t), true
		if en.Name == "" {
			en.Name = r.name
		}
	}
	en.ToolError = t.Failed()
	en.Text = turnText(&t, false)
}

// interceptRow reads a change mcpi proxy made (internal/intercept writes
// it; docs/trace-format.md is the format): the action is the row's method,
// the rule its name, and its text says what happened.
func interceptRow(en *Entry, data []byte) {
	var c struct {
		Action string `json:"action"`
		Rule   string `json:"rule"`
		Note   string `json:"note"`
	}
	if json.Unmarshal(data, &c) != nil || c.Action == "" {
		en.Method, en.Err = "intercept", "not an intercept change"
		return
	}
	en.Method, en.Name, en.Text = c.Action, c.Rule, c.Note
}

// turnText says what a turn holds, in a line: what a request sends, what
// an answer says or asks for.
func turnText(t *genai.Turn, request bool) string {
	var parts []string
	if t.Purpose != "" {
		parts = append(parts, t.Purpose)
	}
	switch {
	case request && t.Op == genai.OpChat:
		parts = append(parts, fmt.Sprintf("%d messages, %d tools", t.Messages, t.Tools))
	case request:
		parts = append(parts, string(t.Arguments))
	default:
		if t.Error != "" {
			parts = append(parts, "error: "+t.Error)
		}
		if t.Denied {
			parts = append(parts, "denied")
		}
		if t.Text != "" {
			parts = append(parts, t.Text)
		}
		for _, c := range t.ToolCalls {
			parts = append(parts, "calls "+c.Name)
		}
		if u := t.Usage; u != nil {
			parts = append(parts, fmt.Sprintf("%d in / %d out tokens", u.InputTokens, u.OutputTokens))
		}
	}
	return strings.Join(parts, " · ")
}

// Label is how a frame row names its message: the method and name of a
// request or notification, and for a response what kind of answer it is and
// to which request.
func (e *Entry) Label() string {
	what := e.Method
	if e.InputRequired {
		what = "input_required"
	}
	if e.Answers != "" {
		what += " · " + e.Answers
	}
	if e.Name != "" {
		what += " " + e.Name
	}
	return what
}

// Store is a bounded ring of entries addressed by sequence number.
type Store struct {
	ring    []Entry
	max     int
	first   int64 // seq of the oldest entry kept
	next    int64 // seq the next entry gets
	bytes   int
	budget  int
	release int64 // the oldest seq whose data may still be held
	// Dropped counts events lost before they reached the store (the inbox
	// drops the oldest when the UI falls far behind).
	Dropped int
	// open maps the requests not answered yet (direction and id) to their
	// entries, so that an answer marks its request Answered; bounded by
	// maxOpen.
	open map[string]int64
}

// NewStore returns a store of at most max entries and budget bytes of data
// (zero means the package bounds).
func NewStore(max, budget int) *Store {
	if max <= 0 {
		max = MaxEntries
	}
	if budget <= 0 {
		budget = MaxTotalBytes
	}
	return &Store{max: max, budget: budget, open: map[string]int64{}}
}

// noteAnswer remembers a request, or marks the request an answer answers.
func (s *Store) noteAnswer(e *Entry) {
	if (e.Kind != KindFrame && e.Kind != KindModel) || e.ID == "" {
		return
	}
	dir, other := "o", "i"
	if e.Kind == KindModel {
		// A model's turns have ids of their own.
		dir, other = "mo", "mi"
	}
	if e.Dir == transport.Incoming {
		dir, other = other, dir
	}
	switch e.Method {
	case "response", "error":
		if seq, ok := s.open[other+e.ID]; ok {
			delete(s.open, other+e.ID)
			if r := s.Get(seq); r != nil {
				r.Answered = true
			}
		}
	default:
		if len(s.open) >= maxOpen {
			clear(s.open)
		}
		s.open[dir+e.ID] = e.Seq
	}
}

// Append adds an entry and returns its sequence number.
func (s *Store) Append(e Entry) int64 {
	e.Seq = s.next
	s.next++
	if len(s.ring) < s.max {
		s.ring = append(s.ring, e)
	} else {
		old := &s.ring[int(e.Seq%int64(s.max))]
		s.bytes -= len(old.Data)
		*old = e
		s.first = s.next - int64(s.max)
	}
	s.bytes += len(e.Data)
	s.noteAnswer(s.at(e.Seq))
	if s.release < s.first {
		s.release = s.first
	}
	for s.bytes > s.budget && s.release < s.next-1 {
		old := s.at(s.release)
		if len(old.Data) > 0 {
			s.bytes -= len(old.Data)
			old.Data = nil
			old.Released = true
		}
		s.release++
	}
	return e.Seq
}

func (s *Store) at(seq int64) *Entry { return &s.ring[int(seq%int64(s.max))] }

// Get returns the entry seq, or nil when it is no longer kept.
func (s *Store) Get(seq int64) *Entry {
	if seq < s.first || seq >= s.next {
		return nil
	}
	return s.at(seq)
}

// First and Next bound the sequence numbers kept: [First, Next).
func (s *Store) First() int64 { return s.first }

// Next is the sequence number the next entry gets.
func (s *Store) Next() int64 { return s.next }

// Len is the number of entries kept.
func (s *Store) Len() int { return int(s.next - s.first) }

// Bytes is the data held.
func (s *Store) Bytes() int { return s.bytes }
