package tui

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/demoserver"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// clock is a test's clock that the test moves.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// The Info pane counts a state's time from when the state began, not from
// the connection, and its clock moves on its own.
func TestInfoStateSince(t *testing.T) {
	srv := mcptest.NewRestartable(t, demoserver.HTTPHandler(demoserver.Options{Era: demoserver.EraLegacy}))
	clk := &clock{now: frozen}
	h := start(t, 100, 30, func(o *Options) {
		o.Target = srv.URL()
		o.Now = clk.Now
		o.Dial = func(ctx context.Context, hk Hooks) (*session.Client, error) {
			conn, err := transport.DialHTTP(ctx, transport.ModeAuto, transport.HTTPOptions{URL: srv.URL(), Tap: hk.Tap})
			if err != nil {
				return nil, err
			}
			return session.Connect(ctx, conn, session.Options{
				Handler: hk.Handler, OnNotification: hk.OnNotification, OnWarning: hk.OnWarning,
				OnHealth: hk.OnHealth, KeepAlive: 200 * time.Millisecond, Era: session.EraLegacy,
				Timeout: 5 * time.Second,
			})
		}
	})
	h.waitText(toolsLoaded, "● connected")
	h.press("alt+i")
	h.waitText("connected for")
	clk.add(10 * time.Second)
	// Nothing else happens: the pane's own clock redraws it.
	h.waitText("connected for 10.00s")
	clk.add(10 * time.Minute)
	srv.Stop()
	h.waitText("✗ unreachable", "state", "unreachable for 0µs")
	clk.add(5 * time.Second)
	h.waitText("unreachable for 5.00s")
}

// "connected for" moves while nothing else happens.
func TestInfoClockMoves(t *testing.T) {
	clk := &clock{now: frozen}
	h := start(t, 100, 30, func(o *Options) { o.Now = clk.Now })
	h.waitText(toolsLoaded, "● connected")
	h.waitAllLoaded()
	h.press("alt+i")
	h.waitText("connected for")
	time.Sleep(300 * time.Millisecond) // the last answers are in
	clk.add(10 * time.Second)
	h.waitText("connected for 10.00s")
}
