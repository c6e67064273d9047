// Package load is the load generator of `mcpi bench`: workers that run an
// iteration (one tool call, or a collection's steps in order) again and
// again, either as fast as they go (a closed loop) or at a constant arrival
// rate, and the fixed-memory latency histograms and error counts they
// report.
//
// At a constant rate every iteration has an intended start, and its latency
// is measured from it, not from when a worker was free to start it: a
// server that stalls makes the iterations scheduled during the stall late,
// and their latency says so (the coordinated omission that wrk2 and vegeta
// correct). Time comes from a Clock, so that tests drive it.
//
// Memory does not grow with the run: one HDR histogram per step (and one
// for whole iterations) of fixed size, and error counts by kind, at most
// MaxKinds of them.
package load

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/mcpi-dev/mcpi/internal/bounds"
)

// Clock is time as the generator sees it.
type Clock interface {
	Now() time.Time
	// SleepUntil waits until t, or until ctx ends; it reports whether t
	// was reached.
	SleepUntil(ctx context.Context, t time.Time) bool
}

// RealClock is the machine's clock.
type RealClock struct{}

// epoch anchors RealClock's readings.
var epoch = time.Now()

// Now is the time: epoch and the monotonic time since, which is one
// reading of the machine's clock where time.Now makes two (the wall
// clock's too), and does not step when the wall clock is set.
func (RealClock) Now() time.Time { return epoch.Add(time.Since(epoch)) }

// SleepUntil waits until t or ctx's end.
func (RealClock) SleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	return bounds.Sleep(ctx, d)
}

// Kind is the class of a failed step.
type Kind string

// The kinds of failure.
const (
	// RPC: the server answered with a JSON-RPC error (Outcome.Code).
	RPC Kind = "jsonrpc"
	// ToolError: a tool's result had isError.
	ToolError Kind = "isError"
	// Timeout: no answer within the request's clock.
	Timeout Kind = "timeout"
	// Transport: the connection failed (the server went away, a write
	// failed, an HTTP error).
	Transport Kind = "transport"
	// Expectation: a collection step's expectation did not hold.
	Expectation Kind = "expectation"
	// Invalid: the server answered with a result that is not what the
	// request asks for (a tool call's result that is no CallToolResult).
	Invalid Kind = "invalid result"
)

// Outcome is what one step came to. The zero value is a success.
type Outcome struct {
	Kind Kind
	// Code is the JSON-RPC error's code, for RPC.
	Code int
	// Message says what happened, for the report's first example of each
	// kind (clipped there).
	Message string
	// Fatal, when set, ends the run: the connection is gone, and every
	// later call would fail at once. The run's Result says why it ended.
	Fatal error
}

// OK reports whether the step succeeded.
func (o Outcome) OK() bool { return o.Kind == "" }

// key is the outcome's row in the error table.
func (o Outcome) key() string {
	if o.Kind == RPC {
		return fmt.Sprintf("%s %d", RPC, o.Code)
	}
	return string(o.Kind)
}

// Step is one timed operation of an iteration. Do runs it for a worker
// (0 ≤ worker < Workers); a step that fails ends its iteration, the steps
// after it are not run (they may need what it would have captured).
type Step struct {
	Name string
	Do   func(ctx context.Context, worker int) Outcome
}

// Config says how much load, how fast.
type Config struct {
	// Workers run iterations concurrently (at least 1).
	Workers int
	// Count is how many iterations to start; 0: as many as Duration allows.
	Count int64
	// Duration is how long iterations are started for; 0: until Count.
	// A run needs Count or Duration.
	Duration time.Duration
	// Rate is the iterations started per second, evenly spaced; 0: each
	// worker starts its next iteration when its last ends (a closed loop).
	Rate float64
	// Clock is time; nil is the machine's.
	Clock Clock
	// Progress, when set, is called with a snapshot every ProgressEvery
	// (default 1 s) while the run lasts, from a goroutine of its own.
	Progress      func(Snapshot)
	ProgressEvery time.Duration
}

