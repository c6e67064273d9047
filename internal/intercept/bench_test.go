package intercept

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/transport"
)

// BenchmarkJudge is the cost a faults file adds to a frame: ten rules,
// none of which matches a tools/call answer.
func BenchmarkJudge(b *testing.B) {
	var yaml strings.Builder
	yaml.WriteString("faults:\n")
	for i := range 10 {
		fmt.Fprintf(&yaml, "  - match: method:never%d dir:in\n    drop: true\n", i)
	}
	fs, err := ParseFaults([]byte(yaml.String()))
	if err != nil {
		b.Fatal(err)
	}
	e := NewEngine(Options{Faults: fs, Seed: 1})
	frame := []byte(`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", 1000) + `"}]}}`)
	b.ReportAllocs()
	for b.Loop() {
		e.Judge(Frame{Dir: transport.Incoming, Data: frame})
	}
}
