package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpi-dev/mcpi/internal/bounds"
	"github.com/mcpi-dev/mcpi/internal/live"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// AttachInfo is the first thing an attached client learns.
type AttachInfo struct {
	Name            string     `json:"name"`
	Target          string     `json:"target"`
	Era             string     `json:"era"`
	ProtocolVersion string     `json:"protocolVersion"`
	Transport       string     `json:"transport,omitempty"`
	SessionID       string     `json:"sessionId,omitempty"`
	EraReason       string     `json:"eraReason,omitempty"`
	Roots           []mcp.Root `json:"roots"`
	// Forgotten counts the first events of the session the history no
	// longer holds.
	Forgotten int64 `json:"forgotten,omitempty"`
}

// History bounds: what an attaching client is shown of the session's past.
const (
	historyEvents = 20000
	historyBytes  = 32 << 20
)

// watchBuffer and watchBytes bound what waits for an attached client that
// reads slowly: beyond them the session's events and notifications are
// dropped (and counted), never waited for.
const (
	watchBuffer = 8192
	watchBytes  = 16 << 20
)

// attachWriteTimeout is how long a send to an attached client may take: a
// client that reads nothing for that long (a TUI suspended with ctrl+z, a
// stalled terminal) is let go, and attaches again when it comes back.
const attachWriteTimeout = 10 * time.Second

// watchItem is something on its way to an attached client, in order: an
// event of the session's connection, a notification of its server, or a
// message of the relay's own (an answer, a request, progress).
type watchItem struct {
	ev    *transport.Event
	note  *session.Notification
	msg   []byte // an encoded JSON-RPC message
	roots bool   // the session's roots changed: send them as they are now
	size  int64  // counted in held while queued
}

// relay is the daemon's side of one attached client. Everything it
// sends, but the first frame and the history, goes through items, which
// one goroutine (pump) drains: the session's side only ever offers (never
// waits), the relay's own goroutines wait their turn.
type relay struct {
	h       *Held
	conn    *live.Conn
	ctx     context.Context
	items   chan watchItem
	dropped atomic.Int64
	// budget accounts what offer queued in items, in count and bytes
	// (watchBuffer, watchBytes); the relay's own messages wait their turn
	// instead, each held by the request it answers.
	budget *bounds.Budget

	mu    sync.Mutex
	calls map[string]context.CancelFunc // the client's request id -> cancel
	// heldIDs maps the held session's ids of this client's requests to
	// the client's ids, as JSON.
	heldIDs map[string]json.RawMessage
	asks    map[string]chan *mcp.Message // id of a request to the client -> its answer
}

// newRelay returns the relay for one attached client on conn, which ends
// with ctx.
func newRelay(ctx context.Context, h *Held, conn *live.Conn) *relay {
	return &relay{h: h, conn: conn, ctx: ctx, items: make(chan watchItem, watchBuffer),
		budget: bounds.NewBudget("attached client", watchBuffer, watchBytes),
		calls:  map[string]context.CancelFunc{}, heldIDs: map[string]json.RawMessage{}, asks: map[string]chan *mcp.Message{}}
}

