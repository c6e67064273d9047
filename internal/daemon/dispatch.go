package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/session"
)

// Dispatcher answers the held session's server requests with the flags of
// the command that caused them. A modern server's input requests travel
// with the request, so the command is known; a legacy server's requests
// do not say which request they serve: the newest command under way that
// gave answers of that kind answers, else the newest command.
type Dispatcher struct {
	mu       sync.Mutex
	slots    []*Slot
	roots    []mcp.Root
	watchers []*relay
	// board holds the requests no command can answer, for mcpi answer;
	// name is the session's, for the message telling how.
	board *Board
	name  string
	// logf writes a line to the daemon's log (nil: none).
	logf func(format string, args ...any)
	// hub tells the tails what becomes of each parked request (nil: none).
	hub *Hub
	// sample answers a parked sampling request with the session's model,
	// unless a person answers it first (nil: only a person).
	sample func(ctx context.Context, req *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error)
}

var _ session.Handler = (*Dispatcher)(nil)

func (d *Dispatcher) add(s *Slot) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.slots = append(d.slots, s)
}

func (d *Dispatcher) remove(s *Slot) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i, x := range d.slots {
		if x == s {
			d.slots = append(d.slots[:i], d.slots[i+1:]...)
			return
		}
	}
}

// pick returns the Answerer of the command a server request belongs to:
// its own, when the request travels with one of the command's; else the
// newest command under way given answers of kind, else the newest one.
func (d *Dispatcher) pick(ctx context.Context, kind Kind) Answerer {
	if s := slotOf(ctx); s != nil {
		if a := s.Answerer(); a != nil {
			return a
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	var newest Answerer
	for i := len(d.slots) - 1; i >= 0; i-- {
		a := d.slots[i].Answerer()
		if a == nil {
			continue
		}
		if a.Answers(kind) {
			return a
		}
		if newest == nil {
			newest = a
		}
	}
	return newest
}

func (d *Dispatcher) CreateMessage(ctx context.Context, req *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	if a := d.pick(ctx, KindSampling); a != nil && a.Answers(KindSampling) {
		return a.CreateMessage(ctx, req)
	}
	res, err := d.park(ctx, &Parked{Method: "sampling/createMessage", Sampling: req})
	if err != nil {
		return nil, err
	}
	r, ok := res.(*mcp.CreateMessageResult)
	if !ok {
		return nil, &mcp.RPCError{Code: mcp.CodeInternalError, Message: "sampling: no reply"}
	}
	return r, nil
}

func (d *Dispatcher) Elicit(ctx context.Context, req *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	if a := d.pick(ctx, KindElicit); a != nil && a.Answers(KindElicit) {
		return a.Elicit(ctx, req)
	}
	res, err := d.park(ctx, &Parked{Method: "elicitation/create", Elicit: req})
	if err != nil {
		return nil, err
	}
	r, ok := res.(*mcp.ElicitResult)
	if !ok {
		return &mcp.ElicitResult{Action: mcp.ElicitCancel}, nil
	}
	return r, nil
}

// ListRoots answers with the session's roots: those it started with, as
// mcpi roots changed them since.
func (d *Dispatcher) ListRoots(context.Context) (*mcp.ListRootsResult, error) {
	return &mcp.ListRootsResult{Roots: d.Roots()}, nil
}

// Roots returns the session's roots.
func (d *Dispatcher) Roots() []mcp.Root {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]mcp.Root{}, d.roots...)
}

// SetRoots makes roots the session's.
func (d *Dispatcher) SetRoots(roots []mcp.Root) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.roots = append([]mcp.Root{}, roots...)
}

// addWatcher adds an attached client and returns the requests parked
// before, for it to be asked (park asks those added before it).
func (d *Dispatcher) addWatcher(w *relay) []*Parked {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.watchers = append(d.watchers, w)
	return d.board.List()
}

func (d *Dispatcher) removeWatcher(w *relay) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.watchers = slices.DeleteFunc(d.watchers, func(x *relay) bool { return x == w })
}

