package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

func tasksPeer(t *testing.T) *peer {
	p := mustPeer(t)(stdioPeer(t, mcptest.TasksPeer, peerConfig{}))
	for _, m := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
		p.fc.Allow(m)
	}
	return p
}

type states struct {
	mu   sync.Mutex
	seen []string
}

func (s *states) add(t mcp.Task) {
	s.mu.Lock()
	s.seen = append(s.seen, t.Status+":"+t.StatusMessage)
	s.mu.Unlock()
}

func (s *states) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.seen, " ")
}

// A task handle the server gives unasked is followed with tasks/get to its
// end: its states reported, its inline result returned; input it asks for
// is answered through the Handler with tasks/update, each key once; a
// failed task is an error carrying the task's; a plain result is returned
// as it came.
func TestFollowTask(t *testing.T) {
	t.Parallel()
	p := tasksPeer(t)
	ctx := ctxT(t)
	call := func(tool string) (string, string, error) {
		var st states
		raw, err := p.c.CallToolFollow(ctx, mcp.CallToolParams{Name: tool}, nil, st.add)
		return string(raw), st.String(), err
	}
	if raw, st, err := call("slow"); err != nil || !strings.Contains(raw, "slow done") || st != "working:warming up completed:" {
		t.Errorf("slow: %v %s, states %q", err, raw, st)
	}
	if raw, st, err := call("greet"); err != nil || !strings.Contains(raw, "Hello!") || st != "" {
		t.Errorf("greet: %v %s, states %q", err, raw, st)
	}
	if raw, st, err := call("multi"); err != nil || !strings.Contains(raw, `answered a={\"action\":\"accept\"`) || !strings.Contains(raw, " b=") ||
		st != "input_required: completed:" {
		t.Errorf("multi: %v %s, states %q", err, raw, st)
	}
	if raw, _, err := call("iserr"); err != nil || !strings.Contains(raw, `"isError":true`) {
		t.Errorf("iserr: %v %s", err, raw)
	}
	_, _, err := call("fail")
	var te *session.TaskError
	var re *session.RPCError
	if !errors.As(err, &te) || !errors.As(err, &re) || re.Code != -32603 || !strings.Contains(err.Error(), "failed: boom") {
		t.Errorf("fail: %v", err)
	}
}

// Cancelling the caller's context cancels the task on the server.
func TestFollowTaskCancel(t *testing.T) {
	t.Parallel()
	p := tasksPeer(t)
	ctx := ctxT(t)
	cctx, cancel := context.WithCancel(ctx)
	var id string
	var once sync.Once
	_, err := p.c.CallToolFollow(cctx, mcp.CallToolParams{Name: "forever"}, nil, func(t mcp.Task) {
		once.Do(func() { id = t.TaskID; cancel() })
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled call: %v", err)
	}
	task, _, err := p.c.GetTaskDetail(ctx, id)
	if err != nil || task.Status != "cancelled" {
		t.Errorf("after the cancel: %v %+v", err, task)
	}
	// The methods the extension removed are refused before sending.
	if _, err := p.c.ListTasks(ctx, ""); !errors.Is(err, session.ErrVersion) {
		t.Errorf("tasks/list: %v", err)
	}
}

// Over HTTP each tasks/* request names its task in Mcp-Name (the server
// refuses it otherwise).
func TestFollowTaskHTTP(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(mcptest.TasksHandler())
	t.Cleanup(srv.Close)
	p := mustPeer(t)(dialPeer(t, peerConfig{}, func(tap transport.Tap) (transport.Conn, error) {
		return transport.NewStreamableHTTP(transport.HTTPOptions{URL: srv.URL, Tap: tap}), nil
	}))
	for _, m := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
		p.fc.Allow(m)
	}
	raw, err := p.c.CallToolFollow(ctxT(t), mcp.CallToolParams{Name: "confirm", Arguments: json.RawMessage(`{}`)}, nil, nil)
	if err != nil || !strings.Contains(string(raw), "answered confirm=") {
		t.Errorf("confirm: %v %s", err, raw)
	}
}
