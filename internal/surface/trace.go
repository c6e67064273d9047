package surface

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"io"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/record"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// The lists a trace may hold, by method: the member of the result that
// holds the page's items, and the notification that makes a listing
// stale.
var traceLists = map[string]struct {
	member  string
	changed []string
}{
	"tools/list":               {"tools", []string{"notifications/tools/list_changed"}},
	"resources/list":           {"resources", []string{"notifications/resources/list_changed"}},
	"resources/templates/list": {"resourceTemplates", []string{"notifications/resources/list_changed"}},
	"prompts/list":             {"prompts", []string{"notifications/prompts/list_changed"}},
}

// maxPending bounds the requests a trace reader waits to see answered: a
// trace of requests never answered cannot make it hold them all.
const maxPending = 1 << 16

// FromTrace reads the surface a trace shows: the last handshake, and for
// each list the last complete listing (every page, from the first to the
// one without a next cursor, after the last list_changed). A list the
// trace holds no complete listing of is unknown (nil), never empty; a
// listing whose cursors repeat or pass session.DefaultMaxPages pages never
// completes. Corrupt lines are skipped as every reader of traces skips
// them; a trace cut short is read to where it ends.
func FromTrace(r io.Reader) (*Snapshot, error) {
	rd, err := record.NewReader(r)
	if err != nil {
		return nil, err
	}
	t := &traceState{pending: map[string]traceReq{}, lists: map[string]*traceList{}}
	for m := range traceLists {
		t.lists[m] = &traceList{}
	}
	for {
		ev, err := rd.Next()
		if err == io.EOF || errors.Is(err, record.ErrTruncated) {
			break
		}
		if errors.As(err, new(*record.CorruptError)) {
			continue
		}
		if err != nil {
			return nil, err
		}
		switch ev.Type {
		case record.TypeNote:
			if ev.Kind == record.NoteSession {
				var n record.SessionNote
				if ev.DecodeNote(&n) == nil && n.Era != "" {
					t.era = n.Era
				}
			}
		case record.TypeFrame:
			msg := []byte(ev.Msg)
			if len(msg) == 0 {
				msg = ev.Data
			}
			t.frame(ev.Dir, msg)
		}
	}
	return t.snapshot(), nil
}

type traceReq struct {
	method string
	cursor string
	params json.RawMessage
}

type traceList struct {
	done  []Entry // the last complete listing; nil: none
	items []Entry // the listing under way
	next  string  // the cursor the listing under way waits for
	pages int
	seen  map[[sha256.Size]byte]bool
	on    bool // a listing is under way
}

type traceState struct {
	pending map[string]traceReq
	lists   map[string]*traceList

	era, revision       string
	serverInfo          map[string]any
	capabilities        map[string]any
	instructions        string
	clientCapabilities  map[string]any
	offeredCapabilities map[string]any // of the initialize waiting for its answer
}

// frame takes one frame, a message or a batch.
func (t *traceState) frame(dir transport.Direction, b []byte) {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(b, &batch) != nil {
			return
		}
		for _, m := range batch {
			t.message(dir, m)
		}
		return
	}
	t.message(dir, b)
}

func (t *traceState) message(dir transport.Direction, b []byte) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if json.Unmarshal(b, &m) != nil {
		return
	}
	id := string(m.ID)
	switch {
	case dir == transport.Outgoing && m.Method != "" && len(m.ID) > 0:
		t.request(id, m.Method, m.Params)
	case dir == transport.Incoming && m.Method != "" && len(m.ID) == 0:
		for method, l := range traceLists {
			for _, n := range l.changed {
				if n == m.Method {
					t.lists[method].stale()
				}
			}
		}
	case dir == transport.Incoming && m.Method == "" && len(m.ID) > 0:
		req, ok := t.pending[id]
		if !ok {
			return
		}
		delete(t.pending, id)
		t.response(req, m.Result, m.Error != nil && string(m.Error) != "null")
	}
}

func (t *traceState) request(id, method string, params json.RawMessage) {
	var p struct {
		Cursor       string                     `json:"cursor"`
		Capabilities map[string]any             `json:"capabilities"`
		Meta         map[string]json.RawMessage `json:"_meta"`
	}
	decode(params, &p)
	if raw, ok := p.Meta[mcp.MetaClientCapabilities]; ok {
		var caps map[string]any
		if decode(raw, &caps) == nil && caps != nil {
			t.clientCapabilities = caps
		}
	}
	_, listing := traceLists[method]
	if !listing && method != "initialize" && method != "server/discover" {
		return
	}
	if method == "initialize" {
		t.offeredCapabilities = p.Capabilities
	}
	if len(t.pending) >= maxPending {
		clear(t.pending)
	}
	t.pending[id] = traceReq{method: method, cursor: p.Cursor, params: params}
}