// ServeAttached relays for one attached client until it goes or the
// session ends.
func (h *Held) ServeAttached(ctx context.Context, conn *live.Conn) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	conn.SetWriteTimeout(attachWriteTimeout)
	w := newRelay(ctx, h, conn)

	info := AttachInfo{Name: h.name, Target: h.target, Era: h.Client().Era(), ProtocolVersion: h.Client().ProtocolVersion(), EraReason: h.Client().EraReason()}
	d := transport.Describe(h.Client().Conn())
	info.Transport, info.SessionID = d.Transport, d.SessionID
	// The history and the registration are one step: no event is missed
	// or shown twice.
	hist, forgotten := h.hub.watch(w)
	defer h.hub.unwatch(w)
	// Read once w is registered: a later change is sent to it.
	info.Roots = h.disp.Roots()
	info.Forgotten = forgotten
	raw, _ := json.Marshal(info)
	if conn.Send(live.Frame{Attached: raw}) != nil {
		return
	}
	for i := range hist {
		if w.sendEvent(&hist[i]) != nil {
			return
		}
		for _, n := range pastNotes(&hist[i]) {
			if w.sendPast(n) != nil {
				return
			}
		}
	}
	for _, p := range h.disp.addWatcher(w) {
		go w.ask(p)
	}
	defer h.disp.removeWatcher(w)

	go w.pump(ctx)
	go func() {
		select {
		case <-h.gone:
		case <-ctx.Done():
		}
		// The client is told why the session ended before its
		// connection closes: the record may be gone by then.
		select {
		case <-h.ended:
		case <-time.After(time.Second):
		}
		if st := h.end.Load(); st != nil {
			conn.Send(live.Frame{Error: fmt.Sprintf("session %s has ended (%s): %s", h.name, st.State, st.Reason)})
		}
		conn.Close()
	}()
	for {
		var f live.Frame
		if err := conn.Recv(&f); err != nil {
			break
		}
		if len(f.Msg) > 0 {
			w.handle(ctx, f.Msg)
		}
	}
	cancel()
	w.mu.Lock()
	for _, c := range w.calls {
		c()
	}
	w.mu.Unlock()
}

func (w *relay) sendEvent(e *transport.Event) error {
	b, err := json.Marshal(e)
	if err != nil {
		return nil
	}
	return w.conn.Send(live.Frame{Wire: b})
}

func (w *relay) sendMsg(b []byte) error { return w.conn.Send(live.Frame{Msg: b}) }

