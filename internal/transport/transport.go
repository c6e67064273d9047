package transport

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"
)

// Conn is a connection to one MCP server that carries whole JSON-RPC frames.
//
// Send may be called concurrently. Recv is called by one goroutine at a time.
// Close may be called more than once, from any goroutine, and unblocks Recv.
type Conn interface {
	// Send writes one frame (a JSON-RPC message or batch, without a trailing
	// newline). It returns once the frame is handed to the server; answers
	// arrive through Recv.
	Send(ctx context.Context, frame []byte) error
	// Recv returns the next frame from the server. A frame that is not valid
	// UTF-8 JSON is returned with Err set; the connection goes on. When the
	// connection is over Recv returns an error: ErrClosed after Close, or a
	// *ServerExitError, *HTTPError or other error saying why it ended.
	Recv() (Frame, error)
	// Close ends the connection and releases everything it holds.
	Close() error
}

// Frame is one message or batch received from a server.
type Frame struct {
	Data []byte
	// Err is set when Data is not a well-formed frame (invalid UTF-8 or not
	// JSON). Such frames are reported, never silently dropped.
	Err error
	// EventID is the SSE event id the frame arrived with, if any.
	EventID string
	// LostID, with Err, says that the request with this id key (see
	// mcp.IDKey) will get no answer: its response stream ended for good.
	LostID string
}

// AcceptedLostError is the Err of a lost Frame whose request the server
// took (it answered the POST with a status), or may have (the connection
// closed after the request was written), before its answer was lost: the
// server may have run it, so it must not be sent again.
type AcceptedLostError struct{ Err error }

func (e *AcceptedLostError) Error() string { return e.Err.Error() }
func (e *AcceptedLostError) Unwrap() error { return e.Err }

// ErrClosed is returned by a Conn used after Close.
var ErrClosed = errors.New("connection closed")

// ErrSessionExpired is returned by Send when a Streamable HTTP server answers
// 404 to a request that carried a session id: the client must initialize a
// new session. The error returned is a *SessionExpiredError, which says
// which session and how the server said so.
var ErrSessionExpired = errors.New("session expired (HTTP 404): the server no longer knows this session")

// SessionExpiredError says that the server no longer knows the session a
// request carried. errors.Is(err, ErrSessionExpired) holds for it.
//
// The spec (2025-11-25, basic/transports, session management) has a server
// answer 404 then. Some servers answer 400 with a JSON-RPC error that says
// so in words (the TypeScript SDK's examples, server-everything: "Bad
// Request: No valid session ID provided"): such an answer, to a request
// that carried a session id, is taken for the same thing, with StatusCode
// 400 so that the deviation can be reported.
type SessionExpiredError struct {
	Method     string // the HTTP method of the request: POST, GET
	SessionID  string // the session the request carried
	StatusCode int    // 404, or 400 for the deviation above
	// Body holds the start of the answer's body.
	Body []byte
}

func (e *SessionExpiredError) Error() string {
	s := fmt.Sprintf("session %s expired (HTTP %d to %s): the server no longer knows it", e.SessionID, e.StatusCode, e.Method)
	if e.StatusCode != http.StatusNotFound && len(e.Body) > 0 {
		b := e.Body
		if len(b) > 200 {
			b = b[:200]
		}
		s += ": " + string(b)
	}
	return s
}

// Is makes errors.Is(err, ErrSessionExpired) true.
func (e *SessionExpiredError) Is(target error) bool { return target == ErrSessionExpired }

