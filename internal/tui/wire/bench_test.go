package wire

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/rows"
	"github.com/mcpi-dev/mcpi/internal/transport"
	"github.com/mcpi-dev/mcpi/internal/tui/common"
	"github.com/mcpi-dev/mcpi/internal/tui/keymap"
	"github.com/mcpi-dev/mcpi/internal/tui/styles"
)

// BenchmarkWireView1M measures drawing the wire pane over a million rows
// (a store sized to keep them all) and the heap they take: View formats
// only the rows on screen, so its cost must not depend on the row count.
func BenchmarkWireView1M(b *testing.B) {
	const n = 1_000_000
	for _, tc := range []struct {
		name  string
		query string
	}{{"all", ""}, {"filtered", "method:tools/call"}} {
		b.Run(tc.name, func(b *testing.B) {
			var before runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			c := &common.Common{Styles: styles.DefaultStyles(true), Keys: keymap.Default(), Now: time.Now}
			p := New(c, rows.NewStore(n, 0))
			p.SetSize(200, 50)
			parser := rows.NewParser()
			start := time.Now()
			batch := make([]rows.Entry, 0, 1024)
			for i := range n {
				dir, data := transport.Outgoing, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`, i/2)
				if i%2 == 1 {
					dir, data = transport.Incoming, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"hello"}]}}`, i/2)
				}
				batch = append(batch, parser.Event(transport.Event{Time: start.Add(time.Duration(i) * time.Microsecond), Kind: transport.KindFrame, Dir: dir, Data: []byte(data)}))
				if len(batch) == cap(batch) {
					p.Append(batch)
					batch = batch[:0]
				}
			}
			p.Append(batch)
			load := time.Since(start)
			if tc.query != "" {
				p.setQuery(tc.query)
			}
			runtime.GC()
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			if p.Store().Len() != n {
				b.Fatalf("store holds %d rows", p.Store().Len())
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				_ = p.View()
			}
			b.StopTimer()
			b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "heap-MiB")
			b.ReportMetric(load.Seconds(), "load-s")
			runtime.KeepAlive(p)
		})
	}
}
