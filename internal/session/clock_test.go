package session

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpi-dev/mcpi/internal/bounds"
)

// TestCallClockOneTimer: the two clocks of a request on one timer. Progress
// moves the inactivity clock on without touching the timer, which, firing
// at the old deadline, is set again; the clock that runs out is the one
// named; while held, neither runs.
func TestCallClockOneTimer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var k callClock
		kFire, kFired := firing()
		k.start(time.Now(), 100*time.Millisecond, 250*time.Millisecond, kFire)
		defer k.stop()
		pass(60 * time.Millisecond)
		k.activity() // the inactivity clock now runs out at 160ms
		<-kFired     // at 100ms
		if got := k.ranOut(); got != ranNone {
			t.Fatalf("at the first deadline, after progress: ranOut = %d, want none", got)
		}
		<-kFired // at 160ms
		if got := k.ranOut(); got != ranIdle {
			t.Fatalf("at the inactivity deadline: ranOut = %d, want the inactivity clock", got)
		}

		var h callClock
		hFire, hFired := firing()
		h.start(time.Now(), 100*time.Millisecond, 250*time.Millisecond, hFire)
		defer h.stop()
		pass(50 * time.Millisecond)
		h.setHeld(true)
		pass(time.Hour) // held: nothing runs out
		select {
		case <-hFired:
			t.Fatal("a held clock fired")
		default:
		}
		if held, resumed := h.setHeld(false); !resumed || held != time.Hour {
			t.Fatalf("setHeld(false) = %v, %v; want an hour, resumed", held, resumed)
		}
		for h.ranOut() == ranNone { // progress every 90ms: the maximum ends it
			select {
			case <-hFired:
			case <-time.After(90 * time.Millisecond):
				h.activity()
			}
		}
		if got := h.ranOut(); got != ranMax {
			t.Fatalf("ranOut = %d, want the maximum", got)
		}
	})
}

// firing is a clock's fire function and the channel it says so on.
func firing() (func(), <-chan struct{}) {
	fired := make(chan struct{}, 1)
	return func() {
		select {
		case fired <- struct{}{}:
		default:
		}
	}, fired
}

// TestSendContextMadeOnDemand: a write's context makes no timer until one
// is waited on, and says the same as a context made at once: its
// deadline, its end by the parent, its end by the clock with the clock's
// error as the cause.
func TestSendContextMadeOnDemand(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clock := bounds.Clock{Name: "request", D: time.Second}
		var s sendContext
		s.init(context.Background(), clock, time.Now())
		if s.Err() != nil || s.ctx != nil {
			t.Fatalf("a fresh write context: Err %v, made %v", s.Err(), s.ctx != nil)
		}
		pass(2 * time.Second)
		if !errors.Is(s.Err(), context.DeadlineExceeded) {
			t.Fatalf("past its clock: Err = %v, want DeadlineExceeded", s.Err())
		}
		var ce *bounds.ClockError
		if !errors.As(context.Cause(&s), &ce) || ce.Clock != clock {
			t.Fatalf("cause = %v, want the request clock", context.Cause(&s))
		}
		s.release()

		parent, cancel := context.WithCancel(context.Background())
		var w sendContext
		w.init(parent, clock, time.Now())
		done := w.Done() // a wait: the timer is made now
		if d, ok := w.Deadline(); !ok || !d.Equal(time.Now().Add(time.Second)) {
			t.Errorf("Deadline = %v, %v", d, ok)
		}
		cancel()
		<-done
		if !errors.Is(w.Err(), context.Canceled) {
			t.Errorf("parent cancelled: Err = %v", w.Err())
		}
		w.release()

		var r sendContext
		r.init(context.Background(), bounds.Clock{}, time.Now())
		r.release()
		select {
		case <-r.Done():
		default:
			t.Error("a write context asked for after its release is not over")
		}
	})
}

// pass lets d go by on a synctest bubble's clock, which moves only when
// every goroutine of the bubble waits: it takes no time.
func pass(d time.Duration) { time.Sleep(d) }