// pastNote is a notification of the session's history as an attached
// client gets it (live.Frame.Past).
type pastNote struct {
	Time   time.Time       `json:"time"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
}

// pastNotes returns the server's notifications an event of the history
// carries (a frame received: one message, or a batch).
func pastNotes(e *transport.Event) []session.Notification {
	if e.Kind != transport.KindFrame || e.Dir != transport.Incoming {
		return nil
	}
	var msgs []mcp.Message
	data := bytes.TrimSpace(e.Data)
	if len(data) > 0 && data[0] == '[' {
		if json.Unmarshal(data, &msgs) != nil {
			return nil
		}
	} else {
		var m mcp.Message
		if json.Unmarshal(data, &m) != nil {
			return nil
		}
		msgs = []mcp.Message{m}
	}
	var out []session.Notification
	for _, m := range msgs {
		if m.Method != "" && len(m.ID) == 0 {
			out = append(out, session.Notification{Time: e.Time, Method: m.Method, Params: m.Params})
		}
	}
	return out
}

// sendPast sends a notification of the session's history, its ids made
// foreign as for a live one (none of the client's requests was made yet).
func (w *relay) sendPast(n session.Notification) error {
	method, params, ok := w.translateNote(&n)
	if !ok {
		return nil
	}
	b, err := json.Marshal(pastNote{Time: n.Time, Method: method, Params: params})
	if err != nil {
		return nil
	}
	return w.conn.Send(live.Frame{Past: b})
}

// sendRoots sends what the client knows of the session again, with the
// session's roots as they are now.
func (w *relay) sendRoots() error {
	b, err := json.Marshal(AttachInfo{Name: w.h.name, Roots: w.h.disp.Roots()})
	if err != nil {
		return nil
	}
	return w.conn.Send(live.Frame{Attached: b})
}

// rootsChanged tells every attached client that the session's roots
// changed; each is sent them as they are when its turn comes, so the
// last one sent is the newest.
func (h *Held) RootsChanged() {
	h.hub.mu.Lock()
	ws := slices.Clone(h.hub.watchers)
	h.hub.mu.Unlock()
	for _, w := range ws {
		go w.sendItem(watchItem{roots: true})
	}
}

// offer hands the relay an item without ever blocking the session: past
// the bounds it is dropped and counted.
func (w *relay) offer(it watchItem) {
	switch {
	case it.ev != nil:
		it.size = int64(eventSize(it.ev))
	case it.note != nil:
		it.size = int64(len(it.note.Params) + 64)
	default:
		it.size = int64(len(it.msg) + 64)
	}
	if w.budget.Take(it.size) != nil {
		w.dropped.Add(1)
		return
	}
	select {
	case w.items <- it:
	default:
		w.budget.Give(it.size)
		w.dropped.Add(1)
	}
}

// send queues a message of the relay's own (an answer, a request, a
// cancellation) behind what is queued already, waiting its turn; it gives
// up when the client is gone.
func (w *relay) send(b []byte, err error) {
	if err != nil {
		return
	}
	w.sendItem(watchItem{msg: b})
}

// sendItem queues an item of the relay's own, waiting its turn; it gives
// up when the client is gone.
func (w *relay) sendItem(it watchItem) {
	select {
	case w.items <- it:
	case <-w.ctx.Done():
	}
}

// pump sends the session's events and notifications to the client.
func (w *relay) pump(ctx context.Context) {
	for {
		select {
		case it := <-w.items:
			if it.size > 0 {
				w.budget.Give(it.size)
			}
			if n := w.dropped.Swap(0); n > 0 {
				w.sendEvent(&transport.Event{Time: time.Now(), Kind: transport.KindLifecycle,
					Text: fmt.Sprintf("%d event(s) of the session not shown: this client read too slowly", n)})
			}
			var err error
			switch {
			case it.ev != nil:
				err = w.sendEvent(it.ev)
			case it.msg != nil:
				err = w.sendMsg(it.msg)
			case it.roots:
				err = w.sendRoots()
			default:
				if msg := w.translate(it.note); msg != nil {
					err = w.sendMsg(msg)
				}
			}
			if err != nil {
				w.conn.Close()
				return
			}
		case <-ctx.Done():
			return
		}
	}
}

// handle takes one message from the client.
func (w *relay) handle(ctx context.Context, raw json.RawMessage) {
	var m mcp.Message
	if json.Unmarshal(raw, &m) != nil {
		return
	}
	switch {
	case m.IsRequest():
		switch m.Method {
		case "initialize", "server/discover":
			// The session started already: its start is the answer.
			w.reply(m.ID, w.h.Client().InitializeResultRaw(), nil)
		default:
			go w.relay(ctx, m.ID, m.Method, m.Params)
		}
	case m.Method != "":
		w.notified(ctx, m.Method, m.Params)
	case len(m.ID) > 0:
		key, ok := mcp.IDKey(m.ID)
		if !ok {
			return
		}
		w.mu.Lock()
		ch := w.asks[key]
		delete(w.asks, key)
		w.mu.Unlock()
		if ch != nil {
			ch <- &m
		}
	}
}

// notified takes a notification from the client.
func (w *relay) notified(ctx context.Context, method string, params json.RawMessage) {
	switch method {
	case "notifications/initialized":
		// Part of a start the session made long ago.
	case "notifications/roots/list_changed":
		// The roots are the session's: the client changes them with the
		// roots command, which tells the server.
	case "notifications/cancelled":
		var p mcp.CancelledParams
		if json.Unmarshal(params, &p) != nil {
			return
		}
		if key, ok := mcp.IDKey(p.RequestID); ok {
			w.mu.Lock()
			cancel := w.calls[key]
			w.mu.Unlock()
			if cancel != nil {
				cancel()
			}
		}
	default:
		var p any
		if len(params) > 0 {
			p = params
		}
		w.h.Client().Notify(ctx, method, p)
	}
}

// relay sends one request of the client through the held session.
func (w *relay) relay(ctx context.Context, id json.RawMessage, method string, params json.RawMessage) {
	key, ok := mcp.IDKey(id)
	if !ok {
		return
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w.mu.Lock()
	w.calls[key] = cancel
	w.mu.Unlock()
	var heldKey string
	defer func() {
		w.mu.Lock()
		delete(w.calls, key)
		if heldKey != "" {
			delete(w.heldIDs, heldKey)
		}
		w.mu.Unlock()
	}()
	opts := &session.RelayOptions{OnID: func(hid int64) {
		heldKey = strconv.FormatInt(hid, 10)
		w.mu.Lock()
		w.heldIDs[heldKey] = id
		w.mu.Unlock()
	}}
	// The client's progress token is swapped for the held session's.
	if tok, rest, ok := takeProgressToken(params); ok {
		params = rest
		opts.OnProgress = func(p mcp.ProgressParams) {
			// On the session's reader: offered, never waited for.
			p.ProgressToken = tok
			if b, err := mcp.NewNotification("notifications/progress", p); err == nil {
				w.offer(watchItem{msg: b})
			}
		}
	}
	res, err := w.h.Client().Relay(ctx, method, params, opts)
	if ctx.Err() != nil && err != nil {
		return // cancelled by the client, which expects no answer
	}
	w.reply(id, res, err)
}

// reply answers the client's request id with a result or an error.
func (w *relay) reply(id, result json.RawMessage, err error) {
	if err == nil {
		if result == nil {
			result = json.RawMessage("{}")
		}
		w.send(mcp.NewResult(id, result))
		return
	}
	e := &mcp.RPCError{Code: mcp.CodeInternalError, Message: err.Error()}
	var re *session.RPCError
	if errors.As(err, &re) && re.RPCError != nil {
		e = re.RPCError
	}
	w.send(mcp.NewErrorResponse(id, e))
}

// translate makes a notification of the server fit this client: the ids
// of its own requests become its own again, any other id a string that
// cannot name one of its requests. Progress of its own requests went
// already, under its own token: nil.
func (w *relay) translate(n *session.Notification) []byte {
	method, params, ok := w.translateNote(n)
	if !ok {
		return nil
	}
	return notificationFrame(method, params)
}

// translateNote is translate's work: the notification's method and
// params as the client gets them; false for progress of its own. The
// daemon's marker (mcp.MetaFromSession) is taken out of what the server
// says.
func (w *relay) translateNote(n *session.Notification) (string, json.RawMessage, bool) {
	var params map[string]json.RawMessage
	if len(n.Params) == 0 || json.Unmarshal(n.Params, &params) != nil || params == nil {
		return n.Method, n.Params, true
	}
	changed := false
	mine := func(raw json.RawMessage) (json.RawMessage, bool) {
		key, ok := mcp.IDKey(raw)
		if !ok {
			return raw, false
		}
		w.mu.Lock()
		id, ok := w.heldIDs[key]
		w.mu.Unlock()
		return id, ok
	}
	foreign := func(raw json.RawMessage) json.RawMessage {
		b, _ := json.Marshal("session:" + string(raw))
		return b
	}
	switch n.Method {
	case "notifications/progress":
		if tok, ok := params["progressToken"]; ok {
			if _, own := mine(tok); own {
				return "", nil, false
			}
			params["progressToken"], changed = foreign(tok), true
		}
	case "notifications/cancelled":
		if id, ok := params["requestId"]; ok {
			params["requestId"], changed = foreign(id), true
		}
	}
	if rawMeta, ok := params["_meta"]; ok {
		var meta map[string]json.RawMessage
		if json.Unmarshal(rawMeta, &meta) == nil {
			if _, ok := meta[mcp.MetaFromSession]; ok {
				// Only the daemon speaks as the session.
				delete(meta, mcp.MetaFromSession)
				params["_meta"], _ = json.Marshal(meta)
				changed = true
			}
			if sid, ok := meta[mcp.MetaSubscriptionID]; ok {
				if id, own := mine(sid); own {
					meta[mcp.MetaSubscriptionID] = id
				} else {
					meta[mcp.MetaSubscriptionID] = foreign(sid)
				}
				params["_meta"], _ = json.Marshal(meta)
				changed = true
			}
		}
	}
	if !changed {
		return n.Method, n.Params, true
	}
	b, _ := json.Marshal(params)
	return n.Method, b, true
}

// ask sends a parked server request to the client and gives its answer,
// unless another answered first; when the request ends otherwise the
// client is told it was cancelled.
func (w *relay) ask(p *Parked) {
	if p.params == nil {
		return
	}
	// The request goes under the parked request's own number, as its id
	// and in its _meta: the client shows the number mcpi pending does.
	id := int64(p.ID)
	key := strconv.FormatInt(id, 10)
	w.mu.Lock()
	ch := make(chan *mcp.Message, 1)
	w.asks[key] = ch
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		delete(w.asks, key)
		w.mu.Unlock()
	}()
	params, err := withParkedNumber(p.params, p.ID)
	if err != nil {
		return
	}
	b, err := mcp.NewRequest(id, p.Method, params)
	if err != nil {
		return
	}
	w.send(b, nil)
	select {
	case m := <-ch:
		var a parkAnswer
		switch {
		case m.Error != nil:
			a.err = m.Error
		case p.Sampling != nil:
			var r mcp.CreateMessageResult
			if err := json.Unmarshal(m.Result, &r); err != nil {
				a.err = &mcp.RPCError{Code: mcp.CodeInternalError, Message: "sampling: the reply is not a CreateMessageResult: " + err.Error()}
			} else {
				a.result = &r
			}
		default:
			var r mcp.ElicitResult
			if err := json.Unmarshal(m.Result, &r); err != nil {
				a.err = &mcp.RPCError{Code: mcp.CodeInternalError, Message: "elicitation: the reply is not an ElicitResult: " + err.Error()}
			} else {
				a.result = &r
			}
		}
		w.h.disp.board.Answer(p.ID, a.result, a.err)
	case <-p.ctx.Done():
		// The daemon's own word, marked as such: not the server's.
		reason := "answered elsewhere, or withdrawn"
		if cause := context.Cause(p.ctx); errors.Is(cause, session.ErrInputGivenElsewhere) {
			reason = cause.Error()
		}
		w.send(mcp.NewNotification("notifications/cancelled", map[string]any{
			"requestId": json.RawMessage(key), "reason": reason,
			"_meta": map[string]string{mcp.MetaFromSession: w.h.name}}))
	}
}

// withParkedNumber returns params with _meta[mcp.MetaParkedRequest] set to
// the parked request's number, over whatever the server put there.
func withParkedNumber(params json.RawMessage, id int) (json.RawMessage, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(params, &obj); err != nil {
		return nil, err
	}
	meta := map[string]json.RawMessage{}
	if raw, ok := obj["_meta"]; ok && json.Unmarshal(raw, &meta) != nil {
		meta = map[string]json.RawMessage{}
	}
	meta[mcp.MetaParkedRequest] = json.RawMessage(strconv.Itoa(id))
	obj["_meta"], _ = json.Marshal(meta)
	return json.Marshal(obj)
}

// takeProgressToken removes params._meta.progressToken, returning it and
// the params without it.
func takeProgressToken(params json.RawMessage) (json.RawMessage, json.RawMessage, bool) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(params, &obj) != nil {
		return nil, params, false
	}
	var meta map[string]json.RawMessage
	if json.Unmarshal(obj["_meta"], &meta) != nil {
		return nil, params, false
	}
	tok, ok := meta[mcp.ProgressTokenKey]
	if !ok {
		return nil, params, false
	}
	delete(meta, mcp.ProgressTokenKey)
	if len(meta) == 0 {
		delete(obj, "_meta")
	} else {
		obj["_meta"], _ = json.Marshal(meta)
	}
	rest, err := json.Marshal(obj)
	if err != nil {
		return nil, params, false
	}
	return tok, rest, true
}

// notificationFrame encodes a notification of the server's, params as
// they came (nil when it had none).
func notificationFrame(method string, params json.RawMessage) []byte {
	var p any
	if len(params) > 0 {
		p = params
	}
	b, _ := mcp.NewNotification(method, p)
	return b
}
