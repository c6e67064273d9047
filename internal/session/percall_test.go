package session_test

import (
	"context"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/session"
)

// maxCallAllocs bounds the allocations of one tools/call, mcpi's and the
// answerConn's together (its decoding of the request, its goroutine, the
// frame it answers with): the cost of a call that every command and `mcpi
// bench` pay. It was 46 before the request's clocks shared one timer, its
// write clock was made only for a write that waits, its frame was encoded
// once and only a call with a progress token had a channel for progress
// (32 since); 26 since a call waits on one channel, its operation goes in
// its context only for a second round and the same tool's params are
// encoded once; 25 since its clock is a function called, not a channel.
const maxCallAllocs = 26

// TestCallAllocations keeps the cost of a call in allocations where it
// is: a change that adds to it shows here before it shows in
// docs/performance.md's load figures.
func TestCallAllocations(t *testing.T) {
	conn := newAnswerConn(func(c *answerConn, m *mcp.Message) {
		c.push(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"content":[]}}`)
	})
	c := session.New(conn, session.Options{Force: true})
	defer c.Close()
	ctx := context.Background()
	params := mcp.CallToolParams{Name: "echo"}
	call := func() {
		if _, err := c.CallToolRaw(ctx, params, nil); err != nil {
			t.Fatal(err)
		}
	}
	call()
	if n := testing.AllocsPerRun(2000, call); n > maxCallAllocs {
		t.Errorf("a tools/call makes %.1f allocations, more than %d", n, maxCallAllocs)
	}
	t.Logf("%.1f allocations a call", testing.AllocsPerRun(2000, call))
}
