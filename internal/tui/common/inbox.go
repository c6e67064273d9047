package common

import (
	"context"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/rows"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// Bounds of what the inbox holds between two drains. Callbacks never wait
// for the UI: past these bounds the oldest wire events are dropped (and
// counted), and only the newest notifications and warnings are kept whole
// (all of them are counted).
const (
	maxPendingWire          = 1 << 16
	maxPendingWireBytes     = 256 << 20
	maxPendingNotifications = 1024
	maxPendingWarnings      = 1024
	// maxPendingPast bounds the notifications of a live session's past
	// (its history is bounded already; this is the log panes' ring).
	maxPendingPast = 20000
	// coalesce gathers a burst into one batch, so that a flood costs a
	// few dozen updates a second rather than one per event.
	coalesce = 15 * time.Millisecond
)

// Inbox collects what the session reports from its goroutines (the reader,
// the transport, server-request handlers, progress callbacks) without ever
// blocking them, and hands it to the UI in batches: a Cmd from Next waits
// for something to arrive and returns a *Batch, and the UI asks for the next
// one after each batch.
type Inbox struct {
	mu      sync.Mutex
	wake    chan struct{}
	pending Batch
	wireB   int

	// parser reads the wire's events into rows off the UI goroutine, in
	// the Cmd of Next (one is outstanding at a time); redact, when set,
	// hides the user's secret values in each event before it is read.
	parser *rows.Parser
	redact func(transport.Event) transport.Event
}

// NewInbox returns an empty inbox.
func NewInbox() *Inbox { return &Inbox{wake: make(chan struct{}, 1), parser: rows.NewParser()} }

// EntriesMsg carries the rows of one batch and how many events the inbox
// dropped before them in a flood: the Wire pane shows them, the Stderr pane
// takes the server's standard error from them, the Timeline draws them.
type EntriesMsg struct {
	Entries []rows.Entry
	Dropped int
}

// Redact sets what every event crosses before it becomes a row: the
// user's secret values (-e, a configuration's headers) never reach the
// screen, as they never reach a trace. Set it before the first Next.
func (b *Inbox) Redact(f func(transport.Event) transport.Event) { b.redact = f }

// Batch is what arrived since the previous batch.
type Batch struct {
	// Entries are the wire's events and the session's warnings as rows
	// (internal/rows), read once for every pane.
	Entries []rows.Entry
	// wire holds the events until they are read.
	wire        []transport.Event
	WireDropped int

	Notifications     []session.Notification // the newest ones
	NotificationCount int                    // all of them

	// Past holds notifications from before the client connected (a live
	// session's history), the newest maxPendingPast, oldest first.
	Past []session.Notification

	// Roots, when RootsChanged, are the roots as changed elsewhere.
	Roots        []mcp.Root
	RootsChanged bool

	Warnings     []session.Warning
	WarningCount int

	// Progress holds the newest progress of each call, by call id.
	Progress map[int]mcp.ProgressParams

	// Health holds the changes of the connection's health, oldest first.
	Health []session.HealthEvent

	Requests []*Request // new server requests waiting for an answer
	Gone     []*Request // requests the server cancelled or the session dropped
}

func (b *Inbox) poke() {
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// Observe is a transport.Tap.
func (b *Inbox) Observe(e transport.Event) {
	b.mu.Lock()
	p := &b.pending
	p.wire = append(p.wire, e)
	b.wireB += len(e.Data)
	for len(p.wire) > maxPendingWire || (b.wireB > maxPendingWireBytes && len(p.wire) > 1) {
		b.wireB -= len(p.wire[0].Data)
		p.wire[0] = transport.Event{}
		p.wire = p.wire[1:]
		p.WireDropped++
	}
	b.mu.Unlock()
	b.poke()
}

// Notify records a notification from the server.
func (b *Inbox) Notify(n session.Notification) {
	b.mu.Lock()
	p := &b.pending
	p.NotificationCount++
	if len(p.Notifications) >= 2*maxPendingNotifications {
		// Keep the newest; trimming in halves keeps this O(1) amortized.
		kept := copy(p.Notifications, p.Notifications[len(p.Notifications)-maxPendingNotifications:])
		clear(p.Notifications[kept:])
		p.Notifications = p.Notifications[:kept]
	}
	p.Notifications = append(p.Notifications, n)
	b.mu.Unlock()
	b.poke()
}

// Past records a notification the server sent before the client
// connected (a live session's history, replayed): shown, not acted on.
func (b *Inbox) Past(n session.Notification) {
	b.mu.Lock()
	p := &b.pending
	if len(p.Past) >= maxPendingPast {
		p.Past[0] = session.Notification{}
		p.Past = p.Past[1:]
	}
	p.Past = append(p.Past, n)
	b.mu.Unlock()
	b.poke()
}

// SetRoots records that the roots were changed elsewhere (a live
// session's); only the newest count.
func (b *Inbox) SetRoots(roots []mcp.Root) {
	b.mu.Lock()
	b.pending.Roots, b.pending.RootsChanged = roots, true
	b.mu.Unlock()
	b.poke()
}

// Warn records something the server got wrong.
func (b *Inbox) Warn(w session.Warning) {
	b.mu.Lock()
	p := &b.pending
	p.WarningCount++
	if len(p.Warnings) < maxPendingWarnings {
		p.Warnings = append(p.Warnings, w)
	}
	b.mu.Unlock()
	b.poke()
}

// maxPendingHealth bounds the health changes kept between two drains (a
// flapping connection keeps its newest).
const maxPendingHealth = 64

// Health records a change of the connection's health.
func (b *Inbox) Health(ev session.HealthEvent) {
	b.mu.Lock()
	p := &b.pending
	if len(p.Health) >= maxPendingHealth {
		p.Health = append(p.Health[:0], p.Health[1:]...)
	}
	p.Health = append(p.Health, ev)
	b.mu.Unlock()
	b.poke()
}

// Progress records the progress of a call; only the newest per call is kept.
func (b *Inbox) Progress(callID int, pp mcp.ProgressParams) {
	b.mu.Lock()
	if b.pending.Progress == nil {
		b.pending.Progress = make(map[int]mcp.ProgressParams)
	}
	b.pending.Progress[callID] = pp
	b.mu.Unlock()
	b.poke()
}

// Ask queues a server request for the user.
func (b *Inbox) Ask(r *Request) {
	b.mu.Lock()
	b.pending.Requests = append(b.pending.Requests, r)
	b.mu.Unlock()
	b.poke()
}

// Withdraw says a queued request no longer waits for an answer.
func (b *Inbox) Withdraw(r *Request) {
	b.mu.Lock()
	b.pending.Gone = append(b.pending.Gone, r)
	b.mu.Unlock()
	b.poke()
}

// take empties the inbox.
func (b *Inbox) take() *Batch {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := b.pending
	if n := len(out.Notifications); n > maxPendingNotifications {
		out.Notifications = out.Notifications[n-maxPendingNotifications:]
	}
	b.pending = Batch{}
	b.wireB = 0
	return &out
}

// Next returns a Cmd that waits for the next batch, or for done; the
// batch's events are read into rows there, off the UI goroutine. Only one
// Next Cmd may be outstanding at a time, so the batches are read in order.
func (b *Inbox) Next(done <-chan struct{}) tea.Cmd {
	return func() tea.Msg {
		select {
		case <-b.wake:
		case <-done:
			return nil
		}
		t := time.NewTimer(coalesce)
		select {
		case <-t.C:
		case <-done:
			t.Stop()
			return nil
		}
		batch := b.take()
		b.read(batch)
		return batch
	}
}

// read makes the batch's events and warnings rows.
func (b *Inbox) read(bt *Batch) {
	bt.Entries = make([]rows.Entry, 0, len(bt.wire)+len(bt.Warnings))
	for _, e := range bt.wire {
		if b.redact != nil {
			e = b.redact(e)
		}
		bt.Entries = append(bt.Entries, b.parser.Event(e))
	}
	for _, w := range bt.Warnings {
		bt.Entries = append(bt.Entries, b.parser.Warning(w))
	}
	bt.wire = nil
}

// RequestKind says what a server request asks for.
type RequestKind int

// Kinds of server requests.
const (
	Sampling RequestKind = iota + 1
	Elicitation
	// Consent is mcpi's own question for the person: an MCP App it hosts
	// asks to call a tool that may be destructive, or to open a link.
	Consent
)

// Request is a server->client request waiting for the user. The session's
// handler goroutine waits on it; the UI answers it once.
type Request struct {
	ID       int
	Kind     RequestKind
	Sampling *mcp.CreateMessageParams
	Elicit   *mcp.ElicitParams
	// Question is a Consent's.
	Question string
	// Draft is a model's draft of a sampling reply (mcpi connect
	// --sampling-model), DraftBy the model, DraftErr why there is none.
	Draft    *mcp.CreateMessageResult
	DraftBy  string
	DraftErr string
	Received time.Time
	// Why says, once the request is withdrawn, by whom ("by the server").
	Why string

	ctx   context.Context
	reply chan Reply
}

// Reply is the user's answer to a Request.
type Reply struct {
	Sampling *mcp.CreateMessageResult
	Elicit   *mcp.ElicitResult
	Err      error
}

// NewRequest returns a request that waits for an answer until ctx ends.
func NewRequest(ctx context.Context, id int, kind RequestKind, received time.Time) *Request {
	return &Request{ID: id, Kind: kind, Received: received, ctx: ctx, reply: make(chan Reply, 1)}
}

// Answer gives the user's answer; it never blocks, and only the first
// answer counts.
func (r *Request) Answer(rep Reply) {
	select {
	case r.reply <- rep:
	default:
	}
}

// Wait waits for the answer or for the request's context to end.
func (r *Request) Wait() (Reply, error) {
	select {
	case rep := <-r.reply:
		return rep, nil
	case <-r.ctx.Done():
		return Reply{}, r.ctx.Err()
	}
}

// Ended reports whether the request no longer waits (cancelled by the
// server or dropped with its session).
func (r *Request) Ended() bool { return r.ctx.Err() != nil }
