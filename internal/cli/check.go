package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/check"
	"github.com/mcpi-dev/mcpi/internal/check/doctor"
	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/iostreams"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// CheckOptions are the flags of `mcpi check`.
type CheckOptions struct {
	command.ConnOptions
	Call  bool
	SARIF bool
	// Hosts are the hosts the server must work with (--host): only their
	// rejections are errors.
	Hosts []string
	// All checks every configured server (--all), or those of Target.Config.
	All bool

	obs *check.Observer // what the session saw while check ran
}

// NewCmdCheck returns `mcpi check TARGET`.
func NewCmdCheck(f *command.Factory, runF func(context.Context, *CheckOptions) error) *cobra.Command {
	opts := &CheckOptions{ConnOptions: f.Conn()}
	cmd := &cobra.Command{
		Use:   "check TARGET",
		Short: "Check a server against the protocol and what hosts accept",
		Long: "Check runs a battery of rules against a server (each from a spec section or a host's documented limits)\n" +
			"and prints what it finds, grouped by severity, with the frame that shows each. It calls no tool\n" +
			"unless --call is given, and then only tools annotated read-only. Exit 1 when it finds errors.",
		Example: "  mcpi check -- npx -y @modelcontextprotocol/server-everything\n  mcpi check https://example.com/mcp --sarif > mcp.sarif",
		Args: command.CheckedArgs(func(cmd *cobra.Command, args []string) error {
			if opts.All {
				return opts.checkAllFlags(cmd, args)
			}
			rest, err := opts.Target.ParseTarget(cmd, args)
			if err != nil {
				return err
			}
			if err := command.Exactly(0, "")(rest); err != nil {
				return err
			}
			if opts.JSON && opts.SARIF {
				return command.FlagErrorf("--json and --sarif: give one")
			}
			if err := opts.validateHosts(); err != nil {
				return err
			}
			return nil
		}),
		RunE: command.RunE(opts, runF, checkRun),
	}
	command.AddConnFlags(cmd, &opts.ConnOptions)
	end := command.FlagGroup(cmd, command.GroupArgs)
	cmd.Flags().BoolVar(&opts.Call, "call", false, "also call the tools annotated read-only, with arguments made from their input schemas")
	cmd.Flags().BoolVar(&opts.All, "all", false, "check every server configured on this machine (the files mcpi servers reads), or those of --config FILE, one at a time; never --call")
	cmd.Flags().StringSliceVar(&opts.Hosts, "host", nil, "the hosts the server must work with (comma-separated: "+strings.Join(check.HostIDs(), ", ")+", or all): a rejection by one is an error")
	end()
	end = command.FlagGroup(cmd, command.GroupOutput)
	cmd.Flags().BoolVar(&opts.SARIF, "sarif", false, "print SARIF 2.1.0 (for code scanning in CI)")
	end()
	return cmd
}

// checkRun checks the server, or with --all every server configured.
func checkRun(ctx context.Context, opts *CheckOptions) error {
	if opts.All {
		return checkAllRun(ctx, opts)
	}
	hk, rep := opts.hooksFor()
	attempt := timedAttempt()
	hk.ConnectFailed = func(err error) error { return opts.cannotConnect(ctx, attempt(err)) }
	err := opts.WithHooks(ctx, hk, func(c *session.Client) error {
		*rep = *opts.runChecks(ctx, c)
		return nil
	})
	if err != nil {
		return err
	}
	return opts.report(rep)
}

// timedAttempt starts the clock of an attempt to connect: the function it
// returns makes the attempt of its error, with the time it took.
func timedAttempt() func(error) doctor.Attempt {
	start := time.Now()
	return func(err error) doctor.Attempt { return doctor.Attempt{Err: err, Took: time.Since(start)} }
}

