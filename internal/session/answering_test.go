package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/session"
)

// askingConn is a server that answers tools/call by asking for sampling
// first (when ask is set) and, once the sampling answer arrives, answers
// the call (when reply is set). It records the notifications/cancelled
// mcpi sends.
type askingConn struct {
	ask, reply bool
	*serverFrames

	mu        sync.Mutex
	callID    json.RawMessage
	cancelled int
}

func newAskingConn(ask, reply bool) *askingConn {
	return &askingConn{ask: ask, reply: reply, serverFrames: newServerFrames(16)}
}

func (c *askingConn) Send(ctx context.Context, frame []byte) error {
	msgs, _, err := mcp.DecodeFrame(frame)
	if err != nil || len(msgs) != 1 {
		return nil
	}
	m := msgs[0]
	switch {
	case m.Method == "tools/call":
		c.mu.Lock()
		c.callID = m.ID
		c.mu.Unlock()
		if c.ask {
			go c.push(`{"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"well?"}}],"maxTokens":5}}`)
		}
	case m.Method == "notifications/cancelled":
		c.mu.Lock()
		c.cancelled++
		c.mu.Unlock()
	case m.IsResponse() && string(m.ID) == `"s1"`:
		if c.reply {
			c.mu.Lock()
			id := c.callID
			c.mu.Unlock()
			go c.push(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"content":[{"type":"text","text":"thanks"}]}}`)
		}
	}
	return nil
}

func (c *askingConn) cancels() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cancelled
}

// slowHandler is a person who takes think to answer a sampling request.
type slowHandler struct {
	session.DeclineHandler
	think   time.Duration
	c       **session.Client
	holding int // Answering() seen while thinking
}

func (h *slowHandler) CreateMessage(ctx context.Context, _ *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	h.holding = (*h.c).Answering()
	select {
	case <-time.After(h.think):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return &mcp.CreateMessageResult{Role: "assistant", Content: json.RawMessage(`{"type":"text","text":"yes"}`), Model: "person"}, nil
}

const holdTimeout = 10 * time.Second

// runAsking calls a tool against an askingConn inside a synctest bubble and
// returns how long the call took, the cancellations sent, what Answering
// said while the person thought, and the call's error.
func runAsking(t *testing.T, ask, reply bool, opts session.Options) (took time.Duration, cancels, holding int, err error) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		conn := newAskingConn(ask, reply)
		var c *session.Client
		h := &slowHandler{think: 3 * holdTimeout, c: &c}
		opts.Handler = h
		opts.Force = true
		c = session.New(conn, opts)
		start := time.Now()
		_, err = c.CallTool(context.Background(), "ask", nil, nil)
		took = time.Since(start)
		synctest.Wait() // let a notifications/cancelled go out
		cancels = conn.cancels()
		holding = h.holding
		if n := c.Answering(); n != 0 {
			t.Errorf("Answering() = %d after the call", n)
		}
		c.Close()
	})
	return
}

// A person who takes three timeouts to answer the server's sampling
// request does not make the tools/call that waits for it time out.
func TestAnsweringStopsTheClock(t *testing.T) {
	took, cancels, holding, err := runAsking(t, true, true, session.Options{Timeout: holdTimeout})
	if err != nil {
		t.Fatalf("the call failed: %v", err)
	}
	if took != 3*holdTimeout {
		t.Errorf("the call took %v, want %v (the person's time)", took, 3*holdTimeout)
	}
	if cancels != 0 {
		t.Errorf("%d notifications/cancelled sent", cancels)
	}
	if holding != 1 {
		t.Errorf("Answering() = %d while the person thought, want 1", holding)
	}
}

// Without a server request to answer, the clock runs as before.
func TestNoAnswerStillTimesOut(t *testing.T) {
	took, cancels, _, err := runAsking(t, false, false, session.Options{Timeout: holdTimeout})
	if !errors.Is(err, session.ErrTimeout) {
		t.Fatalf("err = %v, want a timeout", err)
	}
	if took != holdTimeout {
		t.Errorf("timed out after %v, want %v", took, holdTimeout)
	}
	if cancels != 1 {
		t.Errorf("%d notifications/cancelled sent, want 1", cancels)
	}
}

// A call that makes no progress after the answer times out one full
// Timeout after the answer: the clock restarted from zero.
func TestClockRestartsAfterTheAnswer(t *testing.T) {
	took, cancels, _, err := runAsking(t, true, false, session.Options{Timeout: holdTimeout})
	if !errors.Is(err, session.ErrTimeout) {
		t.Fatalf("err = %v, want a timeout", err)
	}
	if want := 3*holdTimeout + holdTimeout; took != want {
		t.Errorf("timed out after %v, want %v (answer at %v, then Timeout)", took, want, 3*holdTimeout)
	}
	if cancels != 1 {
		t.Errorf("%d notifications/cancelled sent, want 1", cancels)
	}
}

// The maximum time does not count the person's time either: it is
// extended by it.
func TestMaxTimeExtendedByTheAnswer(t *testing.T) {
	took, _, _, err := runAsking(t, true, false, session.Options{Timeout: -1, MaxTime: 2 * holdTimeout})
	var te *session.TimeoutError
	if !errors.As(err, &te) || !te.Max {
		t.Fatalf("err = %v, want the maximum time", err)
	}
	if want := 3*holdTimeout + 2*holdTimeout; took != want {
		t.Errorf("reached the maximum after %v, want %v", took, want)
	}
}

// slowReadConn is a server that reads a tools/call slowly (its write takes
// read) and never answers it.
type slowReadConn struct {
	read time.Duration
	*serverFrames
}

func (c *slowReadConn) Send(ctx context.Context, frame []byte) error {
	msgs, _, err := mcp.DecodeFrame(frame)
	if err != nil || len(msgs) != 1 || msgs[0].Method != "tools/call" {
		return nil
	}
	select {
	case <-time.After(c.read):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// The maximum time bounds the whole request, its write included: a server
// that takes most of it to read the request does not get a whole maximum
// time more to answer.
func TestMaxTimeCountsTheWrite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const maxTime, read = 10 * time.Second, 8 * time.Second
		conn := &slowReadConn{read: read, serverFrames: newServerFrames(0)}
		c := session.New(conn, session.Options{Timeout: time.Minute, MaxTime: maxTime, Force: true})
		defer c.Close()
		start := time.Now()
		_, err := c.CallTool(context.Background(), "slow", nil, nil)
		took := time.Since(start)
		var te *session.TimeoutError
		if !errors.As(err, &te) || !te.Max {
			t.Fatalf("err = %v, want the maximum time reached", err)
		}
		if took != maxTime {
			t.Errorf("the call ended after %v, want %v (the write's %v included)", took, maxTime, read)
		}
	})
}
