package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/llm"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// testKey is the key every test sends: no error text may hold it.
const testKey = "sk-test-0123456789abcdefghijklmnopqrstuvwxyz"

type format struct {
	name string
	f    mcptest.LLMFormat
	kind string
}

var formats = []format{
	{"anthropic", mcptest.LLMAnthropic, "anthropic"},
	{"chat", mcptest.LLMOpenAIChat, "openai"},
	{"responses", mcptest.LLMOpenAIResponses, "openai-responses"},
}

// each runs fn for every wire format.
func each(t *testing.T, fn func(t *testing.T, f format)) {
	for _, f := range formats {
		t.Run(f.name, func(t *testing.T) { fn(t, f) })
	}
}

// open makes a provider of f's kind pointed at fk.
func open(t *testing.T, f format, fk *mcptest.FakeLLM, o llm.Options) llm.Provider {
	t.Helper()
	if o.HTTPClient == nil {
		o.HTTPClient = testClient()
	}
	// The key comes from the provider's usual variable, as a user's does.
	o.Getenv = env(map[string]string{"ANTHROPIC_API_KEY": testKey, "OPENAI_API_KEY": testKey})
	o.BaseURL = fk.URL
	p, err := llm.Parse(f.kind+":test-model", o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func testClient() *http.Client { return transport.NewHTTPClient(nil, transport.EgressPolicy{}) }

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return c
}

var weather = llm.Tool{Name: "get_weather", Description: "Weather of a city", InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)}

func ask(text string, tools ...llm.Tool) *llm.Request {
	return &llm.Request{
		System:   "Be brief.",
		Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: text}}}},
		Tools:    tools,
	}
}

// keyFree fails when err's text holds the key or a long piece of it.
func keyFree(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if strings.Contains(err.Error(), testKey) || strings.Contains(err.Error(), testKey[:16]) {
		t.Fatalf("the error holds the key: %s", err)
	}
}

