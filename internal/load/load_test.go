package load

import (
	"context"
	"fmt"
	"math"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeClock is time that moves only when told: a sleep jumps to its end,
// a step advances it by what it "took". With one worker a run is exact.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Unix(1_700_000_000, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) SleepUntil(ctx context.Context, t time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.now) {
		c.now = t
	}
	return ctx.Err() == nil
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// TestCounts: n iterations sent, n answers counted, each failure in its
// kind, the JSON-RPC errors by code, the first message of each kept.
func TestCounts(t *testing.T) {
	var sent atomic.Int64
	step := Step{Name: "call", Do: func(ctx context.Context, w int) Outcome {
		i := sent.Add(1)
		switch {
		case i%10 == 0:
			return Outcome{Kind: RPC, Code: -32602, Message: fmt.Sprintf("bad params %d", i)}
		case i%25 == 1:
			return Outcome{Kind: ToolError, Message: "tool failed"}
		case i%100 == 7:
			return Outcome{Kind: Timeout}
		}
		return Outcome{}
	}}
	res, err := Run(context.Background(), Config{Workers: 8, Count: 1000}, []Step{step})
	if err != nil {
		t.Fatal(err)
	}
	if sent.Load() != 1000 || res.Started != 1000 || res.Completed != 1000 || res.Calls != 1000 {
		t.Fatalf("sent %d, started %d, completed %d, calls %d; want 1000 each", sent.Load(), res.Started, res.Completed, res.Calls)
	}
	want := map[string]int64{"jsonrpc -32602": 100, "isError": 40, "timeout": 10}
	got := map[string]int64{}
	for _, k := range res.ByKind {
		got[k.Kind] = k.Count
		if k.Example == "" && k.Kind != "timeout" {
			t.Errorf("%s has no example", k.Kind)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("errors by kind %v, want %v", got, want)
	}
	if res.Errors != 150 || res.Failed != 150 || res.Steps[0].Errors != 150 {
		t.Errorf("errors %d, failed %d, step errors %d; want 150", res.Errors, res.Failed, res.Steps[0].Errors)
	}
	if res.Latency.Count != 1000 {
		t.Errorf("latency counted %d, want 1000", res.Latency.Count)
	}
	if r := res.ErrorRate(); r != 0.15 {
		t.Errorf("error rate %v, want 0.15", r)
	}
}

// TestKindsAreBounded: a server that answers each call with a new code
// fills MaxKinds rows and the rest count as one.
func TestKindsAreBounded(t *testing.T) {
	var n atomic.Int64
	step := Step{Name: "call", Do: func(ctx context.Context, w int) Outcome {
		return Outcome{Kind: RPC, Code: int(n.Add(1))}
	}}
	res, _ := Run(context.Background(), Config{Workers: 1, Count: 500}, []Step{step})
	if len(res.ByKind) != MaxKinds+1 {
		t.Fatalf("%d rows, want %d", len(res.ByKind), MaxKinds+1)
	}
	if res.ByKind[0].Kind != otherKind || res.ByKind[0].Count != 500-MaxKinds {
		t.Errorf("first row %+v, want %s with %d", res.ByKind[0], otherKind, 500-MaxKinds)
	}
}

// TestStepsInOrder: a collection's steps run in order, per-step latency is
// each step's, the iteration's is the sum, and a failed step ends its
// iteration.
func TestStepsInOrder(t *testing.T) {
	clock := newFakeClock()
	var i atomic.Int64
	steps := []Step{
		{Name: "a", Do: func(context.Context, int) Outcome { clock.advance(2 * time.Millisecond); return Outcome{} }},
		{Name: "b", Do: func(context.Context, int) Outcome {
			clock.advance(5 * time.Millisecond)
			if i.Add(1)%4 == 0 {
				return Outcome{Kind: Expectation, Message: "text: expected"}
			}
			return Outcome{}
		}},
		{Name: "c", Do: func(context.Context, int) Outcome { clock.advance(1 * time.Millisecond); return Outcome{} }},
	}
	res, err := Run(context.Background(), Config{Workers: 1, Count: 100, Clock: clock}, steps)
	if err != nil {
		t.Fatal(err)
	}
	if res.Steps[0].Latency.Count != 100 || res.Steps[1].Latency.Count != 100 || res.Steps[2].Latency.Count != 75 {
		t.Fatalf("step counts %d %d %d, want 100 100 75", res.Steps[0].Latency.Count, res.Steps[1].Latency.Count, res.Steps[2].Latency.Count)
	}
	if res.Steps[1].Errors != 25 || res.Failed != 25 || res.Calls != 275 {
		t.Errorf("step b errors %d, failed %d, calls %d; want 25, 25, 275", res.Steps[1].Errors, res.Failed, res.Calls)
	}
	if p := res.Steps[1].Latency.P50; !near(p, 5*time.Millisecond) {
		t.Errorf("step b p50 %v, want 5ms", p)
	}
	if p := res.Latency.Max; !near(p, 8*time.Millisecond) {
		t.Errorf("iteration max %v, want 8ms", p)
	}
	if res.Elapsed != 100*7*time.Millisecond+75*time.Millisecond {
		t.Errorf("elapsed %v", res.Elapsed)
	}
}

// TestConstantRateCountsTheStall: at 100 calls a second a server answers
// in 5 ms, but once takes a whole second. The calls scheduled during the
// stall are late, and their latency is measured from when they should
// have started: the distribution shows the stall, as a closed loop (which
// would have waited politely) does not.
func TestConstantRateCountsTheStall(t *testing.T) {
	const n = 1000
	run := func(rate float64) (*Result, []time.Duration) {
		clock := newFakeClock()
		start := clock.Now()
		interval := 10 * time.Millisecond
		var k int
		var want []time.Duration
		step := Step{Name: "call", Do: func(context.Context, int) Outcome {
			d := 5 * time.Millisecond
			if k == 100 {
				d = time.Second
			}
			intended := start.Add(time.Duration(k) * interval)
			if rate == 0 {
				intended = clock.Now()
			}
			clock.advance(d)
			want = append(want, clock.Now().Sub(intended))
			k++
			return Outcome{}
		}}
		res, err := Run(context.Background(), Config{Workers: 1, Count: n, Rate: rate, Clock: clock}, []Step{step})
		if err != nil {
			t.Fatal(err)
		}
		return res, want
	}
	res, want := run(100)
	sort.Slice(want, func(i, j int) bool { return want[i] < want[j] })
	exact := func(q float64) time.Duration { return want[int(math.Ceil(q*float64(len(want))))-1] }
	for _, c := range []struct {
		name      string
		got, want time.Duration
	}{
		{"p50", res.Latency.P50, exact(0.50)},
		{"p90", res.Latency.P90, exact(0.90)},
		{"p99", res.Latency.P99, exact(0.99)},
		{"max", res.Latency.Max, want[len(want)-1]},
	} {
		if !near(c.got, c.want) {
			t.Errorf("%s = %v, exact %v", c.name, c.got, c.want)
		}
	}
	// After the stall the calls catch up 5 ms a call: 199 of them are late
	// by more than an interval (a second's backlog, less 10 ms each).
	if res.Late < 150 || res.Late > 200 {
		t.Errorf("late %d, want the ~190 scheduled during the stall", res.Late)
	}
	if res.Latency.P90 < 100*time.Millisecond {
		t.Errorf("p90 %v: the stall is hidden", res.Latency.P90)
	}
	if res.Elapsed < time.Duration(n-1)*10*time.Millisecond {
		t.Errorf("elapsed %v: the rate was not kept", res.Elapsed)
	}
	closed, _ := run(0)
	if !near(closed.Latency.P90, 5*time.Millisecond) {
		t.Errorf("closed loop p90 %v, want 5ms: only the stalled call is slow", closed.Latency.P90)
	}
	if closed.Late != 0 {
		t.Errorf("a closed loop counts %d late", closed.Late)
	}
}

// TestDuration: at a rate, a duration starts exactly rate×duration
// iterations; in a closed loop, none starts after it.
func TestDuration(t *testing.T) {
	clock := newFakeClock()
	step := Step{Name: "call", Do: func(context.Context, int) Outcome { clock.advance(time.Millisecond); return Outcome{} }}
	res, err := Run(context.Background(), Config{Workers: 4, Duration: 2 * time.Second, Rate: 50, Clock: clock}, []Step{step})
	if err != nil {
		t.Fatal(err)
	}
	if res.Completed != 100 {
		t.Errorf("at 50/s for 2s: %d iterations, want 100", res.Completed)
	}
	clock = newFakeClock()
	step = Step{Name: "call", Do: func(context.Context, int) Outcome { clock.advance(10 * time.Millisecond); return Outcome{} }}
	res, _ = Run(context.Background(), Config{Workers: 1, Duration: time.Second, Clock: clock}, []Step{step})
	if res.Completed != 100 {
		t.Errorf("closed loop of 10 ms calls for 1s: %d iterations, want 100", res.Completed)
	}
}

// TestInterrupt: an interrupt ends the run; the iterations it cut off are
// started, not completed, and count as no error.
func TestInterrupt(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var n atomic.Int64
	step := Step{Name: "call", Do: func(ctx context.Context, w int) Outcome {
		if n.Add(1) == 50 {
			cancel()
		}
		if ctx.Err() != nil {
			return Outcome{Kind: Transport, Message: "context canceled"}
		}
		return Outcome{}
	}}
	res, err := Run(ctx, Config{Workers: 1, Count: 1000}, []Step{step})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted || res.Completed != 49 || res.Started != 50 || res.Errors != 0 {
		t.Errorf("interrupted %v, completed %d, started %d, errors %d; want true, 49, 50, 0", res.Interrupted, res.Completed, res.Started, res.Errors)
	}
}

// steppedClock is time that only the steps move: a sleep waits for them
// (the progress loop's sleeps do not move time for the calls).
type steppedClock struct {
	mu   sync.Mutex
	cond *sync.Cond
	now  time.Time
}

func newSteppedClock() *steppedClock {
	c := &steppedClock{now: time.Unix(1_700_000_000, 0)}
	c.cond = sync.NewCond(&c.mu)
	return c
}

func (c *steppedClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *steppedClock) SleepUntil(ctx context.Context, t time.Time) bool {
	stop := context.AfterFunc(ctx, func() {
		c.mu.Lock()
		c.cond.Broadcast()
		c.mu.Unlock()
	})
	defer stop()
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.now.Before(t) && ctx.Err() == nil {
		c.cond.Wait()
	}
	return ctx.Err() == nil
}

func (c *steppedClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.cond.Broadcast()
	c.mu.Unlock()
}

// TestProgress: progress is reported while the run lasts, with what
// completed so far.
func TestProgress(t *testing.T) {
	clock := newSteppedClock()
	var snaps []Snapshot
	var mu sync.Mutex
	reported := make(chan struct{})
	var once sync.Once
	var n int
	step := Step{Name: "call", Do: func(context.Context, int) Outcome {
		clock.advance(100 * time.Millisecond)
		if n++; n == 20 {
			// Two seconds in: the progress of the first was reported.
			<-reported
		}
		return Outcome{}
	}}
	cfg := Config{Workers: 1, Count: 50, Clock: clock, ProgressEvery: time.Second, Progress: func(s Snapshot) {
		mu.Lock()
		snaps = append(snaps, s)
		mu.Unlock()
		once.Do(func() { close(reported) })
	}}
	if _, err := Run(context.Background(), cfg, []Step{step}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(snaps) == 0 {
		t.Fatal("no snapshot in 5 s of calls")
	}
	for i, s := range snaps {
		if s.Completed == 0 || !near(s.P50, 100*time.Millisecond) || s.Elapsed < time.Duration(i+1)*time.Second {
			t.Errorf("snapshot %d: %+v", i, s)
		}
	}
}

// near: equal to three significant digits (the histograms' precision) and
// their unit, a microsecond.
func near(got, want time.Duration) bool {
	return (got - want).Abs() <= want/1000+time.Microsecond
}

func TestNoBound(t *testing.T) {
	if _, err := Run(context.Background(), Config{}, []Step{{Name: "x", Do: func(context.Context, int) Outcome { return Outcome{} }}}); err != ErrNoBound {
		t.Errorf("err %v, want ErrNoBound", err)
	}
}

// TestMemoryIsFlat: the histograms' size does not depend on how many
// values they hold.
func TestMemoryIsFlat(t *testing.T) {
	h := newHistogram()
	before := h.h.ByteSize()
	for i := range 1_000_000 {
		h.record(time.Duration(i%5000+1) * time.Millisecond)
	}
	h.record(10 * time.Hour) // past the range: clamped, counted
	if after := h.h.ByteSize(); after != before {
		t.Errorf("histogram grew from %d to %d bytes", before, after)
	}
	if l := h.latency(); l.Count != 1_000_001 || l.Max < 59*time.Minute {
		t.Errorf("count %d, max %v", l.Count, l.Max)
	}
}

// TestFatalEndsTheRun: a step whose connection is gone ends the run at
// once; it counts as one error, and the calls it cut off count as none.
func TestFatalEndsTheRun(t *testing.T) {
	gone := fmt.Errorf("the server exited")
	var n atomic.Int64
	step := Step{Name: "call", Do: func(ctx context.Context, w int) Outcome {
		if n.Add(1) >= 100 {
			return Outcome{Kind: Transport, Message: gone.Error(), Fatal: gone}
		}
		return Outcome{}
	}}
	res, err := Run(context.Background(), Config{Workers: 4, Count: 1_000_000}, []Step{step})
	if err != nil {
		t.Fatal(err)
	}
	if res.Aborted != gone || res.Interrupted {
		t.Fatalf("aborted %v, interrupted %v", res.Aborted, res.Interrupted)
	}
	if res.Completed > 110 || res.ByKind[0].Kind != "transport" || res.Errors < 1 || res.Errors > 4 {
		t.Errorf("completed %d, errors %d %+v", res.Completed, res.Errors, res.ByKind)
	}
}

// TestRateKeptIsTheSchedules: a run that keeps its schedule keeps its
// rate, however long the last calls take to answer.
func TestRateKeptIsTheSchedules(t *testing.T) {
	clock := newFakeClock()
	var n atomic.Int64
	step := Step{Name: "call", Do: func(context.Context, int) Outcome {
		if n.Add(1) == 100 {
			clock.advance(200 * time.Millisecond) // the last call is slow
		}
		return Outcome{}
	}}
	res, err := Run(context.Background(), Config{Workers: 1, Count: 100, Rate: 100, Clock: clock}, []Step{step})
	if err != nil {
		t.Fatal(err)
	}
	if res.Kept < 99.9 || res.Kept > 100.1 {
		t.Errorf("kept %.2f/s, want 100/s", res.Kept)
	}
	if res.Elapsed < 1100*time.Millisecond {
		t.Errorf("elapsed %v: the last call's time is not in it", res.Elapsed)
	}
}

// TestRateNotKeptEndsOnTime: at a rate the workers cannot keep, a run of
// a duration ends when the duration does; the calls of the schedule not
// started are counted, not started late.
func TestRateNotKeptEndsOnTime(t *testing.T) {
	clock := newFakeClock()
	step := Step{Name: "call", Do: func(context.Context, int) Outcome { clock.advance(10 * time.Millisecond); return Outcome{} }}
	// 1,000 a second for 1 s, one worker, 10 ms a call: 100 fit.
	res, err := Run(context.Background(), Config{Workers: 1, Duration: time.Second, Rate: 1000, Clock: clock}, []Step{step})
	if err != nil {
		t.Fatal(err)
	}
	if res.Elapsed > time.Second+10*time.Millisecond || res.Started != 100 || res.Unstarted != 900 {
		t.Errorf("elapsed %v, started %d, unstarted %d; want 1s, 100, 900", res.Elapsed, res.Started, res.Unstarted)
	}
}
