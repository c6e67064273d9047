package session_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
	"github.com/mcpi-dev/mcpi/internal/session"
)

// parkedHandler is a person who never answers: each request waits until
// it is withdrawn (its context ends), which withdrawn then says.
type parkedHandler struct {
	asked     chan struct{}
	withdrawn chan struct{}
}

func (h *parkedHandler) park(ctx context.Context) error {
	h.asked <- struct{}{}
	<-ctx.Done()
	close(h.withdrawn)
	return ctx.Err()
}

func (h *parkedHandler) CreateMessage(ctx context.Context, _ *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	return nil, h.park(ctx)
}

func (h *parkedHandler) Elicit(ctx context.Context, _ *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	return nil, h.park(ctx)
}

func (h *parkedHandler) ListRoots(ctx context.Context) (*mcp.ListRootsResult, error) {
	return nil, h.park(ctx)
}

// A task whose input is given elsewhere (mcpi tasks update, another
// client) while the call that follows it waits for its person: the
// request waiting is withdrawn, and the call goes on to the task's end.
func TestFollowTaskAnsweredElsewhere(t *testing.T) {
	t.Parallel()
	t.Run("at once", func(t *testing.T) { answeredElsewhere(t, 0) })
	// Past the operation's maximum time, which does not count the time
	// the person is asked: the watch goes on.
	t.Run("past the maximum time", func(t *testing.T) { answeredElsewhere(t, 500*time.Millisecond) })
}

func answeredElsewhere(t *testing.T, maxTime time.Duration) {
	t.Parallel()
	h := &parkedHandler{asked: make(chan struct{}, 1), withdrawn: make(chan struct{})}
	p := mustPeer(t)(stdioPeer(t, mcptest.TasksPeer, peerConfig{opts: session.Options{Handler: h, MaxTime: maxTime}}))
	for _, m := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
		p.fc.Allow(m)
	}
	ctx := ctxT(t)
	ids := make(chan string, 8)
	type outcome struct {
		raw json.RawMessage
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		raw, err := p.c.CallToolFollow(ctx, mcp.CallToolParams{Name: "confirm"}, nil, func(t mcp.Task) { ids <- t.TaskID })
		done <- outcome{raw, err}
	}()
	select {
	case <-h.asked:
	case <-time.After(10 * time.Second):
		t.Fatal("the task's input was never asked for")
	}
	id := <-ids
	if maxTime > 0 {
		<-time.After(2 * maxTime) // the time passing is what is tested
	}
	if err := p.c.UpdateTask(ctx, id, map[string]any{"confirm": map[string]any{"action": "accept", "content": map[string]any{"ok": true}}}); err != nil {
		t.Fatal(err)
	}
	select {
	case o := <-done:
		if o.err != nil || !strings.Contains(string(o.raw), "answered confirm=") {
			t.Errorf("the call: %v %s", o.err, o.raw)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the call still waits for its person after the task was answered elsewhere")
	}
	select {
	case <-h.withdrawn:
	case <-time.After(10 * time.Second):
		t.Error("the request waiting for the person was not withdrawn")
	}
}

// pausingHandler answers each request after a pause of its person's.
type pausingHandler struct{ pause time.Duration }

func (h pausingHandler) CreateMessage(context.Context, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	return nil, session.ErrRejected
}

func (h pausingHandler) Elicit(ctx context.Context, _ *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	select {
	case <-time.After(h.pause): // the person's time is what is tested
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return &mcp.ElicitResult{Action: mcp.ElicitAccept, Content: map[string]any{"ok": true}}, nil
}

func (h pausingHandler) ListRoots(context.Context) (*mcp.ListRootsResult, error) {
	return &mcp.ListRootsResult{}, nil
}

// The task is watched while its person answers, for longer than the
// operation's maximum time (which does not count the person's time),
// and while the answers are written: the call ends with the answers
// given, under -race.
func TestFollowTaskWatchedWhileAnswered(t *testing.T) {
	t.Parallel()
	p := mustPeer(t)(stdioPeer(t, mcptest.TasksPeer, peerConfig{opts: session.Options{Handler: pausingHandler{pause: 700 * time.Millisecond}, MaxTime: 500 * time.Millisecond}}))
	for _, m := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
		p.fc.Allow(m)
	}
	raw, err := p.c.CallToolFollow(ctxT(t), mcp.CallToolParams{Name: "multi"}, nil, nil)
	if err != nil || !strings.Contains(string(raw), "answered a=") || !strings.Contains(string(raw), " b=") {
		t.Errorf("the call: %v %s", err, raw)
	}
}
