package wire

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/mcpi-dev/mcpi/internal/rows"
	"github.com/mcpi-dev/mcpi/internal/tui/common"
)

// Latencies sums up the answers with a latency that match the filter, per
// method (and per tool), the slowest p99 first.
func (p *Pane) Latencies() []rows.LatencyRow {
	// Summed up once for what the store and the filter hold: a frame is
	// drawn many times between two batches.
	key := latencyKey{next: p.store.Next(), query: p.query.String()}
	if p.latencyRows == nil || p.latencyAt != key {
		p.latencyRows = rows.Latencies(p.store, func(e *rows.Entry) bool { return p.query.Empty() || p.filtered(e) })
		p.latencyAt = key
	}
	return p.latencyRows
}

// latencyKey is what the latency rows were summed up for.
type latencyKey struct {
	next  int64
	query string
}

// sparkline draws counts as eighth blocks, the largest full.
func sparkline(d [rows.DistBuckets]int) string {
	const bars = "▁▂▃▄▅▆▇█"
	top := 0
	for _, n := range d {
		top = max(top, n)
	}
	var b strings.Builder
	for _, n := range d {
		switch {
		case n == 0:
			b.WriteByte(' ')
		default:
			i := (n*8 - 1) / max(top, 1)
			b.WriteRune([]rune(bars)[min(i, 7)])
		}
	}
	return b.String()
}

// latencyView draws the latency table.
func (p *Pane) latencyView() string {
	st := p.c.Styles
	lat := p.Latencies()
	total := 0
	for _, r := range lat {
		total += r.Count
	}
	var b strings.Builder
	title := fmt.Sprintf("Latency by method: %s", common.Plural(total, "answer"))
	if !p.query.Empty() {
		title += " matching " + common.Line(p.filter.Value())
	}
	b.WriteString(st.Title.Render(common.Truncate(title, p.width)))
	b.WriteByte('\n')
	// The other columns take 61 cells: the method gets the rest.
	nameW := max(12, p.width-61)
	head := fmt.Sprintf("  %-*s %6s %5s %8s %8s %8s %8s  %s", nameW, "METHOD", "COUNT", "ERR", "P50", "P90", "P99", "MAX", "SPREAD")
	b.WriteString(st.Dim.Render(common.Truncate(head, p.width)))
	b.WriteByte('\n')
	lines := p.height - 4
	if len(lat) == 0 {
		b.WriteString(st.Dim.Render("  No answer with a latency yet."))
		b.WriteByte('\n')
		lines--
	}
	for i, r := range lat {
		if i >= lines {
			b.WriteString(st.Dim.Render(fmt.Sprintf("  … %d more", len(lat)-i)))
			b.WriteByte('\n')
			break
		}
		errs := fmt.Sprint(r.Errors)
		if r.Errors == 0 {
			errs = "·"
		}
		line := fmt.Sprintf("  %-*s %6d %5s %8s %8s %8s %8s  %s", nameW, fitMethod(common.Line(r.Name), nameW), r.Count, errs,
			rows.FormatLatency(r.P50), rows.FormatLatency(r.P90), rows.FormatLatency(r.P99), rows.FormatLatency(r.Max), sparkline(r.Dist))
		if r.Errors > 0 {
			line = st.Error.Render(common.Truncate(line, p.width))
		}
		b.WriteString(common.Truncate(line, p.width))
		b.WriteByte('\n')
	}
	for i := max(len(lat), 1); i < lines; i++ {
		b.WriteByte('\n')
	}
	b.WriteString(st.Dim.Render(common.Truncate("slowest p99 first · distribution: fastest to slowest, log scale", p.width)))
	return b.String()
}

// fitMethod fits a row's name ("tools/call long-running-operation") to
// width: what is cut is the method, from its start, so that the tool the
// row is about stays whole; a tool longer than the width keeps its start.
func fitMethod(name string, width int) string {
	if common.Width(name) <= width {
		return name
	}
	method, subject, ok := strings.Cut(name, " ")
	if !ok {
		return common.TruncateMiddle(name, width)
	}
	room := width - common.Width(subject) - 1 // for the method, with its "…"
	if room < 2 {
		return common.Truncate(subject, width)
	}
	return "…" + ansi.TruncateLeft(method, common.Width(method)-(room-1), "") + " " + subject
}
