package daemon

import (
	"encoding/json"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpi-dev/mcpi/internal/bounds"
	"github.com/mcpi-dev/mcpi/internal/record"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// TailEvent is one line of mcpi tail --json.
type TailEvent struct {
	Time    time.Time       `json:"time"`
	Kind    string          `json:"kind"` // notification, frame, request or dropped
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Dir     string          `json:"dir,omitempty"`
	Frame   json.RawMessage `json:"frame,omitempty"`
	Dropped int64           `json:"dropped,omitempty"`
	// A parked server request (kind request): its number (mcpi pending's,
	// mcpi answer's), what became of it (waiting, answered or withdrawn),
	// the command it belongs to when known, and its summary.
	Request int    `json:"request,omitempty"`
	State   string `json:"state,omitempty"`
	Command string `json:"command,omitempty"`
	Summary string `json:"summary,omitempty"`
}

// What becomes of a parked request, as mcpi tail says it.
const (
	ParkedWaiting   = "waiting"
	ParkedAnswered  = "answered"
	ParkedWithdrawn = "withdrawn"
)

// tailBuffer is how many events a tail holds for its reader, and
// tailBytes how many bytes of them; beyond that they are dropped and
// counted: a slow tail never holds up the session, nor fills its memory.
const (
	tailBuffer = 1024
	tailBytes  = 4 << 20
)

type Tail struct {
	q       *bounds.Queue[TailEvent]
	wire    bool
	dropped atomic.Int64
}

// Ready is ready to receive when the tail holds events.
func (s *Tail) Ready() <-chan struct{} { return s.q.Ready() }

// TryPop takes the oldest event the tail holds, if any.
func (s *Tail) TryPop() (TailEvent, bool) { return s.q.TryPop() }

// Dropped returns how many events the tail missed since it was last
// asked (it read too slowly), and counts anew.
func (s *Tail) Dropped() int64 { return s.dropped.Swap(0) }

func (e *TailEvent) size() int64 {
	return int64(len(e.Params) + len(e.Frame) + len(e.Summary) + len(e.Command))
}

// Hub hands a session's notifications and frames to its tails, and
// every event of its connection and every notification to the attached
// clients; it remembers the connection's events for the clients to come.
type Hub struct {
	mu     sync.Mutex
	subs   []*Tail
	wire   atomic.Int32 // tails that want frames
	redact *record.Redactor

	watchers  []*relay
	hist      []transport.Event // redacted, oldest first
	histBytes int
	forgotten int64 // events dropped from the front of hist
}

// watch registers w and returns the history so far, and how many events
// before it are forgotten.
func (h *Hub) watch(w *relay) ([]transport.Event, int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.watchers = append(h.watchers, w)
	return slices.Clone(h.hist), h.forgotten
}

func (h *Hub) unwatch(w *relay) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.watchers = slices.DeleteFunc(h.watchers, func(x *relay) bool { return x == w })
}

// remember adds an event to the history, forgetting the oldest beyond its
// bounds. h.mu is held.
func (h *Hub) remember(e transport.Event) {
	h.hist = append(h.hist, e)
	h.histBytes += eventSize(&e)
	for len(h.hist) > historyEvents || h.histBytes > historyBytes {
		h.histBytes -= eventSize(&h.hist[0])
		h.hist[0] = transport.Event{}
		h.hist = h.hist[1:]
		h.forgotten++
	}
}

func eventSize(e *transport.Event) int { return len(e.Data) + len(e.Text) + len(e.Err) + 64 }

// usage returns the budgets of the tails' and attached clients' queues.
func (h *Hub) Usage() []bounds.Usage {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []bounds.Usage
	for _, s := range h.subs {
		out = append(out, s.q.Budget().Usage())
	}
	for _, w := range h.watchers {
		out = append(out, w.budget.Usage())
	}
	return out
}

// Subscribe starts a tail; with wire it gets every frame too.
func (h *Hub) Subscribe(wire bool) *Tail {
	s := &Tail{q: bounds.NewQueue[TailEvent](bounds.NewBudget("tail", tailBuffer, tailBytes)), wire: wire}
	h.mu.Lock()
	h.subs = append(h.subs, s)
	h.mu.Unlock()
	if wire {
		h.wire.Add(1)
	}
	return s
}

// Unsubscribe ends a tail.
func (h *Hub) Unsubscribe(s *Tail) {
	h.mu.Lock()
	h.subs = slices.DeleteFunc(h.subs, func(x *Tail) bool { return x == s })
	h.mu.Unlock()
	if s.wire {
		h.wire.Add(-1)
	}
}

// publish never blocks: a tail whose buffer is full misses the event.
func (h *Hub) publish(e TailEvent, wireOnly bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, s := range h.subs {
		if wireOnly && !s.wire {
			continue
		}
		if s.q.Push(e, e.size()) != nil {
			s.dropped.Add(1)
		}
	}
}

func (h *Hub) Notify(n session.Notification) {
	n.Params = append(json.RawMessage(nil), n.Params...)
	h.mu.Lock()
	for _, w := range h.watchers {
		w.offer(watchItem{note: &n})
	}
	none := len(h.subs) == 0
	h.mu.Unlock()
	if none {
		return
	}
	h.publish(TailEvent{Time: n.Time, Kind: "notification", Method: n.Method, Params: append(json.RawMessage(nil), n.Params...)}, false)
}

// parked tells the tails what became of a parked request, under its
// number.
func (h *Hub) parked(p *Parked, state string) {
	if h == nil {
		return
	}
	h.mu.Lock()
	none := len(h.subs) == 0
	h.mu.Unlock()
	if none {
		return
	}
	e := TailEvent{Time: time.Now(), Kind: "request", Method: p.Method, Request: p.ID, State: state, Command: p.Command}
	if state == ParkedWaiting {
		e.Summary = p.Describe(e.Time).Summary
	}
	h.publish(e, false)
}

// tap sees every event of the session's connection, for the history, the
// attached clients and (frames) the tails given --wire; secrets are
// redacted as in a trace.
func (h *Hub) Tap() transport.Tap {
	return transport.TapFunc(func(e transport.Event) {
		ev := h.redact.Event(e)
		ev.Data = append([]byte(nil), ev.Data...)
		h.mu.Lock()
		h.remember(ev)
		for _, w := range h.watchers {
			w.offer(watchItem{ev: &ev})
		}
		h.mu.Unlock()
		if h.wire.Load() == 0 || e.Kind != transport.KindFrame || !json.Valid(ev.Data) {
			return
		}
		h.publish(TailEvent{Time: e.Time, Kind: "frame", Dir: e.Dir.String(), Frame: ev.Data}, true)
	})
}