func (t *traceState) response(req traceReq, result json.RawMessage, failed bool) {
	switch req.method {
	case "initialize":
		var r struct {
			ProtocolVersion string         `json:"protocolVersion"`
			Capabilities    map[string]any `json:"capabilities"`
			ServerInfo      map[string]any `json:"serverInfo"`
			Instructions    string         `json:"instructions"`
		}
		if failed || decode(result, &r) != nil {
			return
		}
		t.era, t.revision = session.EraLegacy, r.ProtocolVersion
		t.handshake(r.Capabilities, r.ServerInfo, r.Instructions)
		if t.offeredCapabilities != nil {
			t.clientCapabilities = t.offeredCapabilities
		}
		return
	case "server/discover":
		var r struct {
			Capabilities map[string]any             `json:"capabilities"`
			ServerInfo   map[string]any             `json:"serverInfo"`
			Instructions string                     `json:"instructions"`
			Meta         map[string]json.RawMessage `json:"_meta"`
		}
		if failed || decode(result, &r) != nil {
			return
		}
		var p struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		}
		decode(req.params, &p)
		var rev string
		json.Unmarshal(p.Meta[mcp.MetaProtocolVersion], &rev)
		if si, ok := r.Meta[mcp.MetaServerInfo]; ok {
			r.ServerInfo = nil
			decode(si, &r.ServerInfo)
		}
		t.era, t.revision = session.EraModern, rev
		t.handshake(r.Capabilities, r.ServerInfo, r.Instructions)
		return
	}
	l := t.lists[req.method]
	if failed {
		if req.cursor == "" || l.on && req.cursor == l.next {
			l.on = false
		}
		return
	}
	var page map[string]json.RawMessage
	if decode(result, &page) != nil {
		return
	}
	var items []Entry
	if decode(page[traceLists[req.method].member], &items) != nil {
		items = nil
	}
	var next string
	json.Unmarshal(page["nextCursor"], &next)
	l.page(req.cursor, items, next)
}

func (t *traceState) handshake(caps, info map[string]any, instructions string) {
	if caps == nil {
		caps = map[string]any{}
	}
	t.capabilities, t.serverInfo, t.instructions = caps, info, instructions
}

// stale forgets the list: the server said it changed.
func (l *traceList) stale() {
	l.done, l.on, l.items = nil, false, nil
}

// page takes one page of a listing, asked for with cursor.
func (l *traceList) page(cursor string, items []Entry, next string) {
	switch {
	case cursor == "":
		l.on, l.items, l.pages, l.seen = true, nil, 0, map[[sha256.Size]byte]bool{}
	case !l.on || cursor != l.next:
		return // a page of no listing under way: it cannot be placed
	}
	if cursor != "" {
		sum := sha256.Sum256([]byte(cursor))
		if l.seen[sum] {
			l.on, l.items = false, nil // the cursors go round: it never completes
			return
		}
		l.seen[sum] = true
	}
	l.pages++
	if l.pages > session.DefaultMaxPages {
		l.on, l.items = false, nil
		return
	}
	l.items = append(l.items, items...)
	if next == "" {
		l.done = l.items
		if l.done == nil {
			l.done = []Entry{}
		}
		l.on, l.items = false, nil
		return
	}
	l.next = next
}

func (t *traceState) snapshot() *Snapshot {
	s := &Snapshot{Format: Format, Surface: Surface{
		Era: t.era, Revision: t.revision, ServerInfo: t.serverInfo, Capabilities: t.capabilities,
		Instructions: t.instructions, ClientCapabilities: t.clientCapabilities,
		Tools: t.lists["tools/list"].done, Resources: t.lists["resources/list"].done,
		Templates: t.lists["resources/templates/list"].done, Prompts: t.lists["prompts/list"].done,
	}}
	if caps := s.Capabilities; caps != nil {
		// What the server did not declare it has none of.
		none := func(l *[]Entry, capability string) {
			if _, ok := caps[capability]; !ok && *l == nil {
				*l = []Entry{}
			}
		}
		none(&s.Tools, "tools")
		none(&s.Resources, "resources")
		none(&s.Templates, "resources")
		none(&s.Prompts, "prompts")
	}
	return s
}