// hooksFor returns the hooks of a check's connection and the report it
// will fill, with the observer they share.
func (opts *CheckOptions) hooksFor() (command.ConnHooks, *check.Report) {
	obs := &check.Observer{}
	opts.obs = obs
	// The era probe waits as long as the user's --timeout lets it (half
	// of it, the handshake has the rest): a server that starts slowly is
	// no legacy server.
	return command.ConnHooks{Warned: obs.OnWarning, ProbeTimeout: opts.Target.Timeout, Tap: transport.TapFunc(func(e transport.Event) {
		if e.Kind == transport.KindStderr {
			obs.OnStderr()
		}
	})}, &check.Report{}
}

// runChecks checks the server behind c.
func (opts *CheckOptions) runChecks(ctx context.Context, c *session.Client) *check.Report {
	copts := checkOptions(&opts.Target, c)
	copts.Call = opts.Call
	copts.Hosts, copts.ServerName = opts.Hosts, opts.Target.Server
	return check.Run(ctx, c, opts.obs, copts)
}

// report prints a check's report and returns its exit.
func (opts *CheckOptions) report(rep *check.Report) error {
	switch {
	case opts.SARIF:
		if err := writeSARIF(opts.IO, rep); err != nil {
			return err
		}
	case opts.JSON:
		b, err := json.Marshal(rep)
		if err != nil {
			return err
		}
		if err := iostreams.WriteRawJSON(opts.IO, b); err != nil {
			return err
		}
	default:
		check.WriteText(opts.IO.Out, rep)
	}
	if n := rep.Count(check.Error); n > 0 {
		return command.ErrSilent{Code: command.ExitToolError, Kind: command.KindCheckFailed, What: fmt.Sprintf("the check found %d error(s)", n)}
	}
	if n := len(rep.Environment); n > 0 {
		// Never a pass: what the environment hid was not checked.
		return command.ErrSilent{Code: command.ExitEnvironment, Kind: command.KindCheckEnvironment, What: fmt.Sprintf("%d check(s) could not be made: the server's environment failed (%s)", n, rep.Environment[0].Why)}
	}
	return nil
}

// writeSARIF prints the report as SARIF. Off a terminal it is written as
// it is built (check.WriteSARIF: a result at a time), each piece escaped
// as iostreams.WriteRawJSON escapes a document, so that a report of 100,000
// findings is never whole in memory; on a terminal it is pretty-printed
// whole, as every JSON document is.
func writeSARIF(ios *command.IOStreams, rep *check.Report) error {
	if ios.StdoutTTY {
		var b bytes.Buffer
		if err := check.WriteSARIF(&b, rep, command.Version); err != nil {
			return err
		}
		return iostreams.WriteRawJSON(ios, b.Bytes())
	}
	if ios.JSONFailed() {
		return nil // the error object takes the document's place
	}
	ios.MarkJSONWritten()
	return check.WriteSARIF(iostreams.EscapingWriter{W: ios.Data()}, rep, command.Version)
}