// MaxKinds bounds the rows of the error table: kinds past it (a server
// that answers with a new JSON-RPC code each time) count in one row.
const MaxKinds = 32

// otherKind is the row of the kinds past MaxKinds.
const otherKind = "other"

// Latency range of the histograms: 1 µs to 1 hour, 3 significant digits.
const (
	lowest  = 1
	highest = int64(time.Hour / time.Microsecond)
	digits  = 3
)

// histogram is an HDR histogram in microseconds, safe for concurrent use.
type histogram struct {
	mu sync.Mutex
	h  *hdr.Histogram
}

func newHistogram() *histogram {
	return &histogram{h: hdr.New(lowest, highest, digits)}
}

func (h *histogram) record(d time.Duration) {
	us := d.Microseconds()
	if us < lowest {
		us = lowest
	}
	if us > highest {
		us = highest
	}
	h.mu.Lock()
	_ = h.h.RecordValue(us) // in range: clamped above
	h.mu.Unlock()
}

func (h *histogram) latency() Latency {
	h.mu.Lock()
	defer h.mu.Unlock()
	return latencyOf(h.h)
}

// Latency is a distribution's summary.
type Latency struct {
	Count                    int64
	Min, Mean, P50, P90, P99 time.Duration
	P999, Max                time.Duration
}

func latencyOf(h *hdr.Histogram) Latency {
	if h.TotalCount() == 0 {
		return Latency{}
	}
	us := func(v int64) time.Duration { return time.Duration(v) * time.Microsecond }
	return Latency{
		Count: h.TotalCount(),
		Min:   us(h.Min()),
		Mean:  time.Duration(h.Mean() * float64(time.Microsecond)),
		P50:   us(h.ValueAtQuantile(50)),
		P90:   us(h.ValueAtQuantile(90)),
		P99:   us(h.ValueAtQuantile(99)),
		P999:  us(h.ValueAtQuantile(99.9)),
		Max:   us(h.Max()),
	}
}

// errorTable counts failures by kind, at most MaxKinds rows.
type errorTable struct {
	mu    sync.Mutex
	rows  map[string]*ErrorCount
	total int64
}

// ErrorCount is one row of the error table.
type ErrorCount struct {
	Kind  string
	Count int64
	// Example is the first failure's message of this kind, clipped.
	Example string
}

func (t *errorTable) add(o Outcome) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.total++
	k := o.key()
	r, ok := t.rows[k]
	if !ok {
		if len(t.rows) >= MaxKinds {
			k = otherKind
			r = t.rows[k]
		}
		if r == nil {
			r = &ErrorCount{Kind: k, Example: bounds.Clip(o.Message)}
			t.rows[k] = r
		}
	}
	r.Count++
}

func (t *errorTable) list() []ErrorCount {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]ErrorCount, 0, len(t.rows))
	for _, r := range t.rows {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Kind < out[j].Kind
	})
	return out
}

// StepResult is one step's part of the result.
type StepResult struct {
	Name    string
	Errors  int64
	Latency Latency
}

// Result is what a run measured.
type Result struct {
	// Started and Completed count iterations: Completed ended (in success
	// or failure); Started-Completed were cut off by an interrupt.
	Started, Completed int64
	// Failed counts iterations with a failed step.
	Failed int64
	// Calls counts the steps run; Errors the steps that failed.
	Calls, Errors int64
	ByKind        []ErrorCount
	Elapsed       time.Duration
	// Throughput is the steps completed per second of Elapsed.
	Throughput float64
	// Latency is the whole iteration's, from its intended start (at a
	// constant rate) or its start.
	Latency Latency
	Steps   []StepResult
	// Rate is the rate asked for (0: closed loop); Late counts iterations
	// that began more than one interval after their intended start (the
	// workers could not keep the rate: their latency includes the wait).
	Rate float64
	Late int64
	// Unstarted counts the calls of a --rate schedule that were never
	// started: the duration was over before a worker was free for them.
	Unstarted int64
	// Kept is the rate the run kept: the iterations started over the time
	// from the run's start to the last one's actual start, plus one
	// interval (the calls' own latency does not count against it).
	Kept float64
	// Interrupted says the run was ended early (its context); Aborted is
	// why a step ended it (Outcome.Fatal).
	Interrupted bool
	Aborted     error
}

