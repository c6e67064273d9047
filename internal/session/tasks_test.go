package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// CallToolAsTask reports each state of the task, the final one included,
// and cancelling its context cancels the task.
func TestCallToolAsTaskStates(t *testing.T) {
	t.Parallel()
	cmd := mcptest.Everything(t)
	p := mustPeer(t)(dialPeer(t, peerConfig{}, func(tap transport.Tap) (transport.Conn, error) {
		return transport.Spawn(transport.StdioOptions{Command: cmd[0], Args: cmd[1:], Tap: tap})
	}))
	ctx := ctxT(t)
	var mu sync.Mutex
	var states []mcp.Task
	raw, err := p.c.CallToolAsTask(ctx, mcp.CallToolParams{
		Name: "simulate-research-query", Arguments: json.RawMessage(`{"topic":"kelp"}`),
	}, nil, func(t mcp.Task) {
		mu.Lock()
		states = append(states, t)
		mu.Unlock()
	})
	if err != nil || !strings.Contains(string(raw), "kelp") {
		t.Fatalf("result: %v %s", err, raw)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(states) < 2 || states[0].Status != "working" || states[len(states)-1].Status != "completed" {
		t.Errorf("states: %+v", states)
	}

	// Cancelled while it works: the task is cancelled on the server.
	cctx, cancel := context.WithCancel(ctx)
	var id string
	var once sync.Once
	_, err = p.c.CallToolAsTask(cctx, mcp.CallToolParams{
		Name: "simulate-research-query", Arguments: json.RawMessage(`{"topic":"moss"}`),
	}, nil, func(t mcp.Task) {
		once.Do(func() {
			id = t.TaskID
			time.AfterFunc(100*time.Millisecond, cancel)
		})
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled call: %v", err)
	}
	task, err := p.c.GetTask(ctx, id)
	if err != nil || task.Status != "cancelled" {
		t.Errorf("after the cancel: %v %+v", err, task)
	}
}
