package llm_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/llm"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
)

// BenchmarkTurn streams a turn of 2,000 text deltas and a tool call from
// a loopback fake, per format: the time is mostly the fake's and the
// loopback's; the allocations per op are the package's and the SDK's.
func BenchmarkTurn(b *testing.B) {
	for _, f := range formats {
		b.Run(f.name, func(b *testing.B) {
			turn := mcptest.LLMTurn{Text: strings.Repeat("word", 2000), Calls: []mcptest.LLMCall{{ID: "call_1", Name: "get_weather", Args: `{"city":"Paris"}`}}}
			turns := make([]mcptest.LLMTurn, b.N)
			for i := range turns {
				turns[i] = turn
			}
			fk := mcptest.NewFakeLLM(b, f.f, turns...)
			p := openB(b, f, fk)
			req := ask("hi", weather)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				resp, err := p.Stream(context.Background(), req, nil)
				if err != nil || len(resp.ToolCalls) != 1 {
					b.Fatal(err)
				}
			}
		})
	}
}

func openB(b *testing.B, f format, fk *mcptest.FakeLLM) llm.Provider {
	p, err := llm.Parse(f.kind+":test-model", llm.Options{HTTPClient: testClient(), APIKey: testKey, BaseURL: fk.URL, Getenv: func(string) string { return "" }})
	if err != nil {
		b.Fatal(err)
	}
	return p
}
