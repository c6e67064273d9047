package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	proxysock "github.com/mcpi-dev/mcpi/internal/attach"
	"github.com/mcpi-dev/mcpi/internal/iostreams"
	"github.com/mcpi-dev/mcpi/internal/live"
	"github.com/mcpi-dev/mcpi/internal/mcptext"
	"github.com/mcpi-dev/mcpi/internal/record"
	"github.com/mcpi-dev/mcpi/internal/transport"
	"github.com/mcpi-dev/mcpi/internal/tui"
)

// The values of --ui: the terminal, else a socket to attach to (auto,
// what --ui alone means); the terminal or a refusal (tty); the socket
// (attach).
const (
	uiAuto   = "auto"
	uiTTY    = "tty"
	uiAttach = "attach"
)

// parseUI checks --ui and --name.
func (opts *ProxyOptions) parseUI() error {
	switch opts.UIMode {
	case "", uiAuto, uiTTY, uiAttach:
	default:
		return flagErrorf("--ui=%s: one of auto (--ui alone: the terminal, else a socket for mcpi proxy attach), tty or attach", opts.UIMode)
	}
	opts.UI = opts.UIMode != ""
	if opts.Name == "" {
		return nil
	}
	switch {
	case !opts.UI:
		return flagErrorf("--name names the proxy mcpi proxy attach reaches: it goes with --ui")
	case opts.UIMode == uiTTY:
		return flagErrorf("--name goes with --ui or --ui=attach: --ui=tty serves nothing to attach to")
	}
	if err := live.ValidName(opts.Name); err != nil {
		return flagErrorf("--name: %v", err)
	}
	return nil
}

// uiHint helps with "--ui attach", where "attach" was taken for an
// argument.
func uiHint(arg string) string {
	switch arg {
	case uiAuto, uiTTY, uiAttach:
		return fmt.Sprintf(" (for the TUI's way, write --ui=%s, with \"=\")", arg)
	}
	return ""
}

// attachOnly says the TUI is served for attach without trying the
// terminal.
func (opts *ProxyOptions) attachOnly() bool { return opts.UIMode == uiAttach || opts.Name != "" }

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
		return &FlagError{Err: fmt.Errorf("--ui: the socket for mcpi proxy attach: %w", err)}
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
	info := proxysock.Info{Name: a.name, Title: title, PID: os.Getpid(), Record: opts.Record, Breaks: opts.Breaks, Started: time.Now()}
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

// trace is the proxy's trace: the --record file, or none (with --ui).
func (p *proxied) trace(h record.Header, ro record.Options) (*record.Writer, error) {
	ro.NoRedact = p.opts.NoRedact
	ro.Events = p.traceEvent
	if p.opts.Record == "" {
		return record.NewTap(h, ro), nil
	}
	w, err := record.Create(p.opts.Record, h, ro)
	if err != nil {
		return nil, &FlagError{Err: fmt.Errorf("--record: %w", err)}
	}
	return w, nil
}

