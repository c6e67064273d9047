package session

import (
	"context"
	"errors"

	"github.com/mcpi-dev/mcpi/internal/mcp"
)

// Handler answers the requests a server sends to the client. A front end
// implements it once; the session calls it for legacy server->client
// requests and, in the modern era, for each input request of a multi
// round-trip request alike.
//
// Methods may block (a person is answering) and are called concurrently,
// each on a goroutine of its own. ctx is cancelled when the server cancels
// the request or the connection ends. An error that is an *mcp.RPCError is
// sent as is; any other becomes an internal error.
//
// While a method runs, the timeouts of the client's pending requests stand
// still (the tools/call that made the server ask is waiting for the same
// person): see Client.Answering.
type Handler interface {
	CreateMessage(ctx context.Context, req *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error)
	Elicit(ctx context.Context, req *mcp.ElicitParams) (*mcp.ElicitResult, error)
	ListRoots(ctx context.Context) (*mcp.ListRootsResult, error)
}

// ErrRejected is what a Handler returns when the user rejects a request. It
// goes to the server as the error the spec suggests for a rejection.
var ErrRejected = &mcp.RPCError{Code: -1, Message: "user rejected the request"}

// DeclineHandler answers every request with an error saying why; it is the
// handler of a front end that cannot ask anyone.
type DeclineHandler struct {
	Reason string
}

func (h DeclineHandler) err(what string) error {
	reason := h.Reason
	if reason == "" {
		reason = "no one is there to answer"
	}
	return &mcp.RPCError{Code: -1, Message: what + " declined: " + reason}
}

// CreateMessage declines.
func (h DeclineHandler) CreateMessage(context.Context, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	return nil, h.err("sampling")
}

// Elicit declines.
func (h DeclineHandler) Elicit(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	return &mcp.ElicitResult{Action: mcp.ElicitDecline}, nil
}

// ListRoots answers with no roots.
func (h DeclineHandler) ListRoots(context.Context) (*mcp.ListRootsResult, error) {
	return &mcp.ListRootsResult{Roots: []mcp.Root{}}, nil
}

var _ Handler = DeclineHandler{}

// IsRejected reports whether err is a rejection by the user (ErrRejected,
// or its code and message as they came back through a live session), not
// a refusal of the same code for want of anyone to ask.
func IsRejected(err error) bool {
	var re *mcp.RPCError
	return errors.As(err, &re) && re.Code == ErrRejected.Code && re.Message == ErrRejected.Message
}

// Answering returns how many server requests the Handler is answering now
// (it was called and has not returned): sampling, elicitation and roots
// requests, legacy or the input requests of a modern multi round-trip
// request alike. The requests that were pending when such a server request
// arrived keep no clock until it is answered (see Options.Timeout and
// Options.MaxTime); later requests keep theirs.
func (c *Client) Answering() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.answering
}

func (c *Client) beginAnswer() []*pendingCall {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.answering++
	// The calls pending now may be waiting on this answer: their clocks
	// stand still until it is given. Later calls are not held.
	held := make([]*pendingCall, 0, len(c.pending))
	seen := make(map[*pendingCall]bool, len(c.pending))
	for _, pc := range c.pending {
		if seen[pc] {
			continue
		}
		seen[pc] = true
		held = append(held, pc)
		if pc.held.Add(1) == 1 {
			pc.signal()
		}
	}
	return held
}

func (c *Client) endAnswer(held []*pendingCall) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.answering--
	for _, pc := range held {
		if pc.held.Add(-1) == 0 {
			pc.signal()
		}
	}
}

// countAnswer counts an answer being given (d 1) or given (d -1) that holds
// no request.
func (c *Client) countAnswer(d int) {
	c.mu.Lock()
	c.answering += d
	c.mu.Unlock()
}
