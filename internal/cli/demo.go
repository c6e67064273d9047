package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/mcptext"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/tui"
)

// DemoOptions are the flags of `mcpi demo`.
type DemoOptions struct {
	IO         *command.IOStreams
	Executable func() (string, error)
	// Print prints the server's info and tools instead of opening the TUI
	// (also what happens without a terminal).
	Print   bool
	NoColor bool
	Mouse   bool
}

// NewCmdDemo returns `mcpi demo`: mcpi against its own demo server.
func NewCmdDemo(f *command.Factory, runF func(context.Context, *DemoOptions) error) *cobra.Command {
	opts := &DemoOptions{IO: f.IO, Executable: f.Executable}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Open the TUI on mcpi's built-in demo server",
		Long: `Open the TUI on mcpi's built-in demo server, which exercises every MCP
feature an inspector has to show. Without a terminal (or with --print) it
prints the server's info and its tools instead.`,
		Args: cobra.NoArgs,
		RunE: command.RunE(opts, runF, demoRun),
	}
	end := command.FlagGroup(cmd, command.GroupOutput)
	cmd.Flags().BoolVar(&opts.Print, "print", false, "print the server's info and tools instead of opening the TUI")
	cmd.Flags().BoolVar(&opts.NoColor, "no-color", false, "no colours (also set by NO_COLOR)")
	cmd.Flags().BoolVar(&opts.Mouse, "mouse", false, mouseUsage)
	end()
	return cmd
}

func demoRun(ctx context.Context, opts *DemoOptions) error {
	exe, err := opts.Executable()
	if err != nil {
		return fmt.Errorf("finding the mcpi binary to run the demo server: %w", err)
	}
	target := command.TargetOptions{Command: []string{exe, "demo-server"}, Timeout: session.DefaultTimeout, MaxTime: session.DefaultMaxTime, Transport: "auto"}
	if opts.Print || !opts.IO.StdinTTY || !opts.IO.StdoutTTY {
		return demoPrint(ctx, opts, &target)
	}
	// The TUI declares MCP Apps: it shows them and runs them.
	target.Apps = true
	o := &command.ConnOptions{IO: opts.IO, Target: target, Args: []string{"demo"}}
	r := o.NewRun()
	return tui.Run(ctx, tui.Options{
		Version:      command.Version,
		Dial:         tuiDial(r),
		Target:       "mcpi demo-server (stdio)",
		NoColor:      opts.NoColor || !opts.IO.Color,
		Mouse:        opts.Mouse,
		Check:        checkFunc(target),
		TraceHeader:  r.TraceHeader(),
		TraceOptions: o.TraceOptions(),
	})
}

// demoPrint is the demo without a terminal: the server's info and tools.
func demoPrint(ctx context.Context, opts *DemoOptions, target *command.TargetOptions) error {
	c, err := target.Connect(ctx, session.Options{Handler: session.DeclineHandler{}}, nil)
	if err != nil {
		return err
	}
	defer c.Close()
	init := c.InitializeResult()
	fmt.Fprintf(opts.IO.Out, "Connected to %s %s over stdio, protocol revision %s.\n\n",
		command.OneLine(init.ServerInfo.Name), command.OneLine(init.ServerInfo.Version), c.ProtocolVersion())
	tools, err := c.AllTools(ctx)
	if err != nil {
		return err
	}
	mcptext.PrintTools(opts.IO.Out, tools)
	if !opts.Print {
		fmt.Fprintln(opts.IO.ErrOut, "\n(no terminal: printed the demo server's tools instead of opening the TUI)")
	}
	return nil
}
