package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/check"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// CheckOptions are the flags of `mcpi check`.
type CheckOptions struct {
	ConnOptions
	Call  bool
	SARIF bool
}

// NewCmdCheck returns `mcpi check TARGET`.
func NewCmdCheck(f *Factory) *cobra.Command {
	opts := &CheckOptions{ConnOptions: ConnOptions{IO: f.IO, Args: f.Args}}
	cmd := &cobra.Command{
		Use:   "check TARGET",
		Short: "Check a server against the protocol and what hosts accept",
		Long: "Check runs a battery of rules against a server (each from a spec section or a host's documented limits)\n" +
			"and prints what it finds, grouped by severity, with the frame that shows each. It calls no tool\n" +
			"unless --call is given, and then only tools annotated read-only. Exit 1 when it finds errors.",
		Example: "  mcpi check -- npx -y @modelcontextprotocol/server-everything\n  mcpi check https://example.com/mcp --sarif > mcp.sarif",
		RunE: func(cmd *cobra.Command, args []string) error {
			rest, err := opts.Target.parseTarget(cmd, args)
			if err != nil {
				return err
			}
			if err := exactly(0, "")(rest); err != nil {
				return err
			}
			if opts.JSON && opts.SARIF {
				return flagErrorf("--json and --sarif: give one")
			}
			return checkRun(cmd.Context(), opts)
		},
	}
	addConnFlags(cmd, &opts.ConnOptions)
	cmd.Flags().BoolVar(&opts.Call, "call", false, "also call the tools annotated read-only, with arguments made from their input schemas")
	cmd.Flags().BoolVar(&opts.SARIF, "sarif", false, "print SARIF 2.1.0 (for code scanning in CI)")
	return cmd
}

func checkRun(ctx context.Context, opts *CheckOptions) error {
	obs := &check.Observer{}
	opts.warned = obs.OnWarning
	opts.watch = transport.TapFunc(func(e transport.Event) {
		if e.Kind == transport.KindStderr {
			obs.OnStderr()
		}
	})
	var rep *check.Report
	err := opts.with(ctx, func(c *session.Client) error {
		name := ""
		if t, ok := c.Conn().(interface{ Name() string }); ok {
			name = t.Name()
		}
		copts := check.Options{Call: opts.Call, Transport: name, Timeout: opts.Target.Timeout,
			Dial: func(ctx context.Context) (transport.Conn, error) { return opts.Target.dial(ctx, nil) }}
		if name == "streamable-http" && opts.Target.URL != "" {
			h, _ := opts.Target.header()
			if opts.Target.Auth.Bearer != "" {
				h.Set("Authorization", "Bearer "+opts.Target.Auth.Bearer)
			}
			copts.HTTP = &check.HTTPTarget{URL: opts.Target.URL, Header: h}
		}
		if name == "sse" && opts.Target.URL != "" {
			h, _ := opts.Target.header()
			if opts.Target.Auth.Bearer != "" {
				h.Set("Authorization", "Bearer "+opts.Target.Auth.Bearer)
			}
			copts.SSE = &check.HTTPTarget{URL: opts.Target.URL, Header: h}
		}
		rep = check.Run(ctx, c, obs, copts)
		return nil
	})
	if err != nil {
		return err
	}
	switch {
	case opts.SARIF:
		var b bytes.Buffer
		if err := check.WriteSARIF(&b, rep, Version); err != nil {
			return err
		}
		if err := writeRawJSON(opts.IO, b.Bytes()); err != nil {
			return err
		}
	case opts.JSON:
		b, err := json.Marshal(rep)
		if err != nil {
			return err
		}
		if err := writeRawJSON(opts.IO, b); err != nil {
			return err
		}
	default:
		check.WriteText(opts.IO.Out, rep)
	}
	if n := rep.Count(check.Error); n > 0 {
		return errSilent{code: ExitToolError, what: fmt.Sprintf("the check found %d error(s)", n)}
	}
	return nil
}
