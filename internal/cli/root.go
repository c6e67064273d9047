package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

// Version is mcpi's version, set at link time.
var Version = "0.1.0-dev"

// Factory carries what every command needs.
type Factory struct {
	IO *IOStreams
	// Executable returns the path of the running mcpi binary (the demo
	// spawns it as its server).
	Executable func() (string, error)
	// Args is mcpi's command line without the program name.
	Args []string
}

// NewCmdRoot returns the mcpi command tree.
func NewCmdRoot(f *Factory) *cobra.Command {
	root := &cobra.Command{
		Use:           "mcpi",
		Short:         "mcpi inspects and debugs Model Context Protocol servers",
		Long:          "mcpi inspects and debugs Model Context Protocol (MCP) servers: stdio servers it spawns, and Streamable HTTP or HTTP+SSE servers it connects to.",
		Version:       Version,
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.SetOut(f.IO.Out)
	root.SetErr(f.IO.ErrOut)
	root.SetIn(f.IO.In)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return &FlagError{Err: err} })
	root.AddCommand(NewCmdDemo(f, nil))
	root.AddCommand(NewCmdConnect(f, nil))
	root.AddCommand(NewCmdDemoServer(f, nil))
	for _, what := range []string{"tools", "resources", "templates", "prompts"} {
		root.AddCommand(NewCmdList(f, what, nil))
	}
	root.AddCommand(NewCmdCall(f, nil))
	root.AddCommand(NewCmdRead(f), NewCmdPrompt(f), NewCmdComplete(f), NewCmdPing(f), NewCmdInfo(f))
	root.AddCommand(NewCmdCompletion(f), NewCmdServers(f))
	root.AddCommand(NewCmdAuth(f))
	root.AddCommand(NewCmdReplay(f), NewCmdProxy(f), NewCmdTrace(f))
	root.CompletionOptions.DisableDefaultCmd = true
	return root
}

// Main runs mcpi with the process's arguments and returns its exit code.
func Main() ExitCode {
	f := &Factory{IO: System(), Executable: os.Executable}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return run(ctx, f, os.Args[1:])
}

func run(ctx context.Context, f *Factory, args []string) ExitCode {
	f.Args = args
	root := NewCmdRoot(f)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return ExitOK
	}
	if ctx.Err() != nil && !errors.As(err, new(errSilent)) {
		fmt.Fprintln(f.IO.ErrOut, "mcpi: interrupted")
		return ExitInterrupted
	}
	var fe *FlagError
	if errors.As(err, &fe) {
		fmt.Fprintf(f.IO.ErrOut, "mcpi: %v\n", err)
		if cmd != nil {
			fmt.Fprintf(f.IO.ErrOut, "Run '%s --help' for usage.\n", cmd.CommandPath())
		}
		return ExitUsage
	}
	var se errSilent
	if !errors.As(err, &se) {
		fmt.Fprintf(f.IO.ErrOut, "mcpi: %s\n", oneLine(err.Error()))
	}
	return exitCodeFor(err)
}
