package session_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

func TestCapabilityCheckedBeforeSending(t *testing.T) {
	t.Parallel()
	// The hostile server declares tools and logging only.
	p := mustPeer(t)(stdioPeer(t, hostile(mcptest.HostileOldVersion), peerConfig{}))
	_, err := p.c.AllResources(ctxT(t))
	var ce *session.CapabilityError
	if !errors.As(err, &ce) || ce.Capability != "resources" {
		t.Fatalf("want a capability error, got %v", err)
	}
	if n := len(p.rec.sent("resources/list")); n != 0 {
		t.Fatalf("resources/list was sent %d times", n)
	}
	// Forced, it goes out and the server's own answer comes back.
	_, err = p.c.Send(ctxT(t), "resources/list", nil, nil)
	var re *session.RPCError
	if !errors.As(err, &re) || re.Code != mcp.CodeMethodNotFound {
		t.Fatalf("forced resources/list: %v", err)
	}
}

func TestProgressResetsTimeout(t *testing.T) {
	t.Parallel()
	p := mustPeer(t)(stdioPeer(t, "demo", peerConfig{}))
	// Eight steps 100ms apart take 800ms, longer than the 500ms timeout; the
	// progress notification of each step keeps the call alive.
	var n int
	r, err := p.c.CallTool(ctxT(t), "long_running", json.RawMessage(`{"steps":8,"interval_ms":100}`), &session.CallOptions{
		Timeout:    500 * time.Millisecond,
		OnProgress: func(mcp.ProgressParams) { n++ },
	})
	if err != nil || r.IsError {
		t.Fatalf("long_running with progress: %v", err)
	}
	if n != 8 {
		t.Errorf("%d progress notifications", n)
	}
	// Without progress the same call times out.
	_, err = p.c.CallTool(ctxT(t), "slow", json.RawMessage(`{"ms":2000}`), &session.CallOptions{Timeout: 500 * time.Millisecond})
	if !errors.Is(err, session.ErrTimeout) {
		t.Errorf("slow without progress: %v", err)
	}
}

func TestManyCallsInFlight(t *testing.T) {
	t.Parallel()
	srv := newDemoHTTP(t)
	for name, connect := range map[string]func() *peer{
		"stdio": func() *peer { return mustPeer(t)(stdioPeer(t, "demo", peerConfig{})) },
		"http":  func() *peer { return mustPeer(t)(httpPeer(t, srv.URL+"/mcp", transport.ModeStreamable, peerConfig{})) },
	} {
		t.Run(name, func(t *testing.T) {
			p := connect()
			var wg sync.WaitGroup
			errs := make(chan error, 64)
			for i := range 64 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					want := fmt.Sprintf("call %d", i)
					args, _ := json.Marshal(map[string]string{"text": want})
					r, err := p.c.CallTool(ctxT(t), "echo", args, nil)
					if err != nil {
						errs <- err
					} else if textOf(r) != want {
						errs <- fmt.Errorf("got %q, want %q", textOf(r), want)
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
		})
	}
}

func TestTasksAgainstEverything(t *testing.T) {
	t.Parallel()
	cmd := mcptest.Everything(t)
	p := mustPeer(t)(dialPeer(t, peerConfig{}, func(tap transport.Tap) (transport.Conn, error) {
		return transport.Spawn(transport.StdioOptions{Command: cmd[0], Args: cmd[1:], Tap: tap})
	}))
	ctx := ctxT(t)
	raw, err := p.c.CallToolRaw(ctx, mcp.CallToolParams{
		Name: "simulate-research-query", Arguments: json.RawMessage(`{"topic":"tide pools"}`),
		Task: json.RawMessage(`{"ttl":60000}`),
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var created mcp.CallToolResult
	if err := json.Unmarshal(raw, &created); err != nil || created.Task == nil || created.Task.TaskID == "" {
		t.Fatalf("not a task: %v %s", err, raw)
	}
	id := created.Task.TaskID
	task, err := p.c.GetTask(ctx, id)
	if err != nil || task.TaskID != id {
		t.Fatalf("tasks/get: %v %+v", err, task)
	}
	list, err := p.c.ListTasks(ctx, "")
	if err != nil || len(list.Tasks) == 0 {
		t.Fatalf("tasks/list: %v %+v", err, list)
	}
	res, err := p.c.TaskResult(ctx, id, nil)
	if err != nil || !strings.Contains(string(res), "tide pools") {
		t.Fatalf("tasks/result: %v %s", err, res)
	}
	task, err = p.c.GetTask(ctx, id)
	if err != nil || task.Status != "completed" {
		t.Errorf("after the result: %v %+v", err, task)
	}

	// A second task, cancelled while it works.
	raw, err = p.c.CallToolRaw(ctx, mcp.CallToolParams{
		Name: "simulate-research-query", Arguments: json.RawMessage(`{"topic":"moss"}`),
		Task: json.RawMessage(`{"ttl":60000}`),
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	created = mcp.CallToolResult{}
	json.Unmarshal(raw, &created)
	cancelled, err := p.c.CancelTask(ctx, created.Task.TaskID)
	if err != nil || cancelled.Status != "cancelled" {
		t.Errorf("tasks/cancel: %v %+v", err, cancelled)
	}
}
