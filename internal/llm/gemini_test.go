package llm_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/llm"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
)

// TestGeminiToolCalls: Gemini's OpenAI-compatible stream sends each tool
// call whole with no index (parallel calls too), a thought signature on
// each, and "stop" after them. The calls stay apart, the turn ends for
// tool use, and the next request carries each call's signature back (the
// fake, like Gemini, refuses it without).
func TestGeminiToolCalls(t *testing.T) {
	fk := mcptest.NewFakeLLM(t, mcptest.LLMGemini,
		mcptest.LLMTurn{Text: "Checking both.", Calls: []mcptest.LLMCall{
			{ID: "function-call-1", Name: "weather", Args: `{"city":"London"}`},
			{ID: "function-call-2", Name: "weather", Args: `{"city":"Paris"}`},
		}},
		mcptest.LLMTurn{Text: "Rain in both."})
	p, err := llm.Parse("compat:gemini-3-flash", llm.Options{HTTPClient: testClient(), BaseURL: fk.URL, Getenv: env(nil)})
	if err != nil {
		t.Fatal(err)
	}
	tool := llm.Tool{Name: "weather", InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)}
	req := ask("weather in London and Paris?", tool)
	resp, err := p.Stream(ctx(t), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.ToolCalls) != 2 || resp.Finish != llm.FinishToolUse || resp.Message.Text() != "Checking both." {
		t.Fatalf("turn: %+v", resp)
	}
	for i, want := range []string{`{"city":"London"}`, `{"city":"Paris"}`} {
		c := resp.ToolCalls[i]
		if c.Invalid != "" || string(c.Arguments) != want || c.ID != "function-call-"+string(rune('1'+i)) {
			t.Errorf("call %d: %+v", i, c)
		}
	}
	req.Messages = append(req.Messages, resp.Message, llm.Message{Role: llm.RoleUser, Content: []llm.Block{
		{Type: llm.BlockToolResult, ID: "function-call-1", Text: "rain"},
		{Type: llm.BlockToolResult, ID: "function-call-2", Text: "rain"},
	}})
	resp, err = p.Stream(ctx(t), req, nil)
	if err != nil {
		t.Fatalf("the second turn: %v", err)
	}
	if resp.Message.Text() != "Rain in both." || resp.Finish != llm.FinishEndTurn {
		t.Errorf("second turn: %+v", resp)
	}
	if body := string(fk.Requests()[1].Body); !strings.Contains(body, `"thought_signature":"sig-function-call-2"`) {
		t.Errorf("the signature was not sent back: %s", body)
	}
}

// TestCompatibleCallIndexes: servers that give every parallel call index
// 0, or repeat a call's id on each delta, still yield their calls apart
// and whole.
func TestCompatibleCallIndexes(t *testing.T) {
	call := func(index, id, name, args string) string {
		s := `{"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"tool_calls":[{`
		if index != "" {
			s += `"index":` + index + `,`
		}
		if id != "" {
			s += `"id":"` + id + `","type":"function",`
		}
		return s + `"function":{"name":"` + name + `","arguments":` + strconv.Quote(args) + `}}]},"finish_reason":null}]}`
	}
	end := `{"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`
	for name, chunks := range map[string][]string{
		"index 0 for every call": {call("0", "a", "weather", ""), call("0", "", "", `{"city":`), call("0", "", "", `"London"}`),
			call("0", "b", "weather", ""), call("0", "", "", `{"city":"Paris"}`), end},
		"the id on every delta": {call("0", "a", "weather", `{"city":`), call("0", "a", "", `"London"}`),
			call("1", "b", "weather", `{"city":`), call("1", "b", "", `"Paris"}`), end},
		"no index, arguments in pieces": {call("", "a", "weather", `{"city":`), call("", "", "", `"London"}`),
			call("", "b", "weather", `{"city":"Paris"}`), end},
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				for _, c := range chunks {
					fmt.Fprintf(w, "data: %s\n\n", c)
				}
				fmt.Fprint(w, "data: [DONE]\n\n")
			}))
			defer srv.Close()
			p, err := llm.Parse("compat:m", llm.Options{HTTPClient: testClient(), BaseURL: srv.URL + "/v1/", Getenv: env(nil)})
			if err != nil {
				t.Fatal(err)
			}
			tool := llm.Tool{Name: "weather", InputSchema: json.RawMessage(`{"type":"object"}`)}
			resp, err := p.Stream(ctx(t), ask("weather?", tool), nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.ToolCalls) != 2 {
				t.Fatalf("calls %+v", resp.ToolCalls)
			}
			for i, want := range []string{`{"city":"London"}`, `{"city":"Paris"}`} {
				if c := resp.ToolCalls[i]; c.Invalid != "" || c.Name != "weather" || string(c.Arguments) != want || c.ID != []string{"a", "b"}[i] {
					t.Errorf("call %d: %+v", i, c)
				}
			}
		})
	}
}
