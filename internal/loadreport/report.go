package loadreport

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/mcpi-dev/mcpi/internal/load"
	"github.com/mcpi-dev/mcpi/internal/record"
	"github.com/mcpi-dev/mcpi/internal/safetext"
)

// PerWorker is the Connections of a run that gives each worker a
// connection of its own (--connections per-worker).
const PerWorker = "per-worker"

// Latency is a distribution in milliseconds, for --json.
type Latency struct {
	Min  float64 `json:"min"`
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
}

// LatencyOf is l in milliseconds.
func LatencyOf(l load.Latency) Latency {
	f := func(d time.Duration) float64 { return math.Round(float64(d)/1e3) / 1e3 }
	return Latency{Min: f(l.Min), Mean: f(l.Mean), P50: f(l.P50), P90: f(l.P90), P99: f(l.P99), P999: f(l.P999), Max: f(l.Max)}
}

// Step is one step of a collection's iterations.
type Step struct {
	Name      string  `json:"name"`
	Calls     int64   `json:"calls"`
	Errors    int64   `json:"errors"`
	LatencyMS Latency `json:"latencyMs"`
}

// Kind is one kind of error, with an example.
type Kind struct {
	Kind    string       `json:"kind"`
	Count   int64        `json:"count"`
	Example record.Clean `json:"example,omitzero"`
}

// Doc is the report: --json prints it, the text is drawn from it.
type Doc struct {
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
	ErrorsByKind   []Kind       `json:"errorsByKind"`
	ElapsedMS      float64      `json:"elapsedMs"`
	CallsPerSecond float64      `json:"callsPerSecond"`
	Achieved       float64      `json:"achievedRate,omitempty"`
	Late           int64        `json:"late,omitempty"`
	Unstarted      int64        `json:"unstarted,omitempty"`
	LatencyMS      Latency      `json:"latencyMs"`
	Steps          []Step       `json:"steps"`
	Notifications  int64        `json:"notifications"`
	Interrupted    bool         `json:"interrupted,omitempty"`
	Aborted        record.Clean `json:"aborted,omitzero"`
}

// Run is what the run was asked: what it called, by how many workers on
// which connections, at what rate, with how many errors allowed.
type Run struct {
	What        string
	Workers     int
	Connections string
	Rate        float64
	MaxErrors   float64
}

// New is the report of res under run, with the notifications heard; what
// the server or the run said crosses red.
func New(run Run, res *load.Result, notifications int64, red *record.Redactor) Doc {
	d := Doc{
		What: run.What, Workers: run.Workers, Connections: run.Connections, Rate: run.Rate,
		Started: res.Started, Completed: res.Completed, Failed: res.Failed, Calls: res.Calls, Errors: res.Errors,
		ErrorRate: res.ErrorRate(), MaxErrors: run.MaxErrors, ErrorsByKind: []Kind{},
		ElapsedMS:      math.Round(float64(res.Elapsed)/1e3) / 1e3,
		CallsPerSecond: math.Round(res.Throughput*10) / 10,
		Late:           res.Late, Unstarted: res.Unstarted, LatencyMS: LatencyOf(res.Latency),
		Notifications: notifications, Interrupted: res.Interrupted,
	}
	if res.Rate > 0 {
		d.Achieved = math.Round(res.Kept*10) / 10
	}
	for _, k := range res.ByKind {
		d.ErrorsByKind = append(d.ErrorsByKind, Kind{Kind: k.Kind, Count: k.Count, Example: red.Clean(k.Example)})
	}
	for _, s := range res.Steps {
		d.Steps = append(d.Steps, Step{Name: s.Name, Calls: s.Latency.Count, Errors: s.Errors, LatencyMS: LatencyOf(s.Latency)})
	}
	if res.Aborted != nil {
		d.Aborted = red.Clean(res.Aborted.Error())
	}
	d.OK = res.Aborted == nil && !res.Interrupted && res.Completed > 0 && res.ErrorRate() <= run.MaxErrors
	return d
}

