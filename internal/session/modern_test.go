package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/demoserver"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

func demoHTTP(t *testing.T, era string) string {
	srv := httptest.NewServer(demoserver.HTTPHandler(demoserver.Options{Era: era}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestEraDetection(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, peer string
		http       bool
		era        string // forced, or "" for auto
		want       string
		reason     string
	}{
		{"stdio legacy-only", "demo", false, "", session.EraLegacy, "only 2025-11-25"},
		{"stdio modern-only", "demo:modern", false, "", session.EraModern, "answered server/discover"},
		{"stdio dual-era", "demo:both", false, "", session.EraModern, "answered server/discover"},
		{"stdio dual-era forced legacy", "demo:both", false, session.EraLegacy, session.EraLegacy, "forced"},
		{"http legacy-only", demoserver.EraLegacy, true, "", session.EraLegacy, "so initialize"},
		{"http modern-only", demoserver.EraModern, true, "", session.EraModern, "answered server/discover"},
		{"http dual-era", demoserver.EraBoth, true, "", session.EraModern, "answered server/discover"},
		{"http dual-era forced legacy", demoserver.EraBoth, true, session.EraLegacy, session.EraLegacy, "forced"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := peerConfig{opts: session.Options{Era: tc.era}}
			var p *peer
			if tc.http {
				p = mustPeer(t)(httpPeer(t, demoHTTP(t, tc.peer)+"/", transport.ModeAuto, cfg))
			} else {
				p = mustPeer(t)(stdioPeer(t, tc.peer, cfg))
			}
			if p.c.Era() != tc.want || !strings.Contains(p.c.EraReason(), tc.reason) {
				t.Errorf("era %s (%s), want %s (%s)", p.c.Era(), p.c.EraReason(), tc.want, tc.reason)
			}
			if _, err := p.c.AllTools(ctxT(t)); err != nil {
				t.Errorf("tools/list: %v", err)
			}
			if tc.want == session.EraModern {
				if got := p.c.ProtocolVersion(); got != mcp.Rev20260728 {
					t.Errorf("revision %s", got)
				}
				if n := len(p.rec.sent("initialize")); n != 0 {
					t.Errorf("initialize sent %d times to a modern server", n)
				}
			}
		})
	}
}

func TestModernForcedOnLegacyServerFails(t *testing.T) {
	t.Parallel()
	_, err := stdioPeer(t, "demo", peerConfig{opts: session.Options{Era: session.EraModern}, noSchema: true})
	var ve *session.VersionError
	if !errors.As(err, &ve) || !strings.Contains(err.Error(), "2025-11-25") {
		t.Fatalf("want a version error naming what the server speaks, got %v", err)
	}
}

// exerciseModern drives the stateless era against the demo server.
func exerciseModern(t *testing.T, p *peer, overHTTP bool) {
	ctx := ctxT(t)
	c := p.c
	if c.Era() != session.EraModern {
		t.Fatalf("era %s", c.Era())
	}
	if name := c.InitializeResult().ServerInfo.Name; name != "mcpi-demo" {
		t.Errorf("server info from discover: %q", name)
	}
	tools, err := c.AllTools(ctx)
	if err != nil || len(tools) < 15 {
		t.Fatalf("tools: %v (%d)", err, len(tools))
	}
	r, err := c.CallTool(ctx, "echo", json.RawMessage(`{"text":"modern"}`), nil)
	if err != nil || textOf(r) != "modern" {
		t.Errorf("echo: %v %+v", err, r)
	}
	r, err = c.CallTool(ctx, "fail", nil, nil)
	if err != nil || !r.IsError {
		t.Errorf("fail: %v", err)
	}
	rr, err := c.ReadResource(ctx, "demo://text/hello", nil)
	if err != nil || len(rr.Contents) != 1 {
		t.Errorf("read: %v", err)
	}
	// A missing resource: -32602 in this era (-32002 understood too).
	_, err = c.ReadResource(ctx, "demo://nope", nil)
	if !session.IsResourceNotFound(err) {
		t.Errorf("missing resource: %v", err)
	}
	if _, err := c.GetPrompt(ctx, "greet", map[string]string{"name": "Ada"}, nil); err != nil {
		t.Errorf("prompt: %v", err)
	}
	if _, err := c.Complete(ctx, mcp.CompleteParams{Ref: mcp.CompleteReference{Type: "ref/prompt", Name: "greet"}, Argument: mcp.CompleteArgument{Name: "style", Value: "p"}}); err != nil {
		t.Errorf("complete: %v", err)
	}
	if err := c.Ping(ctx); err != nil {
		t.Errorf("ping (discover): %v", err)
	}

	// MRTR: each server->client request is answered by the handler and the
	// call sent again with the answers and the state.
	for _, tc := range []struct{ tool, args, counter, want string }{
		{"sample", `{"prompt":"hi"}`, "sampling", "the model says hi to hi"},
		{"elicit", `{}`, "elicitation", "accept"},
		{"list_roots", `{}`, "roots", "file:///tmp/project"},
	} {
		before := p.h.n(tc.counter)
		r, err := c.CallTool(ctx, tc.tool, json.RawMessage(tc.args), nil)
		if err != nil {
			t.Errorf("%s: %v", tc.tool, err)
			continue
		}
		if p.h.n(tc.counter) != before+1 {
			t.Errorf("%s: the handler was called %d times", tc.tool, p.h.n(tc.counter)-before)
		}
		if got := textOf(r) + string(r.StructuredContent); !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q lacks %q", tc.tool, got, tc.want)
		}
	}
	// The retry carries a new id and the input responses.
	calls := p.rec.sent("tools/call")
	var retry *mcp.Message
	for i := range calls {
		if strings.Contains(string(calls[i].Params), `"inputResponses"`) {
			retry = &calls[i]
		}
	}
	if retry == nil {
		t.Fatal("no retry with inputResponses was sent")
	}

	// Parallel calls keep their state apart.
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			prompt := fmt.Sprintf("prompt-%d", i)
			args, _ := json.Marshal(map[string]string{"prompt": prompt})
			r, err := c.CallTool(ctx, "sample", args, nil)
			if err != nil || !strings.Contains(textOf(r), "hi to "+prompt) {
				t.Errorf("parallel sample %d: %v %q", i, err, textOf(r))
			}
		}()
	}
	wg.Wait()

	// Logs flow only for requests that carry a log level.
	if _, err := c.CallTool(ctx, "log", nil, nil); err != nil {
		t.Fatal(err)
	}
	if n := countMethod(p.rec.notifs, "notifications/message"); n != 0 {
		t.Errorf("%d log messages without a level", n)
	}
	c.SetLogLevel(ctx, "warning")
	if _, err := c.CallTool(ctx, "log", nil, nil); err != nil {
		t.Fatal(err)
	}
	p.rec.waitFor(t, "log messages", func() bool { return countMethod(p.rec.notifs, "notifications/message") >= 5 })

	// Progress.
	var progress int
	if _, err := c.CallTool(ctx, "long_running", json.RawMessage(`{"steps":3,"interval_ms":10}`), &session.CallOptions{
		OnProgress: func(mcp.ProgressParams) { progress++ },
	}); err != nil || progress != 3 {
		t.Errorf("progress: %v %d", err, progress)
	}

	// subscriptions/listen replaces resources/subscribe.
	if err := c.Subscribe(ctx, "demo://counter"); !errors.Is(err, session.ErrVersion) {
		t.Errorf("resources/subscribe in the modern era: %v", err)
	}
	sub, err := c.Listen(ctx, mcp.SubscriptionFilter{ToolsListChanged: true, ResourceSubscriptions: []string{"demo://counter"}})
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	if !sub.Acknowledged.ToolsListChanged || len(sub.Acknowledged.ResourceSubscriptions) != 1 {
		t.Errorf("acknowledged %+v", sub.Acknowledged)
	}
	if _, err := c.CallTool(ctx, "bump_counter", nil, nil); err != nil {
		t.Fatal(err)
	}
	p.rec.waitFor(t, "resources/updated on the stream", func() bool {
		for _, n := range p.rec.notifs {
			if n.Method == "notifications/resources/updated" && strings.Contains(string(n.Params), fmt.Sprintf(`"%s":%d`, mcp.MetaSubscriptionID, sub.ID)) {
				return true
			}
		}
		return false
	})
	if _, err := c.CallTool(ctx, "toggle_tool", nil, nil); err != nil {
		t.Fatal(err)
	}
	p.rec.waitFor(t, "tools/list_changed", func() bool { return countMethod(p.rec.notifs, "notifications/tools/list_changed") > 0 })
	sub.Close()
	select {
	case <-sub.Done():
	case <-time.After(20 * time.Second):
		t.Fatal("the subscription did not end on Close")
	}

	// Cancellation: stdio sends notifications/cancelled, HTTP closes the
	// stream. The Go SDK's stateless HTTP server sometimes runs the tool
	// on after its stream closed, and waits for it as the test server
	// shuts down: ten seconds, not a minute.
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := c.CallTool(cctx, "slow", json.RawMessage(`{"ms":10000}`), nil)
		done <- err
	}()
	p.rec.waitFor(t, "the slow call", func() bool { return countSent(p.rec, "tools/call", `"slow"`) > 0 })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled call: %v", err)
	}
	if overHTTP {
		if n := countSentLocked(p.rec, "notifications/cancelled"); n != 0 {
			t.Errorf("notifications/cancelled sent over modern HTTP")
		}
	} else {
		p.rec.waitFor(t, "notifications/cancelled", func() bool { return countSent(p.rec, "notifications/cancelled", "") > 0 })
	}
	// Removed methods are refused before sending.
	if err := c.Call(ctx, "logging/setLevel", mcp.SetLevelParams{Level: "info"}, nil, nil); !errors.Is(err, session.ErrVersion) {
		t.Errorf("logging/setLevel: %v", err)
	}
}

