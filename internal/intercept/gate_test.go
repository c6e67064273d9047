package intercept

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/query"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// gateRig is a gate whose deliveries and events are kept, and told on a
// channel as they come.
type gateRig struct {
	g      *Gate
	mu     sync.Mutex
	out    map[transport.Direction][]string
	events []transport.Event
	moved  chan struct{}
}

func newGateRig(t *testing.T, o GateOptions, breaks ...string) *gateRig {
	t.Helper()
	r := &gateRig{out: map[transport.Direction][]string{}, moved: make(chan struct{}, 1<<16)}
	for _, b := range breaks {
		q, err := query.Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		o.Breaks = append(o.Breaks, q)
	}
	o.Tap = transport.TapFunc(func(e transport.Event) {
		r.mu.Lock()
		r.events = append(r.events, e)
		r.mu.Unlock()
		r.moved <- struct{}{}
	})
	r.g = NewGate(o)
	r.g.Bind(func(dir transport.Direction, d Delivery) {
		r.mu.Lock()
		defer r.mu.Unlock()
		switch {
		case d.AsIs != nil:
			r.out[dir] = append(r.out[dir], strings.TrimSpace(string(d.AsIs)))
		case d.Close:
			r.out[dir] = append(r.out[dir], "CLOSE")
		}
		for _, f := range d.Frames {
			r.out[dir] = append(r.out[dir], "EDIT "+string(f))
		}
		for _, f := range d.Reply {
			r.out[dir] = append(r.out[dir], "REPLY "+string(f))
		}
		r.moved <- struct{}{}
	})
	t.Cleanup(r.g.Close)
	return r
}

func (r *gateRig) sent(dir transport.Direction) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.out[dir]...)
}

// waitSent waits until n frames of dir were delivered, and returns them
// (a test fails after 10 s rather than hang): a delivery follows the
// intercept event that tells of it.
func (r *gateRig) waitSent(t *testing.T, dir transport.Direction, n int) []string {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		if got := r.sent(dir); len(got) >= n {
			return got
		}
		select {
		case <-r.moved:
		case <-deadline:
			t.Fatalf("%d frames sent, want %d: %q", len(r.sent(dir)), n, r.sent(dir))
		}
	}
}

func (r *gateRig) push(t *testing.T, dir transport.Direction, frames ...string) {
	t.Helper()
	for _, f := range frames {
		if err := r.g.Push(dir, []byte(f+"\n"), false); err != nil {
			t.Fatal(err)
		}
	}
}

// waitFor waits for an event the check accepts (a test fails after 10 s
// rather than hang).
func (r *gateRig) waitFor(t *testing.T, what string, ok func(transport.Event) bool) transport.Event {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for seen := 0; ; {
		r.mu.Lock()
		evs := r.events[seen:]
		r.mu.Unlock()
		for _, e := range evs {
			seen++
			if ok(e) {
				return e
			}
		}
		select {
		case <-r.moved:
		case <-deadline:
			t.Fatalf("no %s", what)
		}
	}
}

