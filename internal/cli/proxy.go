package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/intercept"
	"github.com/mcpi-dev/mcpi/internal/proxy"
	"github.com/mcpi-dev/mcpi/internal/query"
	"github.com/mcpi-dev/mcpi/internal/record"
	"github.com/mcpi-dev/mcpi/internal/transport"
	"github.com/mcpi-dev/mcpi/internal/tui"
)

// ProxyOptions are the flags of `mcpi proxy`.
type ProxyOptions struct {
	IO       *IOStreams
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
func NewCmdProxy(f *Factory, runF func(context.Context, *ProxyOptions) error) *cobra.Command {
	opts := &ProxyOptions{IO: f.IO, Args: f.Args, RuntimeDir: f.runtimeDir()}
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
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.parse(cmd, args); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return proxyRun(cmd.Context(), opts)
		},
	}
	end := flagGroup(cmd, groupOutput)
	cmd.Flags().StringVar(&opts.Record, "record", "", "the trace file to write")
	cmd.Flags().BoolVar(&opts.NoRedact, "no-redact", false, "keep secrets in the trace")
	end()
	end = flagGroup(cmd, groupServe)
	cmd.Flags().StringVar(&opts.Faults, "faults", "", "change frames on the wire by the rules of this YAML file (docs/intercept.md)")
	cmd.Flags().Uint64Var(&opts.Seed, "seed", 0, "the seed of --faults' draws: the same seed repeats a run (default: a new one, printed)")
	cmd.Flags().StringVar(&opts.UIMode, "ui", "", "open the TUI on the proxied conversation: on the terminal (=tty), or for mcpi proxy attach (=attach; a stdio proxy with no terminal too)")
	cmd.Flags().Lookup("ui").NoOptDefVal = uiAuto
	cmd.Flags().StringVar(&opts.Name, "name", "", "with --ui: the name mcpi proxy attach NAME reaches this proxy by (default: after the server)")
	cmd.Flags().StringArrayVar(&opts.Breaks, "break", nil, "with --ui: hold each frame this query matches until you decide (repeatable)")
	cmd.Flags().DurationVar(&opts.HoldTimeout, "hold-timeout", intercept.DefaultHoldTimeout, "with --break: forward a held frame after this long")
	end()
	end = flagGroup(cmd, groupConnection)
	cmd.Flags().StringArrayVarP(&opts.Env, "env", "e", nil, "environment variable KEY=VALUE for the server (repeatable)")
	end()
	end = flagGroup(cmd, groupServe)
	cmd.Flags().StringVar(&opts.Listen, "listen", "", "HTTP proxy: the loopback address to listen on, e.g. 127.0.0.1:8080")
	end()
	end = flagGroup(cmd, groupConnection)
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
		return flagErrorf("--record TRACE is required (or --ui)")
	}
	opts.SeedSet = cmd.Flags().Changed("seed")
	if opts.SeedSet && opts.Faults == "" {
		return flagErrorf("--seed goes with --faults")
	}
	if len(opts.Breaks) > 0 && !opts.UI {
		return flagErrorf("--break holds frames for you to decide on: it needs --ui")
	}
	if cmd.Flags().Changed("hold-timeout") && len(opts.Breaks) == 0 {
		return flagErrorf("--hold-timeout goes with --break")
	}
	if opts.HoldTimeout <= 0 {
		return flagErrorf("--hold-timeout must be more than 0")
	}
	for _, b := range opts.Breaks {
		q, err := query.Parse(b)
		if err != nil {
			return flagErrorf("--break %q: %v", b, err)
		}
		opts.breaks = append(opts.breaks, q)
	}
	if opts.Listen != "" || opts.URL != "" {
		if opts.Listen == "" || opts.URL == "" {
			return flagErrorf("--listen and --url go together")
		}
		if len(args) > 0 {
			return flagErrorf("unexpected argument %q: an HTTP proxy runs no command%s", args[0], uiHint(args[0]))
		}
		return nil
	}
	dash := cmd.ArgsLenAtDash()
	if dash < 0 || dash == len(args) {
		return flagErrorf("give the server command after \"--\", or --listen and --url")
	}
	if dash > 0 {
		return flagErrorf("unexpected argument %q%s", args[0], uiHint(args[0]))
	}
	opts.Command = args[dash:]
	return nil
}

