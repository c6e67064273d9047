package wire

import (
	"fmt"
	"github.com/charmbracelet/x/ansi"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/mcpi-dev/mcpi/internal/tui/common"
)

// LatencyRow is the latency of one method (a tools/call: of one tool)
// over the answers the store holds.
type LatencyRow struct {
	Name   string
	Count  int
	Errors int
	P50    time.Duration
	P90    time.Duration
	P99    time.Duration
	Max    time.Duration
	// Dist counts the answers in distBuckets buckets, logarithmic from the
	// fastest to the slowest of the row.
	Dist [distBuckets]int
}

const distBuckets = 8

// Latencies sums up the answers with a latency that match the filter, per
// method (and per tool), the slowest p99 first.
func (p *Pane) Latencies() []LatencyRow {
	// Summed up once for what the store and the filter hold: a frame is
	// drawn many times between two batches.
	key := latencyKey{next: p.store.Next(), query: p.query.String()}
	if p.latencyRows == nil || p.latencyAt != key {
		p.latencyRows = Latencies(p.store, func(e *Entry) bool { return p.query.Empty() || p.filtered(e) })
		p.latencyAt = key
	}
	return p.latencyRows
}

// latencyKey is what the latency rows were summed up for.
type latencyKey struct {
	next  int64
	query string
}

// Latencies sums up the answers of the store that keep says, per method
// (and per tool), the slowest p99 first.
func Latencies(s *Store, keep func(*Entry) bool) []LatencyRow {
	by := map[string][]time.Duration{}
	errs := map[string]int{}
	for seq := s.First(); seq < s.Next(); seq++ {
		e := s.Get(seq)
		if e == nil || !e.HasLatency || !keep(e) {
			continue
		}
		name := e.Answers
		if name == "" {
			name = "(unknown)"
		}
		if name == "tools/call" && e.Name != "" {
			name += " " + e.Name
		}
		by[name] = append(by[name], e.Latency)
		if e.RPCError || e.ToolError {
			errs[name]++
		}
	}
	rows := make([]LatencyRow, 0, len(by))
	for name, ds := range by {
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		r := LatencyRow{Name: name, Count: len(ds), Errors: errs[name], Max: ds[len(ds)-1],
			P50: quantile(ds, 0.50), P90: quantile(ds, 0.90), P99: quantile(ds, 0.99)}
		r.Dist = distribution(ds)
		rows = append(rows, r)
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].P99 != rows[j].P99 {
			return rows[i].P99 > rows[j].P99
		}
		return rows[i].Name < rows[j].Name
	})
	return rows
}

// quantile is the nearest-rank quantile of sorted durations.
func quantile(ds []time.Duration, q float64) time.Duration {
	i := int(q*float64(len(ds))+0.999999) - 1
	return ds[max(0, min(i, len(ds)-1))]
}

// distribution counts sorted durations in logarithmic buckets from the
// first to the last.
func distribution(ds []time.Duration) [distBuckets]int {
	var out [distBuckets]int
	lo, hi := float64(max(ds[0], time.Microsecond)), float64(max(ds[len(ds)-1], time.Microsecond))
	for _, d := range ds {
		b := 0
		if hi > lo {
			// The share of the way from lo to hi, on a log scale.
			f := math.Log(float64(max(d, time.Microsecond))/lo) / math.Log(hi/lo)
			b = min(distBuckets-1, int(f*distBuckets))
		}
		out[b]++
	}
	return out
}

// sparkline draws counts as eighth blocks, the largest full.
func sparkline(d [distBuckets]int) string {
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
	rows := p.Latencies()
	total := 0
	for _, r := range rows {
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
	if len(rows) == 0 {
		b.WriteString(st.Dim.Render("  No answer with a latency yet."))
		b.WriteByte('\n')
		lines--
	}
	for i, r := range rows {
		if i >= lines {
			b.WriteString(st.Dim.Render(fmt.Sprintf("  … %d more", len(rows)-i)))
			b.WriteByte('\n')
			break
		}
		errs := fmt.Sprint(r.Errors)
		if r.Errors == 0 {
			errs = "·"
		}
		line := fmt.Sprintf("  %-*s %6d %5s %8s %8s %8s %8s  %s", nameW, fitMethod(common.Line(r.Name), nameW), r.Count, errs,
			FormatLatency(r.P50), FormatLatency(r.P90), FormatLatency(r.P99), FormatLatency(r.Max), sparkline(r.Dist))
		if r.Errors > 0 {
			line = st.Error.Render(common.Truncate(line, p.width))
		}
		b.WriteString(common.Truncate(line, p.width))
		b.WriteByte('\n')
	}
	for i := max(len(rows), 1); i < lines; i++ {
		b.WriteByte('\n')
	}
	b.WriteString(st.Dim.Render(common.Truncate("slowest p99 first · distribution: fastest to slowest, log scale", p.width)))
	return b.String()
}

// FormatLatency prints a latency with the digits it deserves (1.47ms).
func FormatLatency(d time.Duration) string {
	switch {
	case d >= 10*time.Second:
		return d.Round(time.Second).String()
	case d >= time.Second:
		return d.Round(10 * time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	}
	return d.Round(time.Microsecond).String()
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