func frame(id int, method string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q}`, id, method)
}

// A held frame keeps the frames behind it in its direction waiting, in
// order and counted; the other direction goes on; forwarding it lets
// them all go, in the order they came.
func TestGateKeepsOrder(t *testing.T) {
	r := newGateRig(t, GateOptions{}, "method:tools/call")
	out, in := transport.Outgoing, transport.Incoming
	r.push(t, out, frame(1, "tools/call"), frame(2, "ping"), frame(3, "ping"))
	r.push(t, in, frame(9, "roots/list"))
	if got := r.sent(out); len(got) != 0 {
		t.Fatalf("sent %q while the call is held", got)
	}
	if got := r.sent(in); len(got) != 1 {
		t.Fatalf("the other direction sent %q", got)
	}
	held := r.g.Held()
	if len(held) != 1 || held[0].Waiting != 2 || !held[0].Request || held[0].Break != "method:tools/call" || held[0].Dir != out {
		t.Fatalf("held %+v", held)
	}
	if err := r.g.Forward(held[0].ID); err != nil {
		t.Fatal(err)
	}
	want := []string{frame(1, "tools/call"), frame(2, "ping"), frame(3, "ping")}
	if got := r.sent(out); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("sent %q, want %q", got, want)
	}
	if err := r.g.Forward(held[0].ID); err != ErrNotHeld {
		t.Errorf("a second decision: %v", err)
	}
	e := r.waitFor(t, "forward event", func(e transport.Event) bool { return e.Kind == transport.KindIntercept })
	var c Change
	json.Unmarshal(e.Data, &c)
	if c.Action != "forward" || c.Rule != "method:tools/call" || string(c.Original) != frame(1, "tools/call") {
		t.Errorf("change %+v", c)
	}
}

// Each decision on a held frame: an edit that is not JSON is refused and
// the frame stays held; an edit, a drop, an answer in the peer's place
// (a request only), a close.
func TestGateDecisions(t *testing.T) {
	out := transport.Outgoing
	r := newGateRig(t, GateOptions{}, "method:tools/call", "kind:frame dir:out method:notifications/")
	id := func() uint64 {
		h := r.g.Held()
		if len(h) != 1 {
			t.Fatalf("held %+v", h)
		}
		return h[0].ID
	}
	r.push(t, out, frame(1, "tools/call"))
	if err := r.g.Edit(id(), []byte(`{"jsonrpc":"2.0",`)); err == nil || !strings.Contains(err.Error(), "not JSON") {
		t.Errorf("a bad edit: %v", err)
	}
	if err := r.g.Edit(id(), []byte("{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"tools/call\", \"params\": {\"name\": \"add\"}}")); err != nil {
		t.Fatal(err)
	}
	r.push(t, out, frame(2, "tools/call"))
	if err := r.g.Answer(id(), json.RawMessage(`[1]`), 0, ""); err == nil {
		t.Error("a result that is no object was taken")
	}
	if err := r.g.Answer(id(), json.RawMessage(`{"content":[]}`), 0, ""); err != nil {
		t.Fatal(err)
	}
	r.push(t, out, frame(3, "tools/call"))
	if err := r.g.Answer(id(), nil, -32000, "no"); err != nil {
		t.Fatal(err)
	}
	r.push(t, out, `{"jsonrpc":"2.0","method":"notifications/cancelled"}`)
	if err := r.g.Answer(id(), json.RawMessage(`{}`), 0, ""); err == nil || !strings.Contains(err.Error(), "only a request") {
		t.Errorf("answering a notification: %v", err)
	}
	if err := r.g.Drop(id()); err != nil {
		t.Fatal(err)
	}
	r.push(t, out, frame(4, "tools/call"))
	if err := r.g.CloseConn(id()); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`EDIT {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add"}}`,
		`REPLY {"jsonrpc":"2.0","id":2,"result":{"content":[]}}`,
		`REPLY {"jsonrpc":"2.0","id":3,"error":{"code":-32000,"message":"no"}}`,
		"CLOSE",
	}
	if got := r.sent(out); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("sent\n%q\nwant\n%q", got, want)
	}
}

// A frame held past the hold timeout is forwarded, and the trace says so.
func TestGateHoldTimeout(t *testing.T) {
	r := newGateRig(t, GateOptions{HoldTimeout: time.Millisecond}, "dir:in")
	r.push(t, transport.Incoming, frame(5, "sampling/createMessage"), frame(6, "ping"))
	e := r.waitFor(t, "timeout event", func(e transport.Event) bool { return e.Kind == transport.KindIntercept })
	var c Change
	json.Unmarshal(e.Data, &c)
	if c.Action != "timeout" || !strings.Contains(c.Note, "past the hold timeout of 1ms: forwarded") {
		t.Errorf("change %+v", c)
	}
	// The frame behind it was held in its turn, and timed out too.
	r.waitFor(t, "second timeout", func(e transport.Event) bool {
		return e.Kind == transport.KindIntercept && strings.Contains(string(e.Data), `"id":6`)
	})
	if got := r.waitSent(t, transport.Incoming, 2); len(got) != 2 || got[0] != frame(5, "sampling/createMessage") {
		t.Errorf("sent %q", got)
	}
}

