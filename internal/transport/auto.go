package transport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
)

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }

// HTTPMode chooses the HTTP transport.
type HTTPMode string

const (
	// ModeAuto tries Streamable HTTP and falls back to HTTP+SSE on a 4xx.
	ModeAuto HTTPMode = "auto"
	// ModeStreamable forces Streamable HTTP.
	ModeStreamable HTTPMode = "http"
	// ModeSSE forces the legacy HTTP+SSE transport.
	ModeSSE HTTPMode = "sse"
)

// AutoHTTP is an HTTP connection that decides on its first Send which
// transport the server speaks, as the spec's backwards-compatibility section
// describes: POST the first message (initialize) as Streamable HTTP; if the
// server answers with a 4xx other than 401/403, GET the URL as an HTTP+SSE
// stream and send the message again to the endpoint it names.
type AutoHTTP struct {
	opts    HTTPOptions
	tap     tapper
	closing context.Context // done once Close is called
	cancel  context.CancelFunc
	mu      sync.Mutex
	conn    Conn
	pv      string        // the protocol version header to start with
	ready   chan struct{} // closed once conn is chosen, or on Close
	once    sync.Once
	done    bool
	watch   func(open bool, err error)
}

// NewAutoHTTP returns a connection that chooses its transport on first use.
func NewAutoHTTP(opts HTTPOptions) *AutoHTTP {
	closing, cancel := context.WithCancel(context.Background())
	return &AutoHTTP{opts: opts, tap: tapper{opts.Tap}, closing: closing, cancel: cancel, ready: make(chan struct{})}
}

// DialHTTP returns an HTTP connection of the given mode.
func DialHTTP(ctx context.Context, mode HTTPMode, opts HTTPOptions) (Conn, error) {
	switch mode {
	case ModeAuto, "":
		return NewAutoHTTP(opts), nil
	case ModeStreamable:
		return NewStreamableHTTP(opts), nil
	case ModeSSE:
		return DialLegacySSE(ctx, opts)
	}
	return nil, fmt.Errorf("unknown HTTP transport %q (want auto, http or sse)", mode)
}

// Chosen returns the transport in use, or nil before the first Send.
func (a *AutoHTTP) Chosen() Conn {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.conn
}

// Send sends frame on the chosen transport, choosing it first if need be.
func (a *AutoHTTP) Send(ctx context.Context, frame []byte) error {
	a.mu.Lock()
	if a.done {
		a.mu.Unlock()
		return ErrClosed
	}
	if a.conn != nil {
		c := a.conn
		a.mu.Unlock()
		return c.Send(ctx, frame)
	}
	defer a.mu.Unlock()
	// Choosing holds the lock over network round trips: Close interrupts
	// them rather than wait for the lock.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(a.closing, cancel)()
	sh := NewStreamableHTTP(a.opts)
	sh.SetProtocolVersion(a.pv)
	// The first frame is sent synchronously: its status decides the transport.
	out := peekOutgoing(frame)
	out.extra = headerFrom(ctx)
	err := sh.post(ctx, frame, out)
	var he *HTTPError
	// Only an initialize can fall back: the HTTP+SSE transport is of the
	// legacy era, and a modern probe that fails is the session's to judge.
	if err == nil || !out.initial || !errors.As(err, &he) || he.StatusCode < 400 || he.StatusCode > 499 ||
		he.StatusCode == http.StatusUnauthorized || he.StatusCode == http.StatusForbidden {
		if err == nil {
			a.choose(sh)
		} else {
			sh.Close()
		}
		return err
	}
	sh.Close()
	a.tap.emit(Event{Kind: KindLifecycle, Text: fmt.Sprintf("Streamable HTTP POST answered %s: trying the HTTP+SSE transport (2024-11-05)", he.Status)})
	legacy, lerr := DialLegacySSE(ctx, a.opts)
	if lerr != nil {
		return fmt.Errorf("neither transport works: Streamable HTTP: %v; HTTP+SSE: %w", err, lerr)
	}
	if err := legacy.Send(ctx, frame); err != nil {
		legacy.Close()
		return err
	}
	a.choose(legacy)
	return nil
}

func (a *AutoHTTP) choose(c Conn) {
	if w, ok := c.(StreamWatcher); ok && a.watch != nil {
		w.WatchStream(a.watch)
	}
	a.conn = c
	a.once.Do(func() { close(a.ready) })
}

// Recv waits for the transport to be chosen, then reads from it.
func (a *AutoHTTP) Recv() (Frame, error) {
	<-a.ready
	a.mu.Lock()
	c := a.conn
	a.mu.Unlock()
	if c == nil {
		return Frame{}, ErrClosed
	}
	return c.Recv()
}

// Close closes the chosen transport.
func (a *AutoHTTP) Close() error {
	a.cancel()
	a.mu.Lock()
	a.done = true
	c := a.conn
	a.mu.Unlock()
	a.once.Do(func() { close(a.ready) })
	if c != nil {
		return c.Close()
	}
	return nil
}

// SetProtocolVersion forwards to the chosen transport, and applies to the
// first frame when none is chosen yet.
func (a *AutoHTTP) SetProtocolVersion(v string) {
	a.mu.Lock()
	a.pv = v
	a.mu.Unlock()
	if vs, ok := a.Chosen().(VersionSetter); ok {
		vs.SetProtocolVersion(v)
	}
}

// ResetSession forwards to the chosen transport.
func (a *AutoHTTP) ResetSession() {
	if r, ok := a.Chosen().(SessionHolder); ok {
		r.ResetSession()
	}
}

// SessionID returns the chosen transport's session id, if any.
func (a *AutoHTTP) SessionID() string {
	if s, ok := a.Chosen().(SessionIDer); ok {
		return s.SessionID()
	}
	return ""
}

// WatchStream sets the watcher of the Streamable HTTP GET stream (see
// StreamableHTTP.WatchStream), now or once that transport is chosen.
func (a *AutoHTTP) WatchStream(f func(open bool, err error)) {
	a.mu.Lock()
	a.watch = f
	c := a.conn
	a.mu.Unlock()
	if w, ok := c.(StreamWatcher); ok {
		w.WatchStream(f)
	}
}

// Listen forwards to the chosen transport.
func (a *AutoHTTP) Listen() {
	if l, ok := a.Chosen().(StreamListener); ok {
		l.Listen()
	}
}

// Name names the chosen transport.
func (a *AutoHTTP) Name() string {
	if n, ok := a.Chosen().(Namer); ok {
		return n.Name()
	}
	return "http (undecided)"
}
