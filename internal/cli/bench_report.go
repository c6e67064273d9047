package cli

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/mcpi-dev/mcpi/internal/load"
	"github.com/mcpi-dev/mcpi/internal/record"
)

// runLoad runs the steps under the flags' load, with a progress line on a
// terminal, and reports.
func runLoad(ctx context.Context, opts *BenchOptions, steps []load.Step, heard *benchHeard, red *record.Redactor) error {
	cfg := load.Config{Workers: opts.Concurrency, Count: opts.Count, Duration: opts.Duration, Rate: opts.Rate, Clock: opts.clock}
	if opts.IO.StderrTTY {
		cfg.Progress = func(s load.Snapshot) {
			opts.IO.ErrOut.EraseLine()
			fmt.Fprintf(opts.IO.ErrOut, "%s calls · %s/s · %s errors · p50 %s p99 %s · %s",
				count(s.Completed), rate(s.PerSecond), count(s.Errors), ms(s.P50), ms(s.P99), s.Elapsed.Round(time.Second))
		}
	}
	res, err := load.Run(ctx, cfg, steps)
	if cfg.Progress != nil {
		opts.IO.ErrOut.EraseLine()
	}
	if err != nil {
		return err
	}
	doc := benchDocument(opts, res, heard, red)
	if opts.jsonReport {
		if err := writeJSON(opts.IO, doc); err != nil {
			return err
		}
	} else {
		printBench(opts.IO, doc, len(steps) > 1)
	}
	heard.sayWarnings(opts.IO, red)
	switch {
	case res.Aborted != nil:
		what := "the run ended early: " + oneLine(doc.Aborted.String())
		fmt.Fprintf(opts.IO.ErrOut, "mcpi: %s\n", what)
		return errSilent{code: exitCodeFor(res.Aborted), what: what}
	case res.Interrupted:
		return errSilent{code: ExitInterrupted, what: "interrupted", kind: KindInterrupted}
	case res.Completed == 0:
		return errSilent{code: ExitToolError, what: "no call completed"}
	case res.ErrorRate() > opts.MaxErrors:
		what := fmt.Sprintf("%s of the calls failed, more than --max-errors %s", pct(res.ErrorRate()), pct(opts.MaxErrors))
		fmt.Fprintf(opts.IO.ErrOut, "mcpi: %s\n", what)
		return errSilent{code: ExitToolError, what: what}
	}
	return nil
}

// benchLatency is a distribution in milliseconds, for --json.
type benchLatency struct {
	Min  float64 `json:"min"`
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
}

func latencyMS(l load.Latency) benchLatency {
	f := func(d time.Duration) float64 { return math.Round(float64(d)/1e3) / 1e3 }
	return benchLatency{Min: f(l.Min), Mean: f(l.Mean), P50: f(l.P50), P90: f(l.P90), P99: f(l.P99), P999: f(l.P999), Max: f(l.Max)}
}

type benchStep struct {
	Name      string       `json:"name"`
	Calls     int64        `json:"calls"`
	Errors    int64        `json:"errors"`
	LatencyMS benchLatency `json:"latencyMs"`
}

type benchKind struct {
	Kind    string       `json:"kind"`
	Count   int64        `json:"count"`
	Example record.Clean `json:"example,omitzero"`
}

// benchDoc is the report: --json prints it, the text is drawn from it.
type benchDoc struct {
	OK             bool         `json:"ok"`
	What           string       `json:"what"`
	Workers        int          `json:"workers"`
	Connections    string       `json:"connections"`
	Rate           float64      `json:"rate,omitempty"`
	Started        int64        `json:"started"`
	Completed      int64        `json:"completed"`
	Failed         int64        `json:"failed"`
	Calls          int64        `json:"calls"`
	Errors         int64        `json:"errors"`
	ErrorRate      float64      `json:"errorRate"`
	MaxErrors      float64      `json:"maxErrors"`
	ErrorsByKind   []benchKind  `json:"errorsByKind"`
	ElapsedMS      float64      `json:"elapsedMs"`
	CallsPerSecond float64      `json:"callsPerSecond"`
	Achieved       float64      `json:"achievedRate,omitempty"`
	Late           int64        `json:"late,omitempty"`
	Unstarted      int64        `json:"unstarted,omitempty"`
	LatencyMS      benchLatency `json:"latencyMs"`
	Steps          []benchStep  `json:"steps"`
	Notifications  int64        `json:"notifications"`
	Interrupted    bool         `json:"interrupted,omitempty"`
	Aborted        record.Clean `json:"aborted,omitzero"`
}