// sessionGone reports whether an answer to a request that carried a session
// id says the server no longer knows it: 404, as the spec has it, or 400
// with a JSON-RPC error whose message speaks of the session.
func sessionGone(status int, body []byte) bool {
	switch status {
	case http.StatusNotFound:
		return true
	case http.StatusBadRequest:
		var m struct {
			Error *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		return json.Unmarshal(bytes.TrimSpace(body), &m) == nil && m.Error != nil &&
			strings.Contains(strings.ToLower(m.Error.Message), "session")
	}
	return false
}

// IsUnreachable reports whether err says that an HTTP server cannot be
// reached: no answer came (connection refused or reset, DNS, TLS, the
// connection closed before the status line), or a gateway answered 502,
// 503 or 504 for it. An HTTP answer of the server itself, a refused
// redirect or a cancelled context is not.
func IsUnreachable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var he *HTTPError
	if errors.As(err, &he) {
		switch he.StatusCode {
		case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			return true
		}
		return false
	}
	var ne net.Error
	var dnsErr *net.DNSError
	var opErr *net.OpError
	var certErr *tls.CertificateVerificationError
	var recErr tls.RecordHeaderError
	var unknownAuth x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var invalid x509.CertificateInvalidError
	switch {
	case errors.As(err, &dnsErr), errors.As(err, &opErr), errors.As(err, &certErr), errors.As(err, &recErr),
		errors.As(err, &unknownAuth), errors.As(err, &hostErr), errors.As(err, &invalid):
		return true
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return true
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		// No status line came: the connection closed under the request.
		return errors.Is(ue.Err, io.EOF) || errors.Is(ue.Err, io.ErrUnexpectedEOF) || errors.As(ue.Err, &ne)
	}
	return false
}

// ServerExitError says a stdio server process ended.
type ServerExitError struct {
	// ExitCode is the process's exit status, or -1 when it was killed by a signal.
	ExitCode int
	// Signal names the signal that ended the process, if any.
	Signal string
	// StderrTail holds the last lines the server wrote on stderr.
	StderrTail []string
}

func (e *ServerExitError) Error() string {
	var s string
	if e.Signal != "" {
		s = "server killed by signal " + e.Signal
	} else {
		s = fmt.Sprintf("server exited with status %d", e.ExitCode)
	}
	if why := StderrWhy(e.StderrTail); why != "" {
		s += "; stderr: " + why
	}
	return s
}

