package daemon

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

type deadConn struct{}

func (deadConn) Send(context.Context, []byte) error { return transport.ErrClosed }
func (deadConn) Recv() (transport.Frame, error)     { return transport.Frame{}, transport.ErrClosed }
func (deadConn) Close() error                       { return nil }

type liveConn struct{ closed chan struct{} }

func (liveConn) Send(context.Context, []byte) error { return nil }
func (c liveConn) Recv() (transport.Frame, error) {
	<-c.closed
	return transport.Frame{}, transport.ErrClosed
}
func (c liveConn) Close() error { close(c.closed); return nil }

// With --restart, a command that comes while the crashed server is being
// closed (its group's end takes up to twice the shutdown grace), before
// the supervisor says a restart is under way, waits for the new server
// as docs/cli.md promises, and does not fail at once.
// In a synctest bubble: the supervisor's pauses take no time.
func TestCommandDuringTheRestartWaits(t *testing.T) {
	synctest.Test(t, commandDuringTheRestartWaits)
}

func commandDuringTheRestartWaits(t *testing.T) {
	old := session.New(deadConn{}, session.Options{})
	<-old.Done()
	h := &Held{name: "t", swapped: make(chan struct{}), gone: make(chan struct{}), restartMax: 1}
	h.cur.Store(old)
	// What supervise does: c.Close(), then restarting, then the new
	// client; each step once the command is waiting (every other
	// goroutine of the bubble blocked), so that it came before each.
	go func() {
		synctest.Wait()
		h.stateMu.Lock()
		h.restarting = true
		h.stateMu.Unlock()
		synctest.Wait()
		nc := session.New(liveConn{closed: make(chan struct{})}, session.Options{})
		h.cur.Store(nc)
		h.stateMu.Lock()
		h.restarting = false
		close(h.swapped)
		h.swapped = make(chan struct{})
		h.stateMu.Unlock()
	}()
	c, err := h.Current(context.Background())
	if err != nil {
		t.Fatalf("a command during the restart failed at once: %v", err)
	}
	if c == old {
		t.Fatal("the old client")
	}
	c.Close()
}
