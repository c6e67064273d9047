package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/iostreams"
	"github.com/mcpi-dev/mcpi/internal/live"
	"github.com/mcpi-dev/mcpi/internal/mcptext"
)

// sessionStatus returns one session's status, as live.Statuses would.
func sessionStatus(dir, name string) (*live.Status, error) {
	sts, err := live.Statuses(dir)
	if err != nil {
		return nil, err
	}
	for _, st := range sts {
		if st.Name == name {
			return st, nil
		}
	}
	return nil, fmt.Errorf("%w: no session named %s", command.ErrConnect, name)
}

// since is how long ago t was ("-" for never).
func since(t time.Time) string { return mcptext.Since(t) }

// SessionListOptions are the input of `mcpi session list`.
type SessionListOptions struct {
	IO         *command.IOStreams
	RuntimeDir string
	JSON       bool
}

// NewCmdSessionList returns `mcpi session list`.
func NewCmdSessionList(f *command.Factory, runF func(context.Context, *SessionListOptions) error) *cobra.Command {
	opts := &SessionListOptions{IO: f.IO, RuntimeDir: f.LiveDir()}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the live sessions, and those that ended lately with why",
		Args:  cobra.NoArgs,
		RunE:  command.RunE(opts, runF, sessionListRun),
	}
	command.AddJSONFlag(cmd, &opts.JSON, "print JSON")
	return cmd
}

func sessionListRun(_ context.Context, opts *SessionListOptions) error {
	sts, err := live.Statuses(opts.RuntimeDir)
	if err != nil {
		return err
	}
	if opts.JSON {
		return iostreams.WriteJSON(opts.IO, nonNil(sts))
	}
	if len(sts) == 0 {
		fmt.Fprintln(opts.IO.ErrOut, "No sessions (mcpi session start starts one).")
		return nil
	}
	return mcptext.PrintSessions(opts.IO.Out, sts)
}

// SessionShowOptions are the input of `mcpi session show`.
type SessionShowOptions struct {
	IO         *command.IOStreams
	RuntimeDir string
	Name       string
	JSON       bool
}

// NewCmdSessionShow returns `mcpi session show [NAME]`.
func NewCmdSessionShow(f *command.Factory, runF func(context.Context, *SessionShowOptions) error) *cobra.Command {
	opts := &SessionShowOptions{IO: f.IO, RuntimeDir: f.LiveDir()}
	cmd := &cobra.Command{
		Use:   "show [NAME]",
		Short: "Show a session: server, revision, transport, counters, the tail of the server's stderr",
		Args:  cobra.MaximumNArgs(1),
		RunE: command.CheckedRunE(func(_ *cobra.Command, args []string) (err error) {
			opts.Name, err = sessionNameArg(args)
			return err
		}, opts, runF, sessionShowRun),
	}
	command.AddJSONFlag(cmd, &opts.JSON, "print JSON")
	return cmd
}

func sessionShowRun(_ context.Context, opts *SessionShowOptions) error {
	st, err := sessionStatus(opts.RuntimeDir, opts.Name)
	if err != nil {
		return err
	}
	if opts.JSON {
		return iostreams.WriteJSON(opts.IO, st)
	}
	mcptext.PrintSession(opts.IO.Out, st)
	return nil
}

// stopWait bounds how long session stop waits for the daemon to close the
// server and leave its record.
const stopWait = 10 * time.Second

// SessionStopOptions are the input of `mcpi session stop`.
type SessionStopOptions struct {
	IO         *command.IOStreams
	RuntimeDir string
	Name       string
}

// NewCmdSessionStop returns `mcpi session stop [NAME]`.
func NewCmdSessionStop(f *command.Factory, runF func(context.Context, *SessionStopOptions) error) *cobra.Command {
	opts := &SessionStopOptions{IO: f.IO, RuntimeDir: f.LiveDir()}
	return &cobra.Command{
		Use:   "stop [NAME]",
		Short: "End a session: close the server cleanly (or forget a session that ended)",
		Args:  cobra.MaximumNArgs(1),
		RunE: command.CheckedRunE(func(_ *cobra.Command, args []string) (err error) {
			if opts.Name, err = sessionNameArg(args); err != nil {
				return err
			}
			if err := live.ValidName(opts.Name); err != nil {
				return &command.FlagError{Err: err}
			}
			return nil
		}, opts, runF, sessionStopRun),
	}
}

func sessionStopRun(_ context.Context, opts *SessionStopOptions) error {
	dir, name := opts.RuntimeDir, opts.Name
	st, err := live.Ask(dir, name, live.OpStop)
	if err != nil {
		if !errors.Is(err, live.ErrNoDaemon) {
			return command.SessionError(dir, name, err)
		}
		rec, rerr := live.ReadRecord(dir, name)
		if rerr != nil {
			return fmt.Errorf("%w: no session named %s", command.ErrConnect, name)
		}
		if !live.RemoveUnowned(dir, name) {
			return fmt.Errorf("%w: session %s is starting (mcpi session list shows it once it runs)", command.ErrConnect, name)
		}
		if rec.Live() || rec.State == live.StateLost {
			// Its daemon ended without a word (killed): nothing was
			// left to stop, and its files are gone now.
			fmt.Fprintf(opts.IO.ErrOut, "session %s's daemon (pid %d) was gone already, without saying why (killed?); its files are removed\n", name, rec.PID)
			return nil
		}
		fmt.Fprintf(opts.IO.ErrOut, "session %s had ended; its files are removed\n", name)
		return nil
	}
	// The daemon closes the server, then exits.
	deadline := time.Now().Add(stopWait)
	for time.Now().Before(deadline) && live.Alive(st.PID) {
		time.Sleep(20 * time.Millisecond)
	}
	// The daemon left its record (stopped): it stays listed for an
	// hour, as every ended session does, so that a command of it
	// can say why it ended; a second stop forgets it.
	fmt.Fprintf(opts.IO.ErrOut, "session %s stopped (pid %d, %d commands)\n", name, st.PID, st.Commands)
	return nil
}

// sessionNameArg is the session a command about one session names: its
// argument, else $MCPI_SESSION.
func sessionNameArg(args []string) (string, error) {
	if len(args) == 1 {
		return args[0], nil
	}
	if name := os.Getenv(command.SessionEnv); name != "" {
		return name, nil
	}
	return "", command.FlagErrorf("give the session's NAME, or set $%s", command.SessionEnv)
}