// park makes a server request wait for mcpi answer, telling the commands
// that may be waiting on it how to answer it.
func (d *Dispatcher) park(ctx context.Context, p *Parked) (any, error) {
	owner, told := d.waiters(ctx)
	if owner != nil {
		p.Command = owner.Command()
	}
	p.owner, p.told = owner, told
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	p.ctx = ctx
	var err error
	switch {
	case p.Sampling != nil:
		p.params, err = json.Marshal(p.Sampling)
	case p.Elicit != nil:
		p.params, err = json.Marshal(p.Elicit)
	}
	if err != nil {
		return nil, err
	}
	// parked and put to the attached clients in one step, which attaching
	// takes too: a client attaching meanwhile is asked once.
	d.mu.Lock()
	first, err := d.board.add(p)
	if err != nil {
		d.mu.Unlock()
		return nil, d.refuseParked(p, told, first, err)
	}
	watchers := slices.Clone(d.watchers)
	d.mu.Unlock()
	defer d.board.Take(p.ID)
	d.hub.parked(p, ParkedWaiting)
	for _, w := range watchers {
		go w.ask(p)
	}
	if p.Sampling != nil && d.sample != nil {
		// The model races the people: the first answer is the one the
		// server gets, and once it is given (or the request withdrawn)
		// ctx ends the model's turn.
		go func() {
			res, err := d.sample(ctx, p.Sampling)
			d.board.Answer(p.ID, res, err)
		}()
	}
	modelNote := ""
	if p.Sampling != nil && d.sample != nil {
		modelNote = ", or the session's model answers it"
	}
	for _, s := range told {
		if h := s.Answerer(); h != nil {
			h.Say("%s%s): answer it with `mcpi answer %d --session %s`%s", WaitingLine(p.ID), p.Method, p.ID, d.name, modelNote)
		}
		if s.onPark != nil {
			s.onPark()
		}
	}
	select {
	case a := <-p.answer:
		for _, s := range told {
			if s.onAnswered != nil {
				s.onAnswered(p.ID)
			}
		}
		d.hub.parked(p, ParkedAnswered)
		return a.result, a.err
	case <-ctx.Done():
		// Withdrawn by the server (notifications/cancelled), or the
		// command or the session ended.
		d.hub.parked(p, ParkedWithdrawn)
		return nil, ctx.Err()
	}
}

// WaitingLine is how the line that tells a command a server request of
// its call waits (and how to answer it) begins.
func WaitingLine(id int) string {
	return fmt.Sprintf("waiting for server request #%d (", id)
}

// refuseParked answers a request the board has no room for with a
// JSON-RPC error; the first refusal since the board had room is said to
// the commands it holds up and in the daemon's log, and every refusal is
// counted in the budget (mcpi pending and the session's status show it).
func (d *Dispatcher) refuseParked(p *Parked, told []*Slot, first bool, err error) error {
	msg := fmt.Sprintf("mcpi refused server request %s: %v; mcpi answer answers the parked ones", p.Method, err)
	if first {
		for _, s := range told {
			if h := s.Answerer(); h != nil {
				h.Say("warning: %s (said once until one is answered)", msg)
			}
		}
		if d.logf != nil {
			d.logf("warning: %s (said once until one is answered)", msg)
		}
	}
	return &mcp.RPCError{Code: mcp.CodeInternalError, Message: msg}
}

// waiters returns the command a server request belongs to, when known,
// and the commands to tell that it waits: its own, else every command
// that may have caused it.
//
// A modern input request travels with its request. A legacy request says
// nothing of the request it serves: it belongs to the only command under
// way that is not itself held up by a parked request of its own (a call
// whose server waits for an answer asks nothing more meanwhile), so that
// calls started one after the other (call --no-wait, each returning once
// its request is parked) each own theirs. Only when several commands
// could have caused it is it nobody's, and each of them is told.
func (d *Dispatcher) waiters(ctx context.Context) (owner *Slot, told []*Slot) {
	if s := slotOf(ctx); s != nil && s.Answerer() != nil {
		return s, []*Slot{s}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	held := d.board.owners()
	var all []*Slot
	for _, s := range d.slots {
		if s.Answerer() == nil {
			continue
		}
		all = append(all, s)
		if !held[s] {
			told = append(told, s)
		}
	}
	if len(told) == 0 {
		// Every command waits already: any of them may ask more.
		told = all
	}
	if len(told) == 1 {
		owner = told[0]
	}
	return owner, told
}
