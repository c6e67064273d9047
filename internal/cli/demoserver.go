package cli

import (
	"context"
	"fmt"
	"net"
	"net/http"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/demoserver"
)

// DemoServerOptions are the flags of `mcpi demo-server`.
type DemoServerOptions struct {
	IO   *command.IOStreams
	HTTP string
	SSE  bool
	Era  string
}

// NewCmdDemoServer returns the hidden `demo-server` command.
func NewCmdDemoServer(f *command.Factory, runF func(context.Context, *DemoServerOptions) error) *cobra.Command {
	opts := &DemoServerOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:    "demo-server",
		Short:  "Run mcpi's demo MCP server (stdio, or HTTP with --http)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE:   command.RunE(opts, runF, demoServerRun),
	}
	end := command.FlagGroup(cmd, command.GroupServe)
	cmd.Flags().StringVar(&opts.HTTP, "http", "", "serve Streamable HTTP on this address (e.g. 127.0.0.1:8080) instead of stdio")
	cmd.Flags().BoolVar(&opts.SSE, "sse", false, "with --http, serve the legacy HTTP+SSE transport at /sse too")
	cmd.Flags().StringVar(&opts.Era, "era", "both", "protocol era to accept: legacy, modern or both")
	end()
	return cmd
}

func demoServerRun(ctx context.Context, opts *DemoServerOptions) error {
	sopts := demoserver.Options{Era: opts.Era}
	if err := sopts.Validate(); err != nil {
		return &command.FlagError{Err: err}
	}
	if opts.HTTP == "" {
		if opts.SSE {
			return command.FlagErrorf("--sse needs --http")
		}
		return demoserver.RunStdio(ctx, sopts)
	}
	ln, err := listen(opts.HTTP, "--http", false)
	if err != nil {
		return err
	}
	if host, _, _ := net.SplitHostPort(opts.HTTP); !isLoopback(host) {
		fmt.Fprintf(opts.IO.ErrOut, "warning: listening on %s, which is not a loopback address\n", opts.HTTP)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", demoserver.HTTPHandler(sopts))
	if opts.SSE {
		mux.Handle("/sse", demoserver.SSEHandler(sopts))
	}
	fmt.Fprintf(opts.IO.ErrOut, "demo server: Streamable HTTP at http://%s/mcp\n", ln.Addr())
	if opts.SSE {
		fmt.Fprintf(opts.IO.ErrOut, "demo server: HTTP+SSE at http://%s/sse\n", ln.Addr())
	}
	return serveHTTP(ctx, ln, mux)
}
