package chat

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/demoserver"
	"github.com/mcpi-dev/mcpi/internal/genai"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

var formats = []mcptest.LLMFormat{mcptest.LLMAnthropic, mcptest.LLMOpenAIChat, mcptest.LLMOpenAIResponses}

// samplingHandler answers a session's sampling with a Sampler.
type samplingHandler struct {
	session.DeclineHandler
	s *Sampler
}

func (h samplingHandler) CreateMessage(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	return h.s.CreateMessage(ctx, p)
}

// TestSampleDemoServer: in each format and both eras, the demo server's
// sample tool gets the model's answer (its text and the model that
// answered) in its result; the request's prompt, system prompt and max
// tokens reach the provider; the turn is tapped with Purpose sampling and
// the server's model hint; the key is in no event.
func TestSampleDemoServer(t *testing.T) {
	for _, era := range []string{demoserver.EraLegacy, demoserver.EraModern} {
		for _, f := range formats {
			p, fake := model(t, f, mcptest.LLMTurn{Text: "Paris is the capital."})
			tap := &tapped{}
			srv := httptest.NewServer(demoserver.HTTPHandler(demoserver.Options{Era: era}))
			t.Cleanup(srv.Close)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			h := samplingHandler{s: &Sampler{Model: p, Options: SampleOptions{Tap: tap}}}
			c, err := session.Connect(ctx, transport.NewStreamableHTTP(transport.HTTPOptions{URL: srv.URL, Tap: tap}), session.Options{Timeout: 30 * time.Second, Handler: h})
			if err != nil {
				t.Fatal(err)
			}
			raw, err := c.CallToolRaw(ctx, mcp.CallToolParams{Name: "sample", Arguments: json.RawMessage(`{"prompt":"Capital of France?","system_prompt":"Be brief.","max_tokens":42}`)}, nil)
			c.Close()
			if err != nil {
				t.Fatalf("%s %v: %v", era, f, err)
			}
			got, _ := resultText(raw)
			if !strings.Contains(got, "Paris is the capital.") || !strings.Contains(got, "-fake") || !strings.Contains(got, `"endTurn"`) {
				t.Errorf("%s %v: the tool's result %q lacks the model's answer, its model or stop reason", era, f, got)
			}
			body := string(fake.Requests()[0].Body)
			for _, want := range []string{"Capital of France?", "Be brief.", "42"} {
				if !strings.Contains(body, want) {
					t.Errorf("%s %v: the provider's request lacks %q: %s", era, f, want, body)
				}
			}
			var turns []genai.Turn
			for _, e := range tap.events() {
				if strings.Contains(string(e.Data), testKey) {
					t.Errorf("%s %v: the key is in an event", era, f)
				}
				if tr, ok := genai.Decode(e.Data); ok && e.Kind == transport.KindModel {
					turns = append(turns, tr)
				}
			}
			if len(turns) != 2 || turns[0].Purpose != "sampling" || turns[0].ID != "sampling-1" || len(turns[0].Hints) != 1 || turns[0].Hints[0] != "claude" ||
				turns[1].Text != "Paris is the capital." || turns[1].Purpose != "sampling" {
				t.Errorf("%s %v: model events %+v", era, f, turns)
			}
		}
	}
}

