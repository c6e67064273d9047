package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// floodConn is a server that sends n requests (ping) as fast as mcpi
// reads them and never reads an answer: every Send blocks until its
// context ends or the connection closes.
type floodConn struct {
	*serverFrames // Close; Recv is floodConn's own

	n       int
	sent    int
	drained chan struct{} // closed when the reader asks past the n-th request
	sends   atomic.Int64
	taken   atomic.Int64 // requests the reader took
}

func (c *floodConn) Send(ctx context.Context, frame []byte) error {
	c.sends.Add(1)
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-c.closed:
		return transport.ErrClosed
	}
}

func (c *floodConn) Recv() (transport.Frame, error) {
	if c.sent < c.n {
		c.sent++
		c.taken.Store(int64(c.sent))
		return transport.Frame{Data: fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`, c.sent)}, nil
	}
	if c.sent == c.n {
		c.sent++ // Recv is called from one goroutine: close drained once
		close(c.drained)
	}
	<-c.closed
	return transport.Frame{}, transport.ErrClosed
}

// A server that sends 300,000 requests and never reads the answers costs
// a bounded amount: at most MaxServerRequests requests are in progress
// (each a goroutine blocked writing its answer), the rest are refused
// through a bounded queue, and one warning says so. The bound checked:
// fewer than 2,000 goroutines and under 64 MB of live heap once the flood
// has been read (unbounded, it took 2.2 GB).
func TestServerRequestFloodIsBounded(t *testing.T) {
	const n = 300_000
	conn := &floodConn{n: n, serverFrames: newServerFrames(0), drained: make(chan struct{})}
	var warnings, deafWarnings atomic.Int64
	deaf := make(chan struct{})
	var first atomic.Value
	before := runtime.NumGoroutine()
	c := session.New(conn, session.Options{WriteTimeout: 100 * time.Millisecond, OnWarning: func(w session.Warning) {
		if w.Kind == "server-requests" {
			if warnings.Add(1) == 1 {
				first.Store(w.Message)
			}
		}
		if w.Kind == "unanswered" && deafWarnings.Add(1) == 1 {
			close(deaf)
		}
	}})
	defer c.Close()
	// Wait for the reader to have taken every request, and for the
	// answers the server cannot take to have been dropped.
	select {
	case <-conn.drained:
	case <-time.After(60 * time.Second):
		t.Fatalf("the reader took %d of %d requests", conn.sentCount(), n)
	}
	select {
	case <-deaf:
	case <-time.After(10 * time.Second):
		t.Fatal("no warning about a server that reads nothing")
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	g := runtime.NumGoroutine() - before
	t.Logf("after %d requests: %d goroutines, %.1f MB heap in use, %d answers attempted", n, g, float64(ms.HeapInuse)/(1<<20), conn.sends.Load())
	if g > 2000 {
		t.Errorf("%d goroutines after the flood, want fewer than 2000", g)
	}
	if ms.HeapInuse > 64<<20 {
		t.Errorf("%.1f MB of heap in use after the flood, want under 64 MB", float64(ms.HeapInuse)/(1<<20))
	}
	if w := warnings.Load(); w != 1 {
		t.Errorf("%d warnings about the flood, want exactly one", w)
	}
	if s, _ := first.Load().(string); !strings.Contains(s, fmt.Sprint(session.DefaultMaxServerRequests)) {
		t.Errorf("warning %q does not state the bound", s)
	}
	// The server reads nothing: past the refusals' queue, the answers it
	// cannot take are dropped, counted and said once.
	if w := deafWarnings.Load(); w != 1 {
		t.Errorf("%d warnings about a server that reads nothing, want exactly one", w)
	}
	if c.Unanswered() == 0 {
		t.Error("no unanswered request counted for a server that reads nothing")
	}
}

func (c *floodConn) sentCount() int { return int(c.taken.Load()) }

// progressConn answers each tools/call with progress every 10ms and never
// with a result.
type progressConn struct {
	*serverFrames
}

func (c *progressConn) Send(ctx context.Context, frame []byte) error {
	msgs, _, err := mcp.DecodeFrame(frame)
	if err != nil || len(msgs) != 1 || msgs[0].Method != "tools/call" {
		return nil
	}
	var p struct {
		Meta map[string]any `json:"_meta"`
	}
	_ = json.Unmarshal(msgs[0].Params, &p)
	tok := p.Meta[mcp.ProgressTokenKey]
	go func() {
		for i := 0; ; i++ {
			select {
			case <-c.closed:
				return
			case <-time.After(10 * time.Millisecond):
			}
			if !c.push(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%v,"progress":%d}}`, tok, i)) {
				return
			}
		}
	}()
	return nil
}

// Progress resets the timeout, never the maximum time: a call kept alive
// by progress forever ends after MaxTime with an error that says so. In a
// synctest bubble: the clocks are the bubble's, and the progress comes
// every 10 ms of it, however busy the machine.
func TestMaxTimeBeatsProgress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		conn := &progressConn{newServerFrames(16)}
		c := session.New(conn, session.Options{Timeout: 100 * time.Millisecond, MaxTime: 600 * time.Millisecond})
		defer c.Close()
		var progressed atomic.Int64
		err := c.Call(context.Background(), "tools/call", map[string]any{"name": "forever"}, nil,
			&session.CallOptions{OnProgress: func(mcp.ProgressParams) { progressed.Add(1) }})
		var te *session.TimeoutError
		if !errors.As(err, &te) || !te.Max {
			t.Fatalf("err = %v, want the maximum time", err)
		}
		if !strings.Contains(err.Error(), "maximum time of 600ms") {
			t.Errorf("error %q does not name the maximum time", err)
		}
		// Progress came all along: 59 notifications, 10 ms apart, up to the
		// maximum; the timeout alone would have ended the call after 10.
		if n := progressed.Load(); n < 50 {
			t.Errorf("only %d progress notifications: the timeout, not the maximum, may have ended the call", n)
		}
	})
}
