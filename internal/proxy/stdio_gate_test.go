package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/intercept"
	"github.com/mcpi-dev/mcpi/internal/query"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// gateFor is a gate of breaks whose changes are told on a channel.
func gateFor(t *testing.T, breaks ...string) (*intercept.Gate, chan struct{}) {
	return gateTapped(t, nil, breaks...)
}

// gateTapped is gateFor with a tap.
func gateTapped(t *testing.T, tap *taps, breaks ...string) (*intercept.Gate, chan struct{}) {
	t.Helper()
	var qs []query.Query
	for _, b := range breaks {
		q, err := query.Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		qs = append(qs, q)
	}
	changed := make(chan struct{}, 1024)
	o := intercept.GateOptions{Breaks: qs, OnChange: func() { changed <- struct{}{} }}
	if tap != nil {
		o.Tap = tap
	}
	return intercept.NewGate(o), changed
}

// heldOne waits for the gate to hold a frame and returns it.
func heldOne(t *testing.T, g *intercept.Gate, changed chan struct{}) intercept.Held {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		if h := g.Held(); len(h) > 0 {
			return h[0]
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatal("nothing was held")
		}
	}
}

// A breakpoint on the host's tools/call: the call is held, edited and
// forwarded, and the server answers the edit; then a call is answered in
// the server's place.
func TestStdioBreakpointOnTheHostsCall(t *testing.T) {
	tap := &taps{}
	g, changed := gateTapped(t, tap, "method:tools/call dir:out")
	p := startStdioGate(t, mcptestDemo, "", 0, g)
	p.host.Initialize(t)
	id := p.host.Request(t, "tools/call", map[string]any{"name": "add", "arguments": map[string]any{"a": 1, "b": 2}})
	h := heldOne(t, g, changed)
	if !h.Request || !bytes.Contains(h.Data, []byte(`"add"`)) {
		t.Fatalf("held %+v", h)
	}
	if err := g.Edit(h.ID, []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":40,"b":2}}}`)); err != nil {
		t.Fatal(err)
	}
	line, _ := p.host.Recv(t)
	if !bytes.Contains(line, []byte(`"id":2`)) || !bytes.Contains(line, []byte("42")) {
		t.Errorf("call %d got %s, want 42", id, line)
	}
	p.host.Request(t, "tools/call", map[string]any{"name": "delete_file", "arguments": map[string]any{"path": "/"}})
	h = heldOne(t, g, changed)
	if err := g.Answer(h.ID, json.RawMessage(`{"content":[{"type":"text","text":"not today"}],"isError":true}`), 0, ""); err != nil {
		t.Fatal(err)
	}
	if line, _ := p.host.Recv(t); !bytes.Contains(line, []byte("not today")) {
		t.Errorf("the answer in the server's place: %s", line)
	}
	if ch := (&proxied{tap: tap}).changes(t); len(ch) != 2 || ch[0].Action != "edit" || ch[1].Action != "answer" {
		t.Errorf("changes %+v", ch)
	}
}

// A breakpoint on what the server sends: its answer is held, dropped,
// and the host's next call goes through.
func TestStdioBreakpointOnTheServersAnswer(t *testing.T) {
	g, changed := gateFor(t, "dir:in id:2")
	p := startStdioGate(t, mcptestDemo, "", 0, g)
	p.host.Initialize(t)
	p.host.Request(t, "ping", map[string]any{})
	h := heldOne(t, g, changed)
	if err := g.Drop(h.ID); err != nil {
		t.Fatal(err)
	}
	if res := p.host.Call(t, "ping", map[string]any{}); !bytes.Contains(res, []byte(`"id":3`)) {
		t.Errorf("got %s", res)
	}
	if tr := p.host.Transcript(); bytes.Contains(tr, []byte(`"id":2`)) {
		t.Errorf("the dropped answer reached the host: %s", tr)
	}
}

