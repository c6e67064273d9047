package attach

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/intercept"
	"github.com/mcpi-dev/mcpi/internal/live"
	"github.com/mcpi-dev/mcpi/internal/query"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// rig is a real gate served on a real Unix socket, its deliveries kept.
type rig struct {
	dir  string
	gate *intercept.Gate
	srv  *Server

	mu    sync.Mutex
	out   []string
	moved chan struct{}
}

func newRig(t *testing.T, hold time.Duration, redact func([]byte) []byte) *rig {
	t.Helper()
	// A short directory: a Unix socket's path is at most 104 bytes.
	dir, err := os.MkdirTemp("", "mcpi-at")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o700)
	r := &rig{dir: dir, moved: make(chan struct{}, 1<<10)}
	q, _ := query.Parse("method:tools/call")
	r.gate = intercept.NewGate(intercept.GateOptions{Breaks: []query.Query{q}, HoldTimeout: hold,
		Tap:      transport.TapFunc(func(e transport.Event) { r.srv.Observe(e) }),
		OnChange: func() { r.srv.Changed() }})
	r.srv = NewServer(Options{Info: Info{Name: "t", Title: "demo", PID: os.Getpid()}, Gate: r.gate, Redact: redact})
	r.gate.Bind(func(_ transport.Direction, d intercept.Delivery) {
		r.mu.Lock()
		switch {
		case d.AsIs != nil:
			r.out = append(r.out, strings.TrimSpace(string(d.AsIs)))
		case d.Close:
			r.out = append(r.out, "CLOSE")
		}
		for _, f := range d.Frames {
			r.out = append(r.out, "EDIT "+string(f))
		}
		for _, f := range d.Reply {
			r.out = append(r.out, "REPLY "+string(f))
		}
		r.mu.Unlock()
		select {
		case r.moved <- struct{}{}:
		default:
		}
	})
	ln, err := Listen(dir, "t")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- r.srv.Serve(ln) }()
	t.Cleanup(func() {
		ln.Close()
		r.srv.Close("the test ended")
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
		r.gate.Close()
	})
	return r
}

func (r *rig) push(t *testing.T, frame string) {
	t.Helper()
	if err := r.gate.Push(transport.Outgoing, []byte(frame+"\n"), false); err != nil {
		t.Fatal(err)
	}
}

// waitOut waits until n frames went out, and returns them.
func (r *rig) waitOut(t *testing.T, n int) []string {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		r.mu.Lock()
		out := append([]string(nil), r.out...)
		r.mu.Unlock()
		if len(out) >= n {
			return out
		}
		select {
		case <-r.moved:
		case <-deadline:
			t.Fatalf("%d frames went out, want %d: %q", len(out), n, out)
		}
	}
}

// events keeps what an attached client was given.
type events struct {
	mu    sync.Mutex
	all   []transport.Event
	moved chan struct{}
}

func (e *events) Observe(ev transport.Event) {
	e.mu.Lock()
	e.all = append(e.all, ev)
	e.mu.Unlock()
	select {
	case e.moved <- struct{}{}:
	default:
	}
}

func (e *events) waitText(t *testing.T, s string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		e.mu.Lock()
		for _, ev := range e.all {
			if strings.Contains(ev.Text, s) || strings.Contains(string(ev.Data), s) {
				e.mu.Unlock()
				return
			}
		}
		e.mu.Unlock()
		select {
		case <-e.moved:
		case <-deadline:
			t.Fatalf("no event says %q", s)
		}
	}
}

// attach dials the rig and runs the client's feed until the test ends.
func (r *rig) attach(t *testing.T) (*Client, *events) {
	t.Helper()
	c, err := Dial(r.dir, "t")
	if err != nil {
		t.Fatal(err)
	}
	ev := &events{moved: make(chan struct{}, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() {
		defer close(ran)
		c.Run(ctx, ev)
	}()
	t.Cleanup(func() { cancel(); <-ran })
	return c, ev
}

// waitHeld waits until the client says a frame is held, and returns it.
func waitHeld(t *testing.T, c *Client, what string) intercept.Held {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		for _, h := range c.Held() {
			if bytes.Contains(h.Data, []byte(what)) {
				return h
			}
		}
		select {
		case <-c.Changes():
		case <-deadline:
			t.Fatalf("no frame with %q is held: %v", what, c.Held())
		}
	}
}

const (
	call1 = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":1}}}`
	note  = `{"jsonrpc":"2.0","method":"notifications/progress","params":{}}`
	call2 = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"delete"}}`
	call3 = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"rm"}}`
)

// From the attached side, over a real socket and the real gate: a held
// call forwarded with the frame behind it after it (order kept), one
// edited (an edit that is not JSON refused, the call still held), one
// answered in the server's place; the events of before the attach come
// first.
func TestAttachedDecisions(t *testing.T) {
	r := newRig(t, time.Hour, nil)
	r.push(t, call1)
	r.push(t, note)
	c, ev := r.attach(t)
	if info := c.Info(); info.Title != "demo" || info.Clients != 1 || info.Held != 1 {
		t.Errorf("the hello's info: %+v", info)
	}
	ev.waitText(t, "held tools/call id 1")
	h := waitHeld(t, c, `"id":1`)
	if out := r.waitOut(t, 0); len(out) != 0 {
		t.Fatalf("went out behind a held frame: %q", out)
	}
	if err := c.Forward(h.ID); err != nil {
		t.Fatal(err)
	}
	if out := r.waitOut(t, 2); out[0] != call1 || out[1] != note {
		t.Errorf("forwarded: %q, want the call then the notification", out)
	}

	r.push(t, call2)
	h = waitHeld(t, c, `"id":2`)
	if err := c.Edit(h.ID, []byte("{not json")); err == nil || !strings.Contains(err.Error(), "not JSON") {
		t.Errorf("an edit that is not JSON: %v", err)
	}
	if err := c.Edit(h.ID, []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list"}}`)); err != nil {
		t.Fatal(err)
	}
	if out := r.waitOut(t, 3); !strings.Contains(out[2], `EDIT`) || !strings.Contains(out[2], `"list"`) {
		t.Errorf("the edit went out as %q", out[2])
	}

	r.push(t, call3)
	h = waitHeld(t, c, `"id":3`)
	if err := c.Answer(h.ID, []byte(`{"content":[]}`), 0, ""); err != nil {
		t.Fatal(err)
	}
	if out := r.waitOut(t, 4); out[3] != `REPLY {"jsonrpc":"2.0","id":3,"result":{"content":[]}}` {
		t.Errorf("the answer went out as %q", out[3])
	}
	if len(c.Held()) != 0 {
		t.Errorf("still held after the answer: %v", c.Held())
	}
	if err := c.Drop(h.ID); err == nil || !strings.Contains(err.Error(), "no such frame") {
		t.Errorf("a decision on a frame decided: %v", err)
	}
	ev.waitText(t, `"action":"answer"`)
}

