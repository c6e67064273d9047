package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/intercept"
	"github.com/mcpi-dev/mcpi/internal/proxyrun"
	"github.com/mcpi-dev/mcpi/internal/query"
	"github.com/mcpi-dev/mcpi/internal/tui"
)

// ProxyOptions are the flags of `mcpi proxy`.
type ProxyOptions struct {
	IO       *command.IOStreams
	Args     []string
	Record   string
	NoRedact bool
	Command  []string
	Env      []string
	Listen   string
	URL      string
	// Faults is the faults file (internal/intercept); Seed its draws'
	// seed, chosen at random when SeedSet is false.
	Faults  string
	Seed    uint64
	SeedSet bool
	// UI opens the TUI on the proxied conversation (UIMode: how, one of
	// the ui* constants); Breaks are its breakpoints, HoldTimeout a held
	// frame's deadline.
	UI          bool
	UIMode      string
	Breaks      []string
	HoldTimeout time.Duration
	// Name names the proxy a TUI attaches to (mcpi proxy attach NAME);
	// RuntimeDir is where its socket goes.
	Name       string
	RuntimeDir string

	breaks []query.Query
	// serve, when set, is the server, of this process (Command then
	// only names it): mcpi replay --serve --faults.
	serve func(ctx context.Context, in io.Reader, out io.Writer) error
	// ln, when set, is the HTTP proxy's listener, open already.
	ln net.Listener
}

// NewCmdProxy returns `mcpi proxy --record TRACE -- CMD`.
func NewCmdProxy(f *command.Factory, runF func(context.Context, *ProxyOptions) error) *cobra.Command {
	opts := &ProxyOptions{IO: f.IO, Args: f.Args, RuntimeDir: f.LiveDir()}
	cmd := &cobra.Command{
		Use:   "proxy [--record TRACE] [--ui[=attach] [--name NAME]] (-- CMD [ARGS...] | --listen ADDR --url UPSTREAM)",
		Short: "Record what a real host and a server say to each other",
		Long: `Sit between an MCP host and a stdio server: put "mcpi proxy --record TRACE --"
in front of the server command in the host's configuration. Every byte is
forwarded unchanged in both directions; frames and stderr are recorded in
TRACE; mcpi writes nothing of its own to stdout, and the server's stderr still
reaches the host. mcpi exits with the server's exit status.

With --listen ADDR --url UPSTREAM, mcpi is a reverse proxy for a Streamable HTTP
(or HTTP+SSE) server instead: point the host at http://ADDR/ (ADDR on
loopback); requests and answers, SSE streams included, are forwarded unchanged
as they flow, and recorded with their HTTP metadata.

With --faults FILE, frames are judged by the rules of FILE on their way
(docs/intercept.md): delayed, dropped, answered with an error, corrupted,
duplicated, reordered, slowed, the connection closed or cut, an HTTP status
given in the server's place. Each change is an intercept event in TRACE, and
a summary on stderr at the end says which rule fired how often and the seed
that repeats the run (--seed).

With --ui, the TUI shows the proxied conversation as it flows (on the
terminal for --listen; on /dev/tty for a stdio proxy, whose stdin and stdout
are the host's), and --break QUERY holds each frame the query matches until
you forward it, edit it, drop it, answer it in the server's place or close
the connection; past --hold-timeout it is forwarded, and the trace says so.

A stdio proxy a desktop app starts has no terminal: with --ui it then
serves its conversation and its breakpoints on a private socket instead,
says on stderr how to attach, and "mcpi proxy attach NAME" opens the TUI on
it from any terminal. --ui=attach or --name NAME serve the socket without
trying the terminal (for either proxy). --record is optional with --ui.`,
		Example: `  "command": "mcpi", "args": ["proxy", "--record", "/tmp/host.jsonl", "--", "npx", "-y", "@modelcontextprotocol/server-everything"]`,
		RunE:    command.CheckedRunE(opts.parse, opts, runF, proxyRun),
	}
	end := command.FlagGroup(cmd, command.GroupOutput)
	cmd.Flags().StringVar(&opts.Record, "record", "", "the trace file to write")
	cmd.Flags().BoolVar(&opts.NoRedact, "no-redact", false, "keep secrets in the trace")
	end()
	end = command.FlagGroup(cmd, command.GroupServe)
	cmd.Flags().StringVar(&opts.Faults, "faults", "", "change frames on the wire by the rules of this YAML file (docs/intercept.md)")
	cmd.Flags().Uint64Var(&opts.Seed, "seed", 0, "the seed of --faults' draws: the same seed repeats a run (default: a new one, printed)")
	cmd.Flags().StringVar(&opts.UIMode, "ui", "", "open the TUI on the proxied conversation: on the terminal (=tty), or for mcpi proxy attach (=attach; a stdio proxy with no terminal too)")
	cmd.Flags().Lookup("ui").NoOptDefVal = uiAuto
	cmd.Flags().StringVar(&opts.Name, "name", "", "with --ui: the name mcpi proxy attach NAME reaches this proxy by (default: after the server)")
	cmd.Flags().StringArrayVar(&opts.Breaks, "break", nil, "with --ui: hold each frame this query matches until you decide (repeatable)")
	cmd.Flags().DurationVar(&opts.HoldTimeout, "hold-timeout", intercept.DefaultHoldTimeout, "with --break: forward a held frame after this long")
	end()
	end = command.FlagGroup(cmd, command.GroupConnection)
	cmd.Flags().StringArrayVarP(&opts.Env, "env", "e", nil, "environment variable KEY=VALUE for the server (repeatable)")
	end()
	end = command.FlagGroup(cmd, command.GroupServe)
	cmd.Flags().StringVar(&opts.Listen, "listen", "", "HTTP proxy: the loopback address to listen on, e.g. 127.0.0.1:8080")
	end()
	end = command.FlagGroup(cmd, command.GroupConnection)
	cmd.Flags().StringVar(&opts.URL, "url", "", "HTTP proxy: the upstream server's URL")
	end()
	cmd.AddCommand(NewCmdProxyAttach(f, nil), NewCmdProxyList(f, nil))
	return cmd
}

