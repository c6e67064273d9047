package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/demoserver"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// exerciseDemo drives every client->server method against the demo server
// and checks what came back.
func exerciseDemo(t *testing.T, p *peer) {
	ctx := ctxT(t)
	c := p.c
	init := c.InitializeResult()
	if init.ServerInfo.Name != "mcpi-demo" {
		t.Errorf("server name %q", init.ServerInfo.Name)
	}
	if init.Instructions == "" {
		t.Error("no instructions")
	}
	if err := c.Ping(ctx); err != nil {
		t.Fatalf("ping: %v", err)
	}

	tools, err := c.AllTools(ctx)
	if err != nil {
		t.Fatalf("tools: %v", err)
	}
	if len(tools) < 15 {
		t.Errorf("got %d tools, want every page (>= 15)", len(tools))
	}
	if n := len(p.rec.sent("tools/list")); n < 2 {
		t.Errorf("tools/list sent %d times; the demo pages its tools, so pagination should take several", n)
	}

	r, err := c.CallTool(ctx, "echo", json.RawMessage(`{"text":"héllo"}`), nil)
	if err != nil || textOf(r) != "héllo" || r.IsError {
		t.Errorf("echo: %v %+v", err, r)
	}
	r, err = c.CallTool(ctx, "add", json.RawMessage(`{"a":2,"b":3.5}`), nil)
	if err != nil || !strings.Contains(string(r.StructuredContent), "5.5") {
		t.Errorf("add: %v %s", err, r.StructuredContent)
	}
	r, err = c.CallTool(ctx, "fail", nil, nil)
	if err != nil || !r.IsError {
		t.Errorf("fail: want isError, got %v %+v", err, r)
	}
	r, err = c.CallTool(ctx, "get_content_types", nil, nil)
	if err != nil {
		t.Fatalf("get_content_types: %v", err)
	}
	types := map[string]bool{}
	for _, ct := range r.Content {
		types[ct.Type] = true
	}
	for _, want := range []string{"text", "image", "audio", "resource_link", "resource"} {
		if !types[want] {
			t.Errorf("get_content_types: no %s content in %v", want, types)
		}
	}

	res, err := c.AllResources(ctx)
	if err != nil || len(res) < 4 {
		t.Fatalf("resources: %v (%d)", err, len(res))
	}
	rr, err := c.ReadResource(ctx, "demo://text/hello", nil)
	if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text == nil {
		t.Errorf("read text: %v %+v", err, rr)
	}
	rr, err = c.ReadResource(ctx, "demo://binary/logo.png", nil)
	if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Blob == nil || rr.Contents[0].MimeType != "image/png" {
		t.Errorf("read blob: %v %+v", err, rr)
	}
	_, err = c.ReadResource(ctx, "demo://no/such/thing", nil)
	var rpcErr *session.RPCError
	if !errors.As(err, &rpcErr) {
		t.Errorf("reading a missing resource: want a JSON-RPC error, got %v", err)
	}
	templates, err := c.AllResourceTemplates(ctx)
	if err != nil || len(templates) < 2 {
		t.Errorf("templates: %v %d", err, len(templates))
	}
	comp, err := c.Complete(ctx, mcp.CompleteParams{
		Ref:      mcp.CompleteReference{Type: "ref/resource", URI: "demo://greeting/{lang}/{name}"},
		Argument: mcp.CompleteArgument{Name: "lang", Value: "f"},
		Context:  &mcp.CompleteContext{Arguments: map[string]string{"name": "Ada"}},
	})
	if err != nil || len(comp.Completion.Values) == 0 || comp.Completion.Values[0] != "fr" {
		t.Errorf("complete: %v %+v", err, comp)
	}

	prompts, err := c.AllPrompts(ctx)
	if err != nil || len(prompts) < 3 {
		t.Errorf("prompts: %v %d", err, len(prompts))
	}
	gp, err := c.GetPrompt(ctx, "greet", map[string]string{"name": "Ada", "style": "pirate"}, nil)
	if err != nil || len(gp.Messages) == 0 {
		t.Errorf("prompts/get: %v %+v", err, gp)
	}

	// Logging at the level set.
	if err := c.SetLogLevel(ctx, "warning"); err != nil {
		t.Errorf("setLevel: %v", err)
	}
	if _, err := c.CallTool(ctx, "log", nil, nil); err != nil {
		t.Errorf("log: %v", err)
	}
	p.rec.waitFor(t, "log messages", func() bool { return len(p.rec.notifs) > 0 && countMethod(p.rec.notifs, "notifications/message") >= 5 })
	for _, n := range p.rec.notifications("notifications/message") {
		var lm mcp.LoggingMessageParams
		json.Unmarshal(n.Params, &lm)
		if lm.Level == "debug" || lm.Level == "info" || lm.Level == "notice" {
			t.Errorf("got a %s message after setLevel warning", lm.Level)
		}
	}

	// Progress reaches the caller.
	var progress []mcp.ProgressParams
	r, err = c.CallTool(ctx, "long_running", json.RawMessage(`{"steps":3,"interval_ms":10}`), &session.CallOptions{
		OnProgress: func(pp mcp.ProgressParams) { progress = append(progress, pp) },
	})
	if err != nil || r.IsError {
		t.Fatalf("long_running: %v %+v", err, r)
	}
	if len(progress) != 3 || progress[2].Progress != 3 {
		t.Errorf("progress: got %+v", progress)
	}

	// Server->client requests go to the handler.
	for _, tc := range []struct{ tool, args, counter, want string }{
		{"sample", `{"prompt":"hi"}`, "sampling", "the model says hi"},
		{"elicit", `{}`, "elicitation", "accept"},
		{"list_roots", `{}`, "roots", "file:///tmp/project"},
	} {
		r, err := c.CallTool(ctx, tc.tool, json.RawMessage(tc.args), nil)
		if err != nil {
			t.Errorf("%s: %v", tc.tool, err)
			continue
		}
		if p.h.n(tc.counter) == 0 {
			t.Errorf("%s: the handler was not called", tc.tool)
		}
		if !strings.Contains(textOf(r)+string(r.StructuredContent), tc.want) {
			t.Errorf("%s: result %q does not contain %q", tc.tool, textOf(r)+string(r.StructuredContent), tc.want)
		}
	}

	// Subscriptions.
	if err := c.Subscribe(ctx, "demo://counter"); err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	if _, err := c.CallTool(ctx, "bump_counter", nil, nil); err != nil {
		t.Fatalf("bump: %v", err)
	}
	p.rec.waitFor(t, "resources/updated", func() bool { return countMethod(p.rec.notifs, "notifications/resources/updated") > 0 })
	if err := c.Unsubscribe(ctx, "demo://counter"); err != nil {
		t.Errorf("unsubscribe: %v", err)
	}

	// list_changed.
	if _, err := c.CallTool(ctx, "toggle_tool", nil, nil); err != nil {
		t.Fatalf("toggle: %v", err)
	}
	p.rec.waitFor(t, "tools/list_changed", func() bool { return countMethod(p.rec.notifs, "notifications/tools/list_changed") > 0 })

	// Roots change notification.
	if err := c.RootsChanged(ctx); err != nil {
		t.Errorf("roots changed: %v", err)
	}

	// Cancelling a call sends notifications/cancelled and returns at once.
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := c.CallTool(cctx, "slow", json.RawMessage(`{"ms":60000}`), nil)
		done <- err
	}()
	p.rec.waitFor(t, "slow call sent", func() bool { return countSent(p.rec, "tools/call", `"slow"`) > 0 })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled call: got %v", err)
	}
	p.rec.waitFor(t, "notifications/cancelled", func() bool { return countSent(p.rec, "notifications/cancelled", "") > 0 })

	// The raw escape hatch.
	raw, err := c.Send(ctx, "tools/list", nil, nil)
	if err != nil || !strings.Contains(string(raw), `"tools"`) {
		t.Errorf("raw send: %v %s", err, raw)
	}
	p.fc.Allow("no/such/method")
	_, err = c.Send(ctx, "no/such/method", json.RawMessage(`{}`), nil)
	// Over stdio the SDK answers -32601; over HTTP it refuses the POST
	// with a 400 before any JSON-RPC happens.
	var httpErr *transport.HTTPError
	switch {
	case errors.As(err, &rpcErr):
		if rpcErr.Code != mcp.CodeMethodNotFound {
			t.Errorf("unknown method: want -32601, got %v", err)
		}
	case errors.As(err, &httpErr):
		if httpErr.StatusCode != http.StatusBadRequest {
			t.Errorf("unknown method: want HTTP 400, got %v", err)
		}
	default:
		t.Errorf("unknown method: got %v", err)
	}
}

