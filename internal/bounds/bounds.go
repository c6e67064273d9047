// Package bounds is where mcpi's waits and queues get their limits.
//
// A debugger is pointed at servers that lie, hang, flood and stop reading,
// so nothing in mcpi may wait without a clock or hold what a server sends
// without a budget. The rule lives here, in a leaf package that every layer
// may import:
//
//   - a Clock ends a wait: the request clocks (inactivity and maximum time,
//     in internal/session, held only for the requests a person's answer
//     may be for), the write clock (a frame the peer does not read), the
//     operation clock (a call with its task polls and input rounds, a
//     listing with all its pages), the start clock;
//   - a Budget bounds a queue in count and in bytes: parked requests, tail
//     and relay queues, warnings, the daemon's log, remembered cursors.
//     A budget that is hit is answered, never ignored: the caller refuses
//     the item (a server's request gets a JSON-RPC error), says so once,
//     and the budget counts what it refused so that a status can show it.
//
// TestEveryWaitHasAClock (bounds_ast_test.go) parses the binary's code and
// refuses a raw timer or timeout outside this package unless it is listed
// there with its reason, so the next wait that forgets is caught by a test.
package bounds

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Clock is a named bound on a wait. Its name is how a timeout explains
// itself ("the write clock of 30s").
type Clock struct {
	Name string
	D    time.Duration
}

// The clocks of mcpi. The request clocks are the user's (--timeout,
// --max-time) and live in session.Options; these are the fixed ones.
var (
	// Write bounds one frame's write to a peer that may not be reading:
	// an answer to a server request, a refusal, a notification.
	Write = Clock{"write", 30 * time.Second}
	// Cancel bounds the write of a notifications/cancelled, off the
	// caller's path.
	Cancel = Clock{"cancel", 5 * time.Second}
	// Relay bounds a send to an attached client of a live session.
	Relay = Clock{"relay", 10 * time.Second}
)

// The budgets of a live session's daemon (internal/cli). The session
// command takes hidden flags to make them tiny in tests.
const (
	// ParkedCount and ParkedBytes bound the server requests a live session
	// parks for mcpi answer (their params as received); past them a request
	// is refused with a JSON-RPC error. The count is the core's cap on a
	// server's requests in progress.
	ParkedCount = 256
	ParkedBytes = 16 << 20
	// DaemonLogBytes bounds a session daemon's log (NAME.log in the runtime
	// directory, often a small tmpfs): past it the log starts again, saying
	// so.
	DaemonLogBytes = 1 << 20
	// WarningBurst is how many warnings of one kind the daemon's log holds
	// in full; later ones are counted, the count written at each power of
	// ten and when the session ends.
	WarningBurst = 5
)

// Context returns a context that ends when the clock runs out or parent
// ends. A clock of zero or less leaves parent unbounded (the caller's
// choice, said where it is made).
func (c Clock) Context(parent context.Context) (context.Context, context.CancelFunc) {
	if c.D <= 0 {
		return context.WithCancel(parent)
	}
	return context.WithTimeoutCause(parent, c.D, &ClockError{Clock: c})
}

// Timer returns a timer of the clock's duration; a clock of zero or less
// gives a timer that never fires (Stop it all the same).
func (c Clock) Timer() *time.Timer {
	if c.D <= 0 {
		t := time.NewTimer(time.Hour)
		t.Stop()
		return t
	}
	return time.NewTimer(c.D)
}

// After is a wait of d for a short, fixed pause (a grace period, a settle
// time): it is a clock by itself. A caller that may wait long must select
// on it with its context.
func After(d time.Duration) <-chan time.Time { return time.After(d) }

// Sleep pauses for d or until ctx ends, whichever is first, and reports
// whether the whole pause passed.
func Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// WithDeadline bounds parent by an absolute deadline (an operation's
// maximum time shared by all its requests). The zero time leaves it
// unbounded.
func WithDeadline(parent context.Context, d time.Time, cause error) (context.Context, context.CancelFunc) {
	if d.IsZero() {
		return context.WithCancel(parent)
	}
	return context.WithDeadlineCause(parent, d, cause)
}

// ClockError says which clock ended a wait.
type ClockError struct{ Clock Clock }

func (e *ClockError) Error() string {
	return fmt.Sprintf("the %s clock of %v ran out", e.Clock.Name, e.Clock.D)
}

// Is makes a ClockError a context.DeadlineExceeded.
func (e *ClockError) Is(target error) bool { return target == context.DeadlineExceeded }

