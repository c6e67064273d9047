package intercept

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/mcpi-dev/mcpi/internal/bounds"
	"github.com/mcpi-dev/mcpi/internal/query"
	"github.com/mcpi-dev/mcpi/internal/rows"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// The gate's defaults: a held frame's deadline, and the bound on the
// frames of a direction that wait behind a held one (held ones counted).
const (
	DefaultHoldTimeout = 60 * time.Second
	DefaultMaxWaiting  = 1024
	DefaultWaitBytes   = 64 << 20
)

// GateOptions make a Gate.
type GateOptions struct {
	// Breaks are the breakpoints: a frame any of them matches is held.
	Breaks []query.Query
	// HoldTimeout is a held frame's deadline: past it, the frame is
	// forwarded and an intercept event says so (DefaultHoldTimeout when
	// zero).
	HoldTimeout time.Duration
	// MaxWaiting and MaxWaitBytes bound a direction's frames held or
	// waiting behind a held one: past them, Push waits (the side that
	// sends is not read) and the tap is told once.
	MaxWaiting   int
	MaxWaitBytes int64
	// Tap gets an intercept event for each held frame's fate.
	Tap transport.Tap
	// OnChange is called, outside the gate's lock, when a frame is held
	// or decided (a UI redraws its list of held frames).
	OnChange func()
	Now      func() time.Time
}

// Delivery is what goes out for a frame: its bytes as they came (AsIs),
// or other frames; Reply goes back to the sender in the peer's place;
// Close ends the connection.
type Delivery struct {
	AsIs   []byte
	Frames [][]byte
	Reply  [][]byte
	Close  bool
	// Frame is the frame as it came (without its end of line); Raw says
	// it was no frame the gate judged (a part of a line too long to
	// judge, a bad line).
	Frame []byte
	Raw   bool
	// Tag is the PushOptions' Tag (an HTTP request's own way back).
	Tag any
}

// PushOptions say more of a line: Raw, not to be judged; NoReply, that
// it cannot be answered in the peer's place (the proxy has no way to
// the sender); Tag, handed back with its Delivery.
type PushOptions struct {
	Raw     bool
	NoReply bool
	Tag     any
}

// Held is a frame held at a breakpoint.
type Held struct {
	ID       uint64
	Dir      transport.Direction
	Data     []byte
	Break    string
	Since    time.Time
	Deadline time.Time
	// Request says the frame is a request; Answerable that it may be
	// answered in the peer's place.
	Request, Answerable bool
	// Released says the frames behind it no longer wait for it.
	Released bool
	// Waiting is how many frames of its direction wait behind it.
	Waiting int
}

// Decider is what decides on held frames: the Gate itself, or a client
// of a gate in another process (internal/attach). Its methods may be
// called concurrently; Held never waits for a peer.
type Decider interface {
	Held() []Held
	Forward(id uint64) error
	Edit(id uint64, data []byte) error
	Drop(id uint64) error
	Answer(id uint64, result json.RawMessage, code int64, message string) error
	CloseConn(id uint64) error
	Release(id uint64) error
}

var _ Decider = (*Gate)(nil)

// Gate holds the frames a breakpoint matches until they are forwarded,
// edited, dropped, answered or the connection closed (or their deadline
// passes), keeping each direction's order: frames behind a held one wait
// for it, bounded in count and bytes. It is safe for concurrent use.
type Gate struct {
	o       GateOptions
	deliver func(dir transport.Direction, d Delivery)

	mu     sync.Mutex
	snap   atomic.Pointer[[]Held]
	room   *sync.Cond
	parser *rows.Parser
	lanes  map[transport.Direction][]*gated
	byID   map[uint64]*gated
	next   uint64
	full   map[transport.Direction]bool
	closed bool
}

type gated struct {
	id       uint64
	dir      transport.Direction
	wire     []byte // as it came, with its end of line
	frame    []byte
	raw      bool
	judged   bool
	held     bool
	released bool
	noReply  bool
	tag      any
	brk      string
	since    time.Time
	timer    *time.Timer
	done     *Delivery
}

