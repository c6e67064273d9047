// Package tui is mcpi's terminal UI: a bubbletea program whose root model
// routes messages to panes (tools, resources, templates, prompts, server
// requests, roots, wire, log, notifications, stderr) and to the raw
// composer, shows the connection in a header and the keys in a help line.
// RunReplay is the read-only variant over a recorded trace.
//
// The TUI talks to a server only through internal/session: every session
// call runs in a tea.Cmd, and what the session reports from its own
// goroutines (notifications, warnings, tap events, server requests,
// progress) goes through a non-blocking inbox (common.Inbox) that the UI
// drains in batches. It must not import internal/cli.
package tui

import (
	"context"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/mcpi-dev/mcpi/internal/browser"
	"github.com/mcpi-dev/mcpi/internal/check"
	"github.com/mcpi-dev/mcpi/internal/collection"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/record"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/transport"
	"github.com/mcpi-dev/mcpi/internal/tui/chatpane"
)

// Hooks are what the TUI needs wired into a session: its handler for
// server requests, its tap and its notification and warning callbacks. None
// of them blocks the session's goroutines.
type Hooks struct {
	Handler        session.Handler
	Tap            transport.Tap
	OnNotification func(session.Notification)
	OnWarning      func(session.Warning)
	// OnHealth hears of the connection's health (session.Options.OnHealth).
	OnHealth func(session.HealthEvent)
	// OnPast takes a notification the server sent before this client
	// connected (a live session's history, which its daemon replays),
	// with its own time: shown, not acted on.
	OnPast func(session.Notification)
	// OnRoots takes the roots when they are changed elsewhere (a live
	// session's, by mcpi roots or another attached client).
	OnRoots func([]mcp.Root)
	// KeepAlive is how long an idle HTTP session may go unheard before a
	// ping asks whether the server is still there (session.Options).
	KeepAlive time.Duration
}

// KeepAlive is the TUI's keepalive: a server that died while idle shows as
// unreachable within it (sooner where a GET stream is open).
const KeepAlive = 10 * time.Second

// ChatOptions are the Chat pane's: its model, the host it presents the
// tools as, and its approvals and budgets. The commands give them here,
// not to the pane.
type ChatOptions = chatpane.Options

// Options configure the TUI.
type Options struct {
	// Version is mcpi's (an MCP App's host says it).
	Version string
	// Record sees what the TUI itself sends and receives besides the
	// session (an MCP App's messages): the command's trace (--record),
	// which sees the session's own events through Dial.
	Record transport.Tap
	// RecordPath is the file Record writes (--record): the status line
	// shows it while the TUI runs, as it shows a trace alt+r started.
	RecordPath string
	// Dial connects and initializes a session with the TUI's hooks. The TUI
	// calls it again to reconnect. It runs in a tea.Cmd, never on the UI
	// goroutine.
	Dial func(ctx context.Context, h Hooks) (*session.Client, error)
	// Target names the server for the header ("stdio: mcpi demo-server").
	Target string

	In  io.Reader // nil: the terminal
	Out io.Writer // nil: the terminal
	// NoColor drops colours (NO_COLOR): the ASCII profile, plain styles.
	NoColor bool
	// Width and Height give the initial size (tests); zero asks the terminal.
	Width, Height int

	// Roots are the roots offered to the server at start.
	Roots []mcp.Root
	// SetRoots, when set, owns the roots: the roots pane gives it each
	// change instead of telling the server itself (a live session's
	// roots are the session's, which tells its server).
	SetRoots func(ctx context.Context, roots []mcp.Root) error
	// Session names the live session the TUI is attached to (mcpi
	// connect --session). Only then is what carries the _meta key
	// mcp.MetaFromSession, with this name, taken for the session's own
	// word; from a server the key means nothing.
	Session string
	// SaveDir is where binary content is saved ("" = the working directory).
	SaveDir string
	// Collection is the collection file the t key saves a call into, as a
	// step ("" = collection.DefaultFile in the working directory), and
	// CollectionServer the server a new one names (nil: none).
	Collection       string
	CollectionServer *collection.Server
	// Now is the clock (default time.Now); tests stop it.
	Now func() time.Time
	// OpenURL opens a URL in a browser (default: xdg-open, open or start).
	// It runs in a tea.Cmd.
	OpenURL func(url string) error
	Logger  *slog.Logger
	// WireEntries bounds the rows of the wire pane (default rows.MaxEntries).
	WireEntries int
	// TimelineSpans bounds the spans of the timeline pane (default
	// timeline.MaxSpans).
	TimelineSpans int
	// Sampling, when set, has a model draft the reply to each sampling
	// request (mcpi connect --sampling-model).
	Sampling *SamplingModel
	// Chat is the model the Chat pane talks to, and how (a nil Model: the
	// pane says how to give one).
	Chat ChatOptions
	// Check runs `mcpi check` against the target for the Check pane (nil:
	// the pane says it cannot), given the TUI's session while connected
	// (a server of one instance is checked on it). It runs in a tea.Cmd;
	// progress is told what is being checked.
	Check func(ctx context.Context, live *session.Client, progress func(string)) (*check.Report, error)
	// TraceHeader and TraceOptions are the header and the redaction of a
	// trace started with alt+r (what --record would write); zero values
	// name the target only.
	TraceHeader  record.Header
	TraceOptions record.Options
	// Mouse turns the mouse on: the wheel scrolls, a click on a tab opens
	// it. Off by default, so that the terminal still selects text.
	Mouse bool
	// Reloads, when set, says that watched files changed (mcpi connect
	// --watch): the TUI restarts the server the way ctrl+r does, unless
	// the build failed, and shows what moved in the Diff view.
	Reloads <-chan Reload
}

// SamplingModel drafts the replies to the server's sampling requests: the
// request's modal opens with the draft, for the person to send as it is,
// edit or refuse (the spec's human in the loop); with Auto the draft is
// sent without asking. Draft runs on the session's goroutines.
type SamplingModel struct {
	// Name is the model, PROVIDER:MODEL, shown with its draft.
	Name  string
	Draft func(ctx context.Context, req *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error)
	Auto  bool
}

// Reload is what the watch loop of mcpi connect --watch tells the TUI: the
// files that changed, and what came of the build run before a restart.
type Reload struct {
	// Changed are the first paths that changed; Count the events in all.
	Changed []string
	Count   int
	// Output is the build's output (bounded), Err its failure: then the
	// old server keeps running.
	Output string
	Err    error
	// Warning, alone, says something could not be watched; nothing is
	// restarted.
	Warning string
}

// Run runs the TUI until the user quits or ctx ends.
func Run(ctx context.Context, opts Options) error {
	m := New(ctx, opts)
	defer m.Close()
	_, err := runProgram(ctx, m, programIO{In: opts.In, Out: opts.Out, NoColor: opts.NoColor, Width: opts.Width, Height: opts.Height})
	return err
}

// NoColorFromEnv reports whether NO_COLOR asks for no colour.
func NoColorFromEnv() bool {
	_, ok := os.LookupEnv("NO_COLOR")
	return ok
}

// openURL opens url with the platform's opener, when it is an absolute
// http or https URL (browser.Check); anything else stays on the screen.
func openURL(url string) error { return browser.Open(url) }
