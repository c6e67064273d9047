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
	"github.com/spf13/pflag"

	"github.com/mcpi-dev/mcpi/internal/bounds"
	"github.com/mcpi-dev/mcpi/internal/daemon"
	"github.com/mcpi-dev/mcpi/internal/live"
	"github.com/mcpi-dev/mcpi/internal/record"
	"github.com/mcpi-dev/mcpi/internal/session"
)

// sessionEnv names the session the verbs use when no TARGET is given.
const sessionEnv = "MCPI_SESSION"

// connectionFlags belong to the connection, which a live session made
// when it started: a command run in the session cannot change them. They
// are every flag of a target (addTargetFlags: transport, headers, eras,
// timeouts, the server entry, every authorization flag), whatever is added
// there later, but --force, which is the command's; and the session's
// roots and recording.
var connectionFlags = func() []string {
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

// sessionVerbKey annotates a command a session's daemon runs: every
// command given --session by addSessionFlag.
const sessionVerbKey = "mcpi/session"

// addSessionFlag gives cmd --session, and makes it a command a session's
// daemon runs.
func addSessionFlag(cmd *cobra.Command, o *ConnOptions) {
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[sessionVerbKey] = "run"
	defer flagGroup(cmd, groupSession)()
	cmd.Flags().StringVar(&o.Target.Session, "session", "", "run in the live session NAME (see mcpi session start) instead of connecting; default: $"+sessionEnv+" when no TARGET is given")
}

// useSession reports whether the command runs in a live session: inside
// the daemon, with --session, or with $MCPI_SESSION and no TARGET.
func (o *TargetOptions) useSession(cmd *cobra.Command, args []string) bool {
	if cmd.Flags().Lookup("session") == nil {
		return false
	}
	if o.inDaemon {
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
	o.Session = os.Getenv(sessionEnv)
	return o.Session != ""
}

// checkSession refuses a TARGET and connection flags next to --session.
func (o *TargetOptions) checkSession(cmd *cobra.Command) error {
	if o.Command != nil {
		return flagErrorf("give either --session or a server command after \"--\", not both")
	}
	if o.Session != "-" {
		if err := live.ValidName(o.Session); err != nil {
			return &FlagError{Err: err}
		}
	}
	for _, name := range connectionFlags {
		if f := cmd.Flags().Lookup(name); f != nil && f.Changed {
			return flagErrorf("--%s belongs to the connection, which session %s made when it started: give it to mcpi session start", name, o.Session)
		}
	}
	return nil
}

// withHeld runs fn against the daemon's session, answering the server's
// requests with this command's flags.
func (r *connRun) withHeld(ctx context.Context, fn func(*connRun) error) error {
	h := r.Held
	if err := r.prepare(); err != nil {
		return err
	}
	r.tapSampling(h.ModelTap())
	say := r.sayer()
	if r.Slot != nil {
		var a daemon.Answerer = r.handler(say)
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
	r.client = c
	return r.answers.over(fn(r))
}

// forward runs the command in the live session o.Target.Session.
func (o *ConnOptions) forward(ctx context.Context) error {
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
		return withJSONError(o.IO, o.JSON, sessionError(dir, o.Target.Session, err))
	}
	if code == 0 {
		return nil
	}
	return errSilent{code: ExitCode(code)}
}

// sessionError says why a session could not be reached.
func sessionError(dir, name string, err error) error {
	switch {
	case errors.As(err, new(*live.MismatchError)):
		return fmt.Errorf("%w: %w", errConnect, err)
	case errors.Is(err, live.ErrNoDaemon):
		rec, rerr := live.ReadRecord(dir, name)
		if rerr != nil {
			return fmt.Errorf("%w: no session named %s (mcpi session list shows them)", errConnect, name)
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
		return fmt.Errorf("%w: session %s: %v", errConnect, name, err)
	case errors.Is(err, context.Canceled):
		return err
	}
	return fmt.Errorf("%w: session %s: %v", errConnect, name, err)
}

// SessionStartOptions are the flags of `mcpi session start`.
type SessionStartOptions struct {
	ConnOptions
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
func NewCmdSession(f *Factory) *cobra.Command {
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
func NewCmdSessionStart(f *Factory, runF func(context.Context, *SessionStartOptions) error) *cobra.Command {
	opts := &SessionStartOptions{ConnOptions: f.conn(), Executable: f.Executable}
	cmd := &cobra.Command{
		Use:   "start [NAME] TARGET",
		Short: "Connect to a server and hold the session in the background",
		Example: `  mcpi session start demo -- mcpi demo-server
  mcpi call add a=1 b=2 --session demo
  MCPI_SESSION=demo mcpi tools`,
		Args: targetArgs(&opts.Target, func(rest []string) error {
			switch {
			case len(rest) > 1:
				return flagErrorf("unexpected argument %q", rest[1])
			case len(rest) == 1:
				if err := live.ValidName(rest[0]); err != nil {
					return &FlagError{Err: err}
				}
				opts.Name = rest[0]
			}
			if opts.Idle < 0 {
				return flagErrorf("invalid --idle %v", opts.Idle)
			}
			if opts.ParkedCount < 1 || opts.ParkedBytes < 1 || opts.LogBytes < 1024 {
				return flagErrorf("invalid budget: --parked-max and --parked-max-bytes must be positive, --log-max-bytes at least 1024")
			}
			return opts.validate()
		}),
		RunE: runE(opts, runF, sessionStartRun),
	}
	end := addHeldConnFlags(cmd, &opts.ConnOptions, addSamplingModelFlags)
	fl := cmd.Flags()
	end()
	end = flagGroup(cmd, groupSession)
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
			return errSilent{code: ExitConnect, what: strings.TrimPrefix(msg, "mcpi: ")}
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
		return nil, nil, fmt.Errorf("%w: %v", errConnect, se)
	}
	return cmd, reports, err
}

// awaitDaemon waits for the daemon to say how connecting went
// (live.Await): the session's name on stdout when it is up.
func awaitDaemon(ctx context.Context, ios *IOStreams, cmd *exec.Cmd, pr *os.File, dir, name string) error {
	err := live.Await(ctx, cmd, pr, dir, name, ios.ErrOut)
	var failed *live.StartFailed
	switch {
	case err == nil:
		fmt.Fprintln(ios.Out, name)
	case errors.Is(err, live.ErrEndedEarly):
		return fmt.Errorf("%w: %v", errConnect, err)
	case errors.As(err, &failed):
		fmt.Fprintln(ios.ErrOut, failed.Message)
		return errSilent{code: ExitCode(failed.Code), what: strings.TrimPrefix(failed.Message, "mcpi: ")}
	}
	return err
}

// SessionDaemonOptions are the input of `mcpi session daemon`, which
// reads the rest (a live.StartConfig) on its standard input.
type SessionDaemonOptions struct {
	IO         *IOStreams
	Executable func() (string, error)
}

// NewCmdSessionDaemon returns `mcpi session daemon`, the hidden command
// session start runs to hold a session.
func NewCmdSessionDaemon(f *Factory, runF func(context.Context, *SessionDaemonOptions) error) *cobra.Command {
	opts := &SessionDaemonOptions{IO: f.IO, Executable: f.Executable}
	return &cobra.Command{
		Use:    "daemon",
		Short:  "Hold a session for mcpi session start (reads its configuration on stdin)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE:   runE(opts, runF, sessionDaemonRun),
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
	ios := NewIOStreams(bytes.NewReader(nil), io.Discard, errOut)
	df := &Factory{IO: ios, Executable: opts.Executable, Args: append([]string{"session", "start"}, cfg.Args...), RuntimeDir: cfg.Dir}
	fail := func(err error) error {
		msg := "mcpi: " + oneLine(err.Error())
		var fe *FlagError
		if errors.As(err, &fe) {
			msg = fmt.Sprintf("mcpi: %v", err)
		}
		ios.ErrOut.Flush()
		errOut.Fail(int(exitCodeFor(err)), msg)
		return errSilent{code: exitCodeFor(err)}
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
	r := o.newRun()
	if err := r.prepare(); err != nil {
		return fail(err)
	}
	run := &daemonRunner{executable: opts.Executable, dir: cfg.Dir}
	err := daemon.Serve(ctx, daemon.Config{
		Name: cfg.Name, Dir: cfg.Dir, Target: targetText(o), Idle: so.Idle, Restart: so.Restart,
		ParkedCount: so.ParkedCount, ParkedBytes: so.ParkedBytes, LogBytes: so.LogBytes,
		Roots: r.roots, Secrets: o.secretValues(), Sample: r.sessionSampler(), ModelTap: r.sessionModelTap,
		Say: errOut, Log: opts.IO.ErrData(),
		Open: func(ctx context.Context, hk daemon.Hooks) (*session.Client, error) {
			return r.open(ctx, connHooks{handler: hk.Handler, tap: hk.Tap, notified: hk.OnNotification, warned: hk.OnWarning, maxServerRequests: hk.MaxServerRequests})
		},
		Run: run.run,
		// A call --no-wait that returned while it waits has not failed.
		Failed: func(code int) bool { return code != int(ExitOK) && code != int(ExitWaiting) },
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
	cios := NewIOStreams(bytes.NewReader(req.Stdin), stdout, stderr)
	cios.StdoutTTY, cios.StderrTTY, cios.Color = req.StdoutTTY, req.StderrTTY, req.Color
	cios.Dir = req.Cwd
	if len(req.Args) == 0 || !sessionVerb(req.Args[0]) {
		fmt.Fprintf(cios.ErrOut, "mcpi: only %s run in a session\n", sessionVerbList())
		cios.Flush()
		return int(ExitUsage)
	}
	if args, noWait := stripNoWait(req.Args); noWait {
		if args[0] != "call" {
			fmt.Fprintf(cios.ErrOut, "mcpi: --no-wait is for mcpi call\n")
			cios.Flush()
			return int(ExitUsage)
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
func (d *daemonRunner) factory(ios *IOStreams, h *daemon.Held, slot *daemon.Slot) *Factory {
	return &Factory{IO: ios, Executable: d.executable, RuntimeDir: d.dir, Held: h, Slot: slot}
}

// targetText describes the target without its secrets.
func targetText(o *ConnOptions) string {
	r := record.NewRedactor(o.secretValues())
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
		f := &Factory{IO: NewIOStreams(bytes.NewReader(nil), io.Discard, io.Discard), Executable: os.Executable}
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

// sessionEnded is the error of a command for a session that has ended: it
// says so, and why (not "could not connect"), and exits as one that could
// not connect does (3).
func sessionEnded(name string, rec *live.Status) error {
	return &daemon.EndedError{Msg: fmt.Sprintf("session %s has ended (%s): %s", name, rec.State, rec.Reason)}
}