// A frame still held when the gate closes (the proxy ends, its TUI quit)
// is forwarded, and the trace says why: no timeout that did not happen.
func TestGateCloseSaysItEnded(t *testing.T) {
	r := newGateRig(t, GateOptions{HoldTimeout: time.Hour}, "method:tools/call")
	r.push(t, transport.Outgoing, frame(7, "tools/call"))
	r.waitFor(t, "the call held", func(e transport.Event) bool {
		return e.Kind == transport.KindLifecycle && strings.Contains(e.Text, "held")
	})
	r.g.Close()
	e := r.waitFor(t, "the intercept event", func(e transport.Event) bool { return e.Kind == transport.KindIntercept })
	var c Change
	json.Unmarshal(e.Data, &c)
	if c.Action != "ended" || !strings.Contains(c.Note, "until the proxy ended") || strings.Contains(c.Note, "timeout") {
		t.Errorf("change %+v", c)
	}
	if got := r.waitSent(t, transport.Outgoing, 1); len(got) != 1 || got[0] != frame(7, "tools/call") {
		t.Errorf("sent %q", got)
	}
}

// A host that floods while a frame is held: the frames behind it are
// bounded, the flood waits (it is not read) and is told of once, and it
// all goes, in order, when the held frame is forwarded.
func TestGateBoundsAFlood(t *testing.T) {
	r := newGateRig(t, GateOptions{MaxWaiting: 100}, "method:tools/call")
	out := transport.Outgoing
	r.push(t, out, frame(0, "tools/call"))
	flooded := make(chan error, 1)
	go func() {
		for i := 1; i <= 1000; i++ {
			if err := r.g.Push(out, []byte(frame(i, "ping")+"\n"), false); err != nil {
				flooded <- err
				return
			}
		}
		flooded <- nil
	}()
	e := r.waitFor(t, "a full queue", func(e transport.Event) bool {
		return e.Kind == transport.KindLifecycle && strings.Contains(e.Text, "not read until one moves")
	})
	if !strings.Contains(e.Text, "100 frames") || !strings.Contains(e.Text, "host's side") {
		t.Errorf("said %q", e.Text)
	}
	if h := r.g.Held(); h[0].Waiting != 99 {
		t.Errorf("waiting %d, want 99", h[0].Waiting)
	}
	if err := r.g.Forward(r.g.Held()[0].ID); err != nil {
		t.Fatal(err)
	}
	if err := <-flooded; err != nil {
		t.Fatal(err)
	}
	got := r.sent(out)
	if len(got) != 1001 || got[1000] != frame(1000, "ping") || got[500] != frame(500, "ping") {
		t.Errorf("sent %d frames, the last %q", len(got), got[len(got)-1])
	}
}

// Released, a held frame lets the frames behind it go; it stays held.
func TestGateRelease(t *testing.T) {
	r := newGateRig(t, GateOptions{}, "id:1")
	out := transport.Outgoing
	r.push(t, out, frame(1, "tools/call"), frame(2, "ping"))
	if err := r.g.Release(r.g.Held()[0].ID); err != nil {
		t.Fatal(err)
	}
	r.push(t, out, frame(3, "ping"))
	if got := r.sent(out); fmt.Sprint(got) != fmt.Sprint([]string{frame(2, "ping"), frame(3, "ping")}) {
		t.Errorf("sent %q", got)
	}
	if h := r.g.Held(); len(h) != 1 || !h[0].Released || h[0].Waiting != 0 {
		t.Errorf("held %+v", h)
	}
	r.g.Drop(r.g.Held()[0].ID)
	if got := r.sent(out); len(got) != 2 {
		t.Errorf("sent %q after the drop", got)
	}
}

// Lines the gate does not judge (a bad line, a part of a line too long
// to judge) are never held, and keep their place behind a held frame.
func TestGateRawLines(t *testing.T) {
	r := newGateRig(t, GateOptions{}, "text:x")
	out := transport.Outgoing
	r.g.Push(out, []byte("not json x\n"), false)
	r.g.Push(out, []byte(`{"x":1}`+"\n"), false)
	r.g.Push(out, []byte("part of a long line x"), true)
	if got := r.sent(out); len(got) != 1 || got[0] != "not json x" {
		t.Errorf("sent %q", got)
	}
	r.g.Forward(r.g.Held()[0].ID)
	if got := r.sent(out); len(got) != 3 || got[2] != "part of a long line x" {
		t.Errorf("sent %q", got)
	}
}
