package session

import (
	"context"
	"runtime"
	"sync"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/transport"
)

// closingConn is a server that asks for the roots once, and whose answer
// can only be written after the client has begun to close the connection:
// the write then fails. Recv ends only when the test releases it, so that
// the reader is still running when the write fails.
type closingConn struct {
	asked       bool
	closed      chan struct{}
	closeOnce   sync.Once
	sendStarted chan struct{}
	startOnce   sync.Once
	releaseRecv chan struct{}
}

func (c *closingConn) Send(ctx context.Context, _ []byte) error {
	c.startOnce.Do(func() { close(c.sendStarted) })
	<-c.closed
	return transport.ErrClosed
}

func (c *closingConn) Recv() (transport.Frame, error) {
	if !c.asked {
		c.asked = true
		return transport.Frame{Data: []byte(`{"jsonrpc":"2.0","id":0,"method":"roots/list"}`)}, nil
	}
	<-c.releaseRecv
	return transport.Frame{}, transport.ErrClosed
}

func (c *closingConn) Close() error { c.closeOnce.Do(func() { close(c.closed) }); return nil }

// An answer the client cannot write because it is closing the connection
// itself is no fault of the server: no "unanswered" warning. mcpi check
// closes its session's connection half-way (a stdio server runs one
// instance at a time), and server-everything asks for the roots then.
func TestClosingLeavesNoUnansweredWarning(t *testing.T) {
	conn := &closingConn{closed: make(chan struct{}), sendStarted: make(chan struct{}), releaseRecv: make(chan struct{})}
	var mu sync.Mutex
	var warnings []Warning
	c := New(conn, Options{Handler: DeclineHandler{}, OnWarning: func(w Warning) {
		mu.Lock()
		warnings = append(warnings, w)
		mu.Unlock()
	}})
	<-conn.sendStarted
	closed := make(chan struct{})
	go func() {
		c.Close()
		close(closed)
	}()
	// The answer's write has failed and been judged once no request of the
	// server is being served any more; only then may the reader end.
	for {
		c.mu.Lock()
		serving := c.serving
		c.mu.Unlock()
		if serving == 0 {
			break
		}
		runtime.Gosched()
	}
	close(conn.releaseRecv)
	<-closed
	mu.Lock()
	defer mu.Unlock()
	for _, w := range warnings {
		if w.Kind == "unanswered" {
			t.Errorf("closing the connection warned %q: %s", w.Kind, w.Message)
		}
	}
}
