package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/check"
	"github.com/mcpi-dev/mcpi/internal/check/doctor"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// CheckOptions are the flags of `mcpi check`.
type CheckOptions struct {
	ConnOptions
	Call  bool
	SARIF bool
	// Hosts are the hosts the server must work with (--host): only their
	// rejections are errors.
	Hosts []string
}

// NewCmdCheck returns `mcpi check TARGET`.
func NewCmdCheck(f *Factory, runF func(context.Context, *CheckOptions) error) *cobra.Command {
	opts := &CheckOptions{ConnOptions: f.conn()}
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
			if err := opts.validateHosts(); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return checkRun(cmd.Context(), opts)
		},
	}
	addConnFlags(cmd, &opts.ConnOptions)
	end := flagGroup(cmd, groupArgs)
	cmd.Flags().BoolVar(&opts.Call, "call", false, "also call the tools annotated read-only, with arguments made from their input schemas")
	cmd.Flags().StringSliceVar(&opts.Hosts, "host", nil, "the hosts the server must work with (comma-separated: "+strings.Join(check.HostIDs(), ", ")+", or all): a rejection by one is an error")
	end()
	end = flagGroup(cmd, groupOutput)
	cmd.Flags().BoolVar(&opts.SARIF, "sarif", false, "print SARIF 2.1.0 (for code scanning in CI)")
	end()
	return cmd
}

func checkRun(ctx context.Context, opts *CheckOptions) error {
	obs := &check.Observer{}
	hk := connHooks{warned: obs.OnWarning, tap: transport.TapFunc(func(e transport.Event) {
		if e.Kind == transport.KindStderr {
			obs.OnStderr()
		}
	})}
	hk.connectFailed = func(err error) error { return opts.cannotConnect(ctx, err) }
	var rep *check.Report
	err := opts.withHooks(ctx, hk, func(c *session.Client) error {
		copts := checkOptions(&opts.Target, c)
		copts.Call = opts.Call
		copts.Hosts, copts.ServerName = opts.Hosts, opts.Target.Server
		rep = check.Run(ctx, c, obs, copts)
		return nil
	})
	if err != nil {
		return err
	}
	return opts.report(rep)
}

// report prints a check's report and returns its exit.
func (opts *CheckOptions) report(rep *check.Report) error {
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
		return errSilent{code: ExitToolError, kind: KindCheckFailed, what: fmt.Sprintf("the check found %d error(s)", n)}
	}
	if n := len(rep.Environment); n > 0 {
		// Never a pass: what the environment hid was not checked.
		return errSilent{code: ExitEnvironment, kind: KindCheckEnvironment, what: fmt.Sprintf("%d check(s) could not be made: the server's environment failed (%s)", n, rep.Environment[0].Why)}
	}
	return nil
}

// checkOptions are the options of a check of the server behind c, which
// t reaches: the transport, and what the checks that make requests of
// their own need to reach it too.
func checkOptions(t *TargetOptions, c *session.Client) check.Options {
	name := ""
	if n, ok := c.Conn().(transport.Namer); ok {
		name = n.Name()
	}
	copts := check.Options{Transport: name, Timeout: t.Timeout,
		Dial: func(ctx context.Context) (transport.Conn, error) { return t.dial(ctx, nil) }}
	if (name == "streamable-http" || name == "sse") && t.URL != "" {
		h, _ := t.header()
		if t.Auth.Bearer != "" {
			h.Set("Authorization", "Bearer "+t.Auth.Bearer)
		}
		if name == "sse" {
			copts.SSE = &check.HTTPTarget{URL: t.URL, Header: h}
		} else {
			copts.HTTP = &check.HTTPTarget{URL: t.URL, Header: h}
		}
	}
	return copts
}

