package demoserver

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Protocol eras the server can be restricted to (see [Options.Era]).
const (
	// EraLegacy accepts only the initialize-handshake revisions,
	// 2024-11-05 through 2025-11-25.
	EraLegacy = "legacy"
	// EraModern accepts only the stateless revisions, 2026-07-28 and later.
	EraModern = "modern"
	// EraBoth accepts every revision the SDK speaks. It is the default.
	EraBoth = "both"
)

// firstModernVersion is the first revision without the initialize handshake.
// Revision names are dates, so they order as strings.
const firstModernVersion = "2026-07-28"

const (
	serverName    = "mcpi-demo"
	serverVersion = "0.1.0"

	// pageSize is deliberately small so that tools/list and resources/list
	// need more than one page, and an inspector's pagination gets exercised.
	pageSize = 10

	defaultCounterInterval = 5 * time.Second
)

const instructions = `mcpi-demo is a showcase server for MCP inspectors; nothing it does has side effects.
Tools cover every content type (get_content_types), structured output (add, structured), errors (fail),
annotations (delete_file, read_only_info), progress and cancellation (long_running, slow),
server-to-client requests (sample, elicit, elicit_url, list_roots), logging (log),
list-changed notifications (toggle_tool) and big frames (big_output).
Subscribe to demo://counter and call bump_counter to see notifications/resources/updated.
Resource templates and prompt arguments support completion.`

// Options configures the demo server.
type Options struct {
	// Era restricts the protocol revisions the server accepts: EraLegacy,
	// EraModern or EraBoth. The empty string means EraBoth.
	Era string
	// Logger receives the server's own diagnostics (never sent to the
	// client). Nil discards them.
	Logger *slog.Logger
	// CounterInterval is how often demo://counter advances while some client
	// is subscribed to it. Zero means five seconds.
	CounterInterval time.Duration
}

// Validate reports whether opts can build a server. [New], [HTTPHandler]
// and [SSEHandler] panic on options that fail it; [RunStdio] returns the
// error.
func (o Options) Validate() error {
	switch o.Era {
	case "", EraBoth, EraLegacy, EraModern:
	default:
		return fmt.Errorf("demoserver: unknown era %q (want %q, %q or %q)", o.Era, EraLegacy, EraModern, EraBoth)
	}
	if o.CounterInterval < 0 {
		return fmt.Errorf("demoserver: negative counter interval %v", o.CounterInterval)
	}
	return nil
}

func (o Options) logger() *slog.Logger {
	if o.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Logger
}

// New returns the fully populated demo server. Each call builds an
// independent server, with its own counter and toggled features.
//
// New panics if opts fails [Options.Validate].
func New(opts Options) *mcp.Server {
	return newDemo(opts).server
}

// RunStdio serves one client over stdin and stdout. It returns nil when the
// client closes stdin, and ctx's error if ctx is done first.
func RunStdio(ctx context.Context, opts Options) error {
	if err := opts.Validate(); err != nil {
		return err
	}
	// The SDK caps inbound lines at 16 MiB by default. The demo is a test
	// peer for big frames in both directions and only ever talks to the
	// client that started it, so it takes lines of any length.
	return New(opts).Run(ctx, &mcp.StdioTransport{MaxLineLength: -1})
}

// HTTPHandler returns a Streamable HTTP handler for the demo server. All
// sessions share one server, so a tool toggled or a counter bumped in one
// session is seen (and notified) in the others.
//
// The SDK serves the legacy revisions only with stateful sessions
// (Mcp-Session-Id, GET streams, resumption) and 2026-07-28 only without
// them, so with EraBoth requests are routed by their MCP-Protocol-Version
// header, which every modern request must carry.
//
// HTTPHandler panics if opts fails [Options.Validate].
func HTTPHandler(opts Options) http.Handler {
	server := New(opts)
	getServer := func(*http.Request) *mcp.Server { return server }
	stateful := func() http.Handler {
		return mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{
			Logger: opts.logger(),
			// An event store gives SSE events ids and lets a client resume a
			// broken stream with Last-Event-ID, which an inspector should see.
			EventStore: mcp.NewMemoryEventStore(nil),
		})
	}
	stateless := func() http.Handler {
		return mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{
			Logger:    opts.logger(),
			Stateless: true,
		})
	}
	switch opts.Era {
	case EraLegacy:
		return stateful()
	case EraModern:
		return stateless()
	default:
		legacy, modern := stateful(), stateless()
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Mcp-Protocol-Version") >= firstModernVersion {
				modern.ServeHTTP(w, r)
				return
			}
			legacy.ServeHTTP(w, r)
		})
	}
}

// SSEHandler returns a handler for the deprecated 2024-11-05 HTTP+SSE
// transport: a GET opens the event stream, whose first event names the URL
// to POST messages to. The transport has no binding for 2026-07-28, so with
// EraModern the SDK answers every initialize with 2025-11-25 and clients are
// expected to give up.
//
// SSEHandler panics if opts fails [Options.Validate].
func SSEHandler(opts Options) http.Handler {
	server := New(opts)
	return mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return server }, nil)
}

// protocolVersions returns the revisions to pass as
// [mcp.ServerOptions.SupportedProtocolVersions] for era. Nil means every
// revision the SDK supports. They are derived from the SDK rather than
// listed here, so an SDK upgrade brings its new revisions into the right era.
func protocolVersions(era string) []string {
	if era == "" || era == EraBoth {
		return nil
	}
	var versions []string
	for _, v := range mcp.SupportedProtocolVersions() {
		if (v >= firstModernVersion) == (era == EraModern) {
			versions = append(versions, v)
		}
	}
	return versions
}