func countMethod(ns []session.Notification, method string) int {
	n := 0
	for _, x := range ns {
		if x.Method == method {
			n++
		}
	}
	return n
}

// countSent counts outgoing frames of method whose params contain substr.
// The recorder's lock is held by waitFor's caller when used as a condition.
func countSent(r *recorder, method, substr string) int {
	n := 0
	for _, e := range r.events {
		if e.Kind != transport.KindFrame || e.Dir != transport.Outgoing {
			continue
		}
		if strings.Contains(string(e.Data), `"method":"`+method+`"`) && strings.Contains(string(e.Data), substr) {
			n++
		}
	}
	return n
}

func TestDemoOverStdio(t *testing.T) {
	t.Parallel()
	p := mustPeer(t)(stdioPeer(t, "demo", peerConfig{}))
	if got := p.c.ProtocolVersion(); got != mcp.LatestLegacy {
		t.Errorf("negotiated %s, want %s", got, mcp.LatestLegacy)
	}
	exerciseDemo(t, p)
}

func newDemoHTTP(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	mux.Handle("/mcp", demoserver.HTTPHandler(demoserver.Options{Era: demoserver.EraLegacy}))
	mux.Handle("/sse", demoserver.SSEHandler(demoserver.Options{Era: demoserver.EraLegacy}))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func httpPeer(t *testing.T, url string, mode transport.HTTPMode, cfg peerConfig) (*peer, error) {
	return dialPeer(t, cfg, func(tap transport.Tap) (transport.Conn, error) {
		return transport.DialHTTP(ctxT(t), mode, transport.HTTPOptions{URL: url, Tap: tap, DefaultRetry: 50 * time.Millisecond})
	})
}

func TestDemoOverStreamableHTTP(t *testing.T) {
	t.Parallel()
	srv := newDemoHTTP(t)
	p := mustPeer(t)(httpPeer(t, srv.URL+"/mcp", transport.ModeAuto, peerConfig{}))
	auto := p.c.Conn().(*transport.AutoHTTP)
	if name := auto.Name(); name != "streamable-http" {
		t.Fatalf("auto chose %s", name)
	}
	exerciseDemo(t, p)
	// Every request after initialize carries the session id and the version.
	var posts int
	for _, e := range p.rec.kinds(transport.KindFrame) {
		if e.Dir != transport.Outgoing || e.HTTP == nil {
			continue
		}
		if strings.Contains(string(e.Data), `"method":"server/discover"`) {
			continue // the era probe, before any session
		}
		if strings.Contains(string(e.Data), `"method":"initialize"`) {
			if e.HTTP.RequestHeader.Get("Mcp-Session-Id") != "" {
				t.Error("initialize carried a session id")
			}
			continue
		}
		posts++
		if e.HTTP.RequestHeader.Get("Mcp-Session-Id") == "" || e.HTTP.RequestHeader.Get("MCP-Protocol-Version") != mcp.LatestLegacy {
			t.Errorf("POST without session id or version: %v", e.HTTP.RequestHeader)
		}
		if a := e.HTTP.RequestHeader.Get("Accept"); !strings.Contains(a, "application/json") || !strings.Contains(a, "text/event-stream") {
			t.Errorf("Accept %q", a)
		}
	}
	if posts < 10 {
		t.Errorf("only %d POSTs seen", posts)
	}
	p.c.Close()
	var deleted bool
	for _, e := range p.rec.kinds(transport.KindHTTP) {
		if e.HTTP != nil && e.HTTP.Method == http.MethodDelete {
			deleted = true
		}
	}
	if !deleted {
		t.Error("no DELETE on close")
	}
}

func TestDemoOverLegacySSE(t *testing.T) {
	t.Parallel()
	srv := newDemoHTTP(t)
	// No transport forced: the POST to the SSE URL fails with a 4xx, and
	// the client falls back to HTTP+SSE as the spec describes.
	p := mustPeer(t)(httpPeer(t, srv.URL+"/sse", transport.ModeAuto, peerConfig{}))
	if name := p.c.Conn().(*transport.AutoHTTP).Name(); name != "sse" {
		t.Fatalf("auto chose %s, want sse", name)
	}
	exerciseDemo(t, p)
}

func TestEveryLegacyRevision(t *testing.T) {
	t.Parallel()
	for _, rev := range mcp.LegacyRevisions {
		t.Run(rev, func(t *testing.T) {
			t.Parallel()
			p := mustPeer(t)(stdioPeer(t, "demo", peerConfig{opts: session.Options{ProtocolVersion: rev}}))
			if got := p.c.ProtocolVersion(); got != rev {
				t.Fatalf("negotiated %s, want %s", got, rev)
			}
			ctx := ctxT(t)
			if _, err := p.c.AllTools(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := p.c.CallTool(ctx, "list_roots", nil, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := p.c.CallTool(ctx, "sample", json.RawMessage(`{"prompt":"x"}`), nil); err != nil {
				t.Fatal(err)
			}
			if _, err := p.c.ReadResource(ctx, "demo://text/hello", nil); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestSessionExpiredReinitializes(t *testing.T) {
	t.Parallel()
	srv := newDemoHTTP(t)
	p := mustPeer(t)(httpPeer(t, srv.URL+"/mcp", transport.ModeStreamable, peerConfig{}))
	ctx := ctxT(t)
	sh := p.c.Conn().(*transport.StreamableHTTP)
	old := sh.SessionID()
	if old == "" {
		t.Fatal("no session id")
	}
	// End the session behind the client's back.
	req, _ := http.NewRequest(http.MethodDelete, srv.URL+"/mcp", nil)
	req.Header.Set("Mcp-Session-Id", old)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if _, err := p.c.AllTools(ctx); err != nil {
		t.Fatalf("tools/list after the session ended: %v", err)
	}
	if sh.SessionID() == old || sh.SessionID() == "" {
		t.Errorf("session id %q after re-initialize (was %q)", sh.SessionID(), old)
	}
	if n := len(p.rec.sent("initialize")); n != 2 {
		t.Errorf("initialize sent %d times, want 2", n)
	}
}
