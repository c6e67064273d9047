package session

import (
	"context"
	"sync"
	"time"

	"github.com/mcpi-dev/mcpi/internal/bounds"
)

// callClock owns the two clocks of one request: the inactivity clock
// (timeout, started again by progress) and the maximum time (maxLeft,
// which nothing starts again), on one timer, set to whichever runs out
// first. While held, both stand still; on resume the inactivity clock
// starts from zero, the maximum goes on from where it stood. A zero
// duration is a clock that never fires; with neither, there is no timer.
type callClock struct {
	timeout time.Duration
	idleAt  time.Time // when the inactivity clock runs out; zero: never

	maxLeft time.Duration // what is left of the maximum from maxFrom
	maxFrom time.Time
	maxAt   time.Time // when the maximum runs out; zero: never

	t *time.Timer // calls fire at the first of idleAt and maxAt

	held     bool
	heldFrom time.Time
}

// start starts the clocks at now; fire is called (in a goroutine of its
// own) when the first of them may have run out: ranOut says.
func (k *callClock) start(now time.Time, timeout, maxLeft time.Duration, fire func()) {
	*k = callClock{timeout: timeout, maxLeft: maxLeft, maxFrom: now}
	k.setDeadlines(now)
	if first, ok := k.first(); ok {
		k.t = time.AfterFunc(first.Sub(now), fire)
	}
}

// setDeadlines starts the inactivity clock from now, and the maximum's
// rest from now.
func (k *callClock) setDeadlines(now time.Time) {
	if k.timeout > 0 {
		k.idleAt = now.Add(k.timeout)
	}
	if k.maxLeft > 0 {
		k.maxFrom = now
		k.maxAt = now.Add(k.maxLeft)
	}
}

// first is the first of the deadlines; false when there is none.
func (k *callClock) first() (time.Time, bool) {
	switch {
	case k.idleAt.IsZero():
		return k.maxAt, !k.maxAt.IsZero()
	case k.maxAt.IsZero() || k.idleAt.Before(k.maxAt):
		return k.idleAt, true
	}
	return k.maxAt, true
}

// arm sets the timer to the first deadline.
func (k *callClock) arm(now time.Time) {
	if first, ok := k.first(); ok && k.t != nil {
		k.t.Reset(first.Sub(now))
	}
}

// Which clock ran out, when the timer fired.
const (
	ranNone = iota // neither: progress moved the inactivity clock on, or the clocks are held
	ranIdle
	ranMax
)

// ranOut says which clock ran out when the timer fired; with neither (the
// inactivity clock was started again since the timer was set), it sets
// the timer again.
func (k *callClock) ranOut() int {
	if k.held {
		return ranNone
	}
	now := time.Now()
	switch {
	case !k.maxAt.IsZero() && !now.Before(k.maxAt):
		return ranMax
	case !k.idleAt.IsZero() && !now.Before(k.idleAt):
		return ranIdle
	}
	k.arm(now)
	return ranNone
}

// setHeld holds or resumes both clocks. When it resumes, it returns how
// long they were held.
func (k *callClock) setHeld(held bool) (time.Duration, bool) {
	if held == k.held {
		return 0, false
	}
	k.held = held
	now := time.Now()
	if held {
		k.heldFrom = now
		if k.t != nil {
			k.t.Stop()
		}
		if k.maxLeft > 0 {
			k.maxLeft -= now.Sub(k.maxFrom)
			if k.maxLeft <= 0 {
				// Spent: it runs out as soon as it resumes.
				k.maxLeft = time.Nanosecond
			}
		}
		return 0, false
	}
	k.setDeadlines(now)
	k.arm(now)
	return now.Sub(k.heldFrom), true
}

// activity starts the inactivity clock again, unless it is held. The
// timer is not touched: when it fires before the new deadline, ranOut
// sets it again.
func (k *callClock) activity() {
	if k.timeout > 0 && !k.held {
		k.idleAt = time.Now().Add(k.timeout)
	}
}

// stop stops both clocks. When they were held, it returns for how long.
func (k *callClock) stop() (time.Duration, bool) {
	if k.t != nil {
		k.t.Stop()
	}
	if k.held {
		return time.Since(k.heldFrom), true
	}
	return 0, false
}

// sendContext is the context of a request's write: the caller's, bounded
// by the write clock from the request's start. Its timer is made only
// when something waits on it (Done, or a value asked of it): a write that
// the connection takes at once, as a pipe with room does, costs none.
type sendContext struct {
	parent   context.Context
	clock    bounds.Clock
	deadline time.Time // zero: the clock does not bound

	mu       sync.Mutex
	ctx      context.Context // once made
	cancel   context.CancelFunc
	released bool
}

// init makes s the context of a write under clock, started at start.
// Release it once the request is over.
func (s *sendContext) init(parent context.Context, clock bounds.Clock, start time.Time) {
	s.parent, s.clock = parent, clock
	if clock.D > 0 {
		s.deadline = start.Add(clock.D)
	}
}

// made returns the context, made on first use.
func (s *sendContext) made() context.Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ctx == nil {
		switch {
		case s.released:
			// Asked for after the request was over: it is over too.
			s.ctx, s.cancel = context.WithCancel(s.parent)
			s.cancel()
		case s.deadline.IsZero():
			s.ctx, s.cancel = context.WithCancel(s.parent)
		default:
			s.ctx, s.cancel = context.WithDeadlineCause(s.parent, s.deadline, &bounds.ClockError{Clock: s.clock})
		}
	}
	return s.ctx
}

// release ends the context, once the request is over.
func (s *sendContext) release() {
	s.mu.Lock()
	s.released = true
	cancel := s.cancel
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

func (s *sendContext) Deadline() (time.Time, bool) { return s.made().Deadline() }
func (s *sendContext) Done() <-chan struct{}       { return s.made().Done() }
func (s *sendContext) Value(key any) any           { return s.made().Value(key) }

// Err is the context's end, if it ended, without making the timer when
// neither the parent nor the clock has.
func (s *sendContext) Err() error {
	s.mu.Lock()
	ctx := s.ctx
	s.mu.Unlock()
	if ctx == nil && !s.released && s.parent.Err() == nil && (s.deadline.IsZero() || time.Now().Before(s.deadline)) {
		return nil
	}
	return s.made().Err()
}