// NewGate returns a gate of o's breakpoints.
func NewGate(o GateOptions) *Gate {
	if o.HoldTimeout <= 0 {
		o.HoldTimeout = DefaultHoldTimeout
	}
	if o.MaxWaiting <= 0 {
		o.MaxWaiting = DefaultMaxWaiting
	}
	if o.MaxWaitBytes <= 0 {
		o.MaxWaitBytes = DefaultWaitBytes
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	g := &Gate{o: o, parser: rows.NewParser(), lanes: map[transport.Direction][]*gated{}, byID: map[uint64]*gated{}, full: map[transport.Direction]bool{}}
	g.room = sync.NewCond(&g.mu)
	return g
}

// Bind gives the gate what sends what was decided for a frame of dir,
// in the order the frames came (but for frames released past a held
// one); the proxy binds it before the first Push. deliver is called with
// the gate's lock held: it must not call the gate.
func (g *Gate) Bind(deliver func(dir transport.Direction, d Delivery)) {
	g.mu.Lock()
	g.deliver = deliver
	g.mu.Unlock()
}

// ErrGateClosed is what Push returns once the gate is closed.
var ErrGateClosed = errors.New("the gate is closed")

// Push hands the gate the next line of a direction (wire: its bytes with
// their end of line; raw: not to be judged). It returns once the line is
// delivered or queued; while the direction's queue is full it waits.
func (g *Gate) Push(dir transport.Direction, wire []byte, raw bool) error {
	return g.PushWith(dir, wire, PushOptions{Raw: raw})
}

// PushWith is Push with options.
func (g *Gate) PushWith(dir transport.Direction, wire []byte, po PushOptions) error {
	raw := po.Raw
	frame := wire
	for len(frame) > 0 && (frame[len(frame)-1] == '\n' || frame[len(frame)-1] == '\r') {
		frame = frame[:len(frame)-1]
	}
	g.mu.Lock()
	for !g.closed && g.over(dir, len(wire)) {
		if !g.full[dir] {
			g.full[dir] = true
			g.tell(transport.Event{Kind: transport.KindLifecycle, Dir: dir, Text: fmt.Sprintf(
				"proxy: %d frames (%s) are held or wait behind a held frame, the most there may be (%d, %s): the %s side is not read until one moves",
				len(g.lanes[dir]), bounds.Size(g.bytes(dir)), g.o.MaxWaiting, bounds.Size(g.o.MaxWaitBytes), sender(dir))})
		}
		g.room.Wait()
	}
	if g.closed {
		g.mu.Unlock()
		return ErrGateClosed
	}
	g.next++
	it := &gated{id: g.next, dir: dir, wire: wire, frame: frame, raw: raw || frameError(frame), noReply: po.NoReply, tag: po.Tag}
	g.lanes[dir] = append(g.lanes[dir], it)
	changed := g.pump(dir)
	g.mu.Unlock()
	g.changed(changed)
	return nil
}

func sender(dir transport.Direction) string {
	if dir == transport.Outgoing {
		return "host's"
	}
	return "server's"
}

// over says whether one more line of n bytes would pass the direction's
// bound (an empty lane takes any line: one frame is always read).
func (g *Gate) over(dir transport.Direction, n int) bool {
	l := g.lanes[dir]
	return len(l) > 0 && (len(l) >= g.o.MaxWaiting || g.bytes(dir)+int64(n) > g.o.MaxWaitBytes)
}

func (g *Gate) bytes(dir transport.Direction) int64 {
	var n int64
	for _, it := range g.lanes[dir] {
		n += int64(len(it.wire))
	}
	return n
}

func frameError(b []byte) bool {
	return len(b) == 0 || !utf8.Valid(b) || !json.Valid(b)
}

// pump delivers the direction's lines in order: each is judged once
// (held when a breakpoint matches); a held line not released stops the
// lines behind it. It reports whether a line was held or delivered.
func (g *Gate) pump(dir transport.Direction) bool {
	changed := false
	l := g.lanes[dir]
	kept := l[:0]
	blocked := false
	for _, it := range l {
		if blocked {
			kept = append(kept, it)
			continue
		}
		if !it.judged {
			it.judged = true
			if !it.raw {
				g.judge(it)
				changed = changed || it.held
			}
		}
		switch {
		case it.done != nil:
			d := *it.done
			d.Tag = it.tag
			g.deliver(dir, d)
			changed = true
		case it.held:
			kept = append(kept, it)
			blocked = !it.released
		default:
			g.deliver(dir, Delivery{AsIs: it.wire, Frame: it.frame, Raw: it.raw, Tag: it.tag})
		}
	}
	clear(l[len(kept):])
	g.lanes[dir] = kept
	g.keepHeld()
	if len(kept) < len(l) {
		g.full[dir] = false
		g.room.Broadcast()
	}
	return changed
}

// judge holds the line when a breakpoint matches it.
func (g *Gate) judge(it *gated) {
	en := g.parser.Event(transport.Event{Kind: transport.KindFrame, Dir: it.dir, Data: it.frame})
	rec := en.Record()
	for _, b := range g.o.Breaks {
		if b.Match(&rec) {
			it.held, it.brk, it.since = true, b.String(), g.o.Now()
			g.byID[it.id] = it
			g.tell(transport.Event{Kind: transport.KindLifecycle, Dir: it.dir, Text: fmt.Sprintf("proxy: held %s at the breakpoint %s",
				peek(it.frame).describe(), b.String())})
			id := it.id
			it.timer = time.AfterFunc(g.o.HoldTimeout, func() { g.expire(id) })
			return
		}
	}
}

// expire forwards a frame held past its deadline, and says so.
func (g *Gate) expire(id uint64) {
	g.decide(id, "timeout", func(it *gated) (Delivery, string, error) {
		return Delivery{AsIs: it.wire, Frame: it.frame},
			fmt.Sprintf("held %s past the hold timeout of %s: forwarded as it came", peek(it.frame).describe(), g.o.HoldTimeout), nil
	})
}

// Held returns the frames held now, oldest first (outgoing first).
// It never waits for the gate's lock (a UI calls it as it draws): it
// reads the list as the gate last left it.
func (g *Gate) Held() []Held {
	if p := g.snap.Load(); p != nil {
		return *p
	}
	return nil
}

// keepHeld notes the frames held now for Held. Called with the lock held.
func (g *Gate) keepHeld() {
	var out []Held
	for _, dir := range []transport.Direction{transport.Outgoing, transport.Incoming} {
		l := g.lanes[dir]
		for i, it := range l {
			if it.held && it.done == nil {
				h := Held{ID: it.id, Dir: dir, Data: it.frame, Break: it.brk, Since: it.since,
					Deadline: it.since.Add(g.o.HoldTimeout), Request: peek(it.frame).request(), Released: it.released}
				h.Answerable = h.Request && !it.noReply
				if !it.released {
					h.Waiting = len(l) - i - 1
				}
				out = append(out, h)
			}
		}
	}
	g.snap.Store(&out)
}

// ErrNotHeld is the error of a decision on a frame no longer held.
var ErrNotHeld = errors.New("no such frame is held (forwarded at its deadline, or decided already)")

// Forward sends the held frame as it came.
func (g *Gate) Forward(id uint64) error {
	return g.decide(id, "forward", func(it *gated) (Delivery, string, error) {
		return Delivery{AsIs: it.wire, Frame: it.frame}, "forwarded " + peek(it.frame).describe() + " as it came", nil
	})
}

// Edit sends data in the held frame's place: JSON, or it is refused and
// the frame stays held.
func (g *Gate) Edit(id uint64, data []byte) error {
	if !utf8.Valid(data) {
		return errors.New("the edit is not UTF-8: the frame stays held")
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return fmt.Errorf("the edit is not JSON (%v): the frame stays held", err)
	}
	compact, _ := json.Marshal(json.RawMessage(data))
	return g.decide(id, "edit", func(it *gated) (Delivery, string, error) {
		return Delivery{Frames: [][]byte{compact}, Frame: it.frame}, "sent an edit of " + peek(it.frame).describe(), nil
	})
}

// Drop sends nothing in the held frame's place.
func (g *Gate) Drop(id uint64) error {
	return g.decide(id, "drop", func(it *gated) (Delivery, string, error) {
		return Delivery{Frame: it.frame}, "dropped " + peek(it.frame).describe(), nil
	})
}

// Answer answers a held request in the peer's place with a result (a
// JSON object), or with an error when code is not zero; the request is
// not forwarded.
func (g *Gate) Answer(id uint64, result json.RawMessage, code int64, message string) error {
	if code == 0 {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(result, &obj); err != nil {
			return fmt.Errorf("a result is a JSON object (%v): the frame stays held", err)
		}
	}
	return g.decide(id, "answer", func(it *gated) (Delivery, string, error) {
		m := peek(it.frame)
		if !m.request() {
			return Delivery{}, "", errors.New("only a request can be answered: the frame stays held")
		}
		if it.noReply {
			return Delivery{}, "", errors.New("this request cannot be answered here (the proxy has no way back to its sender): the frame stays held")
		}
		ans := answerFrame(m.ID, result, code, message)
		return Delivery{Reply: [][]byte{ans}, Frame: it.frame}, "answered " + m.describe() + " in the peer's place", nil
	})
}

// CloseConn ends the connection instead of sending the held frame.
func (g *Gate) CloseConn(id uint64) error {
	return g.decide(id, "close", func(it *gated) (Delivery, string, error) {
		return Delivery{Close: true, Frame: it.frame}, "closed the connection instead of sending " + peek(it.frame).describe(), nil
	})
}

// Release lets the frames behind a held one go on; it stays held.
func (g *Gate) Release(id uint64) error {
	g.mu.Lock()
	it, ok := g.byID[id]
	if !ok {
		g.mu.Unlock()
		return ErrNotHeld
	}
	it.released = true
	g.pump(it.dir)
	g.mu.Unlock()
	g.changed(true)
	return nil
}

func (g *Gate) decide(id uint64, action string, f func(*gated) (Delivery, string, error)) error {
	g.mu.Lock()
	it, ok := g.byID[id]
	if !ok {
		g.mu.Unlock()
		return ErrNotHeld
	}
	d, note, err := f(it)
	if err != nil {
		g.mu.Unlock()
		return err
	}
	delete(g.byID, id)
	it.timer.Stop()
	it.done = &d
	c := Change{Action: action, Rule: it.brk, Note: note}
	sent := d.Frames
	if d.AsIs != nil {
		sent = [][]byte{it.frame}
	}
	g.tell(c.Event(it.dir, it.frame, sent, d.Reply, g.o.Now()))
	g.pump(it.dir)
	g.mu.Unlock()
	g.changed(true)
	return nil
}

func (g *Gate) tell(e transport.Event) {
	if g.o.Tap != nil {
		if e.Time.IsZero() {
			e.Time = g.o.Now()
		}
		g.o.Tap.Observe(e)
	}
}

func (g *Gate) changed(yes bool) {
	if yes && g.o.OnChange != nil {
		g.o.OnChange()
	}
}

// Close ends the gate: every held frame is forwarded as it came (the
// trace says so, action "ended": no time ran out), and Push returns
// ErrGateClosed.
func (g *Gate) Close() {
	g.mu.Lock()
	var ids []uint64
	for id := range g.byID {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	g.closed = true
	g.room.Broadcast()
	g.mu.Unlock()
	for _, id := range ids {
		g.decide(id, "ended", func(it *gated) (Delivery, string, error) {
			return Delivery{AsIs: it.wire, Frame: it.frame},
				fmt.Sprintf("held %s until the proxy ended, after %s: forwarded as it came", peek(it.frame).describe(), g.o.Now().Sub(it.since).Round(time.Millisecond)), nil
		})
	}
}
