package daemon

import (
	"context"

	"github.com/mcpi-dev/mcpi/internal/live"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/session"
)

// Name is the session's name.
func (h *Held) Name() string { return h.name }

// Board holds the server requests no command could answer.
func (h *Held) Board() *Board { return h.disp.board }

// Hub feeds the session's tails.
func (h *Held) Hub() *Hub { return h.hub }

// Jobs are the calls run with --no-wait.
func (h *Held) Jobs() *Jobs { return h.jobs }

// Gone is closed when the session's server is gone for good.
func (h *Held) Gone() <-chan struct{} { return h.gone }

// Ended is closed once the session has ended and End says how.
func (h *Held) Ended() <-chan struct{} { return h.ended }

// End is how the session ended (nil while it runs).
func (h *Held) End() *live.Status { return h.end.Load() }

// Roots are the session's roots now.
func (h *Held) Roots() []mcp.Root { return h.disp.Roots() }

// SetRoots makes roots the session's, and tells the attached clients (the
// server is told by the caller, with notifications/roots/list_changed).
func (h *Held) SetRoots(roots []mcp.Root) {
	h.disp.SetRoots(roots)
	h.RootsChanged()
}

// SetLogLevel sets the level of the server's log messages, and keeps it
// for a restarted server.
func (h *Held) SetLogLevel(ctx context.Context, level mcp.LoggingLevel) error {
	if err := h.Client().SetLogLevel(ctx, level); err != nil {
		return err
	}
	h.stateMu.Lock()
	h.logLevel = level
	h.stateMu.Unlock()
	return nil
}

// Begin registers a command under way with slot s: the server's requests
// it causes go to the slot's Answerer. It returns the context for the
// command's requests, and the function that ends the registration.
func (h *Held) Begin(ctx context.Context, s *Slot) (context.Context, func()) {
	h.disp.add(s)
	return WithSlot(ctx, s), func() { h.disp.remove(s) }
}

// FindTool returns the tool name of c (the session's client), from the
// session's tool cache where the server tells of changes, or nil when the
// server has none by that name.
func (h *Held) FindTool(ctx context.Context, c *session.Client, name string) (*mcp.Tool, error) {
	if c != h.Client() {
		return c.FindTool(ctx, name)
	}
	return h.tools.find(ctx, c, name)
}

// Listing is a listing of the session's tools under way: Done keeps what
// it found in the tool cache, unless the tools changed since it began.
type Listing struct {
	h     *Held
	epoch int64
}

// BeginListing starts a listing of the tools.
func (h *Held) BeginListing() Listing { return Listing{h: h, epoch: h.tools.begin()} }

// Done keeps the complete listing tools of client generation gen.
func (l Listing) Done(gen int64, tools []mcp.Tool) { l.h.tools.set(gen, l.epoch, tools) }
