package daemon

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/session"
)

// toolCache holds a session's tools between the calls that check their
// arguments against them, so that a call in a session is one round trip,
// not a tools/list and then the call. It is used only where the server
// tells of changes: a legacy session (a server with tools.listChanged
// sends notifications/tools/list_changed, one without declares that its
// tools do not change), a modern one while the session's
// subscriptions/listen for toolsListChanged is acknowledged and open. It
// is dropped when the server says its tools changed and when the session
// is replaced by a new one; a tool it does not hold is looked for in a
// new listing before a call says there is none; and mcpi tools in the
// session lists anew and keeps what it got.
type toolCache struct {
	usable atomic.Bool
	mu     sync.Mutex
	gen    int64
	tools  map[string]*mcp.Tool
	// epoch counts the invalidations: a listing started before one is not
	// kept, for it may predate the change.
	epoch int64
}

// watchTools makes the cache usable for c: at once in the legacy era; in
// the modern era once a subscriptions/listen for the tools' changes is
// acknowledged, and until it ends.
func (t *toolCache) watchTools(ctx context.Context, c *session.Client) {
	if c.Era() != session.EraModern {
		t.usable.Store(true)
		return
	}
	if caps := c.ServerCapabilities(); caps.Tools == nil || !caps.Tools.ListChanged {
		return
	}
	sub, err := c.Listen(ctx, mcp.SubscriptionFilter{ToolsListChanged: true})
	if err != nil {
		return
	}
	if !sub.Acknowledged.ToolsListChanged {
		sub.Close()
		return
	}
	t.usable.Store(true)
	go func() {
		<-sub.Done()
		t.usable.Store(false)
		t.invalidate()
	}()
}

func (t *toolCache) invalidate() {
	t.mu.Lock()
	t.tools = nil
	t.epoch++
	t.mu.Unlock()
}

// begin is called before a listing: set takes what it returns.
func (t *toolCache) begin() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.epoch
}

// set records a full listing made under generation gen, begun at epoch
// (begin), unless the tools were said to change since it began.
func (t *toolCache) set(gen, epoch int64, tools []mcp.Tool) {
	m := make(map[string]*mcp.Tool, len(tools))
	for i := range tools {
		m[tools[i].Name] = &tools[i]
	}
	t.mu.Lock()
	if t.epoch == epoch {
		t.gen, t.tools = gen, m
	}
	t.mu.Unlock()
}

func (t *toolCache) find(ctx context.Context, c *session.Client, name string) (*mcp.Tool, error) {
	if !t.usable.Load() {
		return c.FindTool(ctx, name)
	}
	gen := c.Generation()
	t.mu.Lock()
	tool, ok := t.tools[name]
	fresh := t.tools != nil && t.gen == gen
	t.mu.Unlock()
	if fresh && ok {
		return tool, nil
	}
	epoch := t.begin()
	tools, err := c.AllTools(ctx)
	if err != nil {
		return nil, err
	}
	t.set(gen, epoch, tools)
	for i := range tools {
		if tools[i].Name == name {
			return &tools[i], nil
		}
	}
	return nil, nil
}
