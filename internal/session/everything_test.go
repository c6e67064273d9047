package session_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// exerciseEverything drives the npm reference server, which nobody here
// wrote, through the features it offers.
func exerciseEverything(t *testing.T, p *peer) {
	ctx := ctxT(t)
	c := p.c
	if name := c.InitializeResult().ServerInfo.Name; !strings.Contains(name, "everything") {
		t.Errorf("server name %q", name)
	}
	tools, err := c.AllTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tool := range tools {
		names[tool.Name] = true
	}
	for _, want := range []string{"echo", "get-sum", "trigger-long-running-operation", "trigger-sampling-request", "get-roots-list", "trigger-elicitation-request"} {
		if !names[want] {
			t.Errorf("no tool %s in %v", want, names)
		}
	}
	r, err := c.CallTool(ctx, "echo", json.RawMessage(`{"message":"hi there"}`), nil)
	if err != nil || !strings.Contains(textOf(r), "hi there") {
		t.Errorf("echo: %v %+v", err, r)
	}
	r, err = c.CallTool(ctx, "get-sum", json.RawMessage(`{"a":40,"b":2}`), nil)
	if err != nil || !strings.Contains(textOf(r), "42") {
		t.Errorf("get-sum: %v %+v", err, r)
	}
	var progress []mcp.ProgressParams
	r, err = c.CallTool(ctx, "trigger-long-running-operation", json.RawMessage(`{"duration":1,"steps":3}`), &sessionProgress(&progress).opts)
	if err != nil || r.IsError {
		t.Errorf("long running: %v %+v", err, r)
	}
	if len(progress) != 3 {
		t.Errorf("progress: %+v", progress)
	}
	r, err = c.CallTool(ctx, "trigger-sampling-request", json.RawMessage(`{"prompt":"hello","maxTokens":20}`), nil)
	if err != nil || !strings.Contains(textOf(r), "the model says hi") || p.h.n("sampling") != 1 {
		t.Errorf("sampling: %v %+v", err, r)
	}
	r, err = c.CallTool(ctx, "get-roots-list", nil, nil)
	if err != nil || !strings.Contains(textOf(r), "file:///tmp/project") {
		t.Errorf("roots: %v %q", err, textOf(r))
	}
	r, err = c.CallTool(ctx, "trigger-elicitation-request", nil, nil)
	if err != nil || p.h.n("elicitation") != 1 {
		t.Errorf("elicitation: %v %q", err, textOf(r))
	}

	res, err := c.AllResources(ctx)
	if err != nil || len(res) == 0 {
		t.Fatalf("resources: %v", err)
	}
	rr, err := c.ReadResource(ctx, res[0].URI, nil)
	if err != nil || len(rr.Contents) == 0 {
		t.Errorf("read %s: %v", res[0].URI, err)
	}
	if _, err := c.AllResourceTemplates(ctx); err != nil {
		t.Errorf("templates: %v", err)
	}
	prompts, err := c.AllPrompts(ctx)
	if err != nil || len(prompts) == 0 {
		t.Fatalf("prompts: %v", err)
	}
	for _, pr := range prompts {
		if len(pr.Arguments) == 0 {
			gp, err := c.GetPrompt(ctx, pr.Name, nil, nil)
			if err != nil || len(gp.Messages) == 0 {
				t.Errorf("prompt %s: %v", pr.Name, err)
			}
			break
		}
	}
	if err := c.SetLogLevel(ctx, "debug"); err != nil {
		t.Errorf("setLevel: %v", err)
	}
	if err := c.Ping(ctx); err != nil {
		t.Errorf("ping: %v", err)
	}
}

type progressSink struct{ opts session.CallOptions }

func sessionProgress(into *[]mcp.ProgressParams) *progressSink {
	return &progressSink{opts: session.CallOptions{OnProgress: func(p mcp.ProgressParams) { *into = append(*into, p) }}}
}

func TestEverythingOverStdio(t *testing.T) {
	t.Parallel()
	cmd := mcptest.Everything(t)
	p := mustPeer(t)(dialPeer(t, peerConfig{}, func(tap transport.Tap) (transport.Conn, error) {
		return transport.Spawn(transport.StdioOptions{Command: cmd[0], Args: cmd[1:], Tap: tap})
	}))
	exerciseEverything(t, p)
}

func TestEverythingOverStreamableHTTP(t *testing.T) {
	t.Parallel()
	url := mcptest.EverythingHTTP(t)
	p := mustPeer(t)(httpPeer(t, url, transport.ModeAuto, peerConfig{}))
	if name := p.c.Conn().(*transport.AutoHTTP).Name(); name != "streamable-http" {
		t.Fatalf("transport %s", name)
	}
	exerciseEverything(t, p)
}
