package command

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/mcpi-dev/mcpi/internal/answer"
	"github.com/mcpi-dev/mcpi/internal/chat"
	"github.com/mcpi-dev/mcpi/internal/daemon"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/mcptext"
	"github.com/mcpi-dev/mcpi/internal/otlp"
	"github.com/mcpi-dev/mcpi/internal/record"
	"github.com/mcpi-dev/mcpi/internal/safetext"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/timeline"
	"github.com/mcpi-dev/mcpi/internal/tracectx"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// ConnRun is one run of a command against a server: what the run makes
// is its own, and the options stay what the flags and the factory gave.
// ConnOptions.With makes it and closes it, whatever happens; a session's
// daemon and the TUI make one for as long as they connect.
type ConnRun struct {
	*ConnOptions
	// Client is the session fn is given.
	Client *session.Client
	// SayVerbose says a line on stderr with -v only (nothing until the run
	// first connects).
	SayVerbose func(format string, args ...any)
	MadeRoots  []mcp.Root
	// Sampler answers sampling with --sampling-model's model; samplingTap
	// is the connection's tap, which sees the model's turns.
	Sampler     *chat.Sampler
	samplingTap transport.Tap
	Trace       traceRun
	answers     answerLog
	// answerer answers the server's requests for the command in a live
	// session, instead of the flags (mcpi test's scripted answers).
	answerer daemon.Answerer
}

// NewRun makes a run of o: nothing is opened until it connects.
func (o *ConnOptions) NewRun() *ConnRun {
	return &ConnRun{ConnOptions: o, SayVerbose: func(string, ...any) {}}
}

// Prepare checks the flags that do not depend on the server, and makes
// what they name: the roots and the sampling model (once: a session's
// restarted server keeps its model).
func (r *ConnRun) Prepare() error {
	roots, sampler, err := r.made(r.Sampler == nil)
	if err != nil {
		return err
	}
	r.MadeRoots = roots
	if sampler != nil {
		r.Sampler = sampler
	}
	return nil
}

// With connects, runs fn, and closes the session and the run, whatever
// happens; with --json a failure is also printed as a JSON error object.
func (r *ConnRun) With(ctx context.Context, hk ConnHooks, fn func(*ConnRun) error) error {
	o := r.ConnOptions
	if o.Held != nil {
		if a, ok := hk.Handler.(daemon.Answerer); ok {
			r.answerer = a
		}
		return WithJSONError(o.IO, o.JSON, r.withHeld(ctx, fn))
	}
	if o.Target.Session != "" {
		return o.Forward(ctx)
	}
	c, err := r.Open(ctx, hk)
	switch {
	case err == nil:
		r.Client = c
		err = r.answers.over(fn(r))
		c.Close()
	case hk.ConnectFailed != nil && !errors.As(err, new(*FlagError)):
		err = hk.ConnectFailed(err)
	}
	if cerr := r.Close(); cerr != nil && err == nil {
		err = cerr
	}
	return WithJSONError(o.IO, o.JSON, err)
}

// answerLog keeps the first answer the flags could not give (an
// --elicit-field that does not fit the form): the command fails with it
// once the server has been told. Its methods may be called concurrently.
type answerLog struct {
	mu  sync.Mutex
	err error
}

// failed records err unless an answer failed before.
func (l *answerLog) failed(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err == nil {
		l.err = &FlagError{Err: err}
	}
}

// over returns the command's error, or the answer that failed, which
// fails a command that otherwise succeeded or failed because of it.
func (l *answerLog) over(err error) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err == nil || errors.Is(err, context.Canceled) {
		return err
	}
	return l.err
}

// traceRun is the run's trace: recorder is the trace of --record (without
// it, a trace that writes no file), what --otlp-endpoint's spans are made
// from; exporter sends those spans. ctx is the trace context of the run's
// requests, read from the environment once: why says why one given is not
// used, and root says mcpi began the trace (it exports, and the
// environment gave none): the context's span is the session's own.
type traceRun struct {
	Recorder *record.Writer
	exporter *otlp.Live

	once sync.Once
	ctx  *tracectx.Context
	why  string
	root bool
}