// errorLine finds the line of a server's stderr that says why it failed:
// an error or exception (Node, Python, Go, Java, Rust), a traceback, npm's
// ERR!, a missing module.
var errorLine = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(^|\W)(\w*error\b|\w*exception\b|traceback|panic:|fatal|npm err!|cannot find module|no such file|not found|permission denied|refused)`)
})

// stackFrame reports whether line is a frame of a stack trace (Node's
// "    at f (file:1:2)", Python's "  File ...", Go's "\tfile.go:12").
func stackFrame(line string) bool {
	t := strings.TrimSpace(line)
	return (strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t")) &&
		(strings.HasPrefix(t, "at ") || strings.HasPrefix(t, "File ") || strings.Contains(t, ".go:"))
}

// StderrWhy picks, from the last lines a server wrote on stderr, those
// that say why it ended: the last line that names an error, with the two
// lines after it (a stack's first frames), rather than the last line,
// which for Node is its version banner. Without such a line, the last
// line; "" without any.
func StderrWhy(tail []string) string {
	at := -1
	for i := len(tail) - 1; i >= 0; i-- {
		if errorLine().MatchString(tail[i]) {
			at = i
			// A frame of a stack (a function named …Error matches too):
			// the line that says why is the one above the frames.
			for at > 0 && stackFrame(tail[at]) {
				at--
			}
			break
		}
	}
	if at < 0 {
		if n := len(tail); n > 0 {
			return strings.TrimSpace(tail[n-1])
		}
		return ""
	}
	// The error's line, and up to two lines of the stack under it (they
	// are indented): not what follows the stack.
	lines := []string{strings.TrimSpace(tail[at])}
	for i := at + 1; i < len(tail) && len(lines) < 3; i++ {
		l := tail[i]
		if strings.TrimSpace(l) == "" || (!strings.HasPrefix(l, " ") && !strings.HasPrefix(l, "\t")) {
			break
		}
		lines = append(lines, strings.TrimSpace(l))
	}
	return strings.Join(lines, " | ")
}

// HTTPError is an HTTP answer that is not a success.
type HTTPError struct {
	Method     string
	URL        string
	StatusCode int
	Status     string
	Header     http.Header
	// Body holds the start of the response body.
	Body []byte
}

func (e *HTTPError) Error() string {
	s := fmt.Sprintf("%s %s: %s", e.Method, e.URL, e.Status)
	if sum := bodySummary(e.Body, e.Header.Get("Content-Type")); sum != "" {
		s += ": " + sum
	}
	return s
}

// bodySummary is an error body on one line: an HTML page by its title, any
// other text by its first line, cut to 160 bytes.
func bodySummary(body []byte, contentType string) string {
	text := strings.TrimSpace(string(body))
	if text == "" {
		return ""
	}
	lower := strings.ToLower(text)
	if strings.Contains(strings.ToLower(contentType), "html") || strings.HasPrefix(lower, "<!doctype html") || strings.HasPrefix(lower, "<html") {
		title := ""
		if i := strings.Index(lower, "<title>"); i >= 0 {
			if j := strings.Index(lower[i:], "</title>"); j > 0 {
				title = strings.Join(strings.Fields(text[i+len("<title>"):i+j]), " ")
			}
		}
		if title == "" {
			return fmt.Sprintf("an HTML page of %d bytes", len(body))
		}
		return fmt.Sprintf("an HTML page titled %q", clipLine(title, 120))
	}
	line, _, more := strings.Cut(text, "\n")
	line = strings.TrimSpace(line)
	if more {
		line += " …"
	}
	return clipLine(line, 160)
}

// clipLine cuts s to n bytes on a rune boundary.
func clipLine(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// LimitError says that something a server sent went past one of mcpi's
// limits; the bytes counted are those on the wire (mcpi asks for no
// compression).
type LimitError struct {
	What  string // "a response body", "an SSE event's data"
	Limit int    // bytes
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%s exceeds the %d-byte limit on one message (counted as it arrives, uncompressed): mcpi stopped reading it", e.What, e.Limit)
}

// IsUnauthorized reports whether err is an HTTP 401 or 403 answer.
func IsUnauthorized(err error) bool {
	var he *HTTPError
	return errors.As(err, &he) && (he.StatusCode == http.StatusUnauthorized || he.StatusCode == http.StatusForbidden)
}

// Direction is which way a frame went.
type Direction uint8

const (
	// Outgoing frames go from mcpi to the server.
	Outgoing Direction = iota + 1
	// Incoming frames come from the server.
	Incoming
)

func (d Direction) String() string {
	switch d {
	case Outgoing:
		return "send"
	case Incoming:
		return "recv"
	}
	return "?"
}

// EventKind says what a tap event records.
type EventKind uint8

const (
	// KindFrame is a well-formed frame in either direction.
	KindFrame EventKind = iota + 1
	// KindBadFrame is received data that is not a well-formed frame.
	KindBadFrame
	// KindStderr is one line a stdio server wrote on stderr.
	KindStderr
	// KindLifecycle is a change of the connection: started, exited, stream
	// opened or closed, fallback, reconnect.
	KindLifecycle
	// KindHTTP is an HTTP exchange with no frame of its own (a 202, a DELETE,
	// a GET that opened or failed to open a stream, an error status).
	KindHTTP
	// KindApp is a message between an MCP App and mcpi's host page
	// (mcpi app): Outgoing goes from the host to the App, Incoming comes
	// from the App. It is no frame of the server's session.
	KindApp
	// KindModel is a model in the loop (internal/genai): Outgoing a
	// request mcpi made of a model provider or a tool call the model asked
	// for, Incoming its answer. It is no frame of the server's session.
	KindModel
	// KindIntercept is a change mcpi proxy made on the wire (a fault of
	// --faults, a held frame forwarded, edited, dropped or answered):
	// Data is the change (internal/intercept), Dir the direction of the
	// frame it is about. It is no frame of the server's session.
	KindIntercept
	// KindLast is the last kind: packages that add kinds of their own
	// (a session's warnings as rows) number them after it.
	KindLast = KindIntercept
)

func (k EventKind) String() string {
	switch k {
	case KindFrame:
		return "frame"
	case KindBadFrame:
		return "bad-frame"
	case KindStderr:
		return "stderr"
	case KindLifecycle:
		return "lifecycle"
	case KindHTTP:
		return "http"
	case KindApp:
		return "app"
	case KindModel:
		return "model"
	case KindIntercept:
		return "intercept"
	}
	return "?"
}

// Event is one thing the tap saw.
type Event struct {
	Time time.Time
	Kind EventKind
	Dir  Direction
	// Data is the frame's bytes, the stderr line or the bad data. Consumers
	// must not modify it.
	Data []byte
	// Err says why a bad frame is bad, or what went wrong in a lifecycle event.
	Err string
	// Text describes a lifecycle event ("spawned pid 42", "exited: status 1").
	Text string
	// HTTP is set for frames and exchanges carried over HTTP.
	HTTP *HTTPMeta
}

// HTTPMeta is the HTTP side of an event.
type HTTPMeta struct {
	Method     string
	URL        string
	StatusCode int
	// RequestHeader and ResponseHeader are copies; Authorization and cookies
	// are kept so that a consumer can decide how to redact them.
	RequestHeader  http.Header
	ResponseHeader http.Header
	// Exchange numbers the HTTP request the event belongs to, so that a
	// request, its status and every frame of its answer can be joined (HAR).
	Exchange uint64
	// SSEEventID and SSEEvent are set for frames that arrived as SSE events.
	SSEEventID string
	SSEEvent   string
}

// Tap observes every event of a connection. Observe is called from the
// connection's goroutines, possibly concurrently, and must not block for long:
// it is on the path of every frame.
type Tap interface {
	Observe(Event)
}

// TapFunc adapts a function to a Tap.
type TapFunc func(Event)

// Observe calls f(e).
func (f TapFunc) Observe(e Event) { f(e) }

// MultiTap sends each event to every tap in turn.
func MultiTap(taps ...Tap) Tap {
	var ts []Tap
	for _, t := range taps {
		if t != nil {
			ts = append(ts, t)
		}
	}
	switch len(ts) {
	case 0:
		return nil
	case 1:
		return ts[0]
	}
	return TapFunc(func(e Event) {
		for _, t := range ts {
			t.Observe(e)
		}
	})
}

// LateTap passes each event to the tap Set last: a tap that is not there
// yet when the connection starts (a TUI that starts after it), or that
// changes as it goes. Without one, an event goes nowhere. The zero value
// is ready to use.
type LateTap struct {
	mu  sync.Mutex
	tap Tap
}

// Set makes t the tap events go to (nil: none).
func (l *LateTap) Set(t Tap) {
	l.mu.Lock()
	l.tap = t
	l.mu.Unlock()
}

// Observe passes e to the tap set now, outside the lock.
func (l *LateTap) Observe(e Event) {
	l.mu.Lock()
	t := l.tap
	l.mu.Unlock()
	if t != nil {
		t.Observe(e)
	}
}

// tapper is embedded by connections to emit events safely when there is no tap.
type tapper struct{ tap Tap }

func (t tapper) emit(e Event) {
	if t.tap == nil {
		return
	}
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	t.tap.Observe(e)
}

// bareNetError drops net/http's own "Post \"URL\": " from a request's
// error, whose message the caller starts with the method and URL already.
// What it wraps stays reachable (errors.Is, errors.As).
func bareNetError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		return &netError{msg: ue.Err.Error(), err: err}
	}
	return err
}

type netError struct {
	msg string
	err error
}

func (e *netError) Error() string { return e.msg }
func (e *netError) Unwrap() error { return e.err }
