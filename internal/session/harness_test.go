package session_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// recorder keeps what the session and the transport reported.
type recorder struct {
	mu       sync.Mutex
	events   []transport.Event
	notifs   []session.Notification
	warnings []session.Warning
	changed  chan struct{}
}

func newRecorder() *recorder { return &recorder{changed: make(chan struct{}, 1)} }

func (r *recorder) poke() {
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

func (r *recorder) Observe(e transport.Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
	r.poke()
}

func (r *recorder) notify(n session.Notification) {
	r.mu.Lock()
	r.notifs = append(r.notifs, n)
	r.mu.Unlock()
	r.poke()
}

func (r *recorder) warn(w session.Warning) {
	r.mu.Lock()
	r.warnings = append(r.warnings, w)
	r.mu.Unlock()
	r.poke()
}

// waitFor waits until cond holds, checking each time something is recorded.
func (r *recorder) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		r.mu.Lock()
		ok := cond()
		r.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-r.changed:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func (r *recorder) notifications(method string) []session.Notification {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []session.Notification
	for _, n := range r.notifs {
		if n.Method == method {
			out = append(out, n)
		}
	}
	return out
}

func (r *recorder) sent(method string) []mcp.Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []mcp.Message
	for _, e := range r.events {
		if e.Kind != transport.KindFrame || e.Dir != transport.Outgoing {
			continue
		}
		msgs, _, err := mcp.DecodeFrame(e.Data)
		if err != nil {
			continue
		}
		for _, m := range msgs {
			if m.Method == method {
				out = append(out, *m)
			}
		}
	}
	return out
}

func (r *recorder) kinds(k transport.EventKind) []transport.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []transport.Event
	for _, e := range r.events {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

// testHandler answers server requests with canned replies and counts them.
type testHandler struct {
	mu    sync.Mutex
	calls map[string]int
	roots []mcp.Root
}

func (h *testHandler) count(m string) {
	h.mu.Lock()
	if h.calls == nil {
		h.calls = map[string]int{}
	}
	h.calls[m]++
	h.mu.Unlock()
}

func (h *testHandler) CreateMessage(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	h.count("sampling")
	// The reply names the prompt, so that parallel calls can tell their
	// answers apart.
	prompt := ""
	if n := len(p.Messages); n > 0 {
		var c mcp.Content
		json.Unmarshal(p.Messages[n-1].Content, &c)
		prompt = c.Text
	}
	text, _ := json.Marshal("the model says hi to " + prompt)
	return &mcp.CreateMessageResult{Role: "assistant", Content: json.RawMessage(`{"type":"text","text":` + string(text) + `}`), Model: "test-model", StopReason: "endTurn"}, nil
}

func (h *testHandler) Elicit(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	h.count("elicitation")
	if p.Mode == "url" {
		return &mcp.ElicitResult{Action: mcp.ElicitAccept}, nil
	}
	// Accept with the schema's defaults, as a person pressing enter would.
	var s struct {
		Properties map[string]struct {
			Default any `json:"default"`
		} `json:"properties"`
	}
	json.Unmarshal(p.RequestedSchema, &s)
	content := map[string]any{}
	for k, v := range s.Properties {
		if v.Default != nil {
			content[k] = v.Default
		}
	}
	if _, ok := s.Properties["name"]; ok && content["name"] == nil {
		content["name"] = "Ada"
	}
	return &mcp.ElicitResult{Action: mcp.ElicitAccept, Content: content}, nil
}

func (h *testHandler) ListRoots(ctx context.Context) (*mcp.ListRootsResult, error) {
	h.count("roots")
	h.mu.Lock()
	defer h.mu.Unlock()
	roots := h.roots
	if roots == nil {
		roots = []mcp.Root{{URI: "file:///tmp/project", Name: "project"}}
	}
	return &mcp.ListRootsResult{Roots: roots}, nil
}

func (h *testHandler) n(m string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.calls[m]
}

// peer is a connected session under test.
type peer struct {
	c   *session.Client
	rec *recorder
	h   *testHandler
	fc  *mcptest.FrameChecker
}

type peerConfig struct {
	opts     session.Options
	noSchema bool // skip schema checks (raw sends of odd frames)
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// dialPeer connects a session over conn, made by dial with the tap.
func dialPeer(t *testing.T, cfg peerConfig, dial func(tap transport.Tap) (transport.Conn, error)) (*peer, error) {
	t.Helper()
	p := &peer{rec: newRecorder(), h: &testHandler{}}
	var client *session.Client
	offered := cfg.opts.ProtocolVersion
	if offered == "" {
		offered = mcp.LatestLegacy
	}
	p.fc = mcptest.NewFrameChecker(func() string {
		if client != nil {
			if v := client.ProtocolVersion(); v != "" {
				return v
			}
		}
		return offered
	})
	tap := transport.MultiTap(p.rec, p.fc)
	conn, err := dial(tap)
	if err != nil {
		return nil, err
	}
	opts := cfg.opts
	if opts.Handler == nil {
		opts.Handler = p.h
	}
	opts.OnNotification = p.rec.notify
	opts.OnWarning = p.rec.warn
	client = session.New(conn, opts)
	p.c = client
	t.Cleanup(func() { client.Close() })
	if err := client.Start(ctxT(t)); err != nil {
		client.Close()
		return p, err
	}
	if !cfg.noSchema {
		t.Cleanup(func() {
			n, errs := p.fc.Result()
			for _, e := range errs {
				t.Errorf("schema: %s", e)
			}
			if n == 0 {
				t.Errorf("schema: no frame was checked")
			}
		})
	}
	return p, nil
}

// stdioPeer spawns this test binary as a server of the given kind.
func stdioPeer(t *testing.T, kind string, cfg peerConfig) (*peer, error) {
	t.Helper()
	return dialPeer(t, cfg, func(tap transport.Tap) (transport.Conn, error) {
		return transport.Spawn(transport.StdioOptions{
			Command: os.Args[0], Args: []string{"-test.run=^$"},
			Env: []string{mcptest.PeerEnv + "=" + kind}, Tap: tap,
			ShutdownGrace: 500 * time.Millisecond,
		})
	})
}

func mustPeer(t *testing.T) func(*peer, error) *peer {
	return func(p *peer, err error) *peer {
		t.Helper()
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		return p
	}
}

func textOf(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}
