package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mcpi-dev/mcpi/internal/bounds"
	"github.com/mcpi-dev/mcpi/internal/live"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/record"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// A live session is a session.Client held by a background mcpi (the
// daemon, `mcpi session daemon`, hidden) that serves commands over a Unix
// socket (internal/live). A verb given --session sends its command line
// to the daemon, which runs the very same verb code against the session
// it holds, with streams that carry stdout and stderr back apart; the exit
// code comes back last. Output, --json and exit codes are the one-shot
// command's because the code is.

// sessionVerbs are the commands a daemon runs.
var sessionVerbs = map[string]bool{
	"call": true, "tools": true, "resources": true, "templates": true, "prompts": true,
	"read": true, "prompt": true, "complete": true, "ping": true, "info": true,
	"pending": true, "answer": true, "tail": true, "log-level": true, "subscribe": true, "roots": true,
	"result": true,
}

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
	names := []string{"root", "record", "no-redact"}
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Name != "force" {
			names = append(names, f.Name)
		}
	})
	return names
}()

func addSessionFlag(cmd *cobra.Command, o *ConnOptions) {
	defer flagGroup(cmd, groupSession)()
	cmd.Flags().StringVar(&o.Target.Session, "session", "", "run in the live session NAME (see mcpi session start) instead of connecting; default: $"+sessionEnv+" when no TARGET is given")
}

