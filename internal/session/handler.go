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

// IsRejected reports whether err is a rejection by the user.
func IsRejected(err error) bool {
	var re *mcp.RPCError
	return errors.As(err, &re) && re.Code == ErrRejected.Code
}
