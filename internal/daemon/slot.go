package daemon

import (
	"context"
	"strings"
	"sync"

	"github.com/mcpi-dev/mcpi/internal/session"
)

// Kind is a kind of server request a command may have been given the
// answers to.
type Kind int

const (
	KindSampling Kind = iota + 1 // sampling/createMessage (--sampling-reply)
	KindElicit                   // elicitation/create (--elicit, --elicit-field)
)

// Answerer answers the server's requests for one command under way, with
// what the command was given.
type Answerer interface {
	session.Handler
	// Answers reports whether the command was given the answers to
	// requests of this kind.
	Answers(kind Kind) bool
	// Say writes a line on the command's stderr.
	Say(format string, args ...any)
}

// Slot is a command under way in the daemon: its Answerer, once its
// options are parsed.
type Slot struct {
	mu   sync.Mutex
	a    Answerer
	args []string
	// onPark, when set (a call --no-wait), is called when a server request
	// the command may be waiting on is parked.
	onPark func()
	// onAnswered, when set (a call --no-wait), is called with the id of a
	// parked request of the command once it was answered.
	onAnswered func(id int)
}

// NewSlot returns the slot of the command line args; onPark, when not nil,
// is called each time a server request the command may be waiting on is
// parked.
func NewSlot(args []string, onPark func()) *Slot {
	return &Slot{args: args, onPark: onPark}
}

// Command is the command line of the slot's command, without --session.
func (s *Slot) Command() string {
	var out []string
	for i := 0; i < len(s.args); i++ {
		a := s.args[i]
		switch {
		case a == "--session":
			i++
			continue
		case strings.HasPrefix(a, "--session="):
			continue
		}
		out = append(out, a)
	}
	return strings.Join(out, " ")
}

// DisplayArgs is the slot's command line for a person, without --session.
func (s *Slot) DisplayArgs() []string { return strings.Fields(s.Command()) }

// SetAnswerer makes a the command's Answerer: the server's requests the
// command causes are answered by it.
func (s *Slot) SetAnswerer(a Answerer) { s.mu.Lock(); s.a = a; s.mu.Unlock() }

// Answerer returns the command's Answerer (nil before its options are
// parsed).
func (s *Slot) Answerer() Answerer { s.mu.Lock(); defer s.mu.Unlock(); return s.a }

// slotKey carries a command's Slot in the context of what it sends, so
// that a server request that travels with one of its requests (a modern
// input request) reaches the Dispatcher with the command it belongs to.
// Only this package sets and reads it.
type slotKey struct{}

// WithSlot returns ctx carrying s, for the requests the command sends.
func WithSlot(ctx context.Context, s *Slot) context.Context {
	return context.WithValue(ctx, slotKey{}, s)
}

func slotOf(ctx context.Context) *Slot {
	s, _ := ctx.Value(slotKey{}).(*Slot)
	return s
}
