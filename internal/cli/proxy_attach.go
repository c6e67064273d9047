package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	proxysock "github.com/mcpi-dev/mcpi/internal/attach"
	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/iostreams"
	"github.com/mcpi-dev/mcpi/internal/live"
	"github.com/mcpi-dev/mcpi/internal/mcptext"
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
		return command.FlagErrorf("--ui=%s: one of auto (--ui alone: the terminal, else a socket for mcpi proxy attach), tty or attach", opts.UIMode)
	}
	opts.UI = opts.UIMode != ""
	if opts.Name == "" {
		return nil
	}
	switch {
	case !opts.UI:
		return command.FlagErrorf("--name names the proxy mcpi proxy attach reaches: it goes with --ui")
	case opts.UIMode == uiTTY:
		return command.FlagErrorf("--name goes with --ui or --ui=attach: --ui=tty serves nothing to attach to")
	}
	if err := live.ValidName(opts.Name); err != nil {
		return command.FlagErrorf("--name: %v", err)
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

// ProxyAttachOptions are the input of `mcpi proxy attach`.
type ProxyAttachOptions struct {
	IO         *command.IOStreams
	RuntimeDir string
	Name       string
}

// NewCmdProxyAttach returns `mcpi proxy attach [NAME]`.
func NewCmdProxyAttach(f *command.Factory, runF func(context.Context, *ProxyAttachOptions) error) *cobra.Command {
	opts := &ProxyAttachOptions{IO: f.IO, RuntimeDir: f.LiveDir()}
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
		RunE: command.CheckedRunE(func(cmd *cobra.Command, args []string) error {
			if cmd.ArgsLenAtDash() >= 0 {
				return command.FlagErrorf("mcpi proxy attach runs no command: for a proxy a TUI attaches to, write --ui=attach (with \"=\")")
			}
			if len(args) == 1 {
				opts.Name = args[0]
			}
			return nil
		}, opts, runF, proxyAttachRun),
	}
	// "mcpi proxy --ui attach --break Q -- CMD" lands here: say how to
	// write what was meant.
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &command.FlagError{Err: fmt.Errorf("%w (after mcpi proxy, a word \"attach\" is this command: for a proxy a TUI attaches to, write --ui=attach, with \"=\")", err)}
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
		return command.FlagErrorf("%v", errNoTerminal)
	}
	name := opts.Name
	if name == "" {
		infos, err := proxyNames(opts.RuntimeDir)
		if err != nil {
			return err
		}
		switch len(infos) {
		case 0:
			return fmt.Errorf("%w: no proxy to attach to runs (mcpi proxy --ui with no terminal, --ui=attach or --name serves one)", command.ErrConnect)
		case 1:
			name = infos[0].Name
		default:
			var names []string
			for _, i := range infos {
				names = append(names, i.Name)
			}
			return command.FlagErrorf("%d proxies run (%s): name one (mcpi proxy list)", len(infos), strings.Join(names, ", "))
		}
	} else if err := live.ValidName(name); err != nil {
		return command.FlagErrorf("%v", err)
	}
	c, err := proxysock.Dial(opts.RuntimeDir, name)
	if err != nil {
		if errors.Is(err, live.ErrNoDaemon) {
			return fmt.Errorf("%w: no proxy named %s runs (mcpi proxy list shows them)", command.ErrConnect, name)
		}
		return fmt.Errorf("%w: %w", command.ErrConnect, err)
	}
	defer c.Close()
	return tui.RunProxy(ctx, tui.ProxyOptions{Title: c.Info().Title + " · attached to " + name, Gate: c, Changes: c.Changes(),
		NoColor: !opts.IO.Color, Run: func(ctx context.Context, tap transport.Tap) error { return c.Run(ctx, tap) }})
}

// ProxyListOptions are the input of `mcpi proxy list`.
type ProxyListOptions struct {
	IO         *command.IOStreams
	RuntimeDir string
	JSON       bool
}

// NewCmdProxyList returns `mcpi proxy list`.
func NewCmdProxyList(f *command.Factory, runF func(context.Context, *ProxyListOptions) error) *cobra.Command {
	opts := &ProxyListOptions{IO: f.IO, RuntimeDir: f.LiveDir()}
	cmd := &cobra.Command{
		Use:   "list [--json]",
		Short: "List the proxies a TUI may attach to",
		Args:  cobra.NoArgs,
		RunE:  command.RunE(opts, runF, proxyListRun),
	}
	command.AddJSONFlag(cmd, &opts.JSON, "print a JSON array")
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