// TestSampleTools: sampling with tools (2025-11-25) offers the server's
// tools and tool choice to the model; its call comes back as a tool_use
// block with stopReason toolUse; the server's tool_result in the next
// request reaches the model as the call's result.
func TestSampleTools(t *testing.T) {
	for _, f := range formats {
		p, fake := model(t, f,
			mcptest.LLMTurn{Calls: []mcptest.LLMCall{{ID: "call_w", Name: "weather", Args: `{"city":"Paris"}`}}},
			mcptest.LLMTurn{Text: "Sunny in Paris."})
		params := &mcp.CreateMessageParams{
			Messages:       []mcp.SamplingMessage{{Role: "user", Content: json.RawMessage(`{"type":"text","text":"Weather in Paris?"}`)}},
			MaxTokens:      100,
			Tools:          json.RawMessage(`[{"name":"weather","description":"Weather of a city","inputSchema":{"type":"object","properties":{"city":{"type":"string"}}}}]`),
			ToolChoice:     json.RawMessage(`{"mode":"required"}`),
			IncludeContext: "thisServer",
		}
		tap := &tapped{}
		res, err := Sample(context.Background(), p, params, SampleOptions{Tap: tap})
		if err != nil {
			t.Fatalf("%v: %v", f, err)
		}
		var blocks []map[string]any
		if err := json.Unmarshal(res.Content, &blocks); err != nil {
			t.Fatalf("%v: content %s is not an array: %v", f, res.Content, err)
		}
		last := blocks[len(blocks)-1]
		if res.StopReason != "toolUse" || last["type"] != "tool_use" || last["name"] != "weather" || last["id"] != "call_w" {
			t.Fatalf("%v: result %s stop %q", f, res.Content, res.StopReason)
		}
		if tr, ok := genai.Decode(tap.events()[0].Data); !ok || tr.IncludeContext != "thisServer" || tr.Tools != 1 {
			t.Errorf("%v: the request's turn %+v does not record includeContext and the tool", f, tr)
		}
		req := string(fake.Requests()[0].Body)
		if !strings.Contains(req, "Weather of a city") || !strings.Contains(req, "required") && !strings.Contains(req, `"any"`) {
			t.Errorf("%v: the tools or the tool choice are not in the request: %s", f, req)
		}
		params.Messages = append(params.Messages,
			mcp.SamplingMessage{Role: "assistant", Content: res.Content},
			mcp.SamplingMessage{Role: "user", Content: json.RawMessage(`[{"type":"tool_result","toolUseId":"call_w","content":[{"type":"text","text":"22C and sunny"}]}]`)})
		params.ToolChoice = nil
		res, err = Sample(context.Background(), p, params, SampleOptions{})
		if err != nil {
			t.Fatalf("%v: %v", f, err)
		}
		if res.StopReason != "endTurn" || !strings.Contains(string(res.Content), "Sunny in Paris.") || !strings.HasPrefix(string(res.Content), "{") {
			t.Errorf("%v: second result %s stop %q", f, res.Content, res.StopReason)
		}
		if req := string(fake.Requests()[1].Body); !strings.Contains(req, "22C and sunny") || !strings.Contains(req, "call_w") {
			t.Errorf("%v: the tool's result did not reach the model: %s", f, req)
		}
	}
}