// checkOptions are the options of a check of the server behind c, which
// t reaches: the transport, and what the checks that make requests of
// their own need to reach it too.
func checkOptions(t *command.TargetOptions, c *session.Client) check.Options {
	name := ""
	if n, ok := c.Conn().(transport.Namer); ok {
		name = n.Name()
	}
	copts := check.Options{Transport: name, Timeout: t.Timeout, Apps: t.Apps,
		Dial: func(ctx context.Context) (transport.Conn, error) { return t.Dial(ctx, nil) }}
	if (name == "streamable-http" || name == "sse") && t.URL != "" {
		h, _ := t.Header()
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
// --call) against the target. An HTTP server is checked on connections of
// the check's own, whose warnings and server requests never reach the
// terminal. Any other is checked on the TUI's session (live), its frames
// on the Wire pane: a stdio server is a process per connection, and one
// that allows a single instance would refuse a second, or be killed by
// it; what needs a second connection is then said not checked.
func checkFunc(t command.TargetOptions) func(ctx context.Context, live *session.Client, progress func(string)) (*check.Report, error) {
	return func(ctx context.Context, live *session.Client, progress func(string)) (*check.Report, error) {
		obs := &check.Observer{}
		if check.Borrows(live) {
			copts := checkOptions(&t, live)
			copts.Borrowed, copts.Progress = true, progress
			return check.Run(ctx, live, obs, copts), nil
		}
		tap := transport.TapFunc(func(e transport.Event) {
			if e.Kind == transport.KindStderr {
				obs.OnStderr()
			}
		})
		progress("connecting")
		c, err := t.Connect(ctx, session.Options{Handler: session.DeclineHandler{}, OnWarning: obs.OnWarning, ProbeTimeout: t.Timeout}, tap)
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
			return command.FlagErrorf("--host %q: no such host; the hosts are %s (or all)", h, strings.Join(check.HostIDs(), ", "))
		}
	}
	o.Hosts = out
	return nil
}

// cannotConnect is mcpi check's answer to a server it could not connect
// to: a handshake that failed (an error answer, or an HTTP 5xx to it) is
// the report's one finding (exit 1); a server that could not be reached,
// or refused the request outright (HTTP 403 without an authorization
// challenge), gets the doctor's checklist, which says at which step and
// what to do (exit 3, 5 or 6 as the failure was, or 9 when the server's
// environment is at fault). Never a bare "could not connect".
func (opts *CheckOptions) cannotConnect(ctx context.Context, a doctor.Attempt) error {
	d := opts.diagnose(ctx, a)
	if d.handshake != nil {
		return opts.report(d.handshake)
	}
	if opts.JSON || opts.SARIF {
		doc := map[string]any{"error": map[string]any{"message": d.what, "kind": d.kind, "exitCode": int(d.code)}, "connection": d.doc}
		b, merr := json.Marshal(doc)
		if merr != nil {
			return merr
		}
		if werr := iostreams.WriteRawJSON(opts.IO, b); werr != nil {
			return werr
		}
	} else {
		doctor.Write(opts.IO.Out, *d.doc, d.kind == command.KindRefused)
	}
	fmt.Fprintf(opts.IO.ErrOut, "mcpi: %s\n", d.what)
	return command.ErrSilent{Code: d.code, Kind: d.kind, What: d.what}
}

// diagnosis is what mcpi check makes of a failure to connect: a failed
// handshake's report, or the doctor's checklist with the exit it calls for.
type diagnosis struct {
	handshake *check.Report
	doc       *doctor.Report
	code      command.ExitCode
	kind      string
	what      string
}

func (opts *CheckOptions) diagnose(ctx context.Context, a doctor.Attempt) diagnosis {
	err := a.Err
	var he *transport.HTTPError
	if command.ExitCodeFor(err) == command.ExitProtocol || errors.As(err, &he) && he.StatusCode >= 500 {
		// The server was reached and failed the handshake: that is the
		// one thing the check found.
		return diagnosis{handshake: check.HandshakeFailed(err, ""), code: command.ExitToolError, kind: command.KindCheckFailed}
	}
	t := &opts.Target
	var rep doctor.Report
	if t.URL != "" {
		header, _ := t.Header()
		if t.Auth.Bearer != "" {
			header.Set("Authorization", "Bearer "+t.Auth.Bearer)
		}
		rep = doctor.HTTP(ctx, t.URL, header, doctor.Net{Timeout: t.Timeout, HTTP: t.HTTPTransport}, &a)
	} else {
		rep = doctor.Stdio(t.Command, exec.LookPath, a)
	}
	// Said once with the "mcpi:" of every error line: not "mcpi: mcpi check".
	what := "the check could not reach the server: "
	if command.Refused(err) {
		what = "the server refused the check's request (HTTP 403 without an authorization challenge: a Host or Origin allowlist?): "
	}
	d := diagnosis{doc: &rep, code: command.ExitCodeFor(err), kind: command.ErrorKind(err), what: what + command.OneLine(err.Error())}
	if rep.Environment != "" {
		d.code, d.kind = command.ExitEnvironment, command.KindCheckEnvironment
	}
	return d
}