// runAttached runs the proxy with its socket served, and says on stderr
// (which a desktop host logs) how to attach.
func (p *proxied) runAttached(ctx context.Context, proxy func(context.Context) error) error {
	a, errOut := p.att, p.opts.IO.ErrOut
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

// ProxyAttachOptions are the input of `mcpi proxy attach`.
type ProxyAttachOptions struct {
	IO         *IOStreams
	RuntimeDir string
	Name       string
}

// NewCmdProxyAttach returns `mcpi proxy attach [NAME]`.
func NewCmdProxyAttach(f *Factory, runF func(context.Context, *ProxyAttachOptions) error) *cobra.Command {
	opts := &ProxyAttachOptions{IO: f.IO, RuntimeDir: f.runtimeDir()}
	cmd := &cobra.Command{
		Use:   "attach [NAME]",
		Short: "Open the TUI on a proxy started with --ui and no terminal",
		Long: `Open the TUI of mcpi proxy --ui on a proxy that has no terminal of its own (a
desktop app started it), or that was started with --ui=attach or --name NAME:
the Wire and Timeline panes from the start of its conversation, then live,
and the frames its breakpoints hold, to forward, edit, drop, answer or close
on. NAME may be left out when one proxy runs. Quitting the TUI leaves the
proxy running; more than one TUI may attach, and they see the same.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.ArgsLenAtDash() >= 0 {
				return flagErrorf("mcpi proxy attach runs no command: for a proxy a TUI attaches to, write --ui=attach (with \"=\")")
			}
			if len(args) == 1 {
				opts.Name = args[0]
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return proxyAttachRun(cmd.Context(), opts)
		},
	}
	// "mcpi proxy --ui attach --break Q -- CMD" lands here: say how to
	// write what was meant.
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &FlagError{Err: fmt.Errorf("%w (after mcpi proxy, a word \"attach\" is this command: for a proxy a TUI attaches to, write --ui=attach, with \"=\")", err)}
	})
	return cmd
}

// proxyNames returns the proxies that answer, with what they said.
func proxyNames(dir string) ([]*proxysock.Info, error) {
	names, err := proxysock.Names(dir)
	if err != nil {
		return nil, err
	}
	var out []*proxysock.Info
	for _, n := range names {
		if info, err := proxysock.Status(dir, n); err == nil {
			out = append(out, info)
		}
	}
	return out, nil
}

func proxyAttachRun(ctx context.Context, opts *ProxyAttachOptions) error {
	if !opts.IO.StdinTTY || !opts.IO.StdoutTTY {
		return flagErrorf("%v", errNoTerminal)
	}
	name := opts.Name
	if name == "" {
		infos, err := proxyNames(opts.RuntimeDir)
		if err != nil {
			return err
		}
		switch len(infos) {
		case 0:
			return fmt.Errorf("%w: no proxy to attach to runs (mcpi proxy --ui with no terminal, --ui=attach or --name serves one)", errConnect)
		case 1:
			name = infos[0].Name
		default:
			var names []string
			for _, i := range infos {
				names = append(names, i.Name)
			}
			return flagErrorf("%d proxies run (%s): name one (mcpi proxy list)", len(infos), strings.Join(names, ", "))
		}
	} else if err := live.ValidName(name); err != nil {
		return flagErrorf("%v", err)
	}
	c, err := proxysock.Dial(opts.RuntimeDir, name)
	if err != nil {
		if errors.Is(err, live.ErrNoDaemon) {
			return fmt.Errorf("%w: no proxy named %s runs (mcpi proxy list shows them)", errConnect, name)
		}
		return fmt.Errorf("%w: %w", errConnect, err)
	}
	defer c.Close()
	return tui.RunProxy(ctx, tui.ProxyOptions{Title: c.Info().Title + " · attached to " + name, Gate: c, Changes: c.Changes(),
		NoColor: !opts.IO.Color, Run: func(ctx context.Context, tap transport.Tap) error { return c.Run(ctx, tap) }})
}

// ProxyListOptions are the input of `mcpi proxy list`.
type ProxyListOptions struct {
	IO         *IOStreams
	RuntimeDir string
	JSON       bool
}

// NewCmdProxyList returns `mcpi proxy list`.
func NewCmdProxyList(f *Factory, runF func(context.Context, *ProxyListOptions) error) *cobra.Command {
	opts := &ProxyListOptions{IO: f.IO, RuntimeDir: f.runtimeDir()}
	cmd := &cobra.Command{
		Use:   "list [--json]",
		Short: "List the proxies a TUI may attach to",
		Args:  cobra.NoArgs,
		RunE:  runE(opts, runF, proxyListRun),
	}
	addJSONFlag(cmd, &opts.JSON, "print a JSON array")
	return cmd
}

func proxyListRun(_ context.Context, opts *ProxyListOptions) error {
	infos, err := proxyNames(opts.RuntimeDir)
	if err != nil {
		return err
	}
	if opts.JSON {
		return iostreams.WriteJSON(opts.IO, nonNil(infos))
	}
	if len(infos) == 0 {
		fmt.Fprintln(opts.IO.ErrOut, "No proxy to attach to (mcpi proxy --ui with no terminal, --ui=attach or --name serves one).")
		return nil
	}
	tw := mcptext.Table(opts.IO.Out, "NAME", "SERVER", "UPTIME", "PID", "TUIS", "HELD")
	for _, i := range infos {
		mcptext.Row(tw, i.Name, i.Title, since(i.Started), fmt.Sprint(i.PID), fmt.Sprint(i.Clients), fmt.Sprint(i.Held))
	}
	return tw.Flush()
}
