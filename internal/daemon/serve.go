package daemon

import (
	"context"
	"io"
	"os"
	"time"

	"github.com/mcpi-dev/mcpi/internal/live"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/record"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// Hooks are what the daemon hears of the session's connection: the
// server's requests (Handler), every event (Tap), every notification and
// every warning. Config.Open connects with them.
type Hooks struct {
	Handler        session.Handler
	Tap            transport.Tap
	OnNotification func(session.Notification)
	OnWarning      func(session.Warning)
	// MaxServerRequests bounds the server's requests in progress: past the
	// parked requests' budget, with room for those the commands under way
	// answer, so that the board is the one bound on what waits, and what
	// it refuses is counted where mcpi pending says it.
	MaxServerRequests int
}

// RunFunc runs one command line in the session held by h, as a live.Server
// asks, and returns its exit code.
type RunFunc func(ctx context.Context, h *Held, req *live.Request, stdout, stderr io.Writer) int

// Config is what a daemon holds a session with.
type Config struct {
	Name string // the session's
	Dir  string // the runtime directory
	// Target describes the server, without its secrets.
	Target string
	// Idle ends the session after that long without a command (0: never).
	Idle time.Duration
	// Restart is how many times in a row the server is started again when
	// it exits (--restart); 0: never.
	Restart int
	// The budgets of the parked requests and of the log (0: the defaults).
	ParkedCount int
	ParkedBytes int64
	LogBytes    int64
	// Roots are the session's roots to start with; Secrets the values the
	// tails and attached clients never see.
	Roots   []mcp.Root
	Secrets []string
	// Say takes what the daemon says before the session runs (the
	// starting command shows it), and Log, the daemon's stderr, what it
	// says after, within LogBytes.
	Say io.Writer
	Log io.Writer
	// Sample answers the server's sampling requests that no command
	// answers, unless a person answers first (mcpi answer, an attached
	// TUI): session start --sampling-model. Nil: they wait for a person.
	Sample func(ctx context.Context, req *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error)
	// ModelTap returns where the model turns of the session's commands go:
	// the session's connection's tap (its trace, its tails), once it
	// connected.
	ModelTap func() transport.Tap
	// Open connects to the server with the daemon's hooks: at the start,
	// and again for each --restart.
	Open func(ctx context.Context, hooks Hooks) (*session.Client, error)
	// Run runs a command line in the session; Failed reports whether an
	// exit code is a failure, for the session's count (nil: all but 0).
	Run    RunFunc
	Failed func(code int) bool
	// Ready is called once the session is up and its socket listens; what
	// the daemon says goes to the log (it returns the log's writer) from
	// then on.
	Ready func(log io.Writer)
}

// Serve holds the session cfg describes until it ends: its server's
// connection ends for good, it is stopped, or idle for cfg.Idle. An error
// is returned only when the session could not start (Ready was not
// called).
func Serve(ctx context.Context, cfg Config) error {
	lf := NewLogFile(cfg.Log, cfg.LogBytes)
	dlog := NewLog(cfg.Say)
	defer dlog.Summary()
	h := &Held{name: cfg.Name, target: cfg.Target, jobs: NewJobs(), tools: &toolCache{},
		ended: make(chan struct{}), gone: make(chan struct{}), swapped: make(chan struct{}),
		restartMax: cfg.Restart, log: lf, dir: cfg.Dir, idle: cfg.Idle, modelTap: cfg.ModelTap}
	board := NewBoard(cfg.ParkedCount, cfg.ParkedBytes)
	h.disp = &Dispatcher{roots: cfg.Roots, name: cfg.Name, board: board, logf: dlog.Printf, sample: cfg.Sample}
	h.hub = &Hub{redact: record.NewRedactor(cfg.Secrets)}
	h.disp.hub = h.hub
	hooks := Hooks{Handler: h.disp, Tap: h.hub.Tap(), OnWarning: dlog.Warning,
		MaxServerRequests: board.Usage().MaxCount + session.DefaultMaxServerRequests,
		OnNotification: func(n session.Notification) {
			if n.Method == "notifications/tools/list_changed" {
				h.tools.invalidate()
			}
			h.hub.Notify(n)
		}}
	h.open = func(ctx context.Context) (*session.Client, error) { return cfg.Open(ctx, hooks) }
	c, err := h.open(ctx)
	if err != nil {
		return err
	}
	ln, err := live.Listen(cfg.Dir, cfg.Name)
	if err != nil {
		c.Close()
		return err
	}
	h.cur.Store(c)
	defer func() { h.Client().Close() }()
	h.tools.watchTools(ctx, c)
	go h.supervise(ctx, cfg.Restart, dlog.Printf)
	h.base = live.Status{Name: cfg.Name, Target: cfg.Target, PID: os.Getpid(), State: live.StateRunning, Started: time.Now()}
	if cfg.Idle > 0 {
		h.base.Idle = cfg.Idle.String()
	}
	srv := live.NewServer(func(ctx context.Context, req *live.Request, stdout, stderr io.Writer) int {
		return cfg.Run(ctx, h, req, stdout, stderr)
	}, h.Status, cfg.Idle)
	srv.Attach = h.ServeAttached
	srv.Failed = cfg.Failed
	rec := h.Status()
	if err := live.WriteRecord(cfg.Dir, &rec); err != nil {
		ln.Close()
		return err
	}
	cfg.Ready(lf)
	srv.OnEnd = func(why error) { h.recordEnd(why, srv.Counters) }
	srv.Serve(ctx, ln, h.gone)
	return nil
}
