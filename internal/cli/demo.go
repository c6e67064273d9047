package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/session"
)

// DemoOptions are the flags of `mcpi demo`.
type DemoOptions struct {
	IO         *IOStreams
	Executable func() (string, error)
}

// NewCmdDemo returns `mcpi demo`: mcpi against its own demo server.
func NewCmdDemo(f *Factory, runF func(context.Context, *DemoOptions) error) *cobra.Command {
	opts := &DemoOptions{IO: f.IO, Executable: f.Executable}
	return &cobra.Command{
		Use:   "demo",
		Short: "Inspect mcpi's built-in demo server",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return demoRun(cmd.Context(), opts)
		},
	}
}

func demoRun(ctx context.Context, opts *DemoOptions) error {
	exe, err := opts.Executable()
	if err != nil {
		return fmt.Errorf("finding the mcpi binary to run the demo server: %w", err)
	}
	target := TargetOptions{Command: []string{exe, "demo-server"}, Timeout: session.DefaultTimeout}
	c, err := target.connect(ctx, session.Options{Handler: session.DeclineHandler{}}, nil)
	if err != nil {
		return err
	}
	defer c.Close()
	init := c.InitializeResult()
	fmt.Fprintf(opts.IO.Out, "Connected to %s %s over stdio, protocol revision %s.\n\n",
		oneLine(init.ServerInfo.Name), oneLine(init.ServerInfo.Version), c.ProtocolVersion())
	tools, err := c.AllTools(ctx)
	if err != nil {
		return err
	}
	printTools(opts.IO.Out, tools)
	return nil
}