func countSentLocked(r *recorder, method string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return countSent(r, method, "")
}

func TestModernOverStdio(t *testing.T) {
	t.Parallel()
	p := mustPeer(t)(stdioPeer(t, "demo:modern", peerConfig{}))
	exerciseModern(t, p, false)
}

func TestModernOverStreamableHTTP(t *testing.T) {
	t.Parallel()
	p := mustPeer(t)(httpPeer(t, demoHTTP(t, demoserver.EraModern)+"/", transport.ModeAuto, peerConfig{}))
	exerciseModern(t, p, true)
	// Every POST carries the version and the method; calls carry the name.
	for _, e := range p.rec.kinds(transport.KindFrame) {
		if e.Dir != transport.Outgoing || e.HTTP == nil {
			continue
		}
		h := e.HTTP.RequestHeader
		msgs, _, _ := mcp.DecodeFrame(e.Data)
		m := msgs[0]
		if h.Get("MCP-Protocol-Version") != mcp.Rev20260728 || h.Get("Mcp-Method") != m.Method {
			t.Errorf("%s: headers %v", m.Method, h)
		}
		if h.Get("Mcp-Session-Id") != "" {
			t.Errorf("a session id in the modern era")
		}
		switch m.Method {
		case "tools/call", "prompts/get", "resources/read":
			if h.Get("Mcp-Name") == "" {
				t.Errorf("%s without Mcp-Name", m.Method)
			}
		}
	}
	for _, e := range p.rec.kinds(transport.KindHTTP) {
		if e.HTTP != nil && (e.HTTP.Method == http.MethodGet || e.HTTP.Method == http.MethodDelete) {
			t.Errorf("%s in the modern era", e.HTTP.Method)
		}
	}
}

