package apphost

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcpi-dev/mcpi/internal/apps"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/session"
)

// SessionServer carries an App's requests over an mcpi session: the one
// adapter from a session to a Bridge's Server, for mcpi app and the TUI
// alike.
func SessionServer(c *session.Client) Server { return sessionServer{c} }

type sessionServer struct{ c *session.Client }

func (s sessionServer) CallTool(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	return s.c.CallToolRaw(ctx, mcp.CallToolParams{Name: name, Arguments: args}, nil)
}

func (s sessionServer) ReadResource(ctx context.Context, uri string) (json.RawMessage, error) {
	b, err := json.Marshal(mcp.ReadResourceParams{URI: uri})
	if err != nil {
		return nil, err
	}
	return s.c.Send(ctx, "resources/read", b, nil)
}

// Read reads tool's App (its ui:// resource) over the session and says what
// it is. With listed, it also looks for the resource in resources/list
// (servers may leave UI resources out of it), as mcpi app-info reports.
// A resource that cannot be made sense of is session.ErrMalformed.
func Read(ctx context.Context, c *session.Client, tool *mcp.Tool, listed bool) (*apps.Info, error) {
	ui := apps.ToolMeta(tool.Meta)
	if !ui.HasApp() {
		return nil, fmt.Errorf("%s has no MCP App (no _meta.ui.resourceUri)", tool.Name)
	}
	var read mcp.ReadResourceResult
	if err := c.Call(ctx, "resources/read", mcp.ReadResourceParams{URI: ui.ResourceURI}, &read, nil); err != nil {
		return nil, fmt.Errorf("reading the App %s: %w", ui.ResourceURI, err)
	}
	var res *mcp.Resource
	if listed && c.ServerCapabilities().Resources != nil {
		if all, err := c.AllResources(ctx); err == nil {
			for i := range all {
				if all[i].URI == ui.ResourceURI {
					res = &all[i]
					break
				}
			}
		}
	}
	in, err := apps.Describe(tool, &read, res)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", session.ErrMalformed, err)
	}
	return in, nil
}

// Start hosts o.Tool's App over the session c: it reads the App when o.Info
// is nil, builds the bridge with the session as its server, and serves
// the host page on a loopback port. The caller hands the bridge the tool's
// result and closes the host.
func Start(ctx context.Context, c *session.Client, o Options) (*Bridge, *Host, error) {
	if o.Info == nil {
		info, err := Read(ctx, c, &o.Tool, false)
		if err != nil {
			return nil, nil, err
		}
		o.Info = info
	}
	o.Server = SessionServer(c)
	b := New(o)
	h, err := Listen(ctx, b)
	if err != nil {
		return nil, nil, err
	}
	return b, h, nil
}
