package chat

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/demoserver"
	"github.com/mcpi-dev/mcpi/internal/genai"
	"github.com/mcpi-dev/mcpi/internal/llm"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

const testKey = "sk-test-key-1234567890"

// tapped keeps the events of a tap.
type tapped struct {
	mu sync.Mutex
	ev []transport.Event
}

func (t *tapped) Observe(e transport.Event) { t.mu.Lock(); t.ev = append(t.ev, e); t.mu.Unlock() }

func (t *tapped) events() []transport.Event {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]transport.Event(nil), t.ev...)
}

// demo connects to the demo server (the official Go SDK's) over HTTP, its
// frames on tap.
func demo(t *testing.T, tap transport.Tap) (*session.Client, []mcp.Tool) {
	t.Helper()
	srv := httptest.NewServer(demoserver.HTTPHandler(demoserver.Options{Era: demoserver.EraLegacy}))
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	c, err := session.Connect(ctx, transport.NewStreamableHTTP(transport.HTTPOptions{URL: srv.URL, Tap: tap}), session.Options{Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	tools, err := c.AllTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return c, tools
}

func model(t *testing.T, f mcptest.LLMFormat, turns ...mcptest.LLMTurn) (llm.Provider, *mcptest.FakeLLM) {
	t.Helper()
	fake := mcptest.NewFakeLLM(t, f, turns...)
	spec := map[mcptest.LLMFormat]string{mcptest.LLMAnthropic: "anthropic:claude-test", mcptest.LLMOpenAIChat: "openai:gpt-test", mcptest.LLMOpenAIResponses: "openai-responses:gpt-test"}[f]
	p, err := llm.Parse(spec, llm.Options{HTTPClient: transport.NewHTTPClient(nil, transport.EgressPolicy{}), BaseURL: fake.URL, APIKey: testKey, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return p, fake
}

// TestToolRoundTrip: in each wire format, the model calls a tool of the
// demo server, the person allows it, the result goes back to the model,
// and its next turn answers; every turn and the tool's run are model
// events, the tools/call frame between the tool's start and end.
func TestToolRoundTrip(t *testing.T) {
	for _, f := range []mcptest.LLMFormat{mcptest.LLMAnthropic, mcptest.LLMOpenAIChat, mcptest.LLMOpenAIResponses} {
		tap := &tapped{}
		c, tools := demo(t, tap)
		p, fake := model(t, f,
			mcptest.LLMTurn{Text: "Let me add.", Calls: []mcptest.LLMCall{{ID: "call_1", Name: "add", Args: `{"a":2,"b":3}`}}},
			mcptest.LLMTurn{Text: "2 + 3 = 5."})
		var asked []string
		r := New(Options{Model: p, Server: SessionServer(c), Tools: tools, Tap: tap,
			Ask: func(_ context.Context, pr Proposal) Decision {
				asked = append(asked, pr.Call.Name+" "+string(pr.Call.Arguments))
				return Decision{Verdict: Allow}
			}})
		res := r.Send(context.Background(), "What is 2+3?")
		if res.Stop != StopDone || res.Text != "2 + 3 = 5." || len(res.Calls) != 1 || res.Calls[0].IsError || !strings.Contains(res.Calls[0].Text, "5") {
			t.Fatalf("format %d: %+v", f, res)
		}
		if len(asked) != 1 || asked[0] != `add {"a":2,"b":3}` {
			t.Errorf("asked %v", asked)
		}
		// The second request carries the tool's result.
		reqs := fake.Requests()
		if len(reqs) != 2 || !strings.Contains(string(reqs[1].Body), "call_1") {
			t.Fatalf("format %d: requests %d", f, len(reqs))
		}
		if len(res.Turns) != 2 || r.Usage.InputTokens != 20 || r.Usage.OutputTokens != 10 {
			t.Errorf("turns %d, usage %+v", len(res.Turns), r.Usage)
		}
		var order []string
		for _, e := range tap.events() {
			switch {
			case e.Kind == transport.KindModel:
				tu, _ := genai.Decode(e.Data)
				order = append(order, e.Dir.String()+" "+tu.Op)
			case e.Kind == transport.KindFrame && e.Dir == transport.Outgoing && strings.Contains(string(e.Data), `"tools/call"`):
				order = append(order, "send tools/call")
			}
			if strings.Contains(string(e.Data), testKey) {
				t.Fatalf("the key is in a tap event: %s", e.Data)
			}
		}
		want := "send chat,recv chat,send execute_tool,send tools/call,recv execute_tool,send chat,recv chat"
		if strings.Join(order, ",") != want {
			t.Errorf("format %d: events %s, want %s", f, strings.Join(order, ","), want)
		}
	}
}

// TestApproval: --approve destructive runs a read-only tool unasked and
// asks before the others; a denied call goes back to the model as a
// refusal; an edited call runs with the person's arguments; without anyone
// to ask, a call is refused and says how to allow it.
func TestApproval(t *testing.T) {
	c, tools := demo(t, nil)
	p, fake := model(t, mcptest.LLMOpenAIChat,
		mcptest.LLMTurn{Calls: []mcptest.LLMCall{{ID: "c1", Name: "read_only_info", Args: `{}`}, {ID: "c2", Name: "delete_file", Args: `{"path":"/tmp/x"}`}, {ID: "c3", Name: "echo", Args: `{"text":"hi"}`}}},
		mcptest.LLMTurn{Text: "done"})
	var asked []string
	r := New(Options{Model: p, Server: SessionServer(c), Tools: tools, Approve: ApproveSafe,
		Ask: func(_ context.Context, pr Proposal) Decision {
			asked = append(asked, pr.Call.Name)
			if pr.Call.Name == "echo" {
				return Decision{Verdict: Allow, Arguments: json.RawMessage(`{"text":"edited"}`)}
			}
			return Decision{Verdict: Deny, Why: "not today"}
		}})
	res := r.Send(context.Background(), "go")
	if strings.Join(asked, ",") != "delete_file,echo" {
		t.Errorf("asked %v: read_only_info is read-only, the others are not", asked)
	}
	byName := map[string]ToolResult{}
	for _, c := range res.Calls {
		byName[c.Tool] = c
	}
	if !byName["delete_file"].Denied || !strings.Contains(byName["delete_file"].Text, "not today") {
		t.Errorf("delete_file: %+v", byName["delete_file"])
	}
	if e := byName["echo"]; e.Denied || !strings.Contains(e.Text, "edited") {
		t.Errorf("echo: %+v", e)
	}
	if second := string(fake.Requests()[1].Body); !strings.Contains(second, "the person refused this tool call: not today") {
		t.Errorf("the refusal did not reach the model: %s", second)
	}
	p2, _ := model(t, mcptest.LLMAnthropic, mcptest.LLMTurn{Calls: []mcptest.LLMCall{{ID: "c1", Name: "echo", Args: `{"text":"x"}`}}}, mcptest.LLMTurn{Text: "ok"})
	res = New(Options{Model: p2, Server: SessionServer(c), Tools: tools}).Send(context.Background(), "go")
	if len(res.Calls) != 1 || !res.Calls[0].Denied || !strings.Contains(res.Calls[0].Text, "--approve") {
		t.Errorf("no one to ask: %+v", res.Calls)
	}
}

// TestHostileModel: a tool that was not offered and arguments that are not
// JSON go back to the model as errors and never run; a provider that
// refuses the key stops the run with its error, the key not in it and the
// conversation kept; a budget stops the turns and says which.
func TestHostileModel(t *testing.T) {
	tap := &tapped{}
	c, tools := demo(t, tap)
	p, fake := model(t, mcptest.LLMOpenAIChat,
		mcptest.LLMTurn{Calls: []mcptest.LLMCall{{ID: "c1", Name: "rm_rf", Args: `{}`}, {ID: "c2", Name: "echo", Args: `{"text": "unclosed`}}},
		mcptest.LLMTurn{Status: http.StatusUnauthorized})
	r := New(Options{Model: p, Server: SessionServer(c), Tools: tools, Approve: ApproveAll, Tap: tap})
	res := r.Send(context.Background(), "go")
	if res.Stop != StopError || res.Err == nil || len(res.Calls) != 2 || !res.Calls[0].IsError || !res.Calls[1].IsError {
		t.Fatalf("%+v", res)
	}
	if strings.Contains(res.Err.Error(), testKey) {
		t.Errorf("the key is in the error: %v", res.Err)
	}
	for _, e := range tap.events() {
		if e.Kind == transport.KindFrame && strings.Contains(string(e.Data), `"tools/call"`) {
			t.Errorf("a call that must not run reached the server: %s", e.Data)
		}
	}
	if body := string(fake.Requests()[1].Body); !strings.Contains(body, "rm_rf") {
		t.Errorf("the errors did not go back: %s", body)
	}
	if len(r.Messages) != 3 {
		t.Errorf("the conversation has %d messages, want 3 (kept whole)", len(r.Messages))
	}
	var loop []mcptest.LLMTurn
	for range 5 {
		loop = append(loop, mcptest.LLMTurn{Calls: []mcptest.LLMCall{{ID: "c", Name: "echo", Args: `{"text":"again"}`}}, InputTokens: 1000, OutputTokens: 500})
	}
	p3, _ := model(t, mcptest.LLMAnthropic, loop...)
	res = New(Options{Model: p3, Server: SessionServer(c), Tools: tools, Approve: ApproveAll, MaxTurns: 3}).Send(context.Background(), "loop")
	if res.Stop != StopMaxTurns || len(res.Turns) != 3 {
		t.Errorf("max turns: %s after %d turns", res.Stop, len(res.Turns))
	}
	p4, _ := model(t, mcptest.LLMAnthropic, loop...)
	res = New(Options{Model: p4, Server: SessionServer(c), Tools: tools, Approve: ApproveAll, MaxTokens: 2000}).Send(context.Background(), "loop")
	if res.Stop != StopMaxTokens || len(res.Turns) != 2 {
		t.Errorf("max tokens: %s after %d turns", res.Stop, len(res.Turns))
	}
}