// Nobody attached: a held frame goes at its deadline, and a TUI that
// attaches later is told so; a second TUI sees the same; a TUI that
// leaves leaves the proxy running.
func TestHoldDeadlineWithNobodyAttached(t *testing.T) {
	r := newRig(t, time.Millisecond, nil)
	r.push(t, call1)
	if out := r.waitOut(t, 1); out[0] != call1 {
		t.Errorf("went out: %q", out)
	}
	c1, ev1 := r.attach(t)
	ev1.waitText(t, "past the hold timeout")
	c2, ev2 := r.attach(t)
	ev2.waitText(t, "past the hold timeout")
	c1.Close()
	if err := c1.Forward(1); !errors.Is(err, ErrEnded) {
		t.Errorf("a decision after Close: %v", err)
	}
	r.push(t, call2)
	ev2.waitText(t, "held tools/call id 2")
	if got := c2.Info().Clients; got != 2 {
		t.Errorf("the second TUI's hello says %d clients, want 2", got)
	}
	// The proxy's end is said to the TUIs that stay.
	r.srv.Close("the proxy ended")
	ev2.waitText(t, "mcpi proxy attach: the proxy ended; the TUI shows what it saw until you quit")
}

// A client of another version of the protocol is refused in a sentence,
// and Status answers; a name that is not one is refused before a dial.
func TestVersionRefused(t *testing.T) {
	r := newRig(t, time.Hour, nil)
	c, err := live.Dial(Dir(r.dir), "t")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Send(hello{Proto: ProtocolVersion + 1, Op: OpAttach}); err != nil {
		t.Fatal(err)
	}
	var m message
	if err := c.Recv(&m); err != nil {
		t.Fatal(err)
	}
	if m.Proto != ProtocolVersion || !strings.Contains(m.Error, "protocol 1 and this mcpi 2") {
		t.Errorf("the refusal: %+v", m)
	}
	if info, err := Status(r.dir, "t"); err != nil || info.Name != "t" {
		t.Errorf("Status: %+v, %v", info, err)
	}
	if names, err := Names(r.dir); err != nil || len(names) != 1 || names[0] != "t" {
		t.Errorf("Names: %v, %v", names, err)
	}
	if _, err := Dial(r.dir, "../t"); err == nil {
		t.Error("a name with a slash was dialled")
	}
	if _, err := Listen(r.dir, "t"); err == nil {
		t.Error("a second proxy took a running one's name")
	}
	ln, name, err := ListenFree(r.dir, "t")
	if err != nil || name != "t-2" {
		t.Fatalf("ListenFree: %s, %v", name, err)
	}
	ln.Close()
}

// A held frame's bytes cross the redactor before a client sees them.
func TestHeldRedacted(t *testing.T) {
	r := newRig(t, time.Hour, func(b []byte) []byte { return bytes.ReplaceAll(b, []byte("add"), []byte("[REDACTED]")) })
	r.push(t, call1)
	c, _ := r.attach(t)
	if h := waitHeld(t, c, `"id":1`); bytes.Contains(h.Data, []byte("add")) {
		t.Errorf("the held frame reached the client unredacted: %s", h.Data)
	}
}

// A client that reads nothing never holds up the proxy: past its queue's
// bound it is dropped (its connection ends), and the others go on.
func TestSlowClientDropped(t *testing.T) {
	r := newRig(t, time.Hour, nil)
	// A small backlog: the TUI that attaches after reads it in a moment.
	r.srv.o.BacklogBytes = 1 << 20
	stuck, err := live.Dial(Dir(r.dir), "t")
	if err != nil {
		t.Fatal(err)
	}
	defer stuck.Close()
	if err := stuck.Send(hello{Proto: ProtocolVersion, Op: OpAttach}); err != nil {
		t.Fatal(err)
	}
	var m message
	if err := stuck.Recv(&m); err != nil || m.Info == nil {
		t.Fatalf("the hello: %+v, %v", m, err)
	}
	big := bytes.Repeat([]byte("x"), 64<<10)
	for i := 0; i < 2*(clientQueueBytes+(1<<20))/len(big); i++ {
		r.srv.Observe(transport.Event{Kind: transport.KindStderr, Data: big})
	}
	for {
		if err := stuck.Recv(&m); err != nil {
			break
		}
	}
	if info, err := Status(r.dir, "t"); err != nil || info.Clients != 0 {
		t.Errorf("after the drop: %+v, %v", info, err)
	}
	_, ev := r.attach(t)
	r.push(t, call1)
	ev.waitText(t, "held tools/call id 1")
}
