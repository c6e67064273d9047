package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/chat"
	"github.com/mcpi-dev/mcpi/internal/daemon"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/mcptext"
	"github.com/mcpi-dev/mcpi/internal/otlp"
	"github.com/mcpi-dev/mcpi/internal/record"
	"github.com/mcpi-dev/mcpi/internal/roots"
	"github.com/mcpi-dev/mcpi/internal/safetext"
	"github.com/mcpi-dev/mcpi/internal/schema"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/timeline"
	"github.com/mcpi-dev/mcpi/internal/tracectx"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// ConnOptions are the flags every command that talks to a server shares:
// the target, the answers to server requests, recording and verbosity.
type ConnOptions struct {
	IO     *IOStreams
	Target TargetOptions

	Roots         []string
	SamplingReply string
	// SamplingModel answers sampling with a model (PROVIDER:MODEL), at
	// SamplingModelURL, else at ModelURL: the URL of the command's own
	// model (mcpi chat's --model-url, which that command declares).
	SamplingModel    string
	SamplingModelURL string
	ModelURL         string
	// SamplingApprove is the TUI's --sampling-approve: ask (a person sends
	// the model's draft) or auto.
	SamplingApprove string
	Elicit          string
	ElicitFields    []string
	JSON            bool
	Verbose         bool
	Record          string
	NoRedact        bool
	// OTLPEndpoint is where the session's spans and duration metric go
	// as it runs (--otlp-endpoint): an OTLP/HTTP receiver.
	OTLPEndpoint string
	// Args is the command line, for the header of a trace.
	Args []string

	// held is the live session the command runs in, inside its daemon,
	// and slot the command's place there; runtimeDir is where live
	// sessions are.
	held       *daemon.Held
	slot       *daemon.Slot
	runtimeDir string

	// readsStdin says the command reads its standard input (call --args -):
	// run in a live session, it sends it along.
	readsStdin bool
	roots      []mcp.Root
	// sampler answers sampling with --sampling-model's model; samplingTap
	// is the connection's tap, which sees the model's turns.
	sampler     *chat.Sampler
	samplingTap transport.Tap
	verbose     func(format string, args ...any)
	// recorder is the command's trace: the file of --record, and what
	// --otlp-endpoint's spans are made from (without --record it writes
	// no file); exporter sends those spans.
	recorder *record.Writer
	exporter *otlp.Live

	answers answerLog
	// answerer answers the server's requests for the command in a live
	// session, instead of the flags (mcpi test's scripted answers).
	answerer daemon.Answerer
	trace    traceState
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

// traceState is the trace context of a command's requests, read from the
// environment once: ctx is it, why says why one given is not used, and
// root says mcpi began the trace (it exports, and the environment gave
// none): the context's span is the session's own.
type traceState struct {
	once sync.Once
	ctx  *tracectx.Context
	why  string
	root bool
}

// traceContext is the W3C trace context mcpi's requests go on from:
// TRACEPARENT (and TRACESTATE) in the environment, as a CI job's tracing
// sets them; or, when mcpi exports spans (--otlp-endpoint) and the
// environment gives none, a trace of its own. Otherwise the requests
// carry none; malformed or oversized, TRACEPARENT is not used, and the
// first connection says why.
func (o *ConnOptions) traceContext() *tracectx.Context {
	t := &o.trace
	t.once.Do(func() {
		if tp, ok := os.LookupEnv("TRACEPARENT"); ok && tp != "" {
			c, err := tracectx.Parse(tp, os.Getenv("TRACESTATE"))
			if err == nil {
				t.ctx = &c
				return
			}
			t.why = "TRACEPARENT is not used: " + err.Error()
		}
		if o.OTLPEndpoint != "" {
			c := tracectx.New()
			t.ctx, t.root = &c, true
		}
	})
	return t.ctx
}

// answerFailed records an answer the flags could not give.
func (o *ConnOptions) answerFailed(err error) {
	o.answers.failed(err)
	if o.JSON && o.IO != nil {
		// The command fails with this error: with --json, its error
		// object is the one document, not the result that follows.
		o.IO.FailJSON()
	}
}

func addConnFlags(cmd *cobra.Command, o *ConnOptions) {
	addTargetFlags(cmd, &o.Target)
	f := cmd.Flags()
	end := flagGroup(cmd, groupArgs)
	f.StringArrayVar(&o.Roots, "root", nil, "a root to offer the server (a directory path or a URI; repeatable)")
	f.StringVar(&o.SamplingReply, "sampling-reply", "", "answer sampling requests with this text, or @FILE holding a CreateMessageResult")
	addSamplingModelFlags(cmd, o)
	f.StringVar(&o.Elicit, "elicit", "", "answer elicitation requests: accept, decline or cancel")
	f.StringArrayVar(&o.ElicitFields, "elicit-field", nil, "a field of an accepted elicitation, KEY=VALUE or KEY:=JSON (repeatable)")
	end()
	defer flagGroup(cmd, groupOutput)()
	f.BoolVar(&o.JSON, "json", false, "print JSON")
	f.BoolVarP(&o.Verbose, "verbose", "v", false, "show server stderr, notifications and transport events on stderr")
	f.StringVar(&o.Record, "record", "", "write the session's wire traffic to this trace file (JSON Lines, secrets redacted)")
	f.BoolVar(&o.NoRedact, "no-redact", false, "with --record: keep secrets (Authorization headers, tokens, -e values) in the trace")
	addExportFlag(f, o)
}

// connHooks are what a command hears of its connection besides what its
// flags ask, and how it speaks to the server, where the flags do not say.
// The zero value: nothing more.
type connHooks struct {
	handler  session.Handler            // overrides the CLI's answers (replay --verify, a session's daemon)
	tap      transport.Tap              // one more tap (mcpi check, a session's daemon)
	notified func(session.Notification) // sees every notification (a session's daemon)
	warned   func(session.Warning)      // takes the warnings instead of stderr (mcpi check, a session's daemon)
	client   *mcp.Implementation        // who mcpi says it is (replay --verify: the recorded host)
	caps     *mcp.ClientCapabilities    // what it declares (replay --verify: the recorded host's)
	// maxServerRequests bounds the server requests in progress (0: the
	// session's default); a session's daemon makes its parked requests'
	// budget the bound that counts.
	maxServerRequests int
	// connectFailed takes a failure to connect, and returns the command's
	// error (mcpi check reports it its own way).
	connectFailed func(err error) error
	// probeTimeout bounds the era probe (0: the session's default); mcpi
	// check gives it the whole of --timeout.
	probeTimeout time.Duration
}

// with connects, runs fn, and closes the session and the trace, whatever
// happens; with --json a failure is also printed as a JSON error object.
func (o *ConnOptions) with(ctx context.Context, fn func(*session.Client) error) error {
	return o.withHooks(ctx, connHooks{}, fn)
}

// withHooks is with, with hk's hooks on the connection (a command run in a
// live session has the session's).
func (o *ConnOptions) withHooks(ctx context.Context, hk connHooks, fn func(*session.Client) error) error {
	if o.held != nil {
		if a, ok := hk.handler.(daemon.Answerer); ok {
			o.answerer = a
		}
		return withJSONError(o.IO, o.JSON, o.withHeld(ctx, fn))
	}
	if o.Target.Session != "" {
		return o.forward(ctx)
	}
	c, err := o.open(ctx, hk)
	switch {
	case err == nil:
		err = o.answers.over(fn(c))
		c.Close()
	case hk.connectFailed != nil && !errors.As(err, new(*FlagError)):
		err = hk.connectFailed(err)
	}
	if cerr := o.endTrace(); cerr != nil && err == nil {
		err = cerr
	}
	return withJSONError(o.IO, o.JSON, err)
}

// traceOptions are how a trace of this command redacts.
func (o *ConnOptions) traceOptions() record.Options {
	return record.Options{NoRedact: o.NoRedact, SecretValues: o.secretValues()}
}

// traceHeader is the header of a trace of this command: the version, the
// command line and the target.
func (o *ConnOptions) traceHeader() record.Header {
	t := o.Target
	h := record.Header{Mcpi: Version, ProtocolVersion: t.Protocol, Args: o.Args,
		Target: record.Target{Command: t.Command, URL: t.URL, Server: t.Server, Config: t.Config}}
	if tc := o.traceContext(); tc != nil {
		h.TraceParent, h.TraceRoot = tc.TraceParent(), o.trace.root
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

// secretValues are the values no trace and no screen may show: a config
// entry's header values and the -e values whose name or length says secret.
func (o *ConnOptions) secretValues() []string {
	secrets := append([]string(nil), o.Target.secrets...)
	for _, e := range o.Target.Env {
		if k, v, _ := strings.Cut(e, "="); record.IsSecretEnv(k, v) {
			secrets = append(secrets, v)
		}
	}
	return secrets
}

// noteSession records what the handshake settled.
func (o *ConnOptions) noteSession(c *session.Client) {
	if o.recorder == nil {
		return
	}
	n := record.SessionNote{ProtocolVersion: c.ProtocolVersion(), Era: c.Era()}
	if init := c.InitializeResult(); init != nil {
		n.ServerInfo = &init.ServerInfo
	}
	n.Transport = transport.Describe(c.Conn()).Transport
	o.recorder.Annotate(record.NoteSession, n)
}

// validate checks the flags that do not depend on the server.
func (o *ConnOptions) validate() error {
	switch o.Elicit {
	case "", mcp.ElicitAccept, mcp.ElicitDecline, mcp.ElicitCancel:
	default:
		return flagErrorf("invalid --elicit %q: want accept, decline or cancel", o.Elicit)
	}
	for _, f := range o.ElicitFields {
		if k, _, _ := schema.SplitPair(f); !strings.Contains(f, "=") || k == "" {
			return flagErrorf("invalid --elicit-field %q: want KEY=VALUE or KEY:=JSON", f)
		}
	}
	if len(o.ElicitFields) > 0 && o.Elicit == "" {
		o.Elicit = mcp.ElicitAccept
	}
	if err := o.validateSamplingModel(); err != nil {
		return err
	}
	for _, r := range o.Roots {
		root, err := roots.ParseIn(r, o.IO.WorkDir())
		if err != nil {
			return &FlagError{Err: fmt.Errorf("invalid --root: %w", err)}
		}
		o.roots = append(o.roots, root)
	}
	return nil
}

// open connects to the target with the CLI's handler, warnings and taps.
func (o *ConnOptions) open(ctx context.Context, hk connHooks) (*session.Client, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	say := o.sayer()
	if err := o.resolveServer(ctx); err != nil {
		return nil, err
	}
	if o.traceContext(); o.trace.why != "" {
		say("warning: %s", oneLine(o.trace.why))
		o.trace.why = ""
	}
	o.Target.shutdownGrace = oneShotGrace
	tap, err := o.connTap(hk)
	if err != nil {
		return nil, err
	}
	o.tapSampling(tap)
	ch := &cliHandler{o: o, say: say, rootsAsked: make(chan struct{})}
	c, err := o.Target.connect(ctx, o.sessionOptions(hk, ch, say), tap)
	if err != nil {
		return nil, err
	}
	o.noteSession(c)
	if len(o.roots) > 0 && hk.handler == nil && c.Era() == session.EraLegacy {
		o.awaitRoots(ctx, c, ch.rootsAsked)
	}
	return c, nil
}

// sayer returns how the command says a line on stderr, whatever
// goroutine says it, and sets o.verbose, which says it with -v only.
func (o *ConnOptions) sayer() func(format string, args ...any) {
	errOut := o.IO.ErrOut
	var mu sync.Mutex
	say := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(errOut, format+"\n", args...)
	}
	o.verbose = func(format string, args ...any) {
		if o.Verbose {
			say(format, args...)
		}
	}
	return say
}

// connTap is what sees the connection's events: the trace of --record
// (started on the first connection), -v, and the hooks' tap.
func (o *ConnOptions) connTap(hk connHooks) (transport.Tap, error) {
	var taps []transport.Tap
	if o.Record != "" || o.OTLPEndpoint != "" {
		// Once per command or session: a session's restarted server goes on
		// in the same trace.
		if o.recorder == nil {
			if err := o.startTrace(); err != nil {
				return nil, err
			}
		}
		taps = append(taps, o.recorder)
	}
	// The transport events are shown with -v only; without a tap at all,
	// the transport does not even build them.
	if o.Verbose {
		taps = append(taps, timeline.VerboseTap(record.NewRedactor(o.secretValues()), o.verbose))
	}
	if hk.tap != nil {
		taps = append(taps, hk.tap)
	}
	return transport.MultiTap(taps...), nil
}

// sessionOptions are the session's handler (the CLI's, ch, unless the
// hooks have one), warnings and notifications.
func (o *ConnOptions) sessionOptions(hk connHooks, ch *cliHandler, say func(format string, args ...any)) session.Options {
	var handler session.Handler = ch
	if hk.handler != nil {
		handler = hk.handler
	}
	sopts := session.Options{
		Handler:      handler,
		ProbeTimeout: hk.probeTimeout,
		Capabilities: hk.caps,
		TraceContext: o.traceContext(),
		OnWarning: func(w session.Warning) {
			if hk.warned != nil {
				hk.warned(w)
				return
			}
			say("warning: %s: %s", oneLine(w.Message), safetext.Quote(w.Data))
		},
		OnNotification: func(n session.Notification) {
			if hk.notified != nil {
				hk.notified(n)
			}
			o.showNotification(n)
		},
	}
	if hk.client != nil {
		sopts.ClientInfo = *hk.client
	}
	sopts.MaxServerRequests = hk.maxServerRequests
	return sopts
}

// showNotification shows a notification on stderr with -v.
func (o *ConnOptions) showNotification(n session.Notification) {
	if !o.Verbose || n.Method == "notifications/progress" {
		// Only -v shows notifications (progress: the waiting command
		// does); a flood of them must not each be formatted for nothing.
		return
	}
	if n.Method == "notifications/message" {
		o.verbose("server log: %s", oneLine(string(n.Params)))
		return
	}
	if t, ok := mcptext.TaskNotification(n); ok {
		o.verbose("task notification: %s", mcptext.TaskLine(t.Task()))
		return
	}
	o.verbose("notification %s %s", sanitize(n.Method, false), oneLine(string(n.Params)))
}

// oneShotGrace is how long a one-shot command gives a stdio server to
// exit once the answer is printed and its stdin closed, and again after
// SIGTERM: the answer is never delayed, and the command does not linger.
const oneShotGrace = 300 * time.Millisecond

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
func (o *ConnOptions) awaitRoots(ctx context.Context, c *session.Client, asked <-chan struct{}) {
	select {
	case <-asked:
		if err := c.Ping(ctx); err != nil {
			o.verbose("ping after roots/list: %v", err)
		}
		select {
		case <-time.After(rootsSettle):
		case <-ctx.Done():
		}
	case <-time.After(rootsWait):
		o.verbose("the server did not ask for the roots within %v; going on", rootsWait)
	case <-ctx.Done():
	}
}
