package replay

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/record"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// Exchange is one client request of a trace with what the server sent for
// it: the messages that came while it was outstanding, then its response.
type Exchange struct {
	// N numbers the exchanges from 1 in the order the requests were sent.
	N      int
	Method string
	ID     json.RawMessage
	Params json.RawMessage
	// Key is the method and the canonical params (without _meta), which is
	// how a live request is matched to a recorded one.
	Key string
	// Before holds the server's messages (notifications, requests) that
	// arrived while the request was outstanding, in order.
	Before []json.RawMessage
	// Response is the recorded response message, or nil when the trace
	// ends before it.
	Response json.RawMessage
	// After holds server messages that arrived once the response was in and
	// before the next request was sent.
	After []json.RawMessage
}

// ServerRequest is a request the server sent, with the answer recorded.
type ServerRequest struct {
	Method string
	Key    string
	Params json.RawMessage
	Answer json.RawMessage // the recorded response message, or nil
}

// Trace is a recorded session arranged for replay.
type Trace struct {
	Header    record.Header
	Exchanges []*Exchange
	// ServerRequests are the server->client requests, in order.
	ServerRequests []*ServerRequest
	// Skipped are the corrupt lines read past, each named (the events
	// around them are kept).
	Skipped []*record.CorruptError
	// Damage, when not nil, says where the trace stopped being readable;
	// everything before it was loaded.
	Damage error
}

// Load reads a trace file. A truncated or corrupt trace loads up to the
// damage, which Trace.Damage describes.
func Load(path string) (*Trace, error) {
	r, err := record.Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return read(r)
}

// Read reads a trace from r.
func Read(in io.Reader) (*Trace, error) {
	r, err := record.NewReader(in)
	if err != nil {
		return nil, err
	}
	return read(r)
}

func read(r *record.Reader) (*Trace, error) {
	t := &Trace{Header: r.Header()}
	b := builder{t: t, byID: map[string]*Exchange{}, srvByID: map[string]*ServerRequest{}}
	for {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var ce *record.CorruptError
			if errors.As(err, &ce) {
				t.Skipped = append(t.Skipped, ce)
				continue
			}
			if errors.Is(err, record.ErrTruncated) {
				t.Damage = err
				break
			}
			return nil, err
		}
		if ev.Type != record.TypeFrame || len(ev.Msg) == 0 {
			continue
		}
		msgs, _, err := mcp.DecodeFrame(ev.Msg)
		if err != nil {
			continue
		}
		for _, m := range msgs {
			raw, _ := json.Marshal(m)
			b.add(ev.Dir, m, raw)
		}
	}
	return t, nil
}

type builder struct {
	t           *Trace
	byID        map[string]*Exchange // outstanding client requests
	srvByID     map[string]*ServerRequest
	outstanding []*Exchange
	last        *Exchange
}

func (b *builder) add(dir transport.Direction, m *mcp.Message, raw json.RawMessage) {
	key, _ := mcp.IDKey(m.ID)
	switch dir {
	case transport.Outgoing:
		switch {
		case m.IsRequest():
			ex := &Exchange{N: len(b.t.Exchanges) + 1, Method: m.Method, ID: m.ID, Params: m.Params, Key: requestKey(m.Method, m.Params)}
			b.t.Exchanges = append(b.t.Exchanges, ex)
			b.byID[key] = ex
			b.outstanding = append(b.outstanding, ex)
		case m.IsResponse():
			if sr := b.srvByID[key]; sr != nil {
				sr.Answer = raw
				delete(b.srvByID, key)
			}
		}
	case transport.Incoming:
		if m.IsResponse() {
			if ex := b.byID[key]; ex != nil {
				ex.Response = raw
				delete(b.byID, key)
				for i, o := range b.outstanding {
					if o == ex {
						b.outstanding = append(b.outstanding[:i], b.outstanding[i+1:]...)
						break
					}
				}
				b.last = ex
			}
			return
		}
		if m.IsRequest() {
			sr := &ServerRequest{Method: m.Method, Key: requestKey(m.Method, m.Params), Params: m.Params}
			b.t.ServerRequests = append(b.t.ServerRequests, sr)
			b.srvByID[key] = sr
		}
		// A server message belongs to the request whose progress it
		// reports, else to the newest outstanding request, else it follows
		// the last response.
		if ex := b.owner(m); ex != nil {
			ex.Before = append(ex.Before, raw)
		} else if b.last != nil {
			b.last.After = append(b.last.After, raw)
		}
	}
}

func (b *builder) owner(m *mcp.Message) *Exchange {
	if m.Method == "notifications/progress" {
		var p mcp.ProgressParams
		if json.Unmarshal(m.Params, &p) == nil {
			tok, _ := mcp.IDKey(p.ProgressToken)
			for _, ex := range b.outstanding {
				if progressTokenKey(ex.Params) == tok && tok != "" {
					return ex
				}
			}
		}
	}
	if n := len(b.outstanding); n > 0 {
		return b.outstanding[n-1]
	}
	return nil
}

func progressTokenKey(params json.RawMessage) string {
	var p struct {
		Meta struct {
			ProgressToken json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	}
	json.Unmarshal(params, &p)
	k, _ := mcp.IDKey(p.Meta.ProgressToken)
	return k
}

// keyOnlyMethods are matched by method alone: their params describe the
// client (its name, capabilities, revision), not what it asks for.
var keyOnlyMethods = map[string]bool{"initialize": true, "server/discover": true, "ping": true}

// requestKey is the method and the canonical JSON of the params without
// _meta.
func requestKey(method string, params json.RawMessage) string {
	if keyOnlyMethods[method] {
		return method
	}
	return method + " " + canonicalParams(params)
}

func canonicalParams(params json.RawMessage) string {
	if len(bytes.TrimSpace(params)) == 0 {
		return "{}"
	}
	var v any
	d := json.NewDecoder(bytes.NewReader(params))
	d.UseNumber()
	if d.Decode(&v) != nil {
		return string(params)
	}
	if m, ok := v.(map[string]any); ok {
		delete(m, "_meta")
	}
	b, err := json.Marshal(v) // map keys come out sorted
	if err != nil {
		return string(params)
	}
	return string(b)
}

// Describe names an exchange for people: method, and the tool, prompt or
// resource it is about.
func (e *Exchange) Describe() string {
	var p struct {
		Name string `json:"name"`
		URI  string `json:"uri"`
	}
	json.Unmarshal(e.Params, &p)
	switch {
	case p.Name != "":
		return fmt.Sprintf("%s %s", e.Method, p.Name)
	case p.URI != "":
		return fmt.Sprintf("%s %s", e.Method, p.URI)
	}
	return e.Method
}
