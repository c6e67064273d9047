package command

import (
	"context"
	"net/http"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/daemon"
	"github.com/mcpi-dev/mcpi/internal/live"
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
	// RuntimeDir is where live sessions keep their sockets and records
	// ("": live.DefaultDir).
	RuntimeDir string
	// Held is the live session the command runs in, when it runs in a
	// session's daemon; Slot is the command's place there (nil outside).
	Held *daemon.Held
	Slot *daemon.Slot
	// HTTPTransport sends the HTTP requests of the commands that talk to a
	// server, under mcpi's one HTTP client and its egress policy (nil: the
	// network, through transport.DefaultHTTPTransport). A test sets one
	// that answers in-process.
	HTTPTransport http.RoundTripper
}

// Conn returns the options of a command that talks to a server, with
// what the factory holds for it.
func (f *Factory) Conn() ConnOptions {
	return ConnOptions{IO: f.IO, Args: f.Args, Held: f.Held, Slot: f.Slot, RuntimeDir: f.LiveDir(),
		Target: TargetOptions{InDaemon: f.Held != nil, StderrTTY: f.IO.StderrTTY, HTTPTransport: f.HTTPTransport}}
}

// LiveDir returns the directory of live sessions.
func (f *Factory) LiveDir() string {
	if f.RuntimeDir != "" {
		return f.RuntimeDir
	}
	return live.DefaultDir()
}

// RunE is a command's RunE: its options go to runF when one is given (a
// test, session start's daemon), else to run.
func RunE[T any](opts T, runF, run func(context.Context, T) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, _ []string) error {
		if runF != nil {
			return runF(cmd.Context(), opts)
		}
		return run(cmd.Context(), opts)
	}
}

// CheckedRunE is RunE after check, which takes the command's arguments and
// checks them: when it fails, neither runF nor run is called.
func CheckedRunE[T any](check func(*cobra.Command, []string) error, opts T, runF, run func(context.Context, T) error) func(*cobra.Command, []string) error {
	next := RunE(opts, runF, run)
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return err
		}
		return next(cmd, args)
	}
}