// TraceContext is the W3C trace context mcpi's requests go on from:
// TRACEPARENT (and TRACESTATE) in the environment, as a CI job's tracing
// sets them; or, when mcpi exports spans (--otlp-endpoint) and the
// environment gives none, a trace of its own. Otherwise the requests
// carry none; malformed or oversized, TRACEPARENT is not used, and the
// first connection says why.
func (r *ConnRun) TraceContext() *tracectx.Context {
	t := &r.Trace
	t.once.Do(func() {
		if tp, ok := os.LookupEnv("TRACEPARENT"); ok && tp != "" {
			c, err := tracectx.Parse(tp, os.Getenv("TRACESTATE"))
			if err == nil {
				t.ctx = &c
				return
			}
			t.why = "TRACEPARENT is not used: " + err.Error()
		}
		if r.OTLPEndpoint != "" {
			c := tracectx.New()
			t.ctx, t.root = &c, true
		}
	})
	return t.ctx
}

// answerFailed records an answer the flags could not give.
func (r *ConnRun) answerFailed(err error) {
	r.answers.failed(err)
	if r.JSON && r.IO != nil {
		// The command fails with this error: with --json, its error
		// object is the one document, not the result that follows.
		r.IO.FailJSON()
	}
}

// TraceHeader is the header of a trace of this command: the version, the
// command line and the target.
func (r *ConnRun) TraceHeader() record.Header {
	t := r.Target
	h := record.Header{Mcpi: Version, ProtocolVersion: t.Protocol, Args: r.Args,
		Target: record.Target{Command: t.Command, URL: t.URL, Server: t.Server, Config: t.Config}}
	if tc := r.TraceContext(); tc != nil {
		h.TraceParent, h.TraceRoot = tc.TraceParent(), r.Trace.root
	}
	switch {
	case t.Command != nil:
		h.Target.Transport = record.TransportStdio
	case t.Transport == "http":
		h.Target.Transport = record.TransportStreamableHTTP
	case t.Transport == "sse":
		h.Target.Transport = record.TransportSSE
	default:
		h.Target.Transport = record.TransportHTTP
	}
	return h
}

// NoteSession records what the handshake settled.
func (r *ConnRun) NoteSession(c *session.Client) {
	if r.Trace.Recorder == nil {
		return
	}
	n := record.SessionNote{ProtocolVersion: c.ProtocolVersion(), Era: c.Era()}
	if init := c.InitializeResult(); init != nil {
		n.ServerInfo = &init.ServerInfo
	}
	n.Transport = transport.Describe(c.Conn()).Transport
	r.Trace.Recorder.Annotate(record.NoteSession, n)
}

// Open connects to the target with the CLI's handler, warnings and taps.
func (r *ConnRun) Open(ctx context.Context, hk ConnHooks) (*session.Client, error) {
	if err := r.Prepare(); err != nil {
		return nil, err
	}
	say := r.Sayer()
	if err := r.ResolveServer(ctx); err != nil {
		return nil, err
	}
	if r.TraceContext(); r.Trace.why != "" {
		say("warning: %s", OneLine(r.Trace.why))
		r.Trace.why = ""
	}
	r.Target.shutdownGrace = OneShotGrace
	tap, err := r.connTap(hk)
	if err != nil {
		return nil, err
	}
	r.TapSampling(tap)
	ch := r.Handler(say)
	c, err := r.Target.Connect(ctx, r.SessionOptions(hk, ch, say), tap)
	if err != nil {
		return nil, err
	}
	r.NoteSession(c)
	if len(r.MadeRoots) > 0 && hk.Handler == nil && c.Era() == session.EraLegacy {
		r.awaitRoots(ctx, c, ch.RootsAsked())
	}
	return c, nil
}

// Sayer returns how the command says a line on stderr, whatever
// goroutine says it, and sets r.SayVerbose, which says it with -v only.
func (r *ConnRun) Sayer() func(format string, args ...any) {
	errOut := r.IO.ErrOut
	var mu sync.Mutex
	say := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(errOut, format+"\n", args...)
	}
	r.SayVerbose = func(format string, args ...any) {
		if r.Verbose {
			say(format, args...)
		}
	}
	return say
}

