package chat

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/mcptest"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// BenchmarkTurnOverhead is mcpi's own time in a turn with a tool call, read
// off the tap: from the model's answer (the provider's last byte) to the
// tools/call frame on the wire, plus from the tool's result frame to the
// next request to the model; against the demo server over HTTP and a fake
// provider. The median and p90 over b.N turns are reported
// (docs/performance.md).
func BenchmarkTurnOverhead(b *testing.B) {
	tap := &tapped{}
	c, tools := demo(&testing.T{}, tap)
	var turns []mcptest.LLMTurn
	for range b.N {
		turns = append(turns, mcptest.LLMTurn{Calls: []mcptest.LLMCall{{ID: "c", Name: "echo", Args: `{"text":"hi"}`}}}, mcptest.LLMTurn{Text: "done"})
	}
	p, _ := model(&testing.T{}, mcptest.LLMOpenAIChat, turns...)
	b.ResetTimer()
	for range b.N {
		r := New(Options{Model: p, Server: SessionServer(c), Tools: tools, Approve: ApproveAll, Tap: tap})
		if res := r.Send(context.Background(), "go"); res.Stop != StopDone {
			b.Fatalf("%+v", res)
		}
	}
	b.StopTimer()
	var over []time.Duration
	var answer, result time.Time
	var part time.Duration
	for _, e := range tap.events() {
		switch {
		case e.Kind == transport.KindModel && e.Dir == transport.Incoming && strings.Contains(string(e.Data), `"toolCalls"`):
			answer = e.Time
		case e.Kind == transport.KindFrame && e.Dir == transport.Outgoing && strings.Contains(string(e.Data), `"tools/call"`) && !answer.IsZero():
			part, answer = e.Time.Sub(answer), time.Time{}
		case e.Kind == transport.KindFrame && e.Dir == transport.Incoming && strings.Contains(string(e.Data), `"result"`) && part > 0:
			result = e.Time
		case e.Kind == transport.KindModel && e.Dir == transport.Outgoing && !result.IsZero():
			over = append(over, part+e.Time.Sub(result))
			part, result = 0, time.Time{}
		}
	}
	if len(over) == 0 {
		b.Fatal("no turn measured")
	}
	slices.Sort(over)
	b.ReportMetric(float64(over[len(over)/2].Microseconds()), "overhead-µs")
	b.ReportMetric(float64(over[len(over)*9/10].Microseconds()), "p90-overhead-µs")
}
