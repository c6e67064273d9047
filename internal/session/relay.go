package session

import (
	"context"
	"encoding/json"

	"github.com/mcpi-dev/mcpi/internal/mcp"
)

// RelayOptions adjust a relayed request.
type RelayOptions struct {
	CallOptions
	// OnID is called with the request's id on this connection before it is
	// written: the server names the request by it (a subscription's
	// notifications carry it in _meta), and the relay translates it back.
	OnID func(id int64)
}

// Relay sends a request that another client made (a TUI attached to a live
// session) and returns the server's result as sent, for that client to
// interpret: no capability check, no multi round-trip handling (an
// input_required result goes back as it came, and the other client
// retries), no timeout unless opts sets one (the other client has its
// own). It adds what this connection owes every request: the modern
// era's _meta (merged over the params' own), and the Mcp-Param headers of
// a tools/call on modern HTTP.
func (c *Client) Relay(ctx context.Context, method string, params json.RawMessage, opts *RelayOptions) (json.RawMessage, error) {
	o := callOptions{}
	if opts != nil {
		o.CallOptions = opts.CallOptions
		o.onID = opts.OnID
	}
	o.Force = true
	if o.Timeout == 0 {
		o.Timeout = -1
	}
	if method == "tools/call" {
		var p mcp.CallToolParams
		if json.Unmarshal(params, &p) == nil {
			o.header = c.paramHeaders(p.Name, p.Arguments)
		}
	}
	var p any
	if len(params) > 0 {
		p = params
	}
	return c.call(ctx, method, p, &o)
}
