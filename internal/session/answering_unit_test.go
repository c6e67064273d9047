package session

import (
	"context"
	"encoding/json"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// idleConn is a server that says nothing.
type idleConn struct {
	closed chan struct{}
	once   sync.Once
}

func (c *idleConn) Send(context.Context, []byte) error { return nil }
func (c *idleConn) Recv() (transport.Frame, error) {
	<-c.closed
	return transport.Frame{}, transport.ErrClosed
}
func (c *idleConn) Close() error { c.once.Do(func() { close(c.closed) }); return nil }

// gateHandler elicits from a person who answers when release is closed.
type gateHandler struct {
	DeclineHandler
	started, release chan struct{}
}

func (h *gateHandler) Elicit(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	close(h.started)
	<-h.release
	return &mcp.ElicitResult{Action: mcp.ElicitAccept, Content: map[string]any{}}, nil
}

// The input requests of a modern multi round-trip request, resolved
// between rounds, are not counted in the operation's time, as a legacy
// server request's answer is not counted in its request's: the person's
// time is the person's.
func TestInputRequestsHoldTheClock(t *testing.T) {
	h := &gateHandler{started: make(chan struct{}), release: make(chan struct{})}
	c := New(&idleConn{closed: make(chan struct{})}, Options{Handler: h, MaxTime: time.Hour})
	defer c.Close()
	ctx, op := c.operation(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := c.resolveInputs(ctx, "tools/call", map[string]json.RawMessage{
			"ask": json.RawMessage(`{"method":"elicitation/create","params":{"message":"name?","requestedSchema":{"type":"object","properties":{}}}}`),
		})
		done <- err
	}()
	<-h.started
	if n := c.Answering(); n != 1 {
		t.Errorf("Answering() = %d while the person answers, want 1", n)
	}
	asked := time.Now()
	for time.Since(asked) < 20*time.Millisecond {
		runtime.Gosched()
	}
	close(h.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := c.Answering(); n != 0 {
		t.Errorf("Answering() = %d after the answer, want 0", n)
	}
	op.mu.Lock()
	held := op.held
	op.mu.Unlock()
	if held < 20*time.Millisecond {
		t.Errorf("the operation counted the person's time: held %v, want at least 20ms", held)
	}
}
