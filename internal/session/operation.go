package session

import (
	"context"
	"sync"
	"time"
)

// An operation is what the user sees as one: a call with all its task polls
// and input rounds, a listing with all its pages. Options.MaxTime
// (--max-time) bounds the whole of it, not each request in it: a task that
// never ends, or a server that asks for input forever, is given up on when
// the operation's time is spent, however promptly each request is answered.
// The time a person spends answering the server (the Handler) is not
// counted, as it is not for a single request.
type operation struct {
	max   time.Duration
	start time.Time

	mu   sync.Mutex
	held time.Duration
}

type operationKey struct{}

// operation returns ctx carrying the operation it belongs to, starting one
// bounded by MaxTime when it belongs to none. A negative or zero MaxTime
// starts an unbounded one.
func (c *Client) operation(ctx context.Context) (context.Context, *operation) {
	if op, ok := ctx.Value(operationKey{}).(*operation); ok {
		return ctx, op
	}
	op := &operation{max: c.opts.MaxTime, start: time.Now()}
	return context.WithValue(ctx, operationKey{}, op), op
}

// begin starts an operation made before its first request (callMRTR's)
// at that request's start; one started already goes on.
func (op *operation) begin(now time.Time) {
	if op == nil {
		return
	}
	op.mu.Lock()
	if op.start.IsZero() {
		op.start = now
	}
	op.mu.Unlock()
}

// operationOf returns the operation ctx belongs to, or nil.
func operationOf(ctx context.Context) *operation {
	op, _ := ctx.Value(operationKey{}).(*operation)
	return op
}

// bounded reports whether the operation has a maximum time.
func (op *operation) bounded() bool { return op != nil && op.max > 0 }

// left returns how much of the operation's time remains (a large value
// for an unbounded one).
func (op *operation) left() time.Duration {
	if !op.bounded() {
		return time.Duration(1<<63 - 1)
	}
	op.mu.Lock()
	defer op.mu.Unlock()
	if op.start.IsZero() {
		return op.max
	}
	return op.max - (time.Since(op.start) - op.held)
}

// hold adds time spent waiting on a person, which the operation does not
// count.
func (op *operation) hold(d time.Duration) {
	if op == nil || d <= 0 {
		return
	}
	op.mu.Lock()
	op.held += d
	op.mu.Unlock()
}

// spent is the error of an operation whose time ran out during method.
func (op *operation) spent(method string) error {
	return &TimeoutError{Method: method, After: op.max, Max: true}
}

// Operation returns ctx as one operation under Options.MaxTime (a listing
// with all its pages, a call with its polls), unless it is one already:
// every request made with it shares what remains of the maximum time.
func (c *Client) Operation(ctx context.Context) context.Context {
	ctx, _ = c.operation(ctx)
	return ctx
}