func proxyRun(ctx context.Context, opts *ProxyOptions) error {
	var faults *intercept.Faults
	if opts.Faults != "" {
		var err error
		if faults, err = intercept.ReadFaults(opts.Faults); err != nil {
			return &FlagError{Err: fmt.Errorf("--faults: %w", err)}
		}
		if !opts.SeedSet {
			opts.Seed = rand.Uint64()
		}
	}
	p := &proxied{opts: opts, faults: faults}
	var err error
	if opts.Listen != "" {
		err = p.http(ctx)
	} else {
		err = p.stdio(ctx)
	}
	if p.engine != nil {
		p.engine.WriteSummary(opts.IO.ErrOut)
	}
	return err
}

// proxied is one run of the proxy: its trace, its faults and its gate,
// and the TUI's tap once it runs.
type proxied struct {
	opts   *ProxyOptions
	faults *intercept.Faults
	engine *intercept.Engine
	gate   *intercept.Gate
	ui     lateTap
	// att is the socket a TUI attaches to, with --ui and no terminal.
	att *attached
}

// lateTap hands events to the TUI once it runs.
type lateTap struct {
	mu  sync.Mutex
	tap transport.Tap
}

func (l *lateTap) Observe(e transport.Event) {
	l.mu.Lock()
	t := l.tap
	l.mu.Unlock()
	if t != nil {
		t.Observe(e)
	}
}

// start makes the engine and the gate, their events going to the trace
// (and to the TUI), and returns the tap of the proxy's events.
func (p *proxied) start(w transport.Tap) transport.Tap {
	tap := w
	if p.opts.UI {
		tap = transport.MultiTap(w, &p.ui)
	}
	if p.faults != nil {
		p.engine = intercept.NewEngine(intercept.Options{Faults: p.faults, Seed: p.opts.Seed, Tap: tap})
	}
	if len(p.opts.breaks) > 0 {
		p.gate = intercept.NewGate(intercept.GateOptions{Breaks: p.opts.breaks, HoldTimeout: p.opts.HoldTimeout, Tap: tap, OnChange: p.heldChanged})
	}
	return tap
}

// run runs the proxy, in the TUI with --ui (its terminal: in and out),
// or with its socket served for a TUI to attach.
func (p *proxied) run(ctx context.Context, title string, in io.Reader, out io.Writer, proxy func(context.Context) error) error {
	switch {
	case !p.opts.UI:
		return proxy(ctx)
	case p.att != nil:
		return p.runAttached(ctx, proxy)
	}
	var perr error
	started, finished := make(chan struct{}), make(chan struct{})
	var gate intercept.Decider
	if p.gate != nil {
		gate = p.gate
	}
	err := tui.RunProxy(ctx, tui.ProxyOptions{Title: title, Gate: gate, In: in, Out: out, NoColor: !p.opts.IO.Color,
		Run: func(ctx context.Context, tap transport.Tap) error {
			close(started)
			defer close(finished)
			p.ui.mu.Lock()
			p.ui.tap = tap
			p.ui.mu.Unlock()
			perr = proxy(ctx)
			return perr
		}})
	// Quitting the TUI stops the proxy: wait for it to end, so that its
	// trace is whole.
	select {
	case <-started:
		<-finished
	default:
	}
	if perr != nil && !errors.Is(perr, context.Canceled) {
		return perr
	}
	return err
}