// Budget bounds what a queue holds, in count and in bytes. It is safe for
// concurrent use. A zero MaxCount or MaxBytes means no bound of that kind
// (say why where such a budget is made).
type Budget struct {
	name     string
	maxCount int
	maxBytes int64

	mu        sync.Mutex
	count     int
	bytes     int64
	peakCount int
	peakBytes int64
	refused   int64
	refusedB  int64
}

// NewBudget returns a budget of at most maxCount items and maxBytes bytes.
func NewBudget(name string, maxCount int, maxBytes int64) *Budget {
	return &Budget{name: name, maxCount: maxCount, maxBytes: maxBytes}
}

// ErrExceeded is what Take's errors are.
var ErrExceeded = errors.New("budget exceeded")

// ExceededError says which budget refused an item, and why.
type ExceededError struct {
	Budget   string
	Count    int   // items held when refused
	Bytes    int64 // bytes held when refused
	Item     int64 // the refused item's size
	MaxCount int
	MaxBytes int64
}

func (e *ExceededError) Error() string {
	if e.MaxCount > 0 && e.Count >= e.MaxCount {
		return fmt.Sprintf("the %s budget holds %d items already (at most %d)", e.Budget, e.Count, e.MaxCount)
	}
	return fmt.Sprintf("the %s budget holds %s already; %s more would pass its %s", e.Budget, Size(e.Bytes), Size(e.Item), Size(e.MaxBytes))
}

func (e *ExceededError) Unwrap() error { return ErrExceeded }

// Take accounts one item of n bytes, or refuses it with an *ExceededError
// when it does not fit. A refusal is counted.
func (b *Budget) Take(n int64) error {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if (b.maxCount > 0 && b.count+1 > b.maxCount) || (b.maxBytes > 0 && b.bytes+n > b.maxBytes) {
		b.refused++
		b.refusedB += n
		return &ExceededError{Budget: b.name, Count: b.count, Bytes: b.bytes, Item: n, MaxCount: b.maxCount, MaxBytes: b.maxBytes}
	}
	b.count++
	b.bytes += n
	b.peakCount = max(b.peakCount, b.count)
	b.peakBytes = max(b.peakBytes, b.bytes)
	return nil
}

// Grow accounts n more bytes for an item already taken (what it holds
// grows), or refuses them with an *ExceededError past the bytes.
func (b *Budget) Grow(n int64) error {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.maxBytes > 0 && b.bytes+n > b.maxBytes {
		b.refused++
		b.refusedB += n
		return &ExceededError{Budget: b.name, Count: b.count, Bytes: b.bytes, Item: n, MaxCount: b.maxCount, MaxBytes: b.maxBytes}
	}
	b.bytes += n
	b.peakBytes = max(b.peakBytes, b.bytes)
	return nil
}

// Give returns one item of n bytes that Take accounted.
func (b *Budget) Give(n int64) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.count--
	b.bytes -= n
	if b.count < 0 || b.bytes < 0 {
		panic(fmt.Sprintf("bounds: %s budget given back more than it took", b.name))
	}
}

// Drain gives back everything the budget holds (a log that starts again)
// and returns how much that was.
func (b *Budget) Drain() (count int, bytes int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	count, bytes = b.count, b.bytes
	b.count, b.bytes = 0, 0
	return count, bytes
}

// Usage is a budget's state, for a status.
type Usage struct {
	Name         string `json:"name"`
	Count        int    `json:"count"`
	Bytes        int64  `json:"bytes"`
	MaxCount     int    `json:"maxCount,omitempty"`
	MaxBytes     int64  `json:"maxBytes,omitempty"`
	PeakCount    int    `json:"peakCount"`
	PeakBytes    int64  `json:"peakBytes"`
	Refused      int64  `json:"refused"`
	RefusedBytes int64  `json:"refusedBytes"`
}

// Usage returns the budget's state.
func (b *Budget) Usage() Usage {
	b.mu.Lock()
	defer b.mu.Unlock()
	return Usage{Name: b.name, Count: b.count, Bytes: b.bytes, MaxCount: b.maxCount, MaxBytes: b.maxBytes,
		PeakCount: b.peakCount, PeakBytes: b.peakBytes, Refused: b.refused, RefusedBytes: b.refusedB}
}

// Name returns the budget's name.
func (b *Budget) Name() string { return b.name }

// Size formats a byte count for a person.
func Size(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
