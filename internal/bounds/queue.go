package bounds

import (
	"context"
	"errors"
	"sync"
	"unicode/utf8"
)

// Queue is a FIFO bounded by a Budget, in count and in bytes. Push never
// blocks: an item that does not fit is refused with the budget's
// *ExceededError, and the caller answers the refusal (an error to the
// server, a counted drop with one warning). Pop waits for an item, the
// queue's end or ctx.
type Queue[T any] struct {
	budget *Budget

	mu     sync.Mutex
	items  []queued[T]
	head   int
	closed bool
	ready  chan struct{} // holds a token while items may be waiting
}

type queued[T any] struct {
	v    T
	size int64
}

// NewQueue returns a queue bounded by b.
func NewQueue[T any](b *Budget) *Queue[T] {
	return &Queue[T]{budget: b, ready: make(chan struct{}, 1)}
}

// ErrQueueClosed is what Push and Pop return once the queue is closed and,
// for Pop, empty.
var ErrQueueClosed = errors.New("queue closed")

// Push adds v, which accounts for size bytes.
func (q *Queue[T]) Push(v T, size int64) error {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return ErrQueueClosed
	}
	if err := q.budget.Take(size); err != nil {
		q.mu.Unlock()
		return err
	}
	q.items = append(q.items, queued[T]{v, size})
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
	return nil
}

// TryPop takes the oldest item without waiting.
func (q *Queue[T]) TryPop() (T, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	var zero T
	if q.head == len(q.items) {
		return zero, false
	}
	it := q.items[q.head]
	q.items[q.head] = queued[T]{}
	q.head++
	if q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0
	} else if q.head > 1024 && q.head*2 > len(q.items) {
		q.items, q.head = append(q.items[:0:0], q.items[q.head:]...), 0
	}
	q.budget.Give(it.size)
	if q.head < len(q.items) {
		select {
		case q.ready <- struct{}{}:
		default:
		}
	}
	return it.v, true
}

// Pop takes the oldest item, waiting for one until the queue is closed
// (ErrQueueClosed, once it is empty) or ctx ends.
func (q *Queue[T]) Pop(ctx context.Context) (T, error) {
	for {
		if v, ok := q.TryPop(); ok {
			return v, nil
		}
		q.mu.Lock()
		closed := q.closed
		q.mu.Unlock()
		var zero T
		if closed {
			return zero, ErrQueueClosed
		}
		select {
		case <-q.ready:
		case <-ctx.Done():
			return zero, ctx.Err()
		}
	}
}

// Ready has a value when an item may be waiting (for a select).
func (q *Queue[T]) Ready() <-chan struct{} { return q.ready }

// Len returns how many items wait.
func (q *Queue[T]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items) - q.head
}

// Close refuses further items and wakes every Pop; what waits may still be
// taken.
func (q *Queue[T]) Close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// Budget returns the queue's budget.
func (q *Queue[T]) Budget() *Budget { return q.budget }

// MaxText is how much of a peer's text one message may quote: an error
// line, a warning, a finding. A server decides what it sends, never how
// long mcpi's messages are.
const MaxText = 512

// MaxLine is how long one line of mcpi's messages to a person may be (an
// error, a warning, a -v line: a sentence with a few quotes of MaxText,
// made visible): the standard error sink cuts a longer line there and
// says how much it cut. Machine output is never cut.
const MaxLine = 4 << 10

// Clip returns s cut to MaxText bytes (on a rune boundary), saying how
// much was cut.
func Clip(s string) string { return ClipTo(s, MaxText) }

// ClipTo returns s cut to n bytes (on a rune boundary), saying how much was
// cut.
func ClipTo(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "… (" + Size(int64(len(s)-cut)) + " more)"
}
