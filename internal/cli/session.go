package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/bounds"
	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/daemon"
	"github.com/mcpi-dev/mcpi/internal/live"
	"github.com/mcpi-dev/mcpi/internal/record"
	"github.com/mcpi-dev/mcpi/internal/session"
)

// sessionVerbKey annotates a command a session's daemon runs: every
// command given --session by addSessionFlag.
const sessionVerbKey = "mcpi/session"

// addSessionFlag gives cmd --session, and makes it a command a session's
// daemon runs.
func addSessionFlag(cmd *cobra.Command, o *command.ConnOptions) {
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[sessionVerbKey] = "run"
	defer command.FlagGroup(cmd, command.GroupSession)()
	cmd.Flags().StringVar(&o.Target.Session, "session", "", "run in the live session NAME (see mcpi session start) instead of connecting; default: $"+command.SessionEnv+" when no TARGET is given")
}

// withConnFlags gives cmd the flags of a command that talks to a server:
// those of its TARGET, and --session to run it in a live session instead.
func withConnFlags(cmd *cobra.Command, o *command.ConnOptions) *cobra.Command {
	command.AddConnFlags(cmd, o)
	addSessionFlag(cmd, o)
	return cmd
}

// SessionStartOptions are the flags of `mcpi session start`.
type SessionStartOptions struct {
	command.ConnOptions
	Name string
	Idle time.Duration
	// Restart is how many times in a row the server is started again when
	// it exits (--restart); 0: never.
	Restart int
	// The daemon's budgets (hidden flags, for tests to make them tiny).
	ParkedCount int
	ParkedBytes int64
	LogBytes    int64
	// Executable is the mcpi binary that runs the session's daemon.
	Executable func() (string, error)
}

// NewCmdSession returns `mcpi session` and its subcommands.
func NewCmdSession(f *command.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "session",
		Short: "Hold a session open in the background, for commands given --session",
		Long: `Hold a session open in the background, for commands given --session.

mcpi session start connects once; every verb given --session NAME (or
$MCPI_SESSION) then runs in that session: the same output and exit codes as
the one-shot command, in milliseconds, with the server's state kept between
commands. The session lives in a background mcpi reached through a Unix
socket only this user can open.`,
	}
	cmd.AddCommand(NewCmdSessionStart(f, nil), NewCmdSessionList(f, nil), NewCmdSessionShow(f, nil), NewCmdSessionStop(f, nil), NewCmdSessionDaemon(f, nil))
	return cmd
}

// NewCmdSessionStart returns `mcpi session start [NAME] TARGET`.
func NewCmdSessionStart(f *command.Factory, runF func(context.Context, *SessionStartOptions) error) *cobra.Command {
	opts := &SessionStartOptions{ConnOptions: f.Conn(), Executable: f.Executable}
	cmd := &cobra.Command{
		Use:   "start [NAME] TARGET",
		Short: "Connect to a server and hold the session in the background",
		Example: `  mcpi session start demo -- mcpi demo-server
  mcpi call add a=1 b=2 --session demo
  MCPI_SESSION=demo mcpi tools`,
		Args: command.TargetArgs(&opts.Target, func(rest []string) error {
			switch {
			case len(rest) > 1:
				return command.FlagErrorf("unexpected argument %q", rest[1])
			case len(rest) == 1:
				if err := live.ValidName(rest[0]); err != nil {
					return &command.FlagError{Err: err}
				}
				opts.Name = rest[0]
			}
			if opts.Idle < 0 {
				return command.FlagErrorf("invalid --idle %v", opts.Idle)
			}
			if opts.ParkedCount < 1 || opts.ParkedBytes < 1 || opts.LogBytes < 1024 {
				return command.FlagErrorf("invalid budget: --parked-max and --parked-max-bytes must be positive, --log-max-bytes at least 1024")
			}
			return opts.Validate()
		}),
		RunE: command.RunE(opts, runF, sessionStartRun),
	}
	end := command.AddHeldConnFlags(cmd, &opts.ConnOptions, command.AddSamplingModelFlags)
	fl := cmd.Flags()
	end()
	end = command.FlagGroup(cmd, command.GroupSession)
	fl.DurationVar(&opts.Idle, "idle", 30*time.Minute, "end the session after this long without a command (0: never)")
	fl.IntVar(&opts.Restart, "restart", 0, "start the server again when it exits or the connection ends, at most this many times in a row (backoff 0.5 s doubling to 8 s; 0: never)")
	fl.Lookup("restart").NoOptDefVal = "5"
	fl.IntVar(&opts.ParkedCount, "parked-max", bounds.ParkedCount, "how many server requests the session parks for mcpi answer")
	fl.Int64Var(&opts.ParkedBytes, "parked-max-bytes", bounds.ParkedBytes, "how many bytes of params the session's parked requests may hold")
	fl.Int64Var(&opts.LogBytes, "log-max-bytes", bounds.DaemonLogBytes, "how large the session's log in the runtime directory may grow")
	end()
	for _, n := range []string{"parked-max", "parked-max-bytes", "log-max-bytes"} {
		fl.MarkHidden(n)
	}
	return cmd
}