// parse checks the flags, and takes the server command after "--" (a
// stdio proxy) or none (an HTTP proxy: --listen and --url).
func (opts *ProxyOptions) parse(cmd *cobra.Command, args []string) error {
	if err := opts.parseUI(); err != nil {
		return err
	}
	if opts.Record == "" && !opts.UI {
		return command.FlagErrorf("--record TRACE is required (or --ui)")
	}
	opts.SeedSet = cmd.Flags().Changed("seed")
	if opts.SeedSet && opts.Faults == "" {
		return command.FlagErrorf("--seed goes with --faults")
	}
	if len(opts.Breaks) > 0 && !opts.UI {
		return command.FlagErrorf("--break holds frames for you to decide on: it needs --ui")
	}
	if cmd.Flags().Changed("hold-timeout") && len(opts.Breaks) == 0 {
		return command.FlagErrorf("--hold-timeout goes with --break")
	}
	if opts.HoldTimeout <= 0 {
		return command.FlagErrorf("--hold-timeout must be more than 0")
	}
	for _, b := range opts.Breaks {
		q, err := query.Parse(b)
		if err != nil {
			return command.FlagErrorf("--break %q: %v", b, err)
		}
		opts.breaks = append(opts.breaks, q)
	}
	if opts.Listen != "" || opts.URL != "" {
		if opts.Listen == "" || opts.URL == "" {
			return command.FlagErrorf("--listen and --url go together")
		}
		if len(args) > 0 {
			return command.FlagErrorf("unexpected argument %q: an HTTP proxy runs no command%s", args[0], uiHint(args[0]))
		}
		return nil
	}
	dash := cmd.ArgsLenAtDash()
	if dash < 0 || dash == len(args) {
		return command.FlagErrorf("give the server command after \"--\", or --listen and --url")
	}
	if dash > 0 {
		return command.FlagErrorf("unexpected argument %q%s", args[0], uiHint(args[0]))
	}
	opts.Command = args[dash:]
	return nil
}

func proxyRun(ctx context.Context, opts *ProxyOptions) error {
	ro := proxyrun.Options{
		Version: command.Version, Args: opts.Args, Record: opts.Record, NoRedact: opts.NoRedact,
		Command: opts.Command, Env: opts.Env, Serve: opts.serve,
		Breaks: opts.breaks, HoldTimeout: opts.HoldTimeout,
		UI: opts.UI, TTYOnly: opts.UIMode == uiTTY, Attach: opts.attachOnly(), Name: opts.Name, RuntimeDir: opts.RuntimeDir,
		TUI: func(ctx context.Context, s proxyrun.Screen) error {
			return tui.RunProxy(ctx, tui.ProxyOptions{Title: s.Title, Gate: s.Gate, In: s.In, Out: s.Out, NoColor: !opts.IO.Color, Run: s.Run})
		},
		In: opts.IO.In, Out: opts.IO.Data(), ErrOut: opts.IO.ErrOut,
	}
	if opts.Faults != "" {
		var err error
		if ro.Faults, err = intercept.ReadFaults(opts.Faults); err != nil {
			return &command.FlagError{Err: fmt.Errorf("--faults: %w", err)}
		}
		if !opts.SeedSet {
			opts.Seed = rand.Uint64()
		}
		ro.Seed = opts.Seed
	}
	if opts.Listen != "" {
		if err := opts.upstream(&ro); err != nil {
			return err
		}
	}
	err := proxyrun.Run(ctx, ro)
	var ue *proxyrun.UsageError
	var ce *proxyrun.ConnectError
	var ee *proxyrun.ExitError
	switch {
	case errors.As(err, &ue):
		return &command.FlagError{Err: ue.Err}
	case errors.As(err, &ce):
		return fmt.Errorf("%w: %v", command.ErrConnect, ce.Err)
	case errors.As(err, &ee):
		return command.ErrSilent{Code: command.ExitCode(ee.Code)}
	}
	return err
}

// upstream checks the HTTP proxy's --url, and its --ui against the
// terminal, and gives the run its listener and its server.
func (opts *ProxyOptions) upstream(ro *proxyrun.Options) error {
	up, err := url.Parse(opts.URL)
	if err != nil || (up.Scheme != "http" && up.Scheme != "https") || up.Host == "" {
		return command.FlagErrorf("invalid --url %q", opts.URL)
	}
	terminal := opts.IO.StdinTTY && opts.IO.StdoutTTY
	if opts.UI && !opts.attachOnly() && !terminal {
		// A person starts an HTTP proxy, in a terminal: the socket is
		// served when asked for only.
		return command.FlagErrorf("--%s: %v (--ui=attach serves it for mcpi proxy attach instead)", strings.TrimSuffix("ui="+opts.UIMode, "="+uiAuto), errNoTerminal)
	}
	ro.URL, ro.Upstream, ro.ServeHTTP = opts.URL, up, serveHTTP
	ro.Listen = func() (net.Listener, error) {
		if opts.ln != nil {
			return opts.ln, nil
		}
		return listen(opts.Listen, "--listen", true)
	}
	return nil
}
