package cli

import (
	"errors"
	"fmt"
	"time"

	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/iostreams"
	"github.com/mcpi-dev/mcpi/internal/mcptext"
	"github.com/mcpi-dev/mcpi/internal/record"
	"github.com/mcpi-dev/mcpi/internal/rows"
	"github.com/mcpi-dev/mcpi/internal/timeline"
)

// newFrameFilter parses a --filter; nil for an empty one.
func newFrameFilter(expr string) (*timeline.Filter, error) {
	f, err := timeline.NewFilter(expr)
	if err != nil {
		return nil, command.FlagErrorf("--filter: %v", err)
	}
	return f, nil
}

// replayLatency prints a trace's latencies by method (and by tool): the
// Wire pane's L, for scripts.
func replayLatency(opts *ReplayOptions) error {
	r, err := record.Open(opts.Trace)
	if err != nil {
		return &command.FlagError{Err: fmt.Errorf("%s: %w", opts.Trace, err)}
	}
	defer r.Close()
	// The store keeps the last rows.MaxEntries rows: a longer trace is
	// summed up over its end, and says so.
	store := rows.NewStore(0, 0)
	parser := rows.NewParser()
	err = r.Each(func(ev record.Event) {
		if te, ok := ev.TransportEvent(); ok {
			store.Append(parser.Event(te))
		}
	})
	if err != nil && !errors.Is(err, record.ErrTruncated) {
		return err
	}
	keep := func(*rows.Entry) bool { return true }
	if opts.filter != nil {
		keep = opts.filter.Entry
	}
	lat := rows.Latencies(store, keep)
	if store.First() > 0 {
		fmt.Fprintf(opts.IO.ErrOut, "warning: %s has more than %d rows: these are the latencies of its last %d\n", opts.Trace, rows.MaxEntries, rows.MaxEntries)
	}
	if opts.JSON {
		type row struct {
			Method string  `json:"method"`
			Count  int     `json:"count"`
			Errors int     `json:"errors"`
			P50    float64 `json:"p50Ms"`
			P90    float64 `json:"p90Ms"`
			P99    float64 `json:"p99Ms"`
			Max    float64 `json:"maxMs"`
		}
		ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
		out := []row{}
		for _, r := range lat {
			out = append(out, row{r.Name, r.Count, r.Errors, ms(r.P50), ms(r.P90), ms(r.P99), ms(r.Max)})
		}
		return iostreams.WriteJSON(opts.IO, out)
	}
	if len(lat) == 0 {
		fmt.Fprintln(opts.IO.ErrOut, "no answer with a latency in the trace")
		return nil
	}
	tw := mcptext.Table(opts.IO.Out, "METHOD", "COUNT", "ERRORS", "P50", "P90", "P99", "MAX")
	for _, r := range lat {
		mcptext.Row(tw, r.Name, fmt.Sprint(r.Count), fmt.Sprint(r.Errors), rows.FormatLatency(r.P50), rows.FormatLatency(r.P90), rows.FormatLatency(r.P99), rows.FormatLatency(r.Max))
	}
	return tw.Flush()
}
