package proxyrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/mcpi-dev/mcpi/internal/intercept"
	"github.com/mcpi-dev/mcpi/internal/proxy"
	"github.com/mcpi-dev/mcpi/internal/query"
	"github.com/mcpi-dev/mcpi/internal/record"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// Options are one run of the proxy: a stdio proxy when Upstream is nil,
// else an HTTP proxy.
type Options struct {
	// Version and Args go in the trace's header.
	Version string
	Args    []string
	// Record is the trace file ("": none is written, with UI); NoRedact
	// keeps secrets in it.
	Record   string
	NoRedact bool

	// A stdio proxy runs Command with Env, or Serve, a server of this
	// process that Command then only names (mcpi replay --serve --faults).
	Command []string
	Env     []string
	Serve   func(ctx context.Context, in io.Reader, out io.Writer) error

	// An HTTP proxy forwards to Upstream (URL, parsed) what reaches the
	// listener Listen opens, served by ServeHTTP until ctx ends. The trace
	// and the banner name URL as it was given.
	URL       string
	Upstream  *url.URL
	Listen    func() (net.Listener, error)
	ServeHTTP func(ctx context.Context, ln net.Listener, h http.Handler) error

	// Faults, when set, judges the frames, its draws seeded by Seed.
	Faults *intercept.Faults
	Seed   uint64
	// Breaks hold the frames they match until the TUI decides, or until
	// HoldTimeout.
	Breaks      []query.Query
	HoldTimeout time.Duration

	// UI shows the conversation in TUI: a stdio proxy's on the terminal
	// (/dev/tty) when it may read it, an HTTP proxy's on the process's
	// own. When there is none (or with Attach, without trying it), the
	// conversation is served on a socket of RuntimeDir, named Name (a free
	// name after the server when ""), for mcpi proxy attach; TTYOnly
	// refuses a stdio proxy that socket instead.
	UI         bool
	TTYOnly    bool
	Attach     bool
	Name       string
	RuntimeDir string
	TUI        TUI

	// In and Out are the host's side of a stdio proxy; ErrOut is where
	// the server's stderr goes, and what the proxy says.
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// TUI shows a proxied conversation until the user quits or ctx ends.
type TUI func(ctx context.Context, s Screen) error

// Screen is what a TUI shows.
type Screen struct {
	// Title names the proxied server.
	Title string
	// Gate decides on the frames the breakpoints hold (nil: none).
	Gate intercept.Decider
	// In and Out are the terminal (nil: the process's own).
	In  io.Reader
	Out io.Writer
	// Run runs the proxy, its events given to tap, until it ends or ctx
	// ends: the TUI runs it on a goroutine of its own.
	Run func(ctx context.Context, tap transport.Tap) error
}

// UsageError is a run refused for its options or where it runs (no
// terminal for TTYOnly, a trace that cannot be created).
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func usageErrorf(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// ConnectError is a stdio proxy that failed: its server did not start,
// or the conversation broke.
type ConnectError struct{ Err error }

func (e *ConnectError) Error() string { return e.Err.Error() }
func (e *ConnectError) Unwrap() error { return e.Err }

// ExitError is a stdio proxy's server that exited with a status not 0.
type ExitError struct{ Code int }

func (e *ExitError) Error() string { return fmt.Sprintf("exit %d", e.Code) }

// Run runs the proxy until its server exits (stdio) or ctx ends, and
// says on ErrOut at the end what the faults did.
func Run(ctx context.Context, opts Options) error {
	p := &proxied{opts: opts}
	var err error
	if opts.Upstream != nil {
		err = p.http(ctx)
	} else {
		err = p.stdio(ctx)
	}
	if p.engine != nil {
		p.engine.WriteSummary(opts.ErrOut)
	}
	return err
}

// proxied is one run of the proxy: its trace, its faults and its gate,
// and the TUI's tap once it runs.
type proxied struct {
	opts   Options
	engine *intercept.Engine
	gate   *intercept.Gate
	ui     transport.LateTap // the TUI, once it runs
	// att is the socket a TUI attaches to, with UI and no terminal.
	att *attached
}

// start makes the engine and the gate, their events going to the trace
// (and to the TUI), and returns the tap of the proxy's events.
func (p *proxied) start(w transport.Tap) transport.Tap {
	tap := w
	if p.opts.UI {
		tap = transport.MultiTap(w, &p.ui)
	}
	if p.opts.Faults != nil {
		p.engine = intercept.NewEngine(intercept.Options{Faults: p.opts.Faults, Seed: p.opts.Seed, Tap: tap})
	}
	if len(p.opts.Breaks) > 0 {
		p.gate = intercept.NewGate(intercept.GateOptions{Breaks: p.opts.Breaks, HoldTimeout: p.opts.HoldTimeout, Tap: tap, OnChange: p.heldChanged})
	}
	return tap
}

// run runs the proxy, in the TUI with UI (its terminal: in and out),
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
	err := p.opts.TUI(ctx, Screen{Title: title, Gate: gate, In: in, Out: out,
		Run: func(ctx context.Context, tap transport.Tap) error {
			close(started)
			defer close(finished)
			p.ui.Set(tap)
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
		if !opts.Attach {
			tty, why = openTTY()
			if tty != nil {
				defer tty.Close()
			}
		}
		switch {
		case tty != nil:
		case opts.TTYOnly:
			return usageErrorf("--ui=tty: %s: use --ui alone to attach a TUI from another terminal (mcpi proxy attach), or put the HTTP proxy (--listen, --url) in front of the server", why)
		default:
			if opts.Attach {
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
		Mcpi: opts.Version, Role: record.RoleProxy, Args: opts.Args,
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
	stderr := opts.ErrOut
	if opts.UI && p.att == nil {
		// Shown in the TUI and kept in the trace: on the terminal it would
		// tear the screen.
		stderr = io.Discard
	}
	code := 0
	err = p.run(ctx, title, tty, tty, func(ctx context.Context) error {
		var err error
		code, err = proxy.RunStdio(ctx, proxy.StdioOptions{
			Command: opts.Command, Env: opts.Env, Serve: opts.Serve,
			Stdin: opts.In, Stdout: opts.Out, Stderr: stderr, Tap: tap, Faults: p.engine, Gate: p.gate,
		})
		return err
	})
	if cerr := w.Close(); cerr != nil && opts.Record != "" {
		fmt.Fprintf(opts.ErrOut, "mcpi proxy: the trace %s is incomplete: %v\n", opts.Record, cerr)
	}
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return err
		}
		return &ConnectError{Err: err}
	}
	if code != 0 {
		return &ExitError{Code: code}
	}
	return nil
}

func (p *proxied) http(ctx context.Context) error {
	opts := p.opts
	if opts.UI && opts.Attach {
		if err := p.listenAttach(""); err != nil {
			return err
		}
		defer p.closeAttach()
	}
	ln, err := opts.Listen()
	if err != nil {
		return err
	}
	defer ln.Close()
	w, err := p.trace(record.Header{
		Mcpi: opts.Version, Role: record.RoleProxy, Args: opts.Args,
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
		fmt.Fprintf(opts.ErrOut, "mcpi proxy: %s%s\n", banner, rec)
	}
	h := proxy.HandlerWith(opts.Upstream, proxy.HTTPOptions{Tap: tap, Faults: p.engine, Gate: p.gate})
	return p.run(ctx, banner, nil, nil, func(ctx context.Context) error {
		if p.gate != nil {
			defer p.gate.Close()
		}
		return opts.ServeHTTP(ctx, ln, h)
	})
}