// ErrorRate is the share of failed iterations, 0 to 1.
func (r *Result) ErrorRate() float64 {
	if r.Completed == 0 {
		return 0
	}
	return float64(r.Failed) / float64(r.Completed)
}

// Snapshot is the progress of a run so far.
type Snapshot struct {
	Elapsed   time.Duration
	Completed int64
	Errors    int64
	// PerSecond is the iterations completed per second, over the run.
	PerSecond float64
	P50, P99  time.Duration
}

// ErrNoBound is returned for a run with neither Count nor Duration.
var ErrNoBound = errors.New("a run needs a count or a duration")

// run is one Run's state.
type run struct {
	cfg      Config
	steps    []Step
	clock    Clock
	start    time.Time
	interval time.Duration

	next      atomic.Int64
	started   atomic.Int64
	completed atomic.Int64
	failed    atomic.Int64
	calls     atomic.Int64
	late      atomic.Int64
	lastBegin atomic.Int64 // the latest actual start, ns after start
	unstarted atomic.Int64

	cancel  context.CancelCauseFunc
	aborted atomic.Pointer[error]

	total   *histogram
	perStep []*histogram
	stepErr []atomic.Int64
	errs    errorTable
}

// Run runs the load until Count iterations have started (or Duration has
// passed) and every started iteration has ended, or ctx ends. The steps'
// own clocks bound each call: Run adds none.
func Run(ctx context.Context, cfg Config, steps []Step) (*Result, error) {
	if cfg.Count <= 0 && cfg.Duration <= 0 {
		return nil, ErrNoBound
	}
	if len(steps) == 0 {
		return nil, errors.New("nothing to run: no step")
	}
	if cfg.Workers < 1 {
		cfg.Workers = 1
	}
	r := &run{cfg: cfg, steps: steps, clock: cfg.Clock, total: newHistogram(), errs: errorTable{rows: map[string]*ErrorCount{}}}
	if r.clock == nil {
		r.clock = RealClock{}
	}
	if cfg.Rate > 0 {
		r.interval = time.Duration(math.Round(float64(time.Second) / cfg.Rate))
		if r.interval <= 0 {
			r.interval = 1
		}
	}
	r.perStep = make([]*histogram, len(steps))
	for i := range steps {
		r.perStep[i] = newHistogram()
	}
	r.stepErr = make([]atomic.Int64, len(steps))
	r.start = r.clock.Now()
	parent := ctx
	ctx, r.cancel = context.WithCancelCause(ctx)
	defer r.cancel(nil)

	var progressDone chan struct{}
	stopProgress := func() {}
	if cfg.Progress != nil {
		pctx, cancel := context.WithCancel(ctx)
		progressDone = make(chan struct{})
		go r.progress(pctx, progressDone)
		stopProgress = func() { cancel(); <-progressDone }
	}
	var wg sync.WaitGroup
	for w := range cfg.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.work(ctx, w)
		}()
	}
	wg.Wait()
	stopProgress()
	return r.result(parent), nil
}