func sessionStartRun(ctx context.Context, opts *SessionStartOptions) error {
	dir := opts.RuntimeDir
	if err := live.EnsureDir(dir); err != nil {
		return err
	}
	// The name is claimed before any file of the session is touched: a
	// start that loses it to another leaves everything alone.
	name, lock, err := live.Claim(dir, opts.Name, live.DefaultName(opts.Target.Server, opts.Target.URL, opts.Target.Command))
	if err != nil {
		if errors.Is(err, live.ErrLocked) {
			msg := fmt.Sprintf("mcpi: a session named %s is running already (mcpi session stop %s ends it)", opts.Name, opts.Name)
			fmt.Fprintln(opts.IO.ErrOut, msg)
			return command.ErrSilent{Code: command.ExitConnect, What: strings.TrimPrefix(msg, "mcpi: ")}
		}
		return err
	}
	// The daemon holds its own copy of the lock from its start on.
	defer lock.Close()
	cmd, reports, err := spawnDaemon(opts, dir, name, lock)
	if err != nil {
		return err
	}
	defer reports.Close()
	return awaitDaemon(ctx, opts.IO, cmd, reports, dir, name)
}

// spawnDaemon starts the daemon of session name (live.Spawn) with start's
// arguments.
func spawnDaemon(opts *SessionStartOptions, dir, name string, lock *os.File) (*exec.Cmd, *os.File, error) {
	exe, err := opts.Executable()
	if err != nil {
		return nil, nil, err
	}
	args := opts.Args
	if len(args) >= 2 && args[0] == "session" && args[1] == "start" {
		args = args[2:]
	}
	cmd, reports, err := live.Spawn(exe, live.StartConfig{Args: args, Name: name, Dir: dir}, lock)
	var se *live.SpawnError
	if errors.As(err, &se) {
		return nil, nil, fmt.Errorf("%w: %v", command.ErrConnect, se)
	}
	return cmd, reports, err
}

// awaitDaemon waits for the daemon to say how connecting went
// (live.Await): the session's name on stdout when it is up.
func awaitDaemon(ctx context.Context, ios *command.IOStreams, cmd *exec.Cmd, pr *os.File, dir, name string) error {
	err := live.Await(ctx, cmd, pr, dir, name, ios.ErrOut)
	var failed *live.StartFailed
	switch {
	case err == nil:
		fmt.Fprintln(ios.Out, name)
	case errors.Is(err, live.ErrEndedEarly):
		return fmt.Errorf("%w: %v", command.ErrConnect, err)
	case errors.As(err, &failed):
		fmt.Fprintln(ios.ErrOut, failed.Message)
		return command.ErrSilent{Code: command.ExitCode(failed.Code), What: strings.TrimPrefix(failed.Message, "mcpi: ")}
	}
	return err
}

// SessionDaemonOptions are the input of `mcpi session daemon`, which
// reads the rest (a live.StartConfig) on its standard input.
type SessionDaemonOptions struct {
	IO         *command.IOStreams
	Executable func() (string, error)
}

// NewCmdSessionDaemon returns `mcpi session daemon`, the hidden command
// session start runs to hold a session.
func NewCmdSessionDaemon(f *command.Factory, runF func(context.Context, *SessionDaemonOptions) error) *cobra.Command {
	opts := &SessionDaemonOptions{IO: f.IO, Executable: f.Executable}
	return &cobra.Command{
		Use:    "daemon",
		Short:  "Hold a session for mcpi session start (reads its configuration on stdin)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE:   command.RunE(opts, runF, sessionDaemonRun),
	}
}

