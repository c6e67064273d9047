package rows

import (
	"math"
	"sort"
	"time"
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
	// Dist counts the answers in DistBuckets buckets, logarithmic from the
	// fastest to the slowest of the row.
	Dist [DistBuckets]int
}

// DistBuckets is how many buckets a row's distribution has.
const DistBuckets = 8

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
func distribution(ds []time.Duration) [DistBuckets]int {
	var out [DistBuckets]int
	lo, hi := float64(max(ds[0], time.Microsecond)), float64(max(ds[len(ds)-1], time.Microsecond))
	for _, d := range ds {
		b := 0
		if hi > lo {
			// The share of the way from lo to hi, on a log scale.
			f := math.Log(float64(max(d, time.Microsecond))/lo) / math.Log(hi/lo)
			b = min(DistBuckets-1, int(f*DistBuckets))
		}
		out[b]++
	}
	return out
}

// FormatLatency prints a latency with the digits it deserves (1.47ms): the
// one formatting of a latency, wherever one is shown (at most 8 columns
// under an hour).
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