// A frame too long to judge is never held: it goes on as it comes, even
// when a breakpoint would match it (a 500 MB frame is not read whole).
func TestStdioLongFrameIsNotHeld(t *testing.T) {
	old := maxJudged.Swap(1 << 10)
	t.Cleanup(func() { maxJudged.Store(old) })
	g, _ := gateFor(t, "method:ping")
	p := startStdioGate(t, mcptestDemo, "", 0, g)
	p.host.Initialize(t)
	pad := strings.Repeat("x", 64<<10)
	p.host.Send(t, `{"jsonrpc":"2.0","id":2,"method":"ping","params":{"_meta":{"pad":"`+pad+`"}}}`)
	if line, _ := p.host.Recv(t); string(line) != `{"jsonrpc":"2.0","id":2,"result":{}}` {
		t.Errorf("got %.200s", line)
	}
	if h := g.Held(); len(h) != 0 {
		t.Errorf("held %d", len(h))
	}
}

// A host that floods while a frame is held: the frames behind it wait,
// bounded (the host is not read past the bound, and the trace says so),
// and every one is answered once the held frame goes.
func TestStdioFloodBehindAHeldFrame(t *testing.T) {
	g, changed, tap := boundedGate(50)
	p := startStdioGate(t, mcptestDemo, "", 0, g)
	p.host.Initialize(t)
	p.host.Request(t, "tools/call", map[string]any{"name": "add", "arguments": map[string]any{"a": 1, "b": 2}})
	h := heldOne(t, g, changed)
	const flood = 2000
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		for range flood {
			p.host.Request(t, "ping", map[string]any{})
		}
	}()
	// The bound is hit and said; the host waits.
	for deadline := time.After(10 * time.Second); ; {
		said := false
		for _, e := range tap.of(transport.KindLifecycle) {
			said = said || strings.Contains(e.Text, "not read until one moves")
		}
		if said {
			break
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatal("the bound was not said")
		}
	}
	if w := g.Held()[0].Waiting; w > 49 {
		t.Errorf("%d frames wait, past the bound", w)
	}
	if err := g.Forward(h.ID); err != nil {
		t.Fatal(err)
	}
	<-sent
	// Every one is answered (the server may answer in its own order).
	seen := map[string]bool{}
	for len(seen) < flood+1 {
		line, ok := p.host.Recv(t)
		if !ok {
			t.Fatalf("the connection ended after %d answers", len(seen))
		}
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		json.Unmarshal(line, &m)
		seen[string(m.ID)] = true
	}
	for _, id := range []int{2, 3, flood + 2} {
		if !seen[fmt.Sprint(id)] {
			t.Errorf("no answer to %d", id)
		}
	}
}

// A held call forwarded as it came is answered; the connection closed at
// the next one ends the host's stream, and the proxy with it.
func TestStdioBreakpointForwardAndClose(t *testing.T) {
	tap := &taps{}
	g, changed := gateTapped(t, tap, "method:tools/call dir:out")
	p := startStdioGate(t, mcptestDemo, "", 0, g)
	p.host.Initialize(t)
	p.host.Request(t, "tools/call", map[string]any{"name": "add", "arguments": map[string]any{"a": 1, "b": 2}})
	if err := g.Forward(heldOne(t, g, changed).ID); err != nil {
		t.Fatal(err)
	}
	if line, _ := p.host.Recv(t); !bytes.Contains(line, []byte(`"sum":3`)) {
		t.Errorf("the forwarded call got %s", line)
	}
	p.host.Request(t, "tools/call", map[string]any{"name": "add", "arguments": map[string]any{"a": 1, "b": 2}})
	if err := g.CloseConn(heldOne(t, g, changed).ID); err != nil {
		t.Fatal(err)
	}
	p.host.Ended(t)
	if ch := (&proxied{tap: tap}).changes(t); len(ch) != 2 || ch[0].Action != "forward" || ch[1].Action != "close" {
		t.Errorf("changes %+v", ch)
	}
}

// boundedGate is a gate holding the host's calls, at most max frames
// waiting behind one; changed is signalled by its changes and events.
func boundedGate(max int) (*intercept.Gate, chan struct{}, *taps) {
	q, _ := query.Parse("method:tools/call dir:out")
	changed := make(chan struct{}, 1<<14)
	tap := &taps{}
	signal := func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	g := intercept.NewGate(intercept.GateOptions{Breaks: []query.Query{q}, MaxWaiting: max, OnChange: signal,
		Tap: transport.TapFunc(func(e transport.Event) { tap.Observe(e); signal() })})
	return g, changed, tap
}