// useSession reports whether the command runs in a live session: inside
// the daemon, with --session, or with $MCPI_SESSION and no TARGET.
func (o *TargetOptions) useSession(cmd *cobra.Command, args []string) bool {
	if cmd.Flags().Lookup("session") == nil {
		return false
	}
	if heldOf(cmd.Context()) != nil {
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

// heldSession is the session a daemon holds, in the context of the
// commands it runs.
type heldSession struct {
	name   string
	target string
	// subURIs are the resources the modern session is subscribed to, and
	// subs the subscriptions/listen that carries them.
	subMu   sync.Mutex
	subURIs []string
	subs    *session.Subscription
	// end is how the session ended, once ended is closed.
	end   atomic.Pointer[live.Status]
	ended chan struct{}
	// cur is the client of the session's server: replaced when --restart
	// starts the server again; gone is closed when it ends for good.
	cur  atomic.Pointer[session.Client]
	gone chan struct{}
	disp *dispatcher
	hub  *tailHub
	// tools are the server's tools as last listed, for the checks of
	// mcpi call.
	tools *toolCache
	// jobs are the calls run with --no-wait, for mcpi result.
	jobs *jobTable
	// logLevel is the level mcpi log-level asked, applied again after a
	// restart; restarts say what --restart did.
	stateMu  sync.Mutex
	logLevel mcp.LoggingLevel
	restarts restartLog
	// swapped is closed, and replaced, each time --restart puts a new
	// client in cur; restarting says one is being started.
	swapped    chan struct{}
	restarting bool
	restartMax int // --restart

	// base is the status the daemon started with; log its log; the
	// daemon's executable, runtime directory and idle timeout.
	base       live.Status
	log        *logFile
	executable func() (string, error)
	dir        string
	idle       time.Duration
}

// restartWait bounds how long a command waits for a restart under way.
var restartWait = bounds.Clock{Name: "restart", D: 20 * time.Second}

// current returns the client to run a command with: the session's, or,
// while --restart starts its server again, the new one once it is up.
func (h *heldSession) current(ctx context.Context) (*session.Client, error) {
	var timer *time.Timer
	for {
		c := h.client()
		select {
		case <-c.Done():
		default:
			return c, nil
		}
		h.stateMu.Lock()
		restarting, swapped := h.restarting, h.swapped
		h.stateMu.Unlock()
		if h.client() != c {
			continue // swapped meanwhile
		}
		if h.restartMax > 0 {
			// With --restart a dead server is one about to be started
			// again, until the supervisor gives up (gone).
			restarting = true
		}
		select {
		case <-h.gone:
			restarting = false // no restart is coming
		default:
		}
		if !restarting || swapped == nil {
			if err := c.Err(); err != nil {
				return nil, err
			}
			return nil, session.ErrDisconnected
		}
		if timer == nil {
			timer = restartWait.Timer()
			defer timer.Stop()
		}
		select {
		case <-swapped:
		case <-h.gone:
		case <-timer.C:
			return nil, fmt.Errorf("%w: session %s's server is being started again (--restart) and is not up after %v", session.ErrDisconnected, h.name, restartWait.D)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// restartLog is what --restart did: how often, when, why, and what was
// applied again.
type restartLog struct {
	Count     int       `json:"count"`
	Last      time.Time `json:"last,omitzero"`
	Why       string    `json:"why,omitempty"`
	Reapplied string    `json:"reapplied,omitempty"`
}

// client returns the client of the session's server now.
func (h *heldSession) client() *session.Client { return h.cur.Load() }

// restartNote is the line every command run after a restart prints on
// stderr, or "" when the server never restarted.
func (h *heldSession) restartNote() string {
	h.stateMu.Lock()
	r := h.restarts
	h.stateMu.Unlock()
	if r.Count == 0 {
		return ""
	}
	note := fmt.Sprintf("note: session %s's server was restarted %d time(s), last %s ago (%s)", h.name, r.Count, since(r.Last), oneLine(r.Why))
	if r.Reapplied != "" {
		note += "; applied again: " + r.Reapplied
	}
	return note
}

// toolCache holds a session's tools between the calls that check their
// arguments against them, so that a call in a session is one round trip,
// not a tools/list and then the call. It is used only where the server
// tells of changes: a legacy session (a server with tools.listChanged
// sends notifications/tools/list_changed, one without declares that its
// tools do not change), a modern one while the session's
// subscriptions/listen for toolsListChanged is acknowledged and open. It
// is dropped when the server says its tools changed and when the session
// is replaced by a new one; a tool it does not hold is looked for in a
// new listing before a call says there is none; and mcpi tools in the
// session lists anew and keeps what it got.
type toolCache struct {
	usable atomic.Bool
	mu     sync.Mutex
	gen    int64
	tools  map[string]*mcp.Tool
	// epoch counts the invalidations: a listing started before one is not
	// kept, for it may predate the change.
	epoch int64
}

// watchTools makes the cache usable for c: at once in the legacy era; in
// the modern era once a subscriptions/listen for the tools' changes is
// acknowledged, and until it ends.
func (t *toolCache) watchTools(ctx context.Context, c *session.Client) {
	if c.Era() != session.EraModern {
		t.usable.Store(true)
		return
	}
	if caps := c.ServerCapabilities(); caps.Tools == nil || !caps.Tools.ListChanged {
		return
	}
	sub, err := c.Listen(ctx, mcp.SubscriptionFilter{ToolsListChanged: true})
	if err != nil {
		return
	}
	if !sub.Acknowledged.ToolsListChanged {
		sub.Close()
		return
	}
	t.usable.Store(true)
	go func() {
		<-sub.Done()
		t.usable.Store(false)
		t.invalidate()
	}()
}

func (t *toolCache) invalidate() {
	t.mu.Lock()
	t.tools = nil
	t.epoch++
	t.mu.Unlock()
}

// begin is called before a listing: set takes what it returns.
func (t *toolCache) begin() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.epoch
}

// set records a full listing made under generation gen, begun at epoch
// (begin), unless the tools were said to change since it began.
func (t *toolCache) set(gen, epoch int64, tools []mcp.Tool) {
	m := make(map[string]*mcp.Tool, len(tools))
	for i := range tools {
		m[tools[i].Name] = &tools[i]
	}
	t.mu.Lock()
	if t.epoch == epoch {
		t.gen, t.tools = gen, m
	}
	t.mu.Unlock()
}

func (t *toolCache) find(ctx context.Context, c *session.Client, name string) (*mcp.Tool, error) {
	if !t.usable.Load() {
		return c.FindTool(ctx, name)
	}
	gen := c.Generation()
	t.mu.Lock()
	tool, ok := t.tools[name]
	fresh := t.tools != nil && t.gen == gen
	t.mu.Unlock()
	if fresh && ok {
		return tool, nil
	}
	epoch := t.begin()
	tools, err := c.AllTools(ctx)
	if err != nil {
		return nil, err
	}
	t.set(gen, epoch, tools)
	for i := range tools {
		if tools[i].Name == name {
			return &tools[i], nil
		}
	}
	return nil, nil
}

type heldKey struct{}

func heldOf(ctx context.Context) *heldSession {
	if ctx == nil {
		return nil
	}
	h, _ := ctx.Value(heldKey{}).(*heldSession)
	return h
}

// withHeld runs fn against the daemon's session, answering the server's
// requests with this command's flags.
func (o *ConnOptions) withHeld(ctx context.Context, h *heldSession, fn func(*session.Client) error) error {
	if err := o.validate(); err != nil {
		return err
	}
	var mu sync.Mutex
	say := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(o.IO.ErrOut, format+"\n", args...)
	}
	o.verbose = func(format string, args ...any) {
		if o.Verbose {
			say(format, args...)
		}
	}
	if s := slotOf(ctx); s != nil {
		s.set(&cliHandler{o: o, say: say})
	}
	c, err := h.current(ctx)
	if note := h.restartNote(); note != "" {
		say("%s", note)
	}
	if err != nil {
		return err
	}
	return o.withAnswers(fn(c))
}

// forward runs the command in the live session o.Target.Session.
func (o *ConnOptions) forward(ctx context.Context) error {
	dir, args := live.DefaultDir(), o.Args
	if f := factoryOf(ctx); f != nil {
		dir, args = f.runtimeDir(), f.Args
	}
	req := &live.Request{Args: args, StdoutTTY: o.IO.StdoutTTY, StderrTTY: o.IO.StderrTTY, Color: o.IO.Color}
	if wd, err := os.Getwd(); err == nil {
		req.Cwd = wd
	}
	if o.readsStdin {
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
			rec = markLost(dir, rec)
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

// markLost records that a session's daemon is gone without a word, unless
// the name is owned again (a new daemon starts under it).
func markLost(dir string, rec *live.Status) *live.Status {
	lock, err := live.Lock(dir, rec.Name)
	if err != nil {
		return rec
	}
	defer lock.Close()
	rec.State = live.StateLost
	rec.Reason = fmt.Sprintf("its daemon (pid %d) is gone without saying why (killed?)", rec.PID)
	rec.Ended = time.Now()
	rec.Active = 0
	live.WriteRecord(dir, rec)
	os.Remove(live.SocketPath(dir, rec.Name))
	return rec
}

// cmdSlot is a command under way in the daemon: the handler of its answer
// flags, once its options are parsed.
type cmdSlot struct {
	mu   sync.Mutex
	h    *cliHandler
	args []string
	// onPark, when set (a call --no-wait), is called when a server request
	// the command may be waiting on is parked.
	onPark func()
}

// command is the command line of the slot's command, without --session.
func (s *cmdSlot) command() string {
	var out []string
	for i := 0; i < len(s.args); i++ {
		a := s.args[i]
		switch {
		case a == "--session":
			i++
			continue
		case strings.HasPrefix(a, "--session="):
			continue
		}
		out = append(out, a)
	}
	return strings.Join(out, " ")
}

func (s *cmdSlot) set(h *cliHandler) { s.mu.Lock(); s.h = h; s.mu.Unlock() }
func (s *cmdSlot) get() *cliHandler  { s.mu.Lock(); defer s.mu.Unlock(); return s.h }

type slotKey struct{}

func slotOf(ctx context.Context) *cmdSlot {
	s, _ := ctx.Value(slotKey{}).(*cmdSlot)
	return s
}

// dispatcher answers the held session's server requests with the flags of
// the command that caused them. A modern server's input requests travel
// with the request, so the command is known; a legacy server's requests
// do not say which request they serve: the newest command under way that
// gave answers of that kind answers, else the newest command.
type dispatcher struct {
	mu       sync.Mutex
	slots    []*cmdSlot
	roots    []mcp.Root
	watchers []*watcher
	// board holds the requests no command can answer, for mcpi answer;
	// name is the session's, for the message telling how.
	board *parkBoard
	name  string
	// logf writes a line to the daemon's log (nil: none).
	logf func(format string, args ...any)
}

var _ session.Handler = (*dispatcher)(nil)

func (d *dispatcher) add(s *cmdSlot) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.slots = append(d.slots, s)
}

func (d *dispatcher) remove(s *cmdSlot) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i, x := range d.slots {
		if x == s {
			d.slots = append(d.slots[:i], d.slots[i+1:]...)
			return
		}
	}
}

func (d *dispatcher) pick(ctx context.Context, gave func(*ConnOptions) bool) *cliHandler {
	if s := slotOf(ctx); s != nil {
		if h := s.get(); h != nil {
			return h
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	var newest *cliHandler
	for i := len(d.slots) - 1; i >= 0; i-- {
		h := d.slots[i].get()
		if h == nil {
			continue
		}
		if gave(h.o) {
			return h
		}
		if newest == nil {
			newest = h
		}
	}
	return newest
}

func (d *dispatcher) CreateMessage(ctx context.Context, req *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	h := d.pick(ctx, func(o *ConnOptions) bool { return o.SamplingReply != "" })
	if h != nil && h.o.SamplingReply != "" {
		return h.CreateMessage(ctx, req)
	}
	res, err := d.park(ctx, &parked{Method: "sampling/createMessage", Sampling: req})
	if err != nil {
		return nil, err
	}
	r, ok := res.(*mcp.CreateMessageResult)
	if !ok {
		return nil, &mcp.RPCError{Code: mcp.CodeInternalError, Message: "sampling: no reply"}
	}
	return r, nil
}

func (d *dispatcher) Elicit(ctx context.Context, req *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	h := d.pick(ctx, func(o *ConnOptions) bool { return o.Elicit != "" })
	if h != nil && h.o.Elicit != "" {
		return h.Elicit(ctx, req)
	}
	res, err := d.park(ctx, &parked{Method: "elicitation/create", Elicit: req})
	if err != nil {
		return nil, err
	}
	r, ok := res.(*mcp.ElicitResult)
	if !ok {
		return &mcp.ElicitResult{Action: mcp.ElicitCancel}, nil
	}
	return r, nil
}

// ListRoots answers with the session's roots: those it started with, as
// mcpi roots changed them since.
func (d *dispatcher) ListRoots(context.Context) (*mcp.ListRootsResult, error) {
	return &mcp.ListRootsResult{Roots: d.getRoots()}, nil
}

func (d *dispatcher) getRoots() []mcp.Root {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]mcp.Root{}, d.roots...)
}

func (d *dispatcher) setRoots(roots []mcp.Root) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.roots = append([]mcp.Root{}, roots...)
}

// addWatcher adds an attached client and returns the requests parked
// before, for it to be asked (park asks those added before it).
func (d *dispatcher) addWatcher(w *watcher) []*parked {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.watchers = append(d.watchers, w)
	return d.board.list()
}

func (d *dispatcher) removeWatcher(w *watcher) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.watchers = slices.DeleteFunc(d.watchers, func(x *watcher) bool { return x == w })
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
	cmd.AddCommand(NewCmdSessionStart(f, nil), newCmdSessionList(f), newCmdSessionShow(f), newCmdSessionStop(f), newCmdSessionDaemon(f))
	return cmd
}

// NewCmdSessionStart returns `mcpi session start [NAME] TARGET`.
func NewCmdSessionStart(f *Factory, runF func(context.Context, *SessionStartOptions) error) *cobra.Command {
	opts := &SessionStartOptions{ConnOptions: ConnOptions{IO: f.IO, Args: f.Args}}
	cmd := &cobra.Command{
		Use:   "start [NAME] TARGET",
		Short: "Connect to a server and hold the session in the background",
		Example: `  mcpi session start demo -- mcpi demo-server
  mcpi call add a=1 b=2 --session demo
  MCPI_SESSION=demo mcpi tools`,
		RunE: func(cmd *cobra.Command, args []string) error {
			rest, err := opts.Target.parseTarget(cmd, args)
			if err != nil {
				return err
			}
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
			if err := opts.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return sessionStartRun(cmd.Context(), f, opts)
		},
	}
	addTargetFlags(cmd, &opts.Target)
	fl := cmd.Flags()
	end := flagGroup(cmd, groupArgs)
	fl.StringArrayVar(&opts.Roots, "root", nil, "a root to offer the server (a directory path or a URI; repeatable)")
	end()
	end = flagGroup(cmd, groupOutput)
	fl.StringVar(&opts.Record, "record", "", "write the session's wire traffic to this trace file (JSON Lines, secrets redacted)")
	fl.BoolVar(&opts.NoRedact, "no-redact", false, "with --record: keep secrets (Authorization headers, tokens, -e values) in the trace")
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

// daemonConfig is what session start tells the daemon, on its standard
// input: never in its argv, which every user can read.
type daemonConfig struct {
	Args []string `json:"args"` // session start's arguments
	Name string   `json:"name"`
	Dir  string   `json:"dir"`
}

// startReport is one line from the daemon to session start, on a pipe:
// the daemon's stderr while it connects, then how connecting went.
type startReport struct {
	Err     []byte `json:"err,omitempty"`
	Ready   bool   `json:"ready,omitempty"`
	Fail    int    `json:"fail,omitempty"`
	Message string `json:"message,omitempty"`
}

func sessionStartRun(ctx context.Context, f *Factory, opts *SessionStartOptions) error {
	dir := f.runtimeDir()
	if err := live.EnsureDir(dir); err != nil {
		return err
	}
	// The name is claimed before any file of the session is touched: a
	// start that loses it to another leaves everything alone.
	name, lock, err := claimName(dir, opts.Name, defaultName(&opts.Target))
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
	exe, err := f.Executable()
	if err != nil {
		return err
	}
	args := f.Args
	if len(args) >= 2 && args[0] == "session" && args[1] == "start" {
		args = args[2:]
	}
	cfg, _ := json.Marshal(daemonConfig{Args: args, Name: name, Dir: dir})
	logf, err := os.OpenFile(live.LogPath(dir, name), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	defer logf.Close()
	pr, pw, err := os.Pipe()
	if err != nil {
		return err
	}
	defer pr.Close()
	cmd := exec.Command(exe, "session", "daemon")
	cmd.Stdin = bytes.NewReader(cfg)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.ExtraFiles = []*os.File{pw, lock}
	live.Detach(cmd)
	if err := cmd.Start(); err != nil {
		pw.Close()
		return fmt.Errorf("%w: starting the session's daemon: %v", errConnect, err)
	}
	pw.Close()
	waited := make(chan struct{})
	go func() { cmd.Wait(); close(waited) }()
	reports := make(chan startReport)
	go func() {
		defer close(reports)
		sc := bufio.NewScanner(pr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var r startReport
			if json.Unmarshal(sc.Bytes(), &r) == nil {
				reports <- r
			}
		}
	}()
	for {
		select {
		case r, ok := <-reports:
			switch {
			case !ok:
				return fmt.Errorf("%w: the session's daemon ended before it connected (see %s)", errConnect, live.LogPath(dir, name))
			case len(r.Err) > 0:
				opts.IO.ErrOut.Write(r.Err)
			case r.Ready:
				fmt.Fprintln(opts.IO.Out, name)
				return nil
			case r.Fail != 0:
				<-waited
				live.Remove(dir, name)
				fmt.Fprintln(opts.IO.ErrOut, r.Message)
				return errSilent{code: ExitCode(r.Fail), what: strings.TrimPrefix(r.Message, "mcpi: ")}
			}
		case <-ctx.Done():
			cmd.Process.Kill()
			<-waited
			live.Remove(dir, name)
			return ctx.Err()
		}
	}
}

var nameJunk = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// defaultName names a session after its target: the --server entry, the
// URL's host and port, or the server command (the package a runner such
// as npx runs, rather than the runner).
func defaultName(t *TargetOptions) string {
	var n string
	switch {
	case t.Server != "":
		n = t.Server
	case t.URL != "":
		if u, err := url.Parse(t.URL); err == nil {
			n = u.Host
		}
	case len(t.Command) > 0:
		n = filepath.Base(t.Command[0])
		switch strings.TrimSuffix(n, ".exe") {
		case "npx", "uvx", "bunx", "pnpx", "node", "python", "python3", "deno", "uv", "pipx", "docker":
			for _, a := range t.Command[1:] {
				if !strings.HasPrefix(a, "-") {
					// @scope/package@version: package; dir/server.py: server
					n, _, _ = strings.Cut(filepath.Base(a), "@")
					n = strings.TrimSuffix(n, filepath.Ext(n))
					break
				}
			}
		}
	}
	n = strings.Trim(nameJunk.ReplaceAllString(n, "-"), "-._")
	if len(n) > 40 {
		n = n[:40]
	}
	if live.ValidName(n) != nil {
		n = "session"
	}
	return n
}

// claimName takes the lock of a session's name: the one given (ErrLocked
// when a session has it: running, or starting), else the first one made
// from base that no session has.
func claimName(dir, name, base string) (string, *os.File, error) {
	if name != "" {
		lock, err := live.Lock(dir, name)
		if err != nil {
			return "", nil, err
		}
		// A daemon that holds no lock (an older mcpi's) still owns its name.
		if st, err := live.Ask(dir, name, live.OpStatus); err == nil && st.Live() {
			lock.Close()
			return "", nil, live.ErrLocked
		}
		return name, lock, nil
	}
	taken := map[string]bool{}
	for {
		n := uniqueName(dir, base, taken)
		lock, err := live.Lock(dir, n)
		switch {
		case errors.Is(err, live.ErrLocked):
			// Claimed meanwhile by another start.
			taken[n] = true
			continue
		case err != nil:
			return "", nil, err
		}
		return n, lock, nil
	}
}

// uniqueName returns base, or base-2, base-3...: the first name no
// session has, running or ended, and not in taken.
func uniqueName(dir, base string, taken map[string]bool) string {
	taken = maps.Clone(taken)
	names, _ := live.Names(dir)
	for _, n := range names {
		taken[n] = true
	}
	if !taken[base] {
		return base
	}
	for i := 2; ; i++ {
		if n := fmt.Sprintf("%s-%d", base, i); !taken[n] {
			return n
		}
	}
}

func newCmdSessionDaemon(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:    "daemon",
		Short:  "Hold a session for mcpi session start (reads its configuration on stdin)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return sessionDaemonRun(cmd.Context(), f)
		},
	}
}

// switchWriter writes to w, which may be replaced.
type switchWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *switchWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func (s *switchWriter) set(w io.Writer) { s.mu.Lock(); s.w = w; s.mu.Unlock() }

// reportWriter sends the daemon's stderr to session start.
type reportWriter struct{ enc *json.Encoder }

func (r reportWriter) Write(p []byte) (int, error) {
	if err := r.enc.Encode(startReport{Err: p}); err != nil {
		return 0, err
	}
	return len(p), nil
}

func sessionDaemonRun(ctx context.Context, f *Factory) error {
	var cfg daemonConfig
	if err := json.NewDecoder(f.IO.In).Decode(&cfg); err != nil {
		return fmt.Errorf("reading the configuration: %w", err)
	}
	report := os.NewFile(3, "report")
	if report == nil {
		return errors.New("no report pipe: mcpi session daemon is started by mcpi session start")
	}
	enc := json.NewEncoder(report)
	// The session's name is this daemon's as long as it lives.
	lock := live.Inherit(4)
	defer lock.Close()
	errOut := &switchWriter{w: reportWriter{enc}}
	ios := NewIOStreams(bytes.NewReader(nil), io.Discard, errOut)
	df := &Factory{IO: ios, Executable: f.Executable, Args: append([]string{"session", "start"}, cfg.Args...), RuntimeDir: cfg.Dir}
	fail := func(err error) error {
		msg := "mcpi: " + oneLine(err.Error())
		var fe *FlagError
		if errors.As(err, &fe) {
			msg = fmt.Sprintf("mcpi: %v", err)
		}
		ios.ErrOut.Flush()
		enc.Encode(startReport{Fail: int(exitCodeFor(err)), Message: msg})
		report.Close()
		return errSilent{code: exitCodeFor(err)}
	}

	// session start's own parsing, so that the daemon's options are
	// exactly the ones start checked.
	var opts *SessionStartOptions
	start := NewCmdSessionStart(df, func(_ context.Context, o *SessionStartOptions) error { opts = o; return nil })
	start.SetArgs(cfg.Args)
	start.SetOut(io.Discard)
	start.SetErr(io.Discard)
	start.SilenceErrors, start.SilenceUsage = true, true
	pctx := context.WithValue(ctx, streamsKey{}, ios)
	pctx = context.WithValue(pctx, factoryKey{}, df)
	if err := start.ExecuteContext(pctx); err != nil {
		return fail(err)
	}
	o := &opts.ConnOptions
	// The log (the daemon's stderr, NAME.log) takes over from the report
	// pipe once the session runs; bounded in bytes.
	lf := newLogFile(f.IO.ErrData(), opts.LogBytes)
	dlog := newDaemonLog(errOut)
	o.warned = dlog.warning
	defer dlog.summary()
	disp := &dispatcher{roots: o.roots, name: cfg.Name, board: newParkBoard(opts.ParkedCount, opts.ParkedBytes), logf: dlog.printf}
	hub := &tailHub{redact: record.NewRedactor(o.secretValues())}
	o.watch = hub.tap()
	tools := &toolCache{}
	o.notified = func(n session.Notification) {
		if n.Method == "notifications/tools/list_changed" {
			tools.invalidate()
		}
		hub.notify(n)
	}
	o.handler = disp
	c, err := o.open(ctx)
	if err != nil {
		return fail(err)
	}
	ln, err := live.Listen(cfg.Dir, cfg.Name)
	if err != nil {
		c.Close()
		return fail(err)
	}
	held := &heldSession{name: cfg.Name, target: targetText(o), disp: disp, hub: hub, tools: tools, jobs: newJobTable(), ended: make(chan struct{}), gone: make(chan struct{}), swapped: make(chan struct{})}
	held.cur.Store(c)
	defer func() { held.client().Close() }()
	tools.watchTools(ctx, c)
	held.restartMax = opts.Restart
	go held.supervise(ctx, o, opts.Restart, dlog.printf)
	held.base = live.Status{Name: cfg.Name, Target: targetText(o), PID: os.Getpid(), State: live.StateRunning,
		Started: time.Now()}
	if opts.Idle > 0 {
		held.base.Idle = opts.Idle.String()
	}
	held.log, held.executable, held.dir, held.idle = lf, f.Executable, cfg.Dir, opts.Idle
	status := held.status
	srv := live.NewServer(held.runCommand, status, opts.Idle)
	srv.Attach = held.serveAttached
	rec := status()
	if err := live.WriteRecord(cfg.Dir, &rec); err != nil {
		ln.Close()
		return fail(err)
	}
	ios.ErrOut.Flush()
	enc.Encode(startReport{Ready: true})
	report.Close()
	errOut.set(lf)

	srv.OnEnd = func(why error) { held.recordEnd(why, srv.Counters) }
	srv.Serve(ctx, ln, held.gone)
	held.client().Close()
	if o.recorder != nil {
		o.recorder.Close()
	}
	return nil
}

// status is the session's status: what its record and session show say.
func (h *heldSession) status() live.Status {
	st := h.base
	c := h.client()
	st.Era, st.ProtocolVersion = c.Era(), c.ProtocolVersion()
	d := transport.Describe(c.Conn())
	st.Transport, st.SessionID, st.StderrTail = d.Transport, d.SessionID, d.StderrTail
	if init := c.InitializeResult(); init != nil {
		st.ServerName, st.ServerVersion = init.ServerInfo.Name, init.ServerInfo.Version
	}
	st.Budgets = append(st.Budgets, h.disp.board.budget.Usage(), h.log.budget.Usage())
	st.Budgets = append(st.Budgets, h.hub.usage()...)
	st.Budgets = append(st.Budgets, h.jobs.budget.Usage())
	h.stateMu.Lock()
	if r := h.restarts; r.Count > 0 {
		st.Restarts = r.Count
		st.LastRestart = fmt.Sprintf("%s: %s", r.Last.Format(time.RFC3339), r.Why)
		if r.Reapplied != "" {
			st.LastRestart += "; applied again: " + r.Reapplied
		}
	}
	h.stateMu.Unlock()
	return st
}

// runCommand runs a command line in the session, as the daemon's
// live.Server asks: the verbs a session runs, with the session held.
func (h *heldSession) runCommand(rctx context.Context, req *live.Request, stdout, stderr io.Writer) int {
	cios := NewIOStreams(bytes.NewReader(req.Stdin), stdout, stderr)
	cios.StdoutTTY, cios.StderrTTY, cios.Color = req.StdoutTTY, req.StderrTTY, req.Color
	cios.Dir = req.Cwd
	if len(req.Args) == 0 || !sessionVerbs[req.Args[0]] {
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
		rctx = context.WithValue(rctx, heldKey{}, h)
		cf := &Factory{IO: cios, Executable: h.executable, RuntimeDir: h.dir}
		code := h.startJob(rctx, cf, args, cios, jsonFlag(args))
		cios.Flush()
		return int(code)
	}
	slot := &cmdSlot{args: req.Args}
	h.disp.add(slot)
	defer h.disp.remove(slot)
	rctx = context.WithValue(rctx, heldKey{}, h)
	rctx = context.WithValue(rctx, slotKey{}, slot)
	cf := &Factory{IO: cios, Executable: h.executable, RuntimeDir: h.dir}
	return int(run(rctx, cf, req.Args))
}

// recordEnd writes the record of the session's end, and why.
func (h *heldSession) recordEnd(why error, counters func() (int64, int64, int64, time.Time)) {
	end := h.status()
	end.Commands, end.Active, end.Failed, end.LastUsed = counters()
	// The commands still running end with the session, failed (exit 3,
	// saying why): they are counted so before they finish telling.
	end.Failed += end.Active
	end.Active = 0
	switch {
	case errors.Is(why, live.ErrStopped):
		end.State, end.Reason = live.StateStopped, "stopped by mcpi session stop"
	case errors.Is(why, live.ErrIdle):
		end.State, end.Reason = live.StateIdle, fmt.Sprintf("no command for %v (--idle)", h.idle)
	case why == nil:
		end.State, end.Reason = live.StateExited, "the connection ended"
		if err := h.client().Err(); err != nil {
			end.Reason = oneLine(err.Error())
		}
	default:
		end.State, end.Reason = live.StateStopped, "the daemon was told to end: "+why.Error()
	}
	end.Ended = time.Now()
	live.WriteRecord(h.dir, &end)
	h.end.Store(&end)
	close(h.ended)
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

// sessionVerbList names the commands a daemon runs, for its refusal.
func sessionVerbList() string {
	names := slices.Sorted(maps.Keys(sessionVerbs))
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

// Restart's backoff: the first restart after restartFirst, doubling up to
// restartMax. A server that stayed up for restartSteady counts as well
// again: its next crash starts the count anew.
const (
	restartFirst  = 500 * time.Millisecond
	restartMax    = 8 * time.Second
	restartSteady = time.Minute
)

// supervise ends the session when its server's connection ends, or, with
// --restart, starts the server again (at most max times in a row, with a
// backoff) and applies again what the session held: the log level and the
// subscriptions (the roots the new server asks for are the session's). The
// commands under way when it ended fail (exit 3, saying why); every command
// after a restart says it on stderr.
func (h *heldSession) supervise(ctx context.Context, o *ConnOptions, max int, logf func(string, ...any)) {
	defer close(h.gone)
	inRow := 0
	up := time.Now()
	for {
		c := h.client()
		select {
		case <-c.Done():
		case <-ctx.Done():
			return
		}
		why := "the connection ended"
		if err := c.Err(); err != nil {
			why = oneLine(err.Error())
		}
		if time.Since(up) > restartSteady {
			inRow = 0
		}
		if inRow >= max {
			c.Close()
			if max > 0 {
				logf("the server ended (%s) after %d restart(s) in a row: the session ends", why, inRow)
			}
			return
		}
		// A restart is coming: the commands that arrive meanwhile wait for
		// it, from now on.
		h.stateMu.Lock()
		h.restarting = true
		h.stateMu.Unlock()
		// The old connection is closed in order: what its server left of
		// its process group is ended before anything starts again.
		c.Close()
		for {
			inRow++
			wait := min(restartFirst<<(inRow-1), restartMax)
			logf("the server ended (%s): restart %d of %d in %v", why, inRow, max, wait)
			if !bounds.Sleep(ctx, wait) {
				return
			}
			nc, err := o.open(ctx)
			if err == nil {
				h.cur.Store(nc)
				h.stateMu.Lock()
				h.restarting = false
				close(h.swapped)
				h.swapped = make(chan struct{})
				h.stateMu.Unlock()
				up = time.Now()
				h.tools.invalidate()
				h.tools.watchTools(ctx, nc)
				applied := h.reapply(ctx, nc, logf)
				h.stateMu.Lock()
				h.restarts.Count++
				h.restarts.Last, h.restarts.Why, h.restarts.Reapplied = up, why, applied
				h.stateMu.Unlock()
				logf("the server was started again (restart %d)%s", inRow, map[bool]string{true: "; applied again: " + applied, false: ""}[applied != ""])
				break
			}
			why = "starting it again failed: " + oneLine(err.Error())
			if inRow >= max {
				logf("%s after %d restart(s) in a row: the session ends", why, inRow)
				return
			}
		}
	}
}

// reapply tells a restarted server what the session held, through
// session.Client.Reapply (the one mechanism for every restart), and says
// what it applied.
func (h *heldSession) reapply(ctx context.Context, c *session.Client, logf func(string, ...any)) string {
	h.stateMu.Lock()
	held := session.Held{LogLevel: h.logLevel}
	h.stateMu.Unlock()
	h.subMu.Lock()
	defer h.subMu.Unlock()
	held.Subscriptions = slices.Clone(h.subURIs)
	r, err := c.Reapply(ctx, held)
	if err != nil {
		logf("warning: after the restart: %v", err)
	}
	if h.subs != nil {
		h.subs.Close()
		h.subs = nil
	}
	if len(r.Listen) > 0 {
		// The modern era holds subscriptions in the session's stream.
		if sub, err := c.Listen(ctx, mcp.SubscriptionFilter{ResourceSubscriptions: r.Listen}); err == nil {
			h.subs = sub
		} else {
			r.Listen = nil
			if r.Failed == nil {
				r.Failed = map[string]error{}
			}
			r.Failed["subscriptions"] = err
			logf("warning: after the restart: subscriptions/listen: %v", err)
		}
	}
	return r.Summary()
}

// sessionEnded is the error of a command for a session that has ended: it
// says so, and why (not "could not connect"), and exits as one that could
// not connect does (3).
func sessionEnded(name string, rec *live.Status) error {
	return withKind(KindSessionEnded, &endedError{fmt.Sprintf("session %s has ended (%s): %s", name, rec.State, rec.Reason)})
}

type endedError struct{ msg string }

func (e *endedError) Error() string { return e.msg }

// Is makes an ended session's error exit as a failed connection does.
func (e *endedError) Is(target error) bool { return target == errConnect }