// benchDocument is the report of res; what the server or the run said
// crosses red.
func benchDocument(opts *BenchOptions, res *load.Result, heard *benchHeard, red *record.Redactor) benchDoc {
	d := benchDoc{
		Workers: opts.Concurrency, Connections: opts.Connections, Rate: opts.Rate,
		Started: res.Started, Completed: res.Completed, Failed: res.Failed, Calls: res.Calls, Errors: res.Errors,
		ErrorRate: res.ErrorRate(), MaxErrors: opts.MaxErrors, ErrorsByKind: []benchKind{},
		ElapsedMS:      math.Round(float64(res.Elapsed)/1e3) / 1e3,
		CallsPerSecond: math.Round(res.Throughput*10) / 10,
		Late:           res.Late, Unstarted: res.Unstarted, LatencyMS: latencyMS(res.Latency),
		Notifications: heard.notifications.Load(), Interrupted: res.Interrupted,
	}
	d.What = "call " + opts.Tool
	if opts.Collection != "" {
		d.What = opts.Collection
	}
	if res.Rate > 0 {
		d.Achieved = math.Round(res.Kept*10) / 10
	}
	for _, k := range res.ByKind {
		d.ErrorsByKind = append(d.ErrorsByKind, benchKind{Kind: k.Kind, Count: k.Count, Example: red.Clean(k.Example)})
	}
	for _, s := range res.Steps {
		d.Steps = append(d.Steps, benchStep{Name: s.Name, Calls: s.Latency.Count, Errors: s.Errors, LatencyMS: latencyMS(s.Latency)})
	}
	if res.Aborted != nil {
		d.Aborted = red.Clean(res.Aborted.Error())
	}
	d.OK = res.Aborted == nil && !res.Interrupted && res.Completed > 0 && res.ErrorRate() <= opts.MaxErrors
	return d
}

// printBench prints the report for a person.
func printBench(ios *IOStreams, d benchDoc, perStep bool) {
	out := ios.Out
	conn := "one connection"
	if d.Connections == connectionsPerWorker {
		conn = "a connection each"
	}
	fmt.Fprintf(out, "%s: %d workers on %s", sanitize(d.What, false), d.Workers, conn)
	if d.Rate > 0 {
		fmt.Fprintf(out, ", at %s/s", rate(d.Rate))
	}
	fmt.Fprintln(out)
	unit := "calls"
	if perStep {
		unit = "iterations"
	}
	fmt.Fprintf(out, "  %s %s in %s: %s calls/s\n", count(d.Completed), unit, time.Duration(d.ElapsedMS*1e6).Round(time.Millisecond), rate(d.CallsPerSecond))
	if d.Interrupted {
		fmt.Fprintln(out, "  interrupted: what follows is what ran until then")
	}
	if d.Started > d.Completed {
		fmt.Fprintf(out, "  %s cut off by the end of the run (not counted)\n", count(d.Started-d.Completed))
	}
	if d.Rate > 0 {
		fmt.Fprintf(out, "  rate     asked %s/s, kept %s/s", rate(d.Rate), rate(d.Achieved))
		if d.Late > 0 {
			fmt.Fprintf(out, ", %s late (latency counts the wait)", count(d.Late))
		}
		fmt.Fprintln(out)
		if d.Unstarted > 0 {
			fmt.Fprintf(out, "  rate not kept: %s scheduled calls not started when -d ended (more -c, or the server is too slow for this rate)\n", count(d.Unstarted))
		}
	}
	fmt.Fprintf(out, "  latency  %s\n", latencyLine(d.LatencyMS))
	fmt.Fprintf(out, "  errors   %s (%s)\n", count(d.Errors), pct(d.ErrorRate))
	for _, k := range d.ErrorsByKind {
		fmt.Fprintf(out, "    %-16s %8s  %s\n", sanitize(k.Kind, false), count(k.Count), oneLine(k.Example.String()))
	}
	if d.Notifications > 0 {
		fmt.Fprintf(out, "  notifications received: %s\n", count(d.Notifications))
	}
	if perStep {
		fmt.Fprintln(out, "  by step")
		w := 4
		for _, s := range d.Steps {
			w = max(w, len([]rune(s.Name)))
		}
		w = min(w, 22)
		f := func(v float64) string { return ms(time.Duration(v * 1e6)) }
		for _, s := range d.Steps {
			name := sanitize(clipRunes(s.Name, w), false)
			if s.Calls == 0 {
				fmt.Fprintf(out, "    %-*s not run: an earlier step failed every time\n", w, name)
				continue
			}
			fmt.Fprintf(out, "    %-*s %7s calls %5s err  p50 %s p99 %s max %s\n", w, name, count(s.Calls), count(s.Errors), f(s.LatencyMS.P50), f(s.LatencyMS.P99), f(s.LatencyMS.Max))
		}
	}
}

func latencyLine(l benchLatency) string {
	f := func(v float64) string { return ms(time.Duration(v * 1e6)) }
	return fmt.Sprintf("min %s p50 %s p90 %s p99 %s p99.9 %s max %s", f(l.Min), f(l.P50), f(l.P90), f(l.P99), f(l.P999), f(l.Max))
}

// ms prints a latency in milliseconds, with the digits it deserves.
func ms(d time.Duration) string {
	v := float64(d) / 1e6
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0fms", v)
	case v >= 10:
		return fmt.Sprintf("%.1fms", v)
	}
	return fmt.Sprintf("%.2fms", v)
}

func rate(v float64) string {
	if v >= 100 {
		return count(int64(math.Round(v)))
	}
	return fmt.Sprintf("%.1f", v)
}

// count prints n with thousands separators.
func count(n int64) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return s
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func pct(v float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", v*100), "0"), ".") + "%"
}

func clipRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// sayWarnings says each kind of warning once, with its count.
func (b *benchHeard) sayWarnings(ios *IOStreams, red *record.Redactor) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, k := range b.order {
		n := b.warnings[k]
		if n == 1 {
			fmt.Fprintf(ios.ErrOut, "warning: %s\n", red.Clean(k))
		} else {
			fmt.Fprintf(ios.ErrOut, "warning (%s times): %s\n", count(n), red.Clean(k))
		}
	}
}