// TestSampleStopReasons: the provider's stop reasons come back in MCP's
// words, and stop sequences and temperature reach the provider.
func TestSampleStopReasons(t *testing.T) {
	temp := 0.25
	for _, tc := range []struct {
		stop string
		want string
	}{{"max_tokens", "maxTokens"}, {"stop_sequence", "stopSequence"}, {"end_turn", "endTurn"}} {
		p, fake := model(t, mcptest.LLMAnthropic, mcptest.LLMTurn{Text: "cut", Stop: tc.stop})
		res, err := Sample(context.Background(), p, &mcp.CreateMessageParams{
			Messages:  []mcp.SamplingMessage{{Role: "user", Content: json.RawMessage(`[{"type":"text","text":"go"}]`)}},
			MaxTokens: 5, StopSequences: []string{"STOP"}, Temperature: &temp,
		}, SampleOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if res.StopReason != tc.want {
			t.Errorf("stop %s: got %q, want %q", tc.stop, res.StopReason, tc.want)
		}
		if body := string(fake.Requests()[0].Body); !strings.Contains(body, `"STOP"`) {
			t.Errorf("the stop sequences are not in the request: %s", body)
		}
	}
	p, fake := model(t, mcptest.LLMOpenAIChat, mcptest.LLMTurn{Text: "ok"})
	if _, err := Sample(context.Background(), p, &mcp.CreateMessageParams{
		Messages: []mcp.SamplingMessage{{Role: "user", Content: json.RawMessage(`{"type":"text","text":"go"}`)}}, MaxTokens: 5, Temperature: &temp,
	}, SampleOptions{}); err != nil {
		t.Fatal(err)
	}
	if body := string(fake.Requests()[0].Body); !strings.Contains(body, `"temperature":0.25`) {
		t.Errorf("the temperature is not in the request: %s", body)
	}
}

// TestSampleRefused: what the model cannot be given is refused with an
// error that says what, before any request to the provider.
func TestSampleRefused(t *testing.T) {
	for _, tc := range []struct{ content, want string }{
		{`{"type":"image","data":"AAAA","mimeType":"image/png"}`, "image content (image/png)"},
		{`[{"type":"text","text":"hear"},{"type":"audio","data":"AAAA","mimeType":"audio/wav"}]`, "audio content"},
		{`[{"type":"tool_result","toolUseId":"x","content":[{"type":"image","data":"AA","mimeType":"image/png"}]}]`, "holds image content"},
		{`{"type":"video"}`, `type "video"`},
		{`"just a string"`, "not a content block"},
	} {
		p, fake := model(t, mcptest.LLMAnthropic)
		_, err := Sample(context.Background(), p, &mcp.CreateMessageParams{Messages: []mcp.SamplingMessage{{Role: "user", Content: json.RawMessage(tc.content)}}, MaxTokens: 5}, SampleOptions{})
		var rpc *mcp.RPCError
		if !errors.As(err, &rpc) || rpc.Code != mcp.CodeInvalidParams || !strings.Contains(rpc.Message, tc.want) {
			t.Errorf("%s: got %v, want an invalid-params error saying %q", tc.content, err, tc.want)
		}
		if n := len(fake.Requests()); n != 0 {
			t.Errorf("%s: %d request(s) went to the provider", tc.content, n)
		}
	}
}

// TestSampleFailures: a provider that fails, or stalls past the request's
// timeout, ends the request with a JSON-RPC error that says the model
// failed, without the key; the failure is tapped.
func TestSampleFailures(t *testing.T) {
	for _, tc := range []struct {
		name string
		turn mcptest.LLMTurn
		want string
	}{
		{"401", mcptest.LLMTurn{Status: 401, Body: `{"type":"error","error":{"type":"authentication_error","message":"bad key ` + testKey + `"}}`}, "refused the key"},
		{"500", mcptest.LLMTurn{Status: 500}, "failed"},
		{"stall", mcptest.LLMTurn{Stall: true}, "no answer within"},
		{"hang", mcptest.LLMTurn{Hang: true}, "no answer within"},
	} {
		p, _ := model(t, mcptest.LLMAnthropic, tc.turn)
		tap := &tapped{}
		_, err := Sample(context.Background(), p, &mcp.CreateMessageParams{Messages: []mcp.SamplingMessage{{Role: "user", Content: json.RawMessage(`{"type":"text","text":"hi"}`)}}, MaxTokens: 5},
			SampleOptions{Tap: tap, Timeout: 200 * time.Millisecond})
		var rpc *mcp.RPCError
		if !errors.As(err, &rpc) || rpc.Code != mcp.CodeInternalError || !strings.Contains(rpc.Message, "the model anthropic:claude-test failed") || !strings.Contains(rpc.Message, tc.want) {
			t.Errorf("%s: got %v, want an internal error saying the model failed (%q)", tc.name, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), testKey) {
			t.Errorf("%s: the key is in the error: %v", tc.name, err)
		}
		ev := tap.events()
		if tr, ok := genai.Decode(ev[len(ev)-1].Data); !ok || tr.Error == "" || tr.Purpose != "sampling" {
			t.Errorf("%s: the failure is not tapped: %+v", tc.name, tr)
		}
	}
}
