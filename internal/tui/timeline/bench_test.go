package timeline

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

// million feeds a pane a million wire events, as BenchmarkWireView1M does
// the wire pane: calls and their answers, every tenth answer an error, and
// a notification between them. It returns the time the feed took.
func million(p *Pane) time.Duration {
	const n = 1_000_000
	parser := rows.NewParser()
	start := time.Now()
	at := time.Unix(1_800_000_000, 0)
	batch := make([]rows.Entry, 0, 1024)
	for i := range n {
		var dir transport.Direction
		var data string
		switch id := i / 3; i % 3 {
		case 0:
			dir, data = transport.Outgoing, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`, id)
		case 1:
			dir, data = transport.Incoming, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`
		default:
			dir, data = transport.Incoming, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"hello"}],"isError":%v}}`, id, id%10 == 0)
		}
		batch = append(batch, parser.Event(transport.Event{Time: at.Add(time.Duration(i) * time.Millisecond), Kind: transport.KindFrame, Dir: dir, Data: []byte(data)}))
		if len(batch) == cap(batch) {
			p.Append(batch)
			batch = batch[:0]
		}
	}
	p.Append(batch)
	return time.Since(start)
}

// BenchmarkTimelineView1M measures drawing the timeline over a million
// events (the store keeps its bound's newest spans), zoomed out to the
// whole session and zoomed in to a few milliseconds, and laying it out
// (what a batch or a key costs, once, not every frame).
func BenchmarkTimelineView1M(b *testing.B) {
	for _, tc := range []struct {
		name   string
		zoom   int
		layout bool
	}{{"whole", 0, false}, {"zoomed", 14, false}, {"layout-whole", 0, true}, {"layout-zoomed", 14, true}} {
		b.Run(tc.name, func(b *testing.B) {
			var before runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			c := &common.Common{Styles: styles.DefaultStyles(true), Keys: keymap.Default(), Now: time.Now}
			p := New(c, NewStore(0), false)
			p.SetSize(200, 50)
			load := million(p)
			p.step(-1)
			p.cursor = p.store.Next()
			p.step(-1)
			for range tc.zoom {
				p.zoom(0.5)
			}
			p.layout()
			runtime.GC()
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if tc.layout {
					p.layout()
				}
				_ = p.View()
			}
			b.StopTimer()
			b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "heap-MiB")
			b.ReportMetric(load.Seconds(), "load-s")
			b.ReportMetric(float64(p.store.Len()), "spans")
			runtime.KeepAlive(p)
		})
	}
}