func TestMRTRRequestStateAndBounds(t *testing.T) {
	t.Parallel()
	p := mustPeer(t)(stdioPeer(t, hostile(mcptest.HostileMRTR), peerConfig{}))
	ctx := ctxT(t)
	if p.c.Era() != session.EraModern {
		t.Fatalf("era %s", p.c.Era())
	}
	if _, err := p.c.AllTools(ctx); err != nil {
		t.Fatal(err)
	}
	r, err := p.c.CallTool(ctx, "state", nil, nil)
	if err != nil || !strings.Contains(textOf(r), "state echoed exactly") || !strings.Contains(textOf(r), `"ok":true`) {
		t.Errorf("state: %v %q", err, textOf(r))
	}
	r, err = p.c.CallTool(ctx, "nostate", nil, nil)
	if err != nil || textOf(r) != "no state, as it should be" {
		t.Errorf("nostate: %v %q", err, textOf(r))
	}
	r, err = p.c.CallTool(ctx, "bare", nil, nil)
	if err != nil || textOf(r) != "complete without resultType" {
		t.Errorf("bare: %v %q", err, textOf(r))
	}
	_, err = p.c.CallTool(ctx, "loop", nil, nil)
	if err == nil || !strings.Contains(err.Error(), "giving up") {
		t.Errorf("loop: %v", err)
	}
	// Each round went out under a new id.
	ids := map[string]bool{}
	for _, m := range p.rec.sent("tools/call") {
		if ids[string(m.ID)] {
			t.Errorf("id %s reused", m.ID)
		}
		ids[string(m.ID)] = true
	}
}