// work runs iterations until there are no more to start.
func (r *run) work(ctx context.Context, worker int) {
	for ctx.Err() == nil {
		i := r.next.Add(1) - 1
		if r.cfg.Count > 0 && i >= r.cfg.Count {
			return
		}
		begin := r.clock.Now()
		if r.interval > 0 {
			intended := r.start.Add(time.Duration(i) * r.interval)
			if r.cfg.Duration > 0 && intended.Sub(r.start) >= r.cfg.Duration {
				return
			}
			if r.cfg.Duration > 0 && begin.Sub(r.start) >= r.cfg.Duration {
				// The run's time is up with calls of its schedule not
				// started: the workers could not keep the rate. They are
				// counted, not started late for ever.
				r.unstarted.Add(1)
				continue
			}
			if !r.clock.SleepUntil(ctx, intended) {
				return
			}
			now := r.clock.Now()
			if now.Sub(intended) > r.interval {
				r.late.Add(1)
			}
			for at := int64(now.Sub(r.start)); ; {
				old := r.lastBegin.Load()
				if at <= old || r.lastBegin.CompareAndSwap(old, at) {
					break
				}
			}
			begin = intended
		} else if r.cfg.Duration > 0 && begin.Sub(r.start) >= r.cfg.Duration {
			return
		}
		r.iterate(ctx, worker, begin)
	}
}

// iterate runs the steps in order, from begin (the intended start).
func (r *run) iterate(ctx context.Context, worker int, begin time.Time) {
	r.started.Add(1)
	from := begin
	ok := true
	for s, step := range r.steps {
		out := step.Do(ctx, worker)
		if ctx.Err() != nil && !out.OK() {
			// Cut off by the interrupt: not the server's failure.
			return
		}
		now := r.clock.Now()
		r.calls.Add(1)
		r.perStep[s].record(now.Sub(from))
		from = now
		if !out.OK() {
			r.stepErr[s].Add(1)
			r.errs.add(out)
			ok = false
			if out.Fatal != nil && r.aborted.CompareAndSwap(nil, &out.Fatal) {
				r.cancel(out.Fatal)
			}
			break
		}
	}
	r.total.record(from.Sub(begin)) // from: when the last step ended
	r.completed.Add(1)
	if !ok {
		r.failed.Add(1)
	}
}

// progress calls Config.Progress every ProgressEvery until ctx ends.
func (r *run) progress(ctx context.Context, done chan struct{}) {
	defer close(done)
	every := r.cfg.ProgressEvery
	if every <= 0 {
		every = time.Second
	}
	// Ticks are counted from the run's start; one missed (a slow
	// terminal) is skipped, not made up for.
	next := r.start.Add(every)
	for r.clock.SleepUntil(ctx, next) {
		r.cfg.Progress(r.snapshot())
		for now := r.clock.Now(); !next.After(now); {
			next = next.Add(every)
		}
	}
}

func (r *run) snapshot() Snapshot {
	el := r.clock.Now().Sub(r.start)
	l := r.total.latency()
	s := Snapshot{Elapsed: el, Completed: r.completed.Load(), Errors: r.errs.count(), P50: l.P50, P99: l.P99}
	if el > 0 {
		s.PerSecond = float64(s.Completed) / el.Seconds()
	}
	return s
}

func (t *errorTable) count() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.total
}

// result is the run's result; ctx is the caller's (its end is an
// interrupt, the run's own cancel an abort).
func (r *run) result(ctx context.Context) *Result {
	res := &Result{
		Completed:   r.completed.Load(),
		Failed:      r.failed.Load(),
		Calls:       r.calls.Load(),
		Errors:      r.errs.count(),
		ByKind:      r.errs.list(),
		Elapsed:     r.clock.Now().Sub(r.start),
		Latency:     r.total.latency(),
		Rate:        r.cfg.Rate,
		Late:        r.late.Load(),
		Unstarted:   r.unstarted.Load(),
		Interrupted: ctx.Err() != nil,
	}
	if a := r.aborted.Load(); a != nil {
		res.Aborted = *a
	}
	res.Started = r.started.Load()
	if res.Elapsed > 0 {
		res.Throughput = float64(res.Calls) / res.Elapsed.Seconds()
	}
	if r.interval > 0 && res.Started > 0 {
		res.Kept = float64(res.Started) / (time.Duration(r.lastBegin.Load()) + r.interval).Seconds()
	}
	for i, s := range r.steps {
		res.Steps = append(res.Steps, StepResult{Name: s.Name, Errors: r.stepErr[i].Load(), Latency: r.perStep[i].latency()})
	}
	return res
}
