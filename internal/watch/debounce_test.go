package watch

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"
)

func TestDebounceOneChangePerQuietPeriod(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		in := make(chan string, 1)
		out := make(chan Change, 1)
		go Debounce(t.Context(), in, out, Quiet)
		start := time.Now()
		// One file written a thousand times a second for one second.
		writeEvery(in, "/src/main.go", 1000, time.Millisecond)
		synctest.Wait()
		if len(out) != 0 {
			t.Fatalf("a change before the quiet period: %+v", <-out)
		}
		c := <-out
		at := time.Since(start)
		if c.Count != 1000 || len(c.Paths) != 1 || c.Paths[0] != "/src/main.go" {
			t.Errorf("change = %+v, want one path and 1000 events", c)
		}
		if at < time.Second+Quiet-2*time.Millisecond || at > time.Second+Quiet {
			t.Errorf("the change came at %v, want a quiet period after the last write", at)
		}
		pass(10 * Quiet)
		if len(out) != 0 {
			t.Errorf("a second change for one burst: %+v", <-out)
		}
	})
}

func TestDebounceNeverQuiet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		in := make(chan string, 1)
		out := make(chan Change, 1)
		go func() { defer close(out); Debounce(ctx, in, out, Quiet) }()
		n := 0
		total := 0
		done := make(chan struct{})
		go func() {
			defer close(done)
			for c := range out {
				n++
				total += c.Count
			}
		}()
		// Written without pause for 10 s: reported every
		// maxWaitFactor quiet periods, not never and not a flood.
		writeEvery(in, "/src/a.go", 10_000, time.Millisecond)
		pass(Quiet)
		cancel()
		<-done
		max := int(10*time.Second/(maxWaitFactor*Quiet)) + 2
		if n < 2 || n > max {
			t.Errorf("%d changes in 10 s of writes, want 2..%d", n, max)
		}
		if total != 10_000 {
			t.Errorf("the changes count %d events, want 10000", total)
		}
	})
}

func TestDebounceSlowReaderBoundsWhatIsHeld(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		in := make(chan string, 1)
		out := make(chan Change, 1)
		go Debounce(ctx, in, out, Quiet)
		// Nobody reads for a while: bursts of many paths merge into what
		// waits, which names MaxPaths of them.
		for burst := range 5 {
			for i := range 100 {
				in <- fmt.Sprintf("/src/%d/%d.go", burst, i)
			}
			pass(2 * Quiet)
		}
		synctest.Wait()
		var cs []Change
		for len(out) > 0 || len(cs) == 0 {
			cs = append(cs, <-out)
			synctest.Wait()
		}
		total := 0
		for _, c := range cs {
			total += c.Count
			if len(c.Paths) > MaxPaths {
				t.Errorf("a change names %d paths, at most %d", len(c.Paths), MaxPaths)
			}
		}
		if total != 500 || len(cs) > 2 {
			t.Errorf("%d changes counting %d events, want at most 2 counting 500", len(cs), total)
		}
	})
}

func TestDebounceFlushesOnClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		in := make(chan string, 1)
		out := make(chan Change, 1)
		go Debounce(t.Context(), in, out, Quiet)
		in <- "a"
		in <- "b"
		close(in)
		c := <-out
		if c.Count != 2 || len(c.Paths) != 2 {
			t.Errorf("change = %+v", c)
		}
	})
}

// In a synctest bubble, time passes only when every goroutine of the
// bubble waits: these move the fake clock on, and take no time.

// writeEvery writes path n times, every d.
func writeEvery(in chan<- string, path string, n int, d time.Duration) {
	for range n {
		in <- path
		time.Sleep(d)
	}
}

// pass lets d go by, and then the debouncer do what it does at that time.
func pass(d time.Duration) {
	time.Sleep(d)
	synctest.Wait()
}
