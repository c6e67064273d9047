package proxy

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/mcptest"
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