// Print writes the report for a person; perStep adds a line per step.
func Print(out io.Writer, d Doc, perStep bool) {
	conn := "one connection"
	if d.Connections == PerWorker {
		conn = "a connection each"
	}
	fmt.Fprintf(out, "%s: %d workers on %s", safetext.Sanitize(d.What, false), d.Workers, conn)
	if d.Rate > 0 {
		fmt.Fprintf(out, ", at %s/s", Rate(d.Rate))
	}
	fmt.Fprintln(out)
	unit := "calls"
	if perStep {
		unit = "iterations"
	}
	fmt.Fprintf(out, "  %s %s in %s: %s calls/s\n", Count(d.Completed), unit, time.Duration(d.ElapsedMS*1e6).Round(time.Millisecond), Rate(d.CallsPerSecond))
	if d.Interrupted {
		fmt.Fprintln(out, "  interrupted: what follows is what ran until then")
	}
	if d.Started > d.Completed {
		fmt.Fprintf(out, "  %s cut off by the end of the run (not counted)\n", Count(d.Started-d.Completed))
	}
	if d.Rate > 0 {
		fmt.Fprintf(out, "  rate     asked %s/s, kept %s/s", Rate(d.Rate), Rate(d.Achieved))
		if d.Late > 0 {
			fmt.Fprintf(out, ", %s late (latency counts the wait)", Count(d.Late))
		}
		fmt.Fprintln(out)
		if d.Unstarted > 0 {
			fmt.Fprintf(out, "  rate not kept: %s scheduled calls not started when -d ended (more -c, or the server is too slow for this rate)\n", Count(d.Unstarted))
		}
	}
	fmt.Fprintf(out, "  latency  %s\n", latencyLine(d.LatencyMS))
	fmt.Fprintf(out, "  errors   %s (%s)\n", Count(d.Errors), Pct(d.ErrorRate))
	for _, k := range d.ErrorsByKind {
		fmt.Fprintf(out, "    %-16s %8s  %s\n", safetext.Sanitize(k.Kind, false), Count(k.Count), safetext.OneLine(k.Example.String()))
	}
	if d.Notifications > 0 {
		fmt.Fprintf(out, "  notifications received: %s\n", Count(d.Notifications))
	}
	if perStep {
		printSteps(out, d.Steps)
	}
}

// printSteps is the report's line per step.
func printSteps(out io.Writer, steps []Step) {
	fmt.Fprintln(out, "  by step")
	w := 4
	for _, s := range steps {
		w = max(w, len([]rune(s.Name)))
	}
	w = min(w, 22)
	f := func(v float64) string { return MS(time.Duration(v * 1e6)) }
	for _, s := range steps {
		name := safetext.Sanitize(clipRunes(s.Name, w), false)
		if s.Calls == 0 {
			fmt.Fprintf(out, "    %-*s not run: an earlier step failed every time\n", w, name)
			continue
		}
		fmt.Fprintf(out, "    %-*s %7s calls %5s err  p50 %s p99 %s max %s\n", w, name, Count(s.Calls), Count(s.Errors), f(s.LatencyMS.P50), f(s.LatencyMS.P99), f(s.LatencyMS.Max))
	}
}

func latencyLine(l Latency) string {
	f := func(v float64) string { return MS(time.Duration(v * 1e6)) }
	return fmt.Sprintf("min %s p50 %s p90 %s p99 %s p99.9 %s max %s", f(l.Min), f(l.P50), f(l.P90), f(l.P99), f(l.P999), f(l.Max))
}

// MS prints a latency in milliseconds, with the digits it deserves.
func MS(d time.Duration) string {
	v := float64(d) / 1e6
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0fms", v)
	case v >= 10:
		return fmt.Sprintf("%.1fms", v)
	}
	return fmt.Sprintf("%.2fms", v)
}

// Rate prints a rate: whole above 100, else with a tenth.
func Rate(v float64) string {
	if v >= 100 {
		return Count(int64(math.Round(v)))
	}
	return fmt.Sprintf("%.1f", v)
}

// Count prints n with thousands separators.
func Count(n int64) string {
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

// Pct prints a fraction as a percentage, without trailing zeros.
func Pct(v float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", v*100), "0"), ".") + "%"
}

func clipRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
