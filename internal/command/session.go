package command

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mcpi-dev/mcpi/internal/daemon"
	"github.com/mcpi-dev/mcpi/internal/live"
)

// SessionEnv names the session the verbs use when no TARGET is given.
const SessionEnv = "MCPI_SESSION"

// ConnectionFlags belong to the connection, which a live session made
// when it started: a command run in the session cannot change them. They
// are every flag of a target (AddTargetFlags: transport, headers, eras,
// timeouts, the server entry, every authorization flag), whatever is added
// there later, but --force, which is the command's; and the session's
// roots and recording.
var ConnectionFlags = func() []string {
	c := &cobra.Command{}
	addTargetFlags(c, &TargetOptions{})
	names := []string{"root", "record", "no-redact", "otlp-endpoint"}
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Name != "force" {
			names = append(names, f.Name)
		}
	})
	return names
}()

// UseSession reports whether the command runs in a live session: inside
// the daemon, with --session, or with $MCPI_SESSION and no TARGET.
func (o *TargetOptions) UseSession(cmd *cobra.Command, args []string) bool {
	if cmd.Flags().Lookup("session") == nil {
		return false
	}
	if o.InDaemon {
		if o.Session == "" {
			o.Session = "-"
		}
		return true
	}
	if o.Session != "" {
		return true
	}
	if o.Command != nil || o.URL != "" || o.Server != "" {
		return false
	}
	for _, a := range args {
		if strings.HasPrefix(a, "http://") || strings.HasPrefix(a, "https://") {
			return false
		}
	}
	o.Session = os.Getenv(SessionEnv)
	return o.Session != ""
}

// CheckSession refuses a TARGET and connection flags next to --session.
func (o *TargetOptions) CheckSession(cmd *cobra.Command) error {
	if o.Command != nil {
		return FlagErrorf("give either --session or a server command after \"--\", not both")
	}
	if o.Session != "-" {
		if err := live.ValidName(o.Session); err != nil {
			return &FlagError{Err: err}
		}
	}
	for _, name := range ConnectionFlags {
		if f := cmd.Flags().Lookup(name); f != nil && f.Changed {
			return FlagErrorf("--%s belongs to the connection, which session %s made when it started: give it to mcpi session start", name, o.Session)
		}
	}
	return nil
}

// withHeld runs fn against the daemon's session, answering the server's
// requests with this command's flags.
func (r *ConnRun) withHeld(ctx context.Context, fn func(*ConnRun) error) error {
	h := r.Held
	if err := r.Prepare(); err != nil {
		return err
	}
	r.TapSampling(h.ModelTap())
	say := r.Sayer()
	if r.Slot != nil {
		var a daemon.Answerer = r.Handler(say)
		if r.answerer != nil {
			a = r.answerer
		}
		r.Slot.SetAnswerer(a)
	}
	c, err := h.Current(ctx)
	if note := h.RestartNote(); note != "" {
		say("%s", note)
	}
	if err != nil {
		return err
	}
	r.Client = c
	return r.answers.over(fn(r))
}

// Forward runs the command in the live session o.Target.Session.
func (o *ConnOptions) Forward(ctx context.Context) error {
	dir, args := o.RuntimeDir, o.Args
	if dir == "" {
		dir = live.DefaultDir()
	}
	req := &live.Request{Args: args, StdoutTTY: o.IO.StdoutTTY, StderrTTY: o.IO.StderrTTY, Color: o.IO.Color}
	if wd, err := os.Getwd(); err == nil {
		req.Cwd = wd
	}
	if o.ReadsStdin {
		b, err := io.ReadAll(o.IO.In)
		if err != nil {
			return fmt.Errorf("reading stdin: %w", err)
		}
		req.Stdin = b
	}
	code, err := live.Run(ctx, dir, o.Target.Session, req, o.IO.Data(), o.IO.ErrData())
	if err != nil {
		return WithJSONError(o.IO, o.JSON, SessionError(dir, o.Target.Session, err))
	}
	if code == 0 {
		return nil
	}
	return ErrSilent{Code: ExitCode(code)}
}

// SessionError says why a session could not be reached.
func SessionError(dir, name string, err error) error {
	switch {
	case errors.As(err, new(*live.MismatchError)):
		return fmt.Errorf("%w: %w", ErrConnect, err)
	case errors.Is(err, live.ErrNoDaemon):
		rec, rerr := live.ReadRecord(dir, name)
		if rerr != nil {
			return fmt.Errorf("%w: no session named %s (mcpi session list shows them)", ErrConnect, name)
		}
		if rec.Live() {
			rec = live.MarkLost(dir, rec)
		}
		return sessionEnded(name, rec)
	case errors.Is(err, live.ErrLostDaemon):
		// A daemon that ended its session writes why before it goes: a
		// command that reached it in its last moments says so.
		if rec, rerr := live.ReadRecord(dir, name); rerr == nil && !rec.Live() {
			return sessionEnded(name, rec)
		}
		return fmt.Errorf("%w: session %s: %v", ErrConnect, name, err)
	case errors.Is(err, context.Canceled):
		return err
	}
	return fmt.Errorf("%w: session %s: %v", ErrConnect, name, err)
}

// sessionEnded is the error of a command for a session that has ended: it
// says so, and why (not "could not connect"), and exits as one that could
// not connect does (3).
func sessionEnded(name string, rec *live.Status) error {
	return &daemon.EndedError{Msg: fmt.Sprintf("session %s has ended (%s): %s", name, rec.State, rec.Reason)}
}

// InSession runs fn in the daemon holding the command's session, or sends
// the command there.
func (o *ConnOptions) InSession(ctx context.Context, fn func(*daemon.Held) error) error {
	if h := o.Held; h != nil {
		return WithJSONError(o.IO, o.JSON, fn(h))
	}
	return o.Forward(ctx)
}