func sessionDaemonRun(ctx context.Context, opts *SessionDaemonOptions) error {
	var cfg live.StartConfig
	if err := json.NewDecoder(opts.IO.In).Decode(&cfg); err != nil {
		return fmt.Errorf("reading the configuration: %w", err)
	}
	report := os.NewFile(3, "report")
	if report == nil {
		return errors.New("no report pipe: mcpi session daemon is started by mcpi session start")
	}
	// The session's name is this daemon's as long as it lives.
	lock := live.Inherit(4)
	defer lock.Close()
	errOut := live.NewReporter(report)
	ios := command.NewIOStreams(bytes.NewReader(nil), io.Discard, errOut)
	df := &command.Factory{IO: ios, Executable: opts.Executable, Args: append([]string{"session", "start"}, cfg.Args...), RuntimeDir: cfg.Dir}
	fail := func(err error) error {
		msg := "mcpi: " + command.OneLine(err.Error())
		var fe *command.FlagError
		if errors.As(err, &fe) {
			msg = fmt.Sprintf("mcpi: %v", err)
		}
		ios.ErrOut.Flush()
		errOut.Fail(int(command.ExitCodeFor(err)), msg)
		return command.ErrSilent{Code: command.ExitCodeFor(err)}
	}

	// session start's own parsing, so that the daemon's options are
	// exactly the ones start checked.
	var so *SessionStartOptions
	start := NewCmdSessionStart(df, func(_ context.Context, o *SessionStartOptions) error { so = o; return nil })
	start.SetArgs(cfg.Args)
	start.SetOut(io.Discard)
	start.SetErr(io.Discard)
	start.SilenceErrors, start.SilenceUsage = true, true
	if err := start.ExecuteContext(ctx); err != nil {
		return fail(err)
	}
	o := &so.ConnOptions
	r := o.NewRun()
	if err := r.Prepare(); err != nil {
		return fail(err)
	}
	run := &daemonRunner{executable: opts.Executable, dir: cfg.Dir}
	err := daemon.Serve(ctx, daemon.Config{
		Name: cfg.Name, Dir: cfg.Dir, Target: targetText(o), Idle: so.Idle, Restart: so.Restart,
		ParkedCount: so.ParkedCount, ParkedBytes: so.ParkedBytes, LogBytes: so.LogBytes,
		Roots: r.MadeRoots, Secrets: o.SecretValues(), Sample: r.SessionSampler(), ModelTap: r.SessionModelTap,
		Say: errOut, Log: opts.IO.ErrData(),
		Open: func(ctx context.Context, hk daemon.Hooks) (*session.Client, error) {
			return r.Open(ctx, command.ConnHooks{Handler: hk.Handler, Tap: hk.Tap, Notified: hk.OnNotification, Warned: hk.OnWarning, MaxServerRequests: hk.MaxServerRequests})
		},
		Run: run.run,
		// A call --no-wait that returned while it waits has not failed.
		Failed: func(code int) bool { return code != int(command.ExitOK) && code != int(ExitWaiting) },
		Ready: func(log io.Writer) {
			ios.ErrOut.Flush()
			errOut.Ready(log)
		},
	})
	r.Close()
	if err != nil {
		return fail(err)
	}
	return nil
}

// daemonRunner runs the command lines a session's daemon is sent.
type daemonRunner struct {
	executable func() (string, error)
	dir        string
}

// run runs a command line in the session h, as the daemon's live.Server
// asks: the verbs a session runs (annotated sessionVerbKey), with the
// session held.
func (d *daemonRunner) run(rctx context.Context, h *daemon.Held, req *live.Request, stdout, stderr io.Writer) int {
	cios := command.NewIOStreams(bytes.NewReader(req.Stdin), stdout, stderr)
	cios.StdoutTTY, cios.StderrTTY, cios.Color = req.StdoutTTY, req.StderrTTY, req.Color
	cios.Dir = req.Cwd
	if len(req.Args) == 0 || !sessionVerb(req.Args[0]) {
		fmt.Fprintf(cios.ErrOut, "mcpi: only %s run in a session\n", sessionVerbList())
		cios.Flush()
		return int(command.ExitUsage)
	}
	if args, noWait := stripNoWait(req.Args); noWait {
		if args[0] != "call" {
			fmt.Fprintf(cios.ErrOut, "mcpi: --no-wait is for mcpi call\n")
			cios.Flush()
			return int(command.ExitUsage)
		}
		code := d.startJob(rctx, h, args, cios, jsonFlag(args))
		cios.Flush()
		return int(code)
	}
	slot := daemon.NewSlot(req.Args, nil)
	rctx, end := h.Begin(rctx, slot)
	defer end()
	return int(run(rctx, d.factory(cios, h, slot), req.Args))
}

// factory is the factory of a command run in the session h, in slot.
func (d *daemonRunner) factory(ios *command.IOStreams, h *daemon.Held, slot *daemon.Slot) *command.Factory {
	return &command.Factory{IO: ios, Executable: d.executable, RuntimeDir: d.dir, Held: h, Slot: slot}
}

// targetText describes the target without its secrets.
func targetText(o *command.ConnOptions) string {
	r := record.NewRedactor(o.SecretValues())
	t := o.Target
	switch {
	case t.Server != "":
		return "--server " + t.Server
	case t.URL != "":
		return r.URL(t.URL)
	}
	return "-- " + strings.Join(r.Args(t.Command), " ")
}

// sessionVerbs are the commands a daemon runs: those whose tree holds a
// command annotated sessionVerbKey, by name.
func sessionVerbs() map[string]bool {
	verbsOnce.Do(func() {
		f := &command.Factory{IO: command.NewIOStreams(bytes.NewReader(nil), io.Discard, io.Discard), Executable: os.Executable}
		verbs = map[string]bool{}
		for _, c := range subcommands(f) {
			if runsInSession(c.build()) {
				verbs[c.name] = true
			}
		}
	})
	return verbs
}

var (
	verbsOnce sync.Once
	verbs     map[string]bool
)

func runsInSession(c *cobra.Command) bool {
	if c.Annotations[sessionVerbKey] != "" {
		return true
	}
	return slices.ContainsFunc(c.Commands(), runsInSession)
}

// sessionVerb reports whether a daemon runs the command name.
func sessionVerb(name string) bool { return sessionVerbs()[name] }

// sessionVerbList names the commands a daemon runs, for its refusal.
func sessionVerbList() string {
	names := slices.Sorted(maps.Keys(sessionVerbs()))
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// jsonFlag reports whether args ask for --json (before a "--").
func jsonFlag(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "--json" || a == "--json=true" {
			return true
		}
	}
	return false
}
