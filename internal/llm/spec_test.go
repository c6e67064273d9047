package llm_test

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/llm"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestParseNamesTheMissingKey(t *testing.T) {
	client := transport.NewHTTPClient(nil, transport.EgressPolicy{})
	for _, tc := range []struct{ spec, url, want string }{
		{"anthropic:claude-sonnet-5-5", "", "ANTHROPIC_API_KEY"},
		{"openai:gpt-5.4", "", "OPENAI_API_KEY"},
		{"openai-responses:gpt-5.4", "", "OPENAI_API_KEY"},
		{"compat:gemini-3-flash", llm.GeminiURL, "GEMINI_API_KEY"},
	} {
		_, err := llm.Parse(tc.spec, llm.Options{HTTPClient: client, BaseURL: tc.url, Getenv: env(nil)})
		if !errors.Is(err, llm.ErrNoKey) || !strings.Contains(err.Error(), "set "+tc.want) {
			t.Errorf("%s: %v", tc.spec, err)
		}
	}
}

func TestParseRefusesBadSpecs(t *testing.T) {
	client := transport.NewHTTPClient(nil, transport.EgressPolicy{})
	for _, spec := range []string{"", "claude", "anthropic:", "mistral:large", "compat:llama"} {
		_, err := llm.Parse(spec, llm.Options{HTTPClient: client, Getenv: env(nil)})
		if !errors.Is(err, llm.ErrSpec) {
			t.Errorf("%q: %v", spec, err)
		}
	}
	if _, err := llm.Parse("ollama:qwen3", llm.Options{}); !errors.Is(err, llm.ErrSpec) {
		t.Errorf("no HTTP client: %v", err)
	}
	if _, err := llm.Parse("compat:m", llm.Options{HTTPClient: client, BaseURL: "http://user:pw@127.0.0.1:1/v1/"}); !errors.Is(err, llm.ErrSpec) || strings.Contains(err.Error(), "pw") {
		t.Errorf("credentials in the URL: %v", err)
	}
}

func TestParseDefaults(t *testing.T) {
	client := transport.NewHTTPClient(nil, transport.EgressPolicy{})
	p, err := llm.Parse("ollama:qwen3", llm.Options{HTTPClient: client, Getenv: env(map[string]string{"OPENAI_API_KEY": testKey})})
	if err != nil || p.Name() != "ollama" || p.Model() != "qwen3" {
		t.Fatalf("%v %v", p, err)
	}
	p, err = llm.Parse("openai-responses:gpt-5.4", llm.Options{HTTPClient: client, Getenv: env(map[string]string{"OPENAI_API_KEY": testKey})})
	if err != nil || p.Name() != "openai" {
		t.Fatalf("%v %v", p, err)
	}
	// OPENAI_BASE_URL moves the OpenAI formats, with their key.
	fk := mcptest.NewFakeLLM(t, mcptest.LLMOpenAIChat, mcptest.LLMTurn{Text: "moved"})
	p, err = llm.Parse("openai:gpt-5.4", llm.Options{HTTPClient: client, Getenv: env(map[string]string{"OPENAI_API_KEY": testKey, "OPENAI_BASE_URL": fk.URL})})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Stream(ctx(t), ask("hi"), nil); err != nil {
		t.Fatal(err)
	}
	if r := fk.Requests(); len(r) != 1 || r[0].Header.Get("Authorization") != "Bearer "+testKey {
		t.Errorf("requests %v", r)
	}
}

// A compatible server never gets a key of the environment: not
// OPENAI_API_KEY, even though the OpenAI SDK would send it.
func TestCompatGetsNoKeyOfTheEnvironment(t *testing.T) {
	fk := mcptest.NewFakeLLM(t, mcptest.LLMOpenAIChat, mcptest.LLMTurn{Text: "local"})
	t.Setenv("OPENAI_API_KEY", testKey)
	for _, spec := range []string{"compat:llama", "ollama:qwen3"} {
		p, err := llm.Parse(spec, llm.Options{HTTPClient: transport.NewHTTPClient(nil, transport.EgressPolicy{}), BaseURL: fk.URL})
		if err != nil {
			t.Fatal(err)
		}
		if spec == "compat:llama" {
			if _, err := p.Stream(ctx(t), ask("hi"), nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, r := range fk.Requests() {
		if a := r.Header.Get("Authorization"); a != "" {
			t.Errorf("the compatible server got Authorization %q", a)
		}
		if body := r.JSON(t); body["max_completion_tokens"] != nil {
			t.Errorf("a compatible server gets max_tokens: %v", body)
		}
	}
}

func TestRequestParameters(t *testing.T) {
	temp, seed := 0.0, int64(7)
	req := ask("hi", weather)
	req.Temperature, req.Seed, req.MaxTokens, req.StopSequences, req.ToolChoice = &temp, &seed, 99, []string{"END"}, llm.ToolChoiceRequired
	want := map[string]map[string]any{
		"anthropic": {"max_tokens": 99.0, "stop_sequences": []any{"END"}, "tool_choice": map[string]any{"type": "any"}},
		"chat":      {"max_completion_tokens": 99.0, "stop": []any{"END"}, "tool_choice": "required", "seed": 7.0, "temperature": 0.0},
		"responses": {"max_output_tokens": 99.0, "tool_choice": "required", "temperature": 0.0, "store": false, "instructions": "Be brief."},
	}
	warnings := map[string]int{"anthropic": 2, "chat": 0, "responses": 2}
	each(t, func(t *testing.T, f format) {
		fk := mcptest.NewFakeLLM(t, f.f, mcptest.LLMTurn{Text: "ok"})
		resp, err := open(t, f, fk, llm.Options{}).Stream(ctx(t), req, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Warnings) != warnings[f.name] {
			t.Errorf("warnings %q", resp.Warnings)
		}
		body := fk.Requests()[0].JSON(t)
		for k, v := range want[f.name] {
			if got, _ := jsonString(body[k]); got != mustJSON(v) {
				t.Errorf("%s = %s, want %s", k, got, mustJSON(v))
			}
		}
	})
}

func TestCost(t *testing.T) {
	prices := llm.DefaultPrices()
	usd, ok := prices.Cost("claude-sonnet-5-5-20260630", llm.Usage{InputTokens: 1_000_000, OutputTokens: 100_000})
	if !ok || math.Abs(usd-3.0) > 1e-9 {
		t.Errorf("cost %v %v, want $2 + $1", usd, ok)
	}
	// Cache reads are part of the input, priced at their own rate.
	usd, _ = prices.Cost("claude-sonnet-5-5", llm.Usage{InputTokens: 1_000_000, CacheReadTokens: 1_000_000})
	if math.Abs(usd-0.20) > 1e-9 {
		t.Errorf("cached cost %v", usd)
	}
	if _, ok := prices.Cost("qwen3", llm.Usage{InputTokens: 5}); ok {
		t.Error("a local model has a price")
	}
	prices["qwen3"] = llm.Price{Input: 1, Output: 1, Date: "2026-11-28", Source: "test"}
	if usd, ok := prices.Cost("qwen3", llm.Usage{InputTokens: 1_000_000}); !ok || usd != 1 {
		t.Errorf("override: %v %v", usd, ok)
	}
	for name, p := range llm.DefaultPrices() {
		if p.Date == "" || !strings.Contains(p.Source, "https://") || p.Input <= 0 || p.Output <= 0 {
			t.Errorf("%s: %+v lacks a price, a date or a source", name, p)
		}
	}
}

func jsonString(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

func mustJSON(v any) string {
	s, _ := jsonString(v)
	return s
}
