package tui

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/transport"
	"github.com/mcpi-dev/mcpi/internal/tui/common"
)

// handler answers the server's requests for the session: sampling and
// elicitation wait in the TUI's queue for the user; roots/list is answered
// at once from the roots the user keeps in the roots pane. It runs on the
// session's goroutines and never touches the model.
type handler struct {
	inbox  *common.Inbox
	roots  *rootStore
	now    func() time.Time
	nextID atomic.Int64
	// session is the live session attached to (Options.Session), whose
	// daemon's own word is marked.
	session string
	// answers keeps what the person answered, for a call saved as a step.
	answers *common.AnswerLog
	// sampling drafts sampling replies with a model (nil: none).
	sampling *SamplingModel
}

var _ session.Handler = (*handler)(nil)

func (h *handler) ask(ctx context.Context, kind common.RequestKind, meta json.RawMessage, fill func(*common.Request)) (common.Reply, error) {
	r := common.NewRequest(ctx, h.number(meta), kind, h.now())
	fill(r)
	h.inbox.Ask(r)
	rep, err := r.Wait()
	if err != nil {
		// Cancelled by the server or dropped with the session; or, in a
		// live session, answered elsewhere (its daemon says so itself).
		r.Why = "by the server"
		var ce *session.CancelledError
		if errors.Is(context.Cause(ctx), session.ErrInputGivenElsewhere) {
			r.Why = "since " + session.ErrInputGivenElsewhere.Error()
		} else if errors.As(context.Cause(ctx), &ce) {
			if fromSession(ce.Params, h.session) {
				r.Why = "by session " + common.Line(h.session) + ": " + common.Line(ce.Reason)
			}
		}
		h.inbox.Withdraw(r)
		return common.Reply{}, err
	}
	if h.answers != nil && rep.Err == nil {
		h.answers.Add(common.Answered{At: h.now(), Kind: kind, Reply: rep})
	}
	return rep, nil
}

// number is the number a server request is shown under: attached to a
// live session, the one its daemon gave it (mcpi pending's, mcpi
// answer's); else the TUI's own count.
func (h *handler) number(meta json.RawMessage) int {
	if h.session != "" {
		if id, ok := mcp.ParkedNumber(meta); ok {
			return id
		}
	}
	return int(h.nextID.Add(1))
}

// CreateMessage queues a sampling request and waits for the user; with a
// sampling model, the model's draft is shown for the user to send, edit
// or refuse, or sent unattended (SamplingModel.Auto).
func (h *handler) CreateMessage(ctx context.Context, req *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	var draft *mcp.CreateMessageResult
	var draftErr error
	if s := h.sampling; s != nil {
		draft, draftErr = s.Draft(ctx, req)
		if s.Auto {
			return draft, draftErr
		}
	}
	rep, err := h.ask(ctx, common.Sampling, req.Meta, func(r *common.Request) {
		r.Sampling = req
		if h.sampling != nil {
			r.Draft, r.DraftBy = draft, h.sampling.Name
			if draftErr != nil {
				r.DraftErr = draftErr.Error()
			}
		}
	})
	if err != nil {
		return nil, err
	}
	if rep.Err != nil {
		return nil, rep.Err
	}
	return rep.Sampling, nil
}

// Elicit queues an elicitation and waits for the user.
func (h *handler) Elicit(ctx context.Context, req *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	rep, err := h.ask(ctx, common.Elicitation, req.Meta, func(r *common.Request) { r.Elicit = req })
	if err != nil {
		return nil, err
	}
	if rep.Err != nil {
		return nil, rep.Err
	}
	return rep.Elicit, nil
}

// ListRoots answers from the roots pane without asking.
func (h *handler) ListRoots(context.Context) (*mcp.ListRootsResult, error) {
	return &mcp.ListRootsResult{Roots: h.roots.Get()}, nil
}

// rootStore holds the roots the TUI offers; the roots pane writes them and
// the handler reads them from the session's goroutines.
type rootStore struct {
	mu    sync.Mutex
	roots []mcp.Root
}

// Get returns the roots offered.
func (s *rootStore) Get() []mcp.Root {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := slices.Clone(s.roots)
	if out == nil {
		out = []mcp.Root{}
	}
	return out
}

// Set replaces the roots offered.
func (s *rootStore) Set(roots []mcp.Root) {
	s.mu.Lock()
	s.roots = slices.Clone(roots)
	s.mu.Unlock()
}

// fromSession reports whether a notification's params carry the marker of
// what the daemon of the live session name says itself
// (mcp.MetaFromSession); never when the TUI is attached to no session.
func fromSession(params json.RawMessage, name string) bool {
	if name == "" || !bytes.Contains(params, []byte(mcp.MetaFromSession)) {
		return false
	}
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil {
		return false
	}
	var said string
	return json.Unmarshal(p.Meta[mcp.MetaFromSession], &said) == nil && said == name
}

// notified takes a notification for the inbox. What a live session's
// daemon says itself (a parked request answered elsewhere is withdrawn
// with notifications/cancelled) is not the server's: it is shown on the
// wire as the session's, not among the server's notifications.
func notified(in *common.Inbox, name string, n session.Notification) {
	if !fromSession(n.Params, name) {
		in.Notify(n)
		return
	}
	var p mcp.CancelledParams
	json.Unmarshal(n.Params, &p)
	text := fmt.Sprintf("session %s says %s", name, n.Method)
	if n.Method == "notifications/cancelled" {
		text = fmt.Sprintf("session %s withdrew its request %s: %s", name, p.RequestID, p.Reason)
	}
	in.Observe(transport.Event{Time: n.Time, Kind: transport.KindLifecycle, Text: text})
}