// checkFunc returns the TUI Check pane's run: `mcpi check` (without
// --call) against the target, on connections of its own whose warnings
// and server requests never reach the terminal.
func checkFunc(t TargetOptions) func(ctx context.Context, progress func(string)) (*check.Report, error) {
	return func(ctx context.Context, progress func(string)) (*check.Report, error) {
		obs := &check.Observer{}
		tap := transport.TapFunc(func(e transport.Event) {
			if e.Kind == transport.KindStderr {
				obs.OnStderr()
			}
		})
		progress("connecting")
		c, err := t.connect(ctx, session.Options{Handler: session.DeclineHandler{}, OnWarning: obs.OnWarning}, tap)
		if err != nil {
			return nil, err
		}
		defer c.Close()
		copts := checkOptions(&t, c)
		copts.Progress = progress
		return check.Run(ctx, c, obs, copts), nil
	}
}

// validateHosts checks --host's names; "all" names every host.
func (o *CheckOptions) validateHosts() error {
	var out []string
	for _, h := range o.Hosts {
		h = strings.TrimSpace(strings.ToLower(h))
		switch {
		case h == "all":
			out = append(out, check.HostIDs()...)
		case slices.Contains(check.HostIDs(), h):
			out = append(out, h)
		default:
			return flagErrorf("--host %q: no such host; the hosts are %s (or all)", h, strings.Join(check.HostIDs(), ", "))
		}
	}
	o.Hosts = out
	return nil
}

// cannotConnect is mcpi check's answer to a server it could not connect
// to: a handshake that failed is the report's one finding (exit 1); a
// server that could not be reached gets the doctor's checklist, which says
// at which step and what to do (exit 3, 5 or 6 as the failure was, or 9
// when the server's environment is at fault). Never a bare "could not
// connect".
func (opts *CheckOptions) cannotConnect(ctx context.Context, err error) error {
	if exitCodeFor(err) == ExitProtocol {
		return opts.report(check.HandshakeFailed(err, ""))
	}
	t := &opts.Target
	var rep doctor.Report
	if t.URL != "" {
		header, _ := t.header()
		if t.Auth.Bearer != "" {
			header.Set("Authorization", "Bearer "+t.Auth.Bearer)
		}
		rep = doctor.HTTP(ctx, t.URL, header, doctor.Net{Timeout: t.Timeout, HTTP: t.httpTransport},
			func(context.Context) error { return err })
	} else {
		rep = doctor.Stdio(t.Command, exec.LookPath, err)
	}
	code, kind := exitCodeFor(err), errorKind(err)
	if rep.Environment != "" {
		code, kind = ExitEnvironment, KindCheckEnvironment
	}
	what := "mcpi check could not reach the server: " + oneLine(err.Error())
	if opts.JSON || opts.SARIF {
		doc := map[string]any{"error": map[string]any{"message": what, "kind": kind, "exitCode": int(code)}, "connection": rep}
		b, merr := json.Marshal(doc)
		if merr != nil {
			return merr
		}
		if werr := writeRawJSON(opts.IO, b); werr != nil {
			return werr
		}
	} else {
		writeDoctor(opts.IO.Out, rep)
	}
	fmt.Fprintf(opts.IO.ErrOut, "mcpi: %s\n", what)
	return errSilent{code: code, kind: kind, what: what}
}

// writeDoctor prints the doctor's checklist.
func writeDoctor(w io.Writer, rep doctor.Report) {
	fmt.Fprintf(w, "mcpi check could not reach %s. Step by step:\n", rep.Target)
	marks := map[string]string{doctor.Passed: "ok  ", doctor.Failed: "FAIL", doctor.Skipped: "-   "}
	for _, s := range rep.Steps {
		line := fmt.Sprintf("  %s %s", marks[s.Status], s.Name)
		if s.Detail != "" {
			line += ": " + s.Detail
		}
		fmt.Fprintln(w, line)
		if s.Fix != "" {
			fmt.Fprintf(w, "       what to do: %s\n", s.Fix)
		}
	}
	if rep.Environment != "" {
		fmt.Fprintf(w, "This looks like the server's environment, not its protocol: %s. Check the server's configuration (its environment variables, credentials and the services it needs).\n", rep.Environment)
	}
}