func TestTextTurn(t *testing.T) {
	each(t, func(t *testing.T, f format) {
		fk := mcptest.NewFakeLLM(t, f.f, mcptest.LLMTurn{Text: "Hello from the fake model.", InputTokens: 12, OutputTokens: 7})
		p := open(t, f, fk, llm.Options{})
		var streamed strings.Builder
		var kinds []llm.EventKind
		resp, err := p.Stream(ctx(t), ask("hi"), func(e llm.Event) {
			kinds = append(kinds, e.Kind)
			if e.Kind == llm.EventText {
				streamed.WriteString(e.Text)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		if got := resp.Message.Text(); got != "Hello from the fake model." || streamed.String() != got {
			t.Errorf("text %q, streamed %q", got, streamed.String())
		}
		if streamed.Len() > 0 && kinds[0] != llm.EventFirstToken {
			t.Errorf("first event %v, want the first token", kinds[0])
		}
		if kinds[len(kinds)-1] != llm.EventFinish || kinds[len(kinds)-2] != llm.EventUsage {
			t.Errorf("events end with %v", kinds[len(kinds)-2:])
		}
		if resp.Usage.InputTokens != 12 || resp.Usage.OutputTokens != 7 {
			t.Errorf("usage %+v", resp.Usage)
		}
		if resp.Finish != llm.FinishEndTurn || len(resp.FinishReasons) != 1 {
			t.Errorf("finish %q %v", resp.Finish, resp.FinishReasons)
		}
		if resp.Model != "test-model-fake" {
			t.Errorf("model %q", resp.Model)
		}
		if resp.BytesRead == 0 || resp.Duration <= 0 {
			t.Errorf("bytes %d, duration %v", resp.BytesRead, resp.Duration)
		}
		reqs := fk.Requests()
		if len(reqs) != 1 {
			t.Fatalf("%d requests", len(reqs))
		}
		if got := reqs[0].Header.Get("Authorization"); got != "Bearer "+testKey {
			t.Errorf("Authorization %q", got)
		}
		body := reqs[0].JSON(t)
		if body["stream"] != true || body["model"] != "test-model" {
			t.Errorf("request %v", body)
		}
		if f.f == mcptest.LLMOpenAIChat {
			if so, _ := body["stream_options"].(map[string]any); so["include_usage"] != true {
				t.Errorf("stream_options %v", body["stream_options"])
			}
		}
	})
}

func TestToolRoundTrip(t *testing.T) {
	each(t, func(t *testing.T, f format) {
		fk := mcptest.NewFakeLLM(t, f.f,
			mcptest.LLMTurn{Text: "Let me look.", Calls: []mcptest.LLMCall{{ID: "call_1", Name: "get_weather", Args: `{"city":"Paris"}`}}},
			mcptest.LLMTurn{Text: "It is sunny in Paris."},
		)
		p := open(t, f, fk, llm.Options{})
		req := ask("Weather in Paris?", weather)
		var calls []llm.ToolCall
		resp, err := p.Stream(ctx(t), req, func(e llm.Event) {
			if e.Kind == llm.EventToolCall {
				calls = append(calls, *e.Call)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.ToolCalls) != 1 || len(calls) != 1 {
			t.Fatalf("calls %+v, streamed %+v", resp.ToolCalls, calls)
		}
		c := resp.ToolCalls[0]
		if c.ID != "call_1" || c.Name != "get_weather" || string(c.Arguments) != `{"city":"Paris"}` || c.Invalid != "" {
			t.Errorf("call %+v", c)
		}
		if resp.Finish != llm.FinishToolUse {
			t.Errorf("finish %q", resp.Finish)
		}
		req.Messages = append(req.Messages, resp.Message, llm.Message{Role: llm.RoleUser, Content: []llm.Block{
			{Type: llm.BlockToolResult, ID: c.ID, Text: "sunny, 21°C"},
		}})
		resp2, err := p.Stream(ctx(t), req, nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp2.Message.Text() != "It is sunny in Paris." {
			t.Errorf("second turn %q", resp2.Message.Text())
		}
		reqs := fk.Requests()
		first, second := string(reqs[0].Body), string(reqs[1].Body)
		for _, want := range []string{"get_weather", "Weather of a city", `"required":["city"]`} {
			if !strings.Contains(first, want) {
				t.Errorf("the first request lacks %s: %s", want, first)
			}
		}
		for _, want := range []string{"call_1", "sunny, 21°C", `Paris`} {
			if !strings.Contains(second, want) {
				t.Errorf("the second request lacks %s: %s", want, second)
			}
		}
	})
}

func TestParallelToolCalls(t *testing.T) {
	each(t, func(t *testing.T, f format) {
		fk := mcptest.NewFakeLLM(t, f.f, mcptest.LLMTurn{Calls: []mcptest.LLMCall{
			{ID: "call_a", Name: "get_weather", Args: `{"city":"Paris"}`, Split: 3},
			{ID: "call_b", Name: "get_weather", Args: `{"city":"Oslo"}`, Split: 2},
		}})
		resp, err := open(t, f, fk, llm.Options{}).Stream(ctx(t), ask("Paris and Oslo?", weather), nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.ToolCalls) != 2 {
			t.Fatalf("calls %+v", resp.ToolCalls)
		}
		for i, want := range []string{`{"city":"Paris"}`, `{"city":"Oslo"}`} {
			if c := resp.ToolCalls[i]; string(c.Arguments) != want || c.Invalid != "" || c.ID != []string{"call_a", "call_b"}[i] {
				t.Errorf("call %d: %+v", i, c)
			}
		}
	})
}

func TestInvalidToolCalls(t *testing.T) {
	each(t, func(t *testing.T, f format) {
		fk := mcptest.NewFakeLLM(t, f.f, mcptest.LLMTurn{Calls: []mcptest.LLMCall{
			{ID: "call_1", Name: "get_weather", Args: `{"city": "Par`},
			{ID: "call_2", Name: "rm_rf", Args: `{}`},
			{ID: "call_3", Name: "get_weather", Args: `{"city":"Oslo"}`},
		}})
		resp, err := open(t, f, fk, llm.Options{}).Stream(ctx(t), ask("go", weather), nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.ToolCalls) != 3 {
			t.Fatalf("calls %+v", resp.ToolCalls)
		}
		bad, absent, good := resp.ToolCalls[0], resp.ToolCalls[1], resp.ToolCalls[2]
		if !strings.Contains(bad.Invalid, "get_weather") || !strings.Contains(bad.Invalid, "not valid JSON") || bad.Raw != `{"city": "Par` {
			t.Errorf("malformed call %+v", bad)
		}
		if !strings.Contains(absent.Invalid, "rm_rf") || !strings.Contains(absent.Invalid, "not offered") {
			t.Errorf("call of a tool not offered %+v", absent)
		}
		if good.Invalid != "" {
			t.Errorf("valid call %+v", good)
		}
		// The turn goes back to the model as it is: an invalid call's input
		// is {} so that the provider takes the conversation.
		for _, b := range resp.Message.Content {
			if b.Type == llm.BlockToolUse && !json.Valid(b.Input) {
				t.Errorf("block %+v holds invalid JSON", b)
			}
		}
	})
}

// hostile runs one hostile turn and returns the error, which must be of
// kind and free of the key.
func hostile(t *testing.T, f format, o llm.Options, kind error, turns ...mcptest.LLMTurn) (*mcptest.FakeLLM, *llm.Error) {
	t.Helper()
	fk := mcptest.NewFakeLLM(t, f.f, turns...)
	_, err := open(t, f, fk, o).Stream(ctx(t), ask("hi", weather), nil)
	keyFree(t, err)
	t.Logf("%s", err)
	var e *llm.Error
	if !errors.As(err, &e) || !errors.Is(err, kind) {
		t.Fatalf("error %v (%T), want %v", err, err, kind)
	}
	return fk, e
}

func TestStreamThatNeverEnds(t *testing.T) {
	each(t, func(t *testing.T, f format) {
		_, e := hostile(t, f, llm.Options{IdleTimeout: 100 * time.Millisecond, MaxRetries: -1}, llm.ErrIdle, mcptest.LLMTurn{Hang: true})
		if !strings.Contains(e.Error(), "idle") {
			t.Errorf("error %q", e)
		}
	})
}

// A provider that never sends its headers is one silence: the call ends
// with it, without another attempt.
func TestNoHeaders(t *testing.T) {
	each(t, func(t *testing.T, f format) {
		fk, _ := hostile(t, f, llm.Options{IdleTimeout: 100 * time.Millisecond}, llm.ErrIdle,
			mcptest.LLMTurn{Stall: true}, mcptest.LLMTurn{Stall: true}, mcptest.LLMTurn{Stall: true})
		if n := len(fk.Requests()); n != 1 {
			t.Errorf("%d attempts after a silence", n)
		}
	})
}

// The caller's deadline ends a stream that is still within its idle bound.
func TestDeadline(t *testing.T) {
	each(t, func(t *testing.T, f format) {
		fk := mcptest.NewFakeLLM(t, f.f, mcptest.LLMTurn{Hang: true})
		c, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		_, err := open(t, f, fk, llm.Options{}).Stream(c, ask("hi"), nil)
		if !errors.Is(err, llm.ErrDeadline) {
			t.Fatalf("error %v", err)
		}
		keyFree(t, err)
	})
}

// Stream may be called concurrently: each call has its own stream and
// bounds.
func TestConcurrentStreams(t *testing.T) {
	each(t, func(t *testing.T, f format) {
		const n = 4
		turns := make([]mcptest.LLMTurn, n)
		for i := range turns {
			turns[i] = mcptest.LLMTurn{Text: "same answer", Calls: []mcptest.LLMCall{{ID: "call_1", Name: "get_weather", Args: `{"city":"Paris"}`}}}
		}
		fk := mcptest.NewFakeLLM(t, f.f, turns...)
		p := open(t, f, fk, llm.Options{})
		errs := make(chan error, n)
		for range n {
			go func() {
				resp, err := p.Stream(ctx(t), ask("hi", weather), nil)
				if err == nil && (resp.Message.Text() != "same answer" || len(resp.ToolCalls) != 1) {
					err = fmt.Errorf("turn %+v", resp)
				}
				errs <- err
			}()
		}
		for range n {
			if err := <-errs; err != nil {
				t.Error(err)
			}
		}
	})
}

func TestOneTokenPerSecond(t *testing.T) {
	each(t, func(t *testing.T, f format) {
		hostile(t, f, llm.Options{IdleTimeout: 100 * time.Millisecond, MaxRetries: -1}, llm.ErrIdle,
			mcptest.LLMTurn{Text: strings.Repeat("tick", 100), Drip: time.Second})
	})
}

func TestFiftyMegabyteStream(t *testing.T) {
	each(t, func(t *testing.T, f format) {
		const bound = 1 << 20
		fk, e := hostile(t, f, llm.Options{MaxBytes: bound, MaxRetries: -1}, llm.ErrTooLarge, mcptest.LLMTurn{Flood: 50 << 20})
		if !strings.Contains(e.Error(), "more than 1.0 MiB (the byte bound)") {
			t.Errorf("error %q", e)
		}
		// The client stopped reading at the bound: what the fake could write
		// is the bound and the sockets' buffers, far from 50 MB.
		if w := fk.Written(); w > 16<<20 {
			t.Errorf("the fake wrote %d bytes: the stream was not stopped", w)
		}
	})
}

func TestStreamWithoutEnd(t *testing.T) {
	each(t, func(t *testing.T, f format) {
		hostile(t, f, llm.Options{MaxRetries: -1}, llm.ErrStream, mcptest.LLMTurn{Text: "cut", NoEnd: true})
	})
}

func TestUnauthorized(t *testing.T) {
	each(t, func(t *testing.T, f format) {
		echo := `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key ` + testKey + `"}}`
		fk, e := hostile(t, f, llm.Options{}, llm.ErrAuth, mcptest.LLMTurn{Status: 401, Body: echo})
		want := map[string]string{"anthropic": "ANTHROPIC_API_KEY", "chat": "OPENAI_API_KEY", "responses": "OPENAI_API_KEY"}[f.name]
		if !strings.Contains(e.Error(), want) || !strings.Contains(e.Error(), "bad key") || e.Status != 401 {
			t.Errorf("error %q", e)
		}
		if len(fk.Requests()) != 1 {
			t.Errorf("a 401 was tried %d times", len(fk.Requests()))
		}
	})
}

func TestRetryAfterHonoured(t *testing.T) {
	each(t, func(t *testing.T, f format) {
		fk := mcptest.NewFakeLLM(t, f.f, mcptest.LLMTurn{Status: 429, RetryAfter: "0"}, mcptest.LLMTurn{Text: "after the wait"})
		resp, err := open(t, f, fk, llm.Options{}).Stream(ctx(t), ask("hi"), nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Message.Text() != "after the wait" || len(fk.Requests()) != 2 {
			t.Errorf("text %q after %d requests", resp.Message.Text(), len(fk.Requests()))
		}
	})
}

func TestRetryAfterBeyondTheBound(t *testing.T) {
	each(t, func(t *testing.T, f format) {
		fk, e := hostile(t, f, llm.Options{MaxRetryWait: time.Second}, llm.ErrRateLimited,
			mcptest.LLMTurn{Status: 429, RetryAfter: "3600"}, mcptest.LLMTurn{Text: "never reached"})
		if e.RetryAfter != time.Hour || !strings.Contains(e.Error(), "asked to wait 1h") {
			t.Errorf("error %q, retry after %v", e, e.RetryAfter)
		}
		if n := len(fk.Requests()); n != 1 {
			t.Errorf("%d requests: a wait past the bound was made", n)
		}
	})
}

func TestRetryAfterPastTheDeadline(t *testing.T) {
	f := formats[0]
	fk := mcptest.NewFakeLLM(t, f.f, mcptest.LLMTurn{Status: 529, RetryAfter: "30"}, mcptest.LLMTurn{Text: "never reached"})
	c, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := open(t, f, fk, llm.Options{}).Stream(c, ask("hi"), nil)
	if !errors.Is(err, llm.ErrOverloaded) || c.Err() != nil {
		t.Fatalf("error %v, context %v: want overloaded before the deadline", err, c.Err())
	}
	if n := len(fk.Requests()); n != 1 {
		t.Errorf("%d requests", n)
	}
}

func TestServerErrorsAreRetriedThenReported(t *testing.T) {
	each(t, func(t *testing.T, f format) {
		fail := mcptest.LLMTurn{Status: 500, RetryAfter: "0", Body: `{"error":{"message":"boom ` + testKey + `"}}`}
		fk, e := hostile(t, f, llm.Options{MaxRetries: 1}, llm.ErrServer, fail, fail)
		if n := len(fk.Requests()); n != 2 || !strings.Contains(e.Error(), "boom") {
			t.Errorf("%d requests, error %q", n, e)
		}
	})
}

func TestOverloaded(t *testing.T) {
	busy := mcptest.LLMTurn{Status: 529, RetryAfter: "0", Body: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`}
	hostile(t, formats[0], llm.Options{MaxRetries: 1}, llm.ErrOverloaded, busy, busy)
}

// An error inside a stream that began with 200 is the provider's error,
// with its message.
func TestErrorEventInTheStream(t *testing.T) {
	each(t, func(t *testing.T, f format) {
		kind, typ := error(llm.ErrServer), "server_error"
		if f.f == mcptest.LLMAnthropic {
			kind, typ = llm.ErrOverloaded, "overloaded_error"
		}
		_, e := hostile(t, f, llm.Options{}, kind, mcptest.LLMTurn{StreamError: typ})
		if !strings.Contains(e.Error(), "scripted "+typ) {
			t.Errorf("error %q", e)
		}
	})
}

func TestRedirectToAnotherOriginKeepsTheKey(t *testing.T) {
	each(t, func(t *testing.T, f format) {
		other := mcptest.NewFakeLLM(t, f.f, mcptest.LLMTurn{Text: "stolen"})
		target := strings.TrimSuffix(other.URL, "/") + "/v1/" + map[string]string{"anthropic": "messages", "chat": "chat/completions", "responses": "responses"}[f.name]
		fk := mcptest.NewFakeLLM(t, f.f, mcptest.LLMTurn{RedirectTo: target})
		// Even a client whose policy follows redirects to other origins
		// does not take the key there.
		client := transport.NewHTTPClient(nil, transport.EgressPolicy{AllowCrossOrigin: true})
		_, err := open(t, f, fk, llm.Options{HTTPClient: client, MaxRetries: -1}).Stream(ctx(t), ask("hi"), nil)
		keyFree(t, err)
		if !errors.Is(err, llm.ErrRedirect) {
			t.Fatalf("error %v", err)
		}
		for _, r := range other.Requests() {
			for k, v := range r.Header {
				if strings.Contains(strings.Join(v, " "), testKey) {
					t.Errorf("the other origin got the key in %s", k)
				}
			}
		}
		if n := len(other.Requests()); n != 0 {
			t.Errorf("the other origin got %d requests", n)
		}
	})
}

func TestErrorTextsNeverHoldTheKey(t *testing.T) {
	// Statuses whose bodies echo the key, in every format.
	for _, status := range []int{400, 401, 403, 404, 429, 500, 503, 529} {
		each(t, func(t *testing.T, f format) {
			fk := mcptest.NewFakeLLM(t, f.f, mcptest.LLMTurn{Status: status, Body: "key " + testKey + " and its start " + testKey[:20]})
			_, err := open(t, f, fk, llm.Options{MaxRetries: -1}).Stream(ctx(t), ask("hi"), nil)
			if err == nil {
				t.Fatalf("status %d: no error", status)
			}
			keyFree(t, err)
			var e *llm.Error
			if !errors.As(err, &e) || e.Status != status {
				t.Errorf("status %d: %v", status, err)
			}
		})
	}
}
