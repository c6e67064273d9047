package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/mcptest"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// postAsync posts a frame on a goroutine of its own: the answer waits
// for the held frame's fate.
func postAsync(t *testing.T, h *mcptest.HTTPHost, frame string) chan mcptest.HTTPAnswer {
	done := make(chan mcptest.HTTPAnswer, 1)
	go func() { done <- h.Post(t, frame) }()
	return done
}

// Over HTTP, a breakpoint on the host's call: held, edited and
// forwarded (the upstream sees the edit); then a call answered in the
// server's place never reaches it.
func TestHTTPBreakpointOnTheHostsCall(t *testing.T) {
	g, changed := gateFor(t, "method:tools/call dir:out")
	p := startHTTPGate(t, nil, "", 0, g)
	p.host.Initialize(t)
	done := postAsync(t, p.host, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}`)
	h := heldOne(t, g, changed)
	if !h.Answerable {
		t.Errorf("the host's request cannot be answered: %+v", h)
	}
	if err := g.Edit(h.ID, []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":40,"b":2}}}`)); err != nil {
		t.Fatal(err)
	}
	if a := <-done; len(a.Frames) != 1 || !bytes.Contains(a.Frames[0], []byte("42")) {
		t.Errorf("answer %d %q", a.Status, a.Frames)
	}
	done = postAsync(t, p.host, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"delete_file","arguments":{"path":"/"}}}`)
	h = heldOne(t, g, changed)
	if err := g.Answer(h.ID, json.RawMessage(`{"content":[],"isError":true}`), 0, ""); err != nil {
		t.Fatal(err)
	}
	if a := <-done; a.Status != http.StatusOK || len(a.Frames) != 1 || !bytes.Contains(a.Frames[0], []byte(`"isError":true`)) {
		t.Errorf("answer %d %q", a.Status, a.Frames)
	}
	if saw := strings.Join(p.upstreamSaw(), "\n"); strings.Contains(saw, "delete_file") || !strings.Contains(saw, `"a":40`) {
		t.Errorf("the upstream saw %s", saw)
	}
}

// Over HTTP, a breakpoint on the server's SSE answer: an answer is no
// request to answer, and dropped, the host's stream ends with no frame.
func TestHTTPBreakpointOnTheServersAnswer(t *testing.T) {
	g, changed := gateFor(t, "dir:in id:2")
	p := startHTTPGate(t, nil, "", 0, g)
	p.host.Initialize(t)
	done := postAsync(t, p.host, ping)
	h := heldOne(t, g, changed)
	if err := g.Answer(h.ID, json.RawMessage(`{}`), 0, ""); err == nil {
		t.Error("an answer from the server was answered")
	}
	if err := g.Drop(h.ID); err != nil {
		t.Fatal(err)
	}
	if a := <-done; len(a.Frames) != 0 || a.Err != nil {
		t.Errorf("answer %q %v", a.Frames, a.Err)
	}
}

// Over HTTP, a held call forwarded as it came is answered; the
// connection closed at the next one breaks the host's request.
func TestHTTPBreakpointForwardAndClose(t *testing.T) {
	g, changed := gateFor(t, "method:tools/call dir:out")
	p := startHTTPGate(t, nil, "", 0, g)
	p.host.Initialize(t)
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}`
	done := postAsync(t, p.host, call)
	if err := g.Forward(heldOne(t, g, changed).ID); err != nil {
		t.Fatal(err)
	}
	if a := <-done; len(a.Frames) != 1 || !bytes.Contains(a.Frames[0], []byte(`"sum":3`)) {
		t.Errorf("the forwarded call got %d %q", a.Status, a.Frames)
	}
	done = postAsync(t, p.host, call)
	if err := g.CloseConn(heldOne(t, g, changed).ID); err != nil {
		t.Fatal(err)
	}
	if a := <-done; a.Err == nil {
		t.Errorf("the closed call got %d %q, want a broken connection", a.Status, a.Frames)
	}
}

// Over HTTP, a host that floods while a call is held: the requests behind
// it wait, bounded (past the bound they are not read, and the trace says
// so), and every one is answered once the held call goes.
func TestHTTPFloodBehindAHeldCall(t *testing.T) {
	g, changed, tap := boundedGate(20)
	p := startHTTPGate(t, jsonUpstream, "", 0, g)
	call := postAsync(t, p.host, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add"}}`)
	h := heldOne(t, g, changed)
	const flood = 200
	answers := make(chan mcptest.HTTPAnswer, flood)
	for i := range flood {
		go func() { answers <- p.host.Post(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i+2)) }()
	}
	tap.waitFor(t, "the bound said", func(evs []transport.Event) bool {
		for _, e := range evs {
			if e.Kind == transport.KindLifecycle && strings.Contains(e.Text, "not read until one moves") {
				return true
			}
		}
		return false
	})
	if w := g.Held()[0].Waiting; w > 19 {
		t.Errorf("%d requests wait, past the bound", w)
	}
	if err := g.Forward(h.ID); err != nil {
		t.Fatal(err)
	}
	if a := <-call; len(a.Frames) != 1 {
		t.Errorf("the held call got %q %v", a.Frames, a.Err)
	}
	for range flood {
		if a := <-answers; len(a.Frames) != 1 {
			t.Fatalf("a ping got %d %q %v", a.Status, a.Frames, a.Err)
		}
	}
}