func (p *proxied) stdio(ctx context.Context) error {
	opts := p.opts
	var tty *os.File
	if opts.UI {
		// The host has stdin and stdout: the TUI takes the terminal, when
		// there is one it may read; else it is served for mcpi proxy attach.
		why := "asked for the socket"
		if !opts.attachOnly() {
			tty, why = openTTY()
			if tty != nil {
				defer tty.Close()
			}
		}
		switch {
		case tty != nil:
		case opts.UIMode == uiTTY:
			return flagErrorf("--ui=tty: %s: use --ui alone to attach a TUI from another terminal (mcpi proxy attach), or put the HTTP proxy (--listen, --url) in front of the server", why)
		default:
			if opts.attachOnly() {
				why = ""
			}
			if err := p.listenAttach(why); err != nil {
				return err
			}
		}
	}
	var secrets []string
	for _, e := range opts.Env {
		if k, v, ok := strings.Cut(e, "="); ok && record.IsSecretEnv(k, v) {
			secrets = append(secrets, v)
		}
	}
	title := strings.Join(opts.Command, " ")
	w, err := p.trace(record.Header{
		Mcpi: Version, Role: record.RoleProxy, Args: opts.Args,
		Target: record.Target{Transport: record.TransportStdio, Command: opts.Command},
	}, record.Options{SecretValues: secrets})
	if err != nil {
		p.closeAttach()
		return err
	}
	tap := p.start(w)
	if p.att != nil {
		p.serveAttach(title, secrets)
	}
	stderr := io.Writer(opts.IO.ErrOut)
	if opts.UI && p.att == nil {
		// Shown in the TUI and kept in the trace: on the terminal it would
		// tear the screen.
		stderr = io.Discard
	}
	code := 0
	err = p.run(ctx, title, tty, tty, func(ctx context.Context) error {
		var err error
		code, err = proxy.RunStdio(ctx, proxy.StdioOptions{
			Command: opts.Command, Env: opts.Env, Serve: opts.serve,
			Stdin: opts.IO.In, Stdout: opts.IO.Data(), Stderr: stderr, Tap: tap, Faults: p.engine, Gate: p.gate,
		})
		return err
	})
	if cerr := w.Close(); cerr != nil && opts.Record != "" {
		fmt.Fprintf(opts.IO.ErrOut, "mcpi proxy: the trace %s is incomplete: %v\n", opts.Record, cerr)
	}
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return err
		}
		return fmt.Errorf("%w: %v", errConnect, err)
	}
	if code != 0 {
		return errSilent{code: ExitCode(code)}
	}
	return nil
}

func (p *proxied) http(ctx context.Context) error {
	opts := p.opts
	up, err := url.Parse(opts.URL)
	if err != nil || (up.Scheme != "http" && up.Scheme != "https") || up.Host == "" {
		return flagErrorf("invalid --url %q", opts.URL)
	}
	terminal := opts.IO.StdinTTY && opts.IO.StdoutTTY
	switch {
	case !opts.UI || (terminal && !opts.attachOnly()):
	case !opts.attachOnly():
		// A person starts an HTTP proxy, in a terminal: the socket is
		// served when asked for only.
		return flagErrorf("--%s: %v (--ui=attach serves it for mcpi proxy attach instead)", strings.TrimSuffix("ui="+opts.UIMode, "="+uiAuto), errNoTerminal)
	default:
		if err := p.listenAttach(""); err != nil {
			return err
		}
		defer p.closeAttach()
	}
	ln := opts.ln
	if ln == nil {
		if ln, err = listen(opts.Listen, "--listen", true); err != nil {
			return err
		}
	}
	defer ln.Close()
	w, err := p.trace(record.Header{
		Mcpi: Version, Role: record.RoleProxy, Args: opts.Args,
		Target: record.Target{Transport: record.TransportHTTP, URL: opts.URL},
	}, record.Options{})
	if err != nil {
		return err
	}
	defer w.Close()
	tap := p.start(w)
	banner := fmt.Sprintf("http://%s/ -> %s", ln.Addr(), opts.URL)
	if p.att != nil {
		p.serveAttach(banner, nil)
	}
	if !opts.UI || p.att != nil {
		rec := ", recording to " + opts.Record
		if opts.Record == "" {
			rec = ", recording nothing (no --record)"
		}
		fmt.Fprintf(opts.IO.ErrOut, "mcpi proxy: %s%s\n", banner, rec)
	}
	h := proxy.HandlerWith(up, proxy.HTTPOptions{Tap: tap, Faults: p.engine, Gate: p.gate})
	return p.run(ctx, banner, nil, nil, func(ctx context.Context) error {
		if p.gate != nil {
			defer p.gate.Close()
		}
		return serveHTTP(ctx, ln, h)
	})
}
