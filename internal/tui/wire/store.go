// Package wire is the wire pane: every event the transport tap saw (frames
// both ways, bad frames, stderr, lifecycle, HTTP) and every warning of the
// session, one row each, in a bounded store rendered as a virtual list.
package wire

import (
	"bytes"
	"cmp"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/session"
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

// Kind is what a row shows.
type Kind uint8

// Kinds of rows: the transport's event kinds, and session warnings.
const (
	KindFrame Kind = iota + 1
	KindBadFrame
	KindStderr
	KindLifecycle
	KindHTTP
	KindWarning
)

func (k Kind) String() string {
	switch k {
	case KindFrame:
		return "frame"
	case KindBadFrame:
		return "bad-frame"
	case KindStderr:
		return "stderr"
	case KindLifecycle:
		return "lifecycle"
	case KindHTTP:
		return "http"
	case KindWarning:
		return "warning"
	}
	return "?"
}

// Entry is one row of the wire pane.
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
	Err  string // why a bad frame is bad, or a lifecycle error
	Text string // lifecycle and HTTP descriptions, warning messages
	HTTP *transport.HTTPMeta
}

// Parser turns tap events into entries and matches responses to requests by
// id to compute latencies. It is used by one goroutine at a time.
type Parser struct {
	// open requests by direction and id key: an outgoing request is
	// answered by an incoming response, and the other way round.
	open map[string]openRequest
	// names interns methods and names: a session repeats a few of them
	// a million times.
	names map[string]string
}

type openRequest struct {
	t            time.Time
	method, name string
}

// maxNames bounds the interned strings; past it, strings are kept as they
// come.
const maxNames = 4096

func (p *Parser) intern(s string) string {
	if s == "" {
		return ""
	}
	if v, ok := p.names[s]; ok {
		return v
	}
	if len(p.names) < maxNames && len(s) <= 256 {
		p.names[s] = s
	}
	return s
}

// maxOpen bounds the requests waiting for a match; requests that never get
// an answer must not grow it forever.
const maxOpen = 50_000

// NewParser returns a parser.
func NewParser() *Parser {
	return &Parser{open: make(map[string]openRequest), names: make(map[string]string)}
}

// present notes that a JSON member is there without copying its value.
type present bool

func (p *present) UnmarshalJSON([]byte) error { *p = true; return nil }

// maxHeadObject bounds the params or result object decoded a second time
// for the few strings a row shows; a bigger one is only noted as present.
const maxHeadObject = 64 << 10

// objectHead notes that a JSON member is there and, when it is a small
// object, keeps the string members a row shows. Anything else about it
// (a wrong type, a huge value) is not the row's business.
type objectHead struct {
	present                       bool
	name, uri, taskID, resultType string
}

func (o *objectHead) UnmarshalJSON(b []byte) error {
	o.present = true
	if len(b) == 0 || b[0] != '{' || len(b) > maxHeadObject {
		return nil
	}
	var v struct {
		Name       json.RawMessage `json:"name"`
		URI        json.RawMessage `json:"uri"`
		TaskID     json.RawMessage `json:"taskId"`
		ResultType json.RawMessage `json:"resultType"`
	}
	if json.Unmarshal(b, &v) != nil {
		return nil
	}
	o.name, o.uri, o.taskID, o.resultType = str(v.Name), str(v.URI), str(v.TaskID), str(v.ResultType)
	return nil
}

// str is a JSON string's value, or "" for anything else.
func str(b json.RawMessage) string {
	var s string
	if len(b) == 0 || b[0] != '"' || json.Unmarshal(b, &s) != nil {
		return ""
	}
	return s
}

type frameHead struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params objectHead      `json:"params"`
	Result objectHead      `json:"result"`
	Error  present         `json:"error"`
}

// Event parses one tap event.
func (p *Parser) Event(e transport.Event) Entry {
	en := Entry{Time: e.Time, Dir: e.Dir, Size: len(e.Data), Err: e.Err, Text: e.Text, HTTP: e.HTTP}
	switch e.Kind {
	case transport.KindFrame:
		en.Kind = KindFrame
		p.frame(&en, e.Data)
	case transport.KindBadFrame:
		en.Kind = KindBadFrame
		en.Method = "bad frame"
	case transport.KindStderr:
		en.Kind = KindStderr
	case transport.KindLifecycle:
		en.Kind = KindLifecycle
	case transport.KindHTTP:
		en.Kind = KindHTTP
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
		for i := range batch {
			if id := p.message(en, &batch[i]); id != "" {
				ids = append(ids, id)
			}
		}
		en.ID = strings.Join(ids, ",")
		return
	}
	var h frameHead
	if json.Unmarshal(trimmed, &h) != nil {
		return
	}
	en.ID = p.message(en, &h)
	switch {
	case h.Method != "":
		en.Method = p.intern(h.Method)
		en.Name = p.intern(cmp.Or(h.Params.name, h.Params.uri, h.Params.taskID))
	case bool(h.Error):
		en.Method = "error"
		en.RPCError = true
	case h.Result.present:
		en.Method = "response"
		en.InputRequired = h.Result.resultType == "input_required"
	}
}

// message notes a request or matches a response; it returns the id key.
func (p *Parser) message(en *Entry, h *frameHead) string {
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
	case h.Method != "":
		if len(p.open) >= maxOpen {
			clear(p.open)
		}
		p.open[dir+key] = openRequest{t: en.Time, method: p.intern(h.Method), name: p.intern(cmp.Or(h.Params.name, h.Params.uri, h.Params.taskID))}
	case h.Result.present || bool(h.Error):
		if r, ok := p.open[other+key]; ok {
			delete(p.open, other+key)
			en.Latency = en.Time.Sub(r.t)
			en.HasLatency = true
			en.Answers, en.Name = r.method, r.name
		}
		if h.Error {
			en.RPCError = true
		}
	}
	return key
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
	return &Store{max: max, budget: budget}
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