// connTap is what sees the connection's events: the trace of --record
// (started on the first connection), -v, and the hooks' tap.
func (r *ConnRun) connTap(hk ConnHooks) (transport.Tap, error) {
	var taps []transport.Tap
	if r.Record != "" || r.OTLPEndpoint != "" {
		// Once per command or session: a session's restarted server goes on
		// in the same trace.
		if r.Trace.Recorder == nil {
			if err := r.StartTrace(); err != nil {
				return nil, err
			}
		}
		taps = append(taps, r.Trace.Recorder)
	}
	// The transport events are shown with -v only; without a tap at all,
	// the transport does not even build them.
	if r.Verbose {
		taps = append(taps, timeline.VerboseTap(record.NewRedactor(r.SecretValues()), r.SayVerbose))
	}
	if hk.Tap != nil {
		taps = append(taps, hk.Tap)
	}
	return transport.MultiTap(taps...), nil
}

// SessionOptions are the session's handler (the CLI's, ch, unless the
// hooks have one), warnings and notifications.
func (r *ConnRun) SessionOptions(hk ConnHooks, ch *answer.Handler, say func(format string, args ...any)) session.Options {
	var handler session.Handler = ch
	if hk.Handler != nil {
		handler = hk.Handler
	}
	sopts := session.Options{
		Handler:      handler,
		ProbeTimeout: hk.ProbeTimeout,
		Capabilities: hk.Caps,
		TraceContext: r.TraceContext(),
		OnWarning: func(w session.Warning) {
			if hk.Warned != nil {
				hk.Warned(w)
				return
			}
			say("warning: %s: %s", OneLine(w.Message), safetext.Quote(w.Data))
		},
		OnNotification: func(n session.Notification) {
			if hk.Notified != nil {
				hk.Notified(n)
			}
			r.showNotification(n)
		},
	}
	if hk.Client != nil {
		sopts.ClientInfo = *hk.Client
	}
	sopts.MaxServerRequests = hk.MaxServerRequests
	return sopts
}

// showNotification shows a notification on stderr with -v.
func (r *ConnRun) showNotification(n session.Notification) {
	if !r.Verbose || n.Method == "notifications/progress" {
		// Only -v shows notifications (progress: the waiting command
		// does); a flood of them must not each be formatted for nothing.
		return
	}
	if n.Method == "notifications/message" {
		r.SayVerbose("server log: %s", OneLine(string(n.Params)))
		return
	}
	if t, ok := mcptext.TaskNotification(n); ok {
		r.SayVerbose("task notification: %s", mcptext.TaskLine(t.Task()))
		return
	}
	r.SayVerbose("notification %s %s", Sanitize(n.Method, false), OneLine(string(n.Params)))
}

// OneShotGrace is how long a one-shot command gives a stdio server to
// exit once the answer is printed and its stdin closed, and again after
// SIGTERM: the answer is never delayed, and the command does not linger.
const OneShotGrace = 300 * time.Millisecond

// rootsWait is how long a one-shot command given --root waits, after the
// handshake, for a legacy server to ask for the roots; rootsSettle is how
// long it then gives the server to take them in.
const (
	rootsWait   = 200 * time.Millisecond
	rootsSettle = 50 * time.Millisecond
)

// awaitRoots makes the --root values the server's before the first
// request: a legacy server asks for the roots when the session starts, and
// may serve a request that overtakes the answer with the roots it had.
// When the server asks, a ping after the answer makes sure it has read it,
// and a short pause lets a server that checks the roots asynchronously
// (server-filesystem stats each directory) finish.
func (r *ConnRun) awaitRoots(ctx context.Context, c *session.Client, asked <-chan struct{}) {
	select {
	case <-asked:
		if err := c.Ping(ctx); err != nil {
			r.SayVerbose("ping after roots/list: %v", err)
		}
		select {
		case <-time.After(rootsSettle):
		case <-ctx.Done():
		}
	case <-time.After(rootsWait):
		r.SayVerbose("the server did not ask for the roots within %v; going on", rootsWait)
	case <-ctx.Done():
	}
}