// An acknowledgement that arrives right after subscriptions/listen is
// written is not lost: many listens at once, each acknowledged.
func TestListenAcknowledgementNotLost(t *testing.T) {
	t.Parallel()
	p := mustPeer(t)(stdioPeer(t, "demo:both", peerConfig{opts: session.Options{Timeout: 5 * time.Second}}))
	if p.c.Era() != session.EraModern {
		t.Fatalf("era %v", p.c.Era())
	}
	ctx := ctxT(t)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 25 {
				sub, err := p.c.Listen(ctx, mcp.SubscriptionFilter{ResourceSubscriptions: []string{"demo://counter"}})
				if err != nil {
					t.Errorf("listen %d.%d: %v", i, j, err)
					return
				}
				sub.Close()
			}
		}()
	}
	wg.Wait()
}

// refusingHandler answers every request with err.
type refusingHandler struct{ err error }

func (h refusingHandler) CreateMessage(context.Context, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	return nil, h.err
}

func (h refusingHandler) Elicit(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	return nil, h.err
}

func (h refusingHandler) ListRoots(context.Context) (*mcp.ListRootsResult, error) { return nil, h.err }

// TestModernElicitationRefusals: in the modern era an elicitation the user
// rejects goes back as a decline, the only refusal an input response can
// carry; one refused for want of anyone to ask (the same code, another
// message) is not passed off as the user's decline: the call fails with
// why, and no retry is sent.
func TestModernElicitationRefusals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		err     error
		decline bool
	}{
		{"rejected by the user", session.ErrRejected, true},
		{"no one to ask", &mcp.RPCError{Code: session.ErrRejected.Code, Message: "elicitation declined: no terminal to ask on"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := mustPeer(t)(stdioPeer(t, "demo:modern", peerConfig{opts: session.Options{Handler: refusingHandler{tc.err}}}))
			r, err := p.c.CallTool(ctxT(t), "elicit", json.RawMessage(`{}`), nil)
			retried := false
			for _, m := range p.rec.sent("tools/call") {
				retried = retried || strings.Contains(string(m.Params), `"inputResponses"`)
			}
			if tc.decline {
				if err != nil || !strings.Contains(textOf(r)+string(r.StructuredContent), "decline") || !retried {
					t.Fatalf("a rejection: err %v, retried %v, result %+v; want the call answered with a decline", err, retried, r)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "no terminal to ask on") || retried {
				t.Fatalf("no one to ask: err %v, retried %v; want the call failed with why, not retried", err, retried)
			}
		})
	}
}
