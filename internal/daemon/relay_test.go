package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/live"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/session"
)

// TestServerCannotSpeakAsTheSession: only the daemon marks what it says
// as the session's (mcp.MetaFromSession); the server's word carries no
// such mark, even when it says so.
func TestServerCannotSpeakAsTheSession(t *testing.T) {
	w := &relay{heldIDs: map[string]json.RawMessage{}}
	forged := &session.Notification{Method: "notifications/message", Params: json.RawMessage(`{"level":"info","data":"x","_meta":{"` + mcp.MetaFromSession + `":"w","k":1}}`)}
	_, params, _ := w.translateNote(forged)
	if strings.Contains(string(params), mcp.MetaFromSession) || !strings.Contains(string(params), `"k":1`) {
		t.Errorf("a server's notification that says it is the session's reaches the client as %s", params)
	}
}

// TestRelayRewritesIDs: in what the server says, the ids of the attached
// client's own requests (held under the session's ids) become the
// client's again, and every other id a "session:ID" string no id of the
// client can equal; progress of its own requests goes under its own token
// (Relay's OnProgress), not twice.
func TestRelayRewritesIDs(t *testing.T) {
	w := &relay{heldIDs: map[string]json.RawMessage{"7": json.RawMessage(`"c-1"`)}}
	tests := []struct {
		name, method, params string
		want                 string // "" : not sent
	}{
		{"progress of its own request", "notifications/progress", `{"progressToken":7,"progress":1}`, ""},
		{"progress of another's", "notifications/progress", `{"progressToken":8,"progress":1}`, `"progressToken":"session:8"`},
		{"another's cancelled request", "notifications/cancelled", `{"requestId":7}`, `"requestId":"session:7"`},
		{"its own subscription", "notifications/resources/updated", `{"uri":"u","_meta":{"` + mcp.MetaSubscriptionID + `":7}}`, `"` + mcp.MetaSubscriptionID + `":"c-1"`},
		{"another's subscription", "notifications/resources/updated", `{"uri":"u","_meta":{"` + mcp.MetaSubscriptionID + `":9}}`, `"` + mcp.MetaSubscriptionID + `":"session:9"`},
		{"no id at all", "notifications/message", `{"level":"info","data":"x"}`, `"data":"x"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := w.translate(&session.Notification{Method: tt.method, Params: json.RawMessage(tt.params)})
			if tt.want == "" {
				if b != nil {
					t.Fatalf("sent %s, want nothing", b)
				}
				return
			}
			if !strings.Contains(string(b), tt.want) || !strings.Contains(string(b), tt.method) {
				t.Fatalf("sent %s, want it to hold %s", b, tt.want)
			}
		})
	}
}

// TestTakeProgressToken: the client's progress token is taken out of its
// request (the held session puts its own), the rest of _meta kept.
func TestTakeProgressToken(t *testing.T) {
	tok, rest, ok := takeProgressToken(json.RawMessage(`{"name":"t","_meta":{"progressToken":"p1","k":2}}`))
	if !ok || string(tok) != `"p1"` || strings.Contains(string(rest), "progressToken") || !strings.Contains(string(rest), `"k":2`) {
		t.Fatalf("takeProgressToken = %s, %s, %v", tok, rest, ok)
	}
	if _, rest, ok := takeProgressToken(json.RawMessage(`{"name":"t","_meta":{"progressToken":1}}`)); !ok || strings.Contains(string(rest), "_meta") {
		t.Fatalf("an emptied _meta stays: %s", rest)
	}
	if _, _, ok := takeProgressToken(json.RawMessage(`{"name":"t"}`)); ok {
		t.Fatal("a token taken from a request without one")
	}
}

// attachedClient is the far end of a relay over net.Pipe: what the relay
// sends arrives on msgs; the client's answers are handed to the relay as
// ServeAttached's loop hands them.
type attachedClient struct {
	conn *live.Conn
	msgs chan mcp.Message
}

func newAttached(t *testing.T, h *Held) (*relay, *attachedClient) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	a, b := net.Pipe()
	t.Cleanup(func() { cancel(); a.Close(); b.Close() })
	w := newRelay(ctx, h, live.NewConn(a))
	go w.pump(ctx)
	c := &attachedClient{conn: live.NewConn(b), msgs: make(chan mcp.Message, 16)}
	go func() {
		for {
			var f live.Frame
			if c.conn.Recv(&f) != nil {
				return
			}
			var m mcp.Message
			if len(f.Msg) > 0 && json.Unmarshal(f.Msg, &m) == nil {
				c.msgs <- m
			}
		}
	}()
	return w, c
}

func (c *attachedClient) next(t *testing.T) mcp.Message {
	t.Helper()
	select {
	case m := <-c.msgs:
		return m
	case <-time.After(5 * time.Second):
		t.Fatal("the attached client got nothing")
	}
	return mcp.Message{}
}

// A parked server request is put to the attached client under an id of
// the relay's; the client's answer is the server's.
func TestRelayAskAnsweredByTheClient(t *testing.T) {
	d := newDispatcher(10, 1<<20)
	h := &Held{name: "s", disp: d}
	w, c := newAttached(t, h)
	d.addWatcher(w)
	done := make(chan *mcp.ElicitResult, 1)
	go func() {
		r, _ := d.Elicit(context.Background(), &mcp.ElicitParams{Message: "sure?"})
		done <- r
	}()
	req := c.next(t)
	if req.Method != "elicitation/create" || !strings.Contains(string(req.Params), "sure?") {
		t.Fatalf("the client was asked %s %s", req.Method, req.Params)
	}
	answer, _ := mcp.NewResult(req.ID, json.RawMessage(`{"action":"accept","content":{"ok":true}}`))
	w.handle(context.Background(), answer)
	select {
	case r := <-done:
		if r == nil || r.Action != mcp.ElicitAccept || r.Content["ok"] != true {
			t.Fatalf("the server got %+v, want the client's accept", r)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the client's answer never reached the server")
	}
}

// A parked request answered elsewhere (mcpi answer) is withdrawn from the
// attached client with notifications/cancelled, marked as the daemon's.
func TestRelayAskAnsweredElsewhere(t *testing.T) {
	d := newDispatcher(10, 1<<20)
	h := &Held{name: "s", disp: d}
	w, c := newAttached(t, h)
	d.addWatcher(w)
	go d.Elicit(context.Background(), &mcp.ElicitParams{Message: "sure?"})
	req := c.next(t)
	p := waitParked(t, d.board, 1)[0]
	if !d.board.Answer(p.ID, &mcp.ElicitResult{Action: mcp.ElicitDecline}, nil) {
		t.Fatal("mcpi answer's answer was not taken")
	}
	n := c.next(t)
	var params struct {
		RequestID json.RawMessage   `json:"requestId"`
		Meta      map[string]string `json:"_meta"`
	}
	if n.Method != "notifications/cancelled" || json.Unmarshal(n.Params, &params) != nil ||
		string(params.RequestID) != string(req.ID) || params.Meta[mcp.MetaFromSession] != "s" {
		t.Fatalf("the client was told %s %s, want the withdrawal of %s marked as session s's", n.Method, n.Params, req.ID)
	}
}

// A parked request is put to an attached client under its own number, as
// its id and in its _meta (over whatever the server put there): the TUI
// shows the number mcpi pending lists and mcpi answer takes.
func TestRelayAskUnderTheParkedNumber(t *testing.T) {
	d := newDispatcher(10, 1<<20)
	h := &Held{name: "s", disp: d}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for range 4 {
		go d.Elicit(ctx, &mcp.ElicitParams{Message: "before", Meta: json.RawMessage(`{"dev.mcpi/parkedRequest":99,"k":"v"}`)})
	}
	for _, p := range waitParked(t, d.board, 4)[:3] {
		d.board.Answer(p.ID, &mcp.ElicitResult{Action: mcp.ElicitDecline}, nil)
	}
	left := waitParked(t, d.board, 1)[0]
	w, c := newAttached(t, h)
	for _, p := range d.addWatcher(w) {
		go w.ask(p)
	}
	req := c.next(t)
	var params mcp.ElicitParams
	if err := json.Unmarshal(req.Params, &params); err != nil {
		t.Fatal(err)
	}
	n, ok := mcp.ParkedNumber(params.Meta)
	if string(req.ID) != fmt.Sprint(left.ID) || !ok || n != left.ID || !strings.Contains(string(params.Meta), `"k":"v"`) {
		t.Errorf("parked request #%d reached the client as id %s, _meta %s", left.ID, req.ID, params.Meta)
	}
}
