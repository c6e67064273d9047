package proxyrun

import (
	"context"
	"fmt"
	"net"
	"os"
	"time"

	proxysock "github.com/mcpi-dev/mcpi/internal/attach"
	"github.com/mcpi-dev/mcpi/internal/live"
	"github.com/mcpi-dev/mcpi/internal/record"
)

// attached is the socket a proxy with no terminal serves its TUI's view
// on.
type attached struct {
	ln   *net.UnixListener
	name string
	// why says why not the terminal ("" when asked for the socket).
	why string
	srv *proxysock.Server
}

// listenAttach makes the socket a TUI attaches to, before the server
// starts: a name another proxy runs under is refused first.
func (p *proxied) listenAttach(why string) error {
	opts := p.opts
	a := &attached{name: opts.Name, why: why}
	var err error
	if a.name != "" {
		a.ln, err = proxysock.Listen(opts.RuntimeDir, a.name)
	} else {
		a.ln, a.name, err = proxysock.ListenFree(opts.RuntimeDir, live.DefaultName("", opts.URL, opts.Command))
	}
	if err != nil {
		return &UsageError{Err: fmt.Errorf("--ui: the socket for mcpi proxy attach: %w", err)}
	}
	p.att = a
	return nil
}

// closeAttach removes the socket when the proxy does not start.
func (p *proxied) closeAttach() {
	if p.att != nil {
		p.att.ln.Close()
	}
}

// serveAttach makes the server of the socket, once the gate is made.
func (p *proxied) serveAttach(title string, secrets []string) {
	opts, a := p.opts, p.att
	var redact func([]byte) []byte
	if !opts.NoRedact {
		red := record.NewRedactor(secrets)
		redact = func(b []byte) []byte {
			out, _ := red.JSON(b)
			return out
		}
	}
	var breaks []string
	for _, q := range opts.Breaks {
		breaks = append(breaks, q.String())
	}
	info := proxysock.Info{Name: a.name, Title: title, PID: os.Getpid(), Record: opts.Record, Breaks: breaks, Started: time.Now()}
	o := proxysock.Options{Info: info, Redact: redact}
	if p.gate != nil {
		o.Info.HoldTimeout, o.Gate = opts.HoldTimeout.String(), p.gate
	}
	a.srv = proxysock.NewServer(o)
}

// traceEvent hands a trace's event, redacted as the trace is, to the
// TUIs attached.
func (p *proxied) traceEvent(e record.Event) {
	if p.att == nil || p.att.srv == nil {
		return
	}
	if ev, ok := e.TransportEvent(); ok {
		p.att.srv.Observe(ev)
	}
}

// heldChanged is the gate's OnChange.
func (p *proxied) heldChanged() {
	if p.att != nil && p.att.srv != nil {
		p.att.srv.Changed()
	}
}

// trace is the proxy's trace: the Record file, or none (with UI).
func (p *proxied) trace(h record.Header, ro record.Options) (*record.Writer, error) {
	ro.NoRedact = p.opts.NoRedact
	ro.Events = p.traceEvent
	if p.opts.Record == "" {
		return record.NewTap(h, ro), nil
	}
	w, err := record.Create(p.opts.Record, h, ro)
	if err != nil {
		return nil, &UsageError{Err: fmt.Errorf("--record: %w", err)}
	}
	return w, nil
}

// runAttached runs the proxy with its socket served, and says on ErrOut
// (which a desktop host logs) how to attach.
func (p *proxied) runAttached(ctx context.Context, proxy func(context.Context) error) error {
	a, errOut := p.att, p.opts.ErrOut
	served := make(chan error, 1)
	go func() { served <- a.srv.Serve(a.ln) }()
	lead := "mcpi proxy: "
	if a.why != "" {
		lead += "no terminal for the TUI (" + a.why + "): "
	}
	fmt.Fprintf(errOut, "%sattach it from a terminal with: mcpi proxy attach %s (socket %s)\n", lead, a.name, a.ln.Addr())
	if p.gate != nil {
		fmt.Fprintf(errOut, "mcpi proxy: while no TUI is attached, a frame a breakpoint holds goes on after --hold-timeout (%s)\n", p.opts.HoldTimeout)
	}
	err := proxy(ctx)
	a.ln.Close()
	a.srv.Close("the proxy ended")
	if serr := <-served; serr != nil {
		fmt.Fprintf(errOut, "mcpi proxy: the socket for mcpi proxy attach failed: %v\n", serr)
	}
	return err
}
