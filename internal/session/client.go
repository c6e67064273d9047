package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpi-dev/mcpi/internal/bounds"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/tracectx"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// DefaultTimeout bounds a request with no answer and no progress.
const DefaultTimeout = 60 * time.Second

// DefaultMaxTime bounds a request's total time, however much progress the
// server reports (the spec: clients SHOULD enforce a maximum timeout).
const DefaultMaxTime = 10 * time.Minute

// DefaultMaxServerRequests bounds the server->client requests being
// answered at once: beyond it, a request is answered at once with an
// error. A server that sends requests and never reads the answers would
// otherwise hold a goroutine and its request for each.
const DefaultMaxServerRequests = 256

// Options configure a Client.
type Options struct {
	// ClientInfo names mcpi to the server.
	ClientInfo mcp.Implementation
	// ProtocolVersion is the revision offered in initialize (default: the
	// newest legacy revision).
	ProtocolVersion string
	// Handler answers the server's requests: sampling, elicitation, roots.
	// Nil answers every such request with an error.
	Handler Handler
	// Capabilities overrides the capabilities declared in initialize. By
	// default they follow from Handler: sampling, elicitation (form and URL)
	// and roots with listChanged when there is one, none otherwise.
	Capabilities *mcp.ClientCapabilities
	// OnNotification sees every notification from the server, after the
	// client has routed progress to its caller. It is called from the reader
	// goroutine and must not block.
	OnNotification func(Notification)
	// OnWarning sees every frame the server got wrong. It is called from the
	// reader goroutine and must not block.
	OnWarning func(Warning)
	// Timeout bounds each request without an answer or progress (default
	// DefaultTimeout; negative means no bound), its write included (a
	// server that stops reading). It does not run while the Handler answers
	// a server request that arrived while the request was pending (a person
	// may be typing the reply): when that answer is given, the request's
	// timeout starts again from zero, as after progress. A request that
	// starts while an older server request waits keeps its clock. See
	// Answering.
	Timeout time.Duration
	// MaxTime bounds each operation's total time, progress or not (default
	// DefaultMaxTime; negative means no bound): a request, or a call with
	// all its task polls and input rounds, or a listing with all its pages.
	// The time the Handler spent answering server requests is not counted:
	// the bound is extended by it.
	MaxTime time.Duration
	// MaxServerRequests bounds the server->client requests in progress
	// (default DefaultMaxServerRequests).
	MaxServerRequests int
	// WriteTimeout bounds the write of each answer to a server request
	// (default bounds.Write, 30 s): a server that reads nothing for that
	// long is deaf, and the answers it does not read are dropped, counted
	// (Unanswered) and warned about once.
	WriteTimeout time.Duration
	// MaxPages bounds the pages of one listing (default DefaultMaxPages;
	// see Paginate).
	MaxPages int
	// Force sends requests even when the server did not declare the
	// capability they need.
	Force  bool
	Logger *slog.Logger
	// Era is EraAuto (the default), EraLegacy or EraModern. With EraAuto a
	// ProtocolVersion of either era decides it; otherwise Start detects it.
	Era string
	// EraReason says why Era is what it is when it was not forced by the
	// user (an era remembered from an earlier run): EraReason reports it.
	EraReason string
	// ProbeTimeout bounds the server/discover probe of era detection on
	// stdio (default 5s): a legacy server may never answer it.
	ProbeTimeout time.Duration
	// OnHealth sees every change of the connection's Health (not every
	// success): HealthUnreachable when the HTTP server cannot be reached,
	// HealthUp when it answers again, HealthRenewing then HealthUp (with a
	// Note naming both session ids) when a new session replaced one the
	// server forgot, HealthSessionLost when none could be started. It is
	// called from the session's goroutines (the reader's, a caller's, the
	// transport's), one call at a time, in order, and must not block: hand
	// the event to a channel or a UI loop. It may call Health.
	OnHealth func(HealthEvent)
	// KeepAlive, when positive, has an HTTP client ping the server once no
	// request has been pending for that long and no standalone GET stream
	// is open (its failure to reopen is the signal then), and record the
	// outcome as Health: a failing ping makes it HealthUnreachable, a later
	// answer HealthUp again. Pings are real frames: the tap sees them.
	// There is no keepalive over stdio, where the end of the process ends
	// the client (Done). 0 means off.
	KeepAlive time.Duration
	// TraceContext, when set, is the trace mcpi's requests belong to: each
	// carries a child of it in params._meta (traceparent, and tracestate
	// when there is one: SEP-414), so that a server's spans join the
	// trace. Nil sends the requests as they are.
	TraceContext *tracectx.Context
	// Extensions are extensions the client declares besides those it
	// speaks itself, in both eras' capabilities: MCP Apps
	// (io.modelcontextprotocol/ui) when mcpi is to render them. Servers
	// may list differently to a client that declares one.
	Extensions map[string]json.RawMessage
}

// Eras.
const (
	EraAuto   = "auto"
	EraLegacy = "legacy"
	EraModern = "modern"
)

// Notification is a notification from the server.
type Notification struct {
	Time   time.Time
	Method string
	Params json.RawMessage
}

// CancelledError is the cause (context.Cause) of the end of a server
// request's context when the peer cancelled it with
// notifications/cancelled: its params, as they came.
type CancelledError struct {
	Params json.RawMessage
	Reason string
}

func (e *CancelledError) Error() string {
	if e.Reason == "" {
		return "cancelled by the server"
	}
	return "cancelled by the server: " + e.Reason
}

// Warning is something the server got wrong. Data quotes what arrived.
type Warning struct {
	Time    time.Time
	Kind    string // "bad-frame", "invalid-message", "unknown-id", "id-type", "batch", "jsonrpc-version", "session-status", "server-info"
	Message string
	Data    []byte
}

// Client is a session with one MCP server.
type Client struct {
	conn   transport.Conn
	opts   Options
	log    *slog.Logger
	nextID atomic.Int64

	mu       sync.Mutex
	pending  map[string]*pendingCall // id key -> call
	progress map[string]*pendingCall // progress token key -> call
	inbound  map[string]context.CancelCauseFunc
	acks     map[string]chan mcp.SubscriptionsAcknowledgedParams // listen id -> its Listen
	endErr   error                                               // why the connection ended
	ended    bool                                                // the reader has stopped (set with endErr)
	// taskWatch pokes the followers of a task (FollowTask) when a
	// notifications/tasks names it.
	taskWatch map[string][]chan struct{}
	// cancelled holds the ids of the requests mcpi gave up on (cancelled or
	// timed out), the newest maxCancelled of them: an answer that crossed
	// the cancellation is expected, not a server's mistake.
	cancelled recentIDs
	// rawSent holds the ids of requests written raw (SendFrame), the
	// newest maxCancelled: their answers are expected, and no call waits.
	rawSent recentIDs
	// serving counts the server requests being answered; refusals holds
	// the error answers to those beyond MaxServerRequests, for the one
	// goroutine that writes them (started on the first).
	serving     int
	refusals    *bounds.Queue[[]byte]
	refusalsBud *bounds.Budget // the refusals' budget, made with the client
	refusalRoom chan struct{}  // poked when a refusal leaves the queue
	deaf        atomic.Bool    // the server read nothing for a write clock
	dropped     atomic.Int64   // refusals dropped while it was deaf
	refuseOnce  sync.Once
	floodWarned bool
	// answering counts the server requests the Handler is answering.
	answering int
	// lastIdle is when the last pending request ended (keepalive);
	// streamOpen whether the standalone GET stream is open.
	lastIdle   time.Time
	streamOpen bool

	// health is under healthMu, and mirrored in healthNow for the reader's
	// fast path; healthEmit serialises the OnHealth reports.
	healthMu   sync.Mutex
	healthEmit sync.Mutex
	health     Health
	healthErr  error
	healthNow  atomic.Int32
	bg         sync.WaitGroup // background goroutines: keepalive, renewal

	initMu      sync.Mutex   // serialises initialize (first and after a 404)
	lostSession string       // under initMu: the session the last failed renewal replaced
	generation  atomic.Int64 // counts completed initializations
	stateMu     sync.RWMutex
	init        *mcp.InitializeResult
	initRaw     json.RawMessage
	revision    string
	era         string
	eraReason   string
	eraGuessed  bool // the era was taken for legacy because the probe timed out
	logLevel    mcp.LoggingLevel
	// toolHeaders maps a tool to its x-mcp-header parameters (modern HTTP);
	// droppedTools the tools left out of tools/list, with why.
	toolHeaders  map[string][]headerParam
	droppedTools map[string]string

	toolParams toolParamsMemo

	done      chan struct{} // closed when the reader stops
	closeOnce sync.Once
	// closing is set by Close before it closes the connection: an answer
	// that can no longer be written then is the client's doing, not the
	// server's.
	closing atomic.Bool
}

// pendingCall is a request waiting for its answer. Whatever happens to it
// (its answer, its loss, a hold beginning or ending, progress, its clock
// running out, the connection's end) is put in its fields, or in the
// client's, and then said on wake, so that the caller waits on one
// channel of its own (and its context's) and reads what changed.
type pendingCall struct {
	method string
	onProg func(mcp.ProgressParams)
	wake   chan struct{} // capacity 1: something changed

	resp atomic.Pointer[mcp.Message]
	lost atomic.Pointer[lostErr]
	// held counts the server requests being answered that arrived while
	// this call was pending (changed under Client.mu).
	held atomic.Int32
	// active says progress came (only a request with a progress token
	// hears of it); fired that its clock's timer fired.
	active atomic.Bool
	fired  atomic.Bool
}

// lostErr is what the transport said when it lost the request's answer.
type lostErr struct{ err error }

// signal wakes the caller; a wake already waiting says it too.
func (pc *pendingCall) signal() {
	select {
	case pc.wake <- struct{}{}:
	default:
	}
}

// fire says the call's clock fired.
func (pc *pendingCall) fire() {
	pc.fired.Store(true)
	pc.signal()
}

// deliver gives the call its answer.
func (pc *pendingCall) deliver(m *mcp.Message) {
	pc.resp.Store(m)
	pc.signal()
}

// lose says the transport lost the call's answer.
func (pc *pendingCall) lose(err error) {
	pc.lost.Store(&lostErr{err})
	pc.signal()
}

// New starts a client on conn without initializing it. Most callers want
// Connect.
func New(conn transport.Conn, opts Options) *Client {
	if opts.ClientInfo.Name == "" {
		opts.ClientInfo = mcp.Implementation{Name: "mcpi", Version: "dev"}
	}
	if opts.Timeout == 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.MaxTime == 0 {
		opts.MaxTime = DefaultMaxTime
	}
	if opts.MaxServerRequests <= 0 {
		opts.MaxServerRequests = DefaultMaxServerRequests
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &Client{
		conn:     conn,
		opts:     opts,
		log:      log,
		pending:  make(map[string]*pendingCall),
		progress: make(map[string]*pendingCall),
		inbound:  make(map[string]context.CancelCauseFunc),
		done:     make(chan struct{}),

		refusalsBud: bounds.NewBudget(RefusalsBudget, refusalCount, refusalBytes),
		lastIdle:    time.Now(),
	}
	go c.readLoop()
	if opts.KeepAlive > 0 && c.httpConn() != nil {
		c.bg.Add(1)
		go c.keepAlive()
	}
	return c
}

// Connect starts a client on conn and settles the era (see Start). On
// failure it closes conn.
func Connect(ctx context.Context, conn transport.Conn, opts Options) (*Client, error) {
	c := New(conn, opts)
	if err := c.Start(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Conn returns the transport connection.
func (c *Client) Conn() transport.Conn { return c.conn }

// Done is closed when the connection has ended.
func (c *Client) Done() <-chan struct{} { return c.done }

// Err returns why the connection ended, or nil while it is up.
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.endErr
}

// Close ends the session and the connection. It may be called more than once.
func (c *Client) Close() error {
	c.closeOnce.Do(func() {
		c.closing.Store(true)
		c.conn.Close()
		<-c.done
		c.bg.Wait()
	})
	return nil
}

// capabilities returns what the client declares in initialize.
func (c *Client) capabilities() mcp.ClientCapabilities {
	var caps mcp.ClientCapabilities
	switch {
	case c.opts.Capabilities != nil:
		caps = *c.opts.Capabilities
	case c.opts.Handler != nil:
		caps = mcp.ClientCapabilities{
			Roots:       &mcp.RootsCapability{ListChanged: true},
			Sampling:    &mcp.SamplingCapability{},
			Elicitation: &mcp.ElicitationCapability{Form: &mcp.Empty{}, URL: &mcp.Empty{}},
		}
	}
	if len(c.opts.Extensions) > 0 {
		ext := maps.Clone(caps.Extensions)
		if ext == nil {
			ext = map[string]json.RawMessage{}
		}
		maps.Copy(ext, c.opts.Extensions)
		caps.Extensions = ext
	}
	return caps
}

// Initialize performs the handshake: initialize, version check,
// notifications/initialized. It may be called again to start a new session
// (after the server forgot the old one).
func (c *Client) Initialize(ctx context.Context) error {
	c.initMu.Lock()
	defer c.initMu.Unlock()
	return c.initializeLocked(ctx)
}

func (c *Client) initializeLocked(ctx context.Context) error {
	caps := c.capabilities()
	offer := c.opts.ProtocolVersion
	if offer == "" || !mcp.IsLegacy(offer) {
		offer = mcp.LatestLegacy
	}
	if offer < mcp.Rev20251125 && caps.Elicitation != nil {
		// URL elicitation is 2025-11-25's; older schemas have an empty object.
		caps.Elicitation = &mcp.ElicitationCapability{}
	}
	if offer < mcp.Rev20250618 {
		caps.Elicitation = nil
	}
	params := mcp.InitializeParams{
		ProtocolVersion: offer,
		Capabilities:    caps,
		ClientInfo:      c.opts.ClientInfo,
	}
	raw, err := c.call(ctx, "initialize", params, &callOptions{noRetry: true})
	if err != nil {
		return err
	}
	var res mcp.InitializeResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return &RPCError{Method: "initialize", RPCError: &mcp.RPCError{Code: mcp.CodeInvalidParams, Message: "invalid initialize result: " + err.Error()}}
	}
	if !mcp.IsLegacy(res.ProtocolVersion) {
		return &VersionError{Offered: offer, Got: res.ProtocolVersion}
	}
	c.stateMu.Lock()
	c.init, c.initRaw, c.revision = &res, raw, res.ProtocolVersion
	c.era = EraLegacy
	if c.eraReason == "" {
		c.eraReason = "initialize"
	}
	c.stateMu.Unlock()
	c.generation.Add(1)
	if vs, ok := c.conn.(transport.VersionSetter); ok {
		vs.SetProtocolVersion(res.ProtocolVersion)
	}
	if err := c.Notify(ctx, "notifications/initialized", nil); err != nil {
		return err
	}
	if w, ok := c.conn.(transport.StreamWatcher); ok {
		w.WatchStream(c.streamReport)
	}
	if l, ok := c.conn.(transport.StreamListener); ok {
		l.Listen()
	}
	return nil
}

// Generation counts the sessions the client has started with the server:
// 1 after the first, one more each time a forgotten session was replaced.
// What was learnt of the server under another generation may be stale.
func (c *Client) Generation() int64 { return c.generation.Load() }

// InitializeResult returns the server's answer to initialize.
func (c *Client) InitializeResult() *mcp.InitializeResult {
	c.stateMu.RLock()
	defer c.stateMu.RUnlock()
	return c.init
}

// InitializeResultRaw returns the server's answer to initialize as sent.
func (c *Client) InitializeResultRaw() json.RawMessage {
	c.stateMu.RLock()
	defer c.stateMu.RUnlock()
	return c.initRaw
}

// ProtocolVersion returns the negotiated revision.
func (c *Client) ProtocolVersion() string {
	c.stateMu.RLock()
	defer c.stateMu.RUnlock()
	return c.revision
}

// ServerCapabilities returns what the server declared.
func (c *Client) ServerCapabilities() mcp.ServerCapabilities {
	c.stateMu.RLock()
	defer c.stateMu.RUnlock()
	if c.init == nil {
		return mcp.ServerCapabilities{}
	}
	return c.init.Capabilities
}

// CallOptions adjust one request.
type CallOptions struct {
	// Timeout overrides the client's timeout for this request; negative
	// means no bound at all, not even Options.MaxTime (a subscription).
	Timeout time.Duration
	// OnProgress receives the request's progress notifications; setting it
	// adds a progress token to the request. Each notification also resets
	// the timeout.
	OnProgress func(mcp.ProgressParams)
	// Force sends the request even without the capability it needs.
	Force bool
	// Meta is merged into the request's _meta.
	Meta mcp.Meta
}

type callOptions struct {
	CallOptions
	noRetry bool // do not re-initialize on an expired session (initialize itself)
	// revision, when set, is the modern revision to put in _meta (the
	// probe and its retries, before the era is settled).
	revision string
	onID     func(id int64) // called with the request's id before it is written
	header   http.Header    // extra HTTP headers (Mcp-Param-*)
	// op, when set, is the operation the request belongs to, before it
	// is in the context (callMRTR's first round).
	op *operation
}

// Call sends a request and decodes its result into result (when not nil).
func (c *Client) Call(ctx context.Context, method string, params, result any, opts *CallOptions) error {
	var o callOptions
	if opts != nil {
		o.CallOptions = *opts
	}
	raw, err := c.callMRTR(ctx, method, params, &o)
	if err != nil {
		return err
	}
	if result == nil {
		return nil
	}
	if err := json.Unmarshal(raw, result); err != nil {
		return &RPCError{Method: method, RPCError: &mcp.RPCError{Code: mcp.CodeInvalidParams, Message: "result does not match the schema: " + err.Error(), Data: quote(raw)}}
	}
	return nil
}

// Send is the debugger's escape hatch: it sends any request and returns the
// raw result, with no capability or revision checks.
func (c *Client) Send(ctx context.Context, method string, params json.RawMessage, opts *CallOptions) (json.RawMessage, error) {
	o := callOptions{}
	if opts != nil {
		o.CallOptions = *opts
	}
	o.Force = true
	var p any
	if len(params) > 0 {
		p = params
	}
	return c.call(ctx, method, p, &o)
}

// SendFrame writes a raw frame, exactly as given. No call waits for the
// answers to the requests in it (the wire shows them); their ids are
// remembered (the newest maxCancelled), so that an answer is expected, not
// a response to an unknown id.
func (c *Client) SendFrame(ctx context.Context, frame []byte) error {
	// Noted before the write: the answer may come before it returns.
	c.noteRaw(requestIDs(frame))
	return c.conn.Send(ctx, frame)
}

// noteRaw remembers the ids of requests written raw.
func (c *Client) noteRaw(keys []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range keys {
		c.rawSent.add(k)
	}
}

// requestIDs returns the id keys of the requests in a frame (one message
// or a batch); a frame that is not JSON has none.
func requestIDs(frame []byte) []string {
	frame = bytes.TrimSpace(frame)
	msgs := []json.RawMessage{frame}
	if len(frame) > 0 && frame[0] == '[' {
		if json.Unmarshal(frame, &msgs) != nil {
			return nil
		}
	}
	var keys []string
	for _, raw := range msgs {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(raw, &m) != nil || m.Method == "" {
			continue
		}
		if k, ok := mcp.IDKey(m.ID); ok {
			keys = append(keys, k)
		}
	}
	return keys
}

// Notify sends a notification.
func (c *Client) Notify(ctx context.Context, method string, params any) error {
	frame, err := mcp.NewNotification(method, params)
	if err != nil {
		return err
	}
	if err := c.conn.Send(ctx, frame); err != nil {
		return c.sendError(method, err)
	}
	return nil
}

func (c *Client) sendError(method string, err error) error {
	if errors.Is(err, transport.ErrClosed) || c.isDone() {
		if e := c.Err(); e != nil {
			return &DisconnectedError{Method: method, Err: e}
		}
		return &DisconnectedError{Method: method, Err: err}
	}
	var exit *transport.ServerExitError
	if errors.As(err, &exit) {
		return &DisconnectedError{Method: method, Err: err}
	}
	return fmt.Errorf("%s: %w", method, err)
}

func (c *Client) isDone() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

func (c *Client) call(ctx context.Context, method string, params any, o *callOptions) (json.RawMessage, error) {
	r, err := c.newRequest(ctx, method, params, o)
	if err != nil {
		return nil, err
	}
	defer c.forget(r.key)
	defer r.send.release()
	if err := c.sendRequest(ctx, r); err != nil {
		return nil, err
	}
	return c.await(ctx, r)
}

// request is one request in flight: its frame, its entry among the pending
// calls and its clocks.
type request struct {
	id     int64
	key    string
	method string
	o      *callOptions
	pc     *pendingCall
	call   pendingCall // pc's, made with the request
	frame  []byte
	// The clocks: timeout is the inactivity clock (reset by progress);
	// maxLeft what remains of the maximum time (the operation's, when the
	// request is one of many), op the operation.
	timeout time.Duration
	maxLeft time.Duration
	op      *operation
	// The write is bounded by the first of the two clocks; written is
	// when it began, so that the maximum time counts the write too.
	writeClock bounds.Clock
	written    time.Time
	send       sendContext // the write's context, released when the call ends
	sendCtx    context.Context
	// gen is the session the request went in; retried says it was sent
	// again in a new one.
	gen     int64
	retried bool
}

// newRequest checks, encodes and registers a request, and sets its clocks.
func (c *Client) newRequest(ctx context.Context, method string, params any, o *callOptions) (*request, error) {
	if !o.Force && !c.opts.Force {
		if err := c.check(method); err != nil {
			return nil, err
		}
	}
	if c.isDone() {
		return nil, &DisconnectedError{Method: method, Err: c.Err()}
	}
	r := &request{id: c.nextID.Add(1), method: method, o: o}
	r.key = strconv.FormatInt(r.id, 10)
	r.call.method, r.call.onProg, r.call.wake = method, o.OnProgress, make(chan struct{}, 1)
	r.pc = &r.call
	meta := o.Meta
	if o.OnProgress != nil {
		meta = mergeMeta(meta, mcp.Meta{mcp.ProgressTokenKey: r.id})
	}
	if rev, modern := c.modernRevision(o); modern {
		meta = mergeMeta(meta, c.requestMeta(rev))
	}
	if tc := c.opts.TraceContext; tc != nil {
		if _, given := meta[mcp.MetaTraceParent]; !given {
			child := tc.Child()
			tm := mcp.Meta{mcp.MetaTraceParent: child.TraceParent()}
			if child.State != "" {
				tm[mcp.MetaTraceState] = child.State
			}
			meta = mergeMeta(meta, tm)
		}
	}
	if o.onID != nil {
		o.onID(r.id)
	}
	frame, err := encodeRequest(r.id, method, params, meta, &c.toolParams)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	r.frame = frame

	// The request's clocks. Both bound the write too: a server that stops
	// reading its input must not hold the caller past them.
	r.timeout = c.opts.Timeout
	if o.Timeout != 0 {
		r.timeout = o.Timeout
	}
	r.written = time.Now()
	r.maxLeft, r.op = c.opts.MaxTime, o.op
	if r.op == nil {
		r.op = operationOf(ctx)
	}
	r.op.begin(r.written)
	if o.Timeout < 0 {
		// Unbounded on purpose (a subscription, a relayed request whose
		// client keeps its own clocks): no maximum either.
		r.maxLeft, r.op = 0, nil
	}
	if r.op.bounded() {
		left := r.op.left()
		if left <= 0 {
			return nil, r.op.spent(method)
		}
		if r.maxLeft <= 0 || left < r.maxLeft {
			r.maxLeft = left
		}
	}
	r.writeClock = bounds.Clock{Name: "request", D: firstBound(r.timeout, r.maxLeft)}
	r.send.init(ctx, r.writeClock, r.written)
	r.sendCtx = &r.send
	if h := o.header; len(h) > 0 {
		r.sendCtx = transport.WithHeader(r.sendCtx, h)
	}

	c.mu.Lock()
	c.pending[r.key] = r.pc
	if o.OnProgress != nil {
		c.progress[r.key] = r.pc
	}
	c.mu.Unlock()
	r.gen = c.generation.Load()
	return r, nil
}

// renew starts a new session once, the server having forgotten ours (HTTP
// 404), and sends the request again in it.
func (c *Client) renew(ctx context.Context, r *request, err error) error {
	r.retried = true
	if ierr := c.reinitialize(ctx, r.gen, err); ierr != nil {
		return fmt.Errorf("%w; starting a new session failed: %v", err, ierr)
	}
	r.gen = c.generation.Load()
	return c.conn.Send(r.sendCtx, r.frame)
}

// sendRequest writes the request under its clocks.
func (c *Client) sendRequest(ctx context.Context, r *request) error {
	var err error
	if h, _ := c.Health(); h == HealthSessionLost && !r.o.noRetry {
		// The last new session could not be started: try again first.
		err = c.renew(ctx, r, errSessionLost)
	} else {
		err = c.conn.Send(r.sendCtx, r.frame)
		if errors.Is(err, transport.ErrSessionExpired) && !r.o.noRetry {
			err = c.renew(ctx, r, err)
		}
	}
	if err == nil {
		return nil
	}
	c.noteSendError(err)
	switch {
	case ctx.Err() != nil:
		// The frame may have reached the server all the same.
		c.cancelRequest(r.id, "cancelled by the user")
		return ctx.Err()
	case r.sendCtx.Err() != nil:
		// The server did not take the request within its clock: it may
		// still read it, and is told to drop it.
		c.cancelRequest(r.id, fmt.Sprintf("not read within %v", r.writeClock.D))
		return &TimeoutError{Method: r.method, After: r.writeClock.D, Max: r.writeClock.D == r.maxLeft && r.writeClock.D != r.timeout, Unread: true}
	}
	return c.sendError(r.method, err)
}

// await waits for the request's answer under its clocks. While the
// Handler answers a server request that arrived during this one, both
// clocks stand still: the inactivity clock starts again from zero
// afterwards, the maximum goes on from where it stood. A request that
// starts while an older server request waits keeps its clocks. The
// maximum time bounds the whole request: the time its write took is
// spent of it already.
func (c *Client) await(ctx context.Context, r *request) (json.RawMessage, error) {
	pc := r.pc
	now := time.Now()
	maxLeft := r.maxLeft
	if maxLeft > 0 {
		// A clock of zero never fires: one spent fires at once.
		maxLeft = max(maxLeft-now.Sub(r.written), time.Nanosecond)
	}
	var clock callClock
	clock.start(now, r.timeout, maxLeft, pc.fire)
	defer func() {
		// Answered, or ended, while a person answered: the operation
		// does not count that time either.
		if held, was := clock.stop(); was {
			r.op.hold(held)
		}
	}()
	for {
		if m := pc.resp.Load(); m != nil {
			return answer(r.method, m)
		}
		if l := pc.lost.Swap(nil); l != nil {
			raw, err, again := c.lostRequest(ctx, r, l.err)
			if again {
				continue
			}
			return raw, err
		}
		if held, resumed := clock.setHeld(pc.held.Load() > 0); resumed {
			r.op.hold(held)
		}
		if pc.active.Swap(false) {
			clock.activity()
		}
		if pc.fired.Swap(false) {
			switch clock.ranOut() {
			case ranIdle:
				return c.expired(r, false)
			case ranMax:
				return c.expired(r, true)
			}
		}
		if c.isDone() {
			// The connection ended; its answer, had it come, was taken
			// above.
			return nil, &DisconnectedError{Method: r.method, Err: c.Err()}
		}
		select {
		case <-pc.wake:
		case <-ctx.Done():
			if m := pc.resp.Load(); m != nil {
				// The answer came with the cancellation: it is the answer.
				return answer(r.method, m)
			}
			c.cancelRequest(r.id, "cancelled by the user")
			return nil, ctx.Err()
		}
	}
}

// expired ends a request whose inactivity clock (or, atMax, whose
// maximum time) ran out, unless its answer came with the clock.
func (c *Client) expired(r *request, atMax bool) (json.RawMessage, error) {
	if m := r.pc.resp.Load(); m != nil {
		// An answer that came with the clock is an answer.
		return answer(r.method, m)
	}
	if !atMax {
		c.cancelRequest(r.id, fmt.Sprintf("timed out after %v", r.timeout))
		return nil, &TimeoutError{Method: r.method, After: r.timeout}
	}
	maxTime := c.opts.MaxTime
	if r.op.bounded() {
		maxTime = r.op.max
	}
	c.cancelRequest(r.id, fmt.Sprintf("reached the maximum time of %v", maxTime))
	return nil, &TimeoutError{Method: r.method, After: maxTime, Max: true}
}

// answer is a response as the call returns it.
func answer(method string, m *mcp.Message) (json.RawMessage, error) {
	if m.Error != nil {
		return nil, &RPCError{Method: method, RPCError: m.Error}
	}
	return m.Result, nil
}

// lostRequest says what became of a request whose answer the transport
// lost (a failed POST, a stream that could not be resumed, a malformed
// answer); again says it was sent again and is to be waited for.
func (c *Client) lostRequest(ctx context.Context, r *request, err error) (raw json.RawMessage, _ error, again bool) {
	c.noteSendError(err)
	if me, ok := err.(*MalformedResponseError); ok {
		return nil, me, false
	}
	if errors.Is(err, transport.ErrNotJSON) || errors.Is(err, transport.ErrNotUTF8) {
		return nil, &MalformedResponseError{Method: r.method, Reason: err.Error()}, false
	}
	var expired *transport.SessionExpiredError
	if errors.As(err, &expired) && expired.Method == http.MethodGet {
		// The server had the request and forgot the session while
		// answering it (its stream cannot be resumed): sending it again
		// could run it twice. The next request gets a new session; this
		// one's outcome is unknown, and said so.
		if ierr := c.reinitialize(ctx, r.gen, err); ierr != nil {
			err = fmt.Errorf("%w; starting a new session failed: %v", err, ierr)
		}
		return nil, &DisconnectedError{Method: r.method, Err: fmt.Errorf("%w; the request was not sent again, since the server may have run it", err)}, false
	}
	// The server took the request and its answer was lost: the same.
	var accepted *transport.AcceptedLostError
	if errors.As(err, &accepted) {
		return nil, &DisconnectedError{Method: r.method, Err: fmt.Errorf("%w; the request was not sent again, since the server may have run it", err)}, false
	}
	if errors.Is(err, transport.ErrSessionExpired) && !r.o.noRetry && !r.retried {
		if err := c.renew(ctx, r, err); err != nil {
			return nil, c.sendError(r.method, err), false
		}
		return nil, nil, true
	}
	var he *transport.HTTPError
	if errors.As(err, &he) {
		// A modern server answers some errors with an HTTP status and the
		// JSON-RPC error in the body: that is the answer.
		if re := rpcErrorOf(err); re != nil {
			return nil, &RPCError{Method: r.method, RPCError: re, HTTPStatus: he.StatusCode}, false
		}
		return nil, fmt.Errorf("%s: %w", r.method, err), false
	}
	return nil, &DisconnectedError{Method: r.method, Err: err}, false
}

func (c *Client) forget(key string) {
	c.mu.Lock()
	delete(c.pending, key)
	delete(c.progress, key)
	if len(c.pending) == 0 {
		c.lastIdle = time.Now()
	}
	c.mu.Unlock()
}

// cancelRequest tells the server to stop working on a request, off the
// caller's path: a server that does not read its input must not hold up the
// caller.
func (c *Client) cancelRequest(id int64, reason string) {
	if c.isDone() {
		return
	}
	c.noteCancelled(strconv.FormatInt(id, 10))
	// In the modern era an HTTP request is cancelled by closing its stream.
	if c.Era() == EraModern {
		if cs, ok := c.httpConn().(transport.StreamCloser); ok {
			cs.CloseStream(strconv.FormatInt(id, 10))
			return
		}
	}
	go func() {
		ctx, cancel := bounds.Cancel.Context(context.Background())
		defer cancel()
		params := mcp.CancelledParams{RequestID: json.RawMessage(strconv.FormatInt(id, 10)), Reason: reason}
		if err := c.Notify(ctx, "notifications/cancelled", params); err != nil {
			c.log.Debug("sending notifications/cancelled failed", "id", id, "err", err)
		}
	}()
}

// maxCancelled bounds how many cancelled ids are remembered.
const maxCancelled = 256

func (c *Client) noteCancelled(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cancelled.add(key)
}

// recentIDs remembers the newest maxCancelled ids (under Client.mu).
type recentIDs struct {
	set  map[string]bool
	fifo []string
}

func (r *recentIDs) add(k string) {
	if r.set == nil {
		r.set = make(map[string]bool)
	}
	if len(r.fifo) == maxCancelled {
		delete(r.set, r.fifo[0])
		r.fifo = r.fifo[1:]
	}
	r.set[k] = true
	r.fifo = append(r.fifo, k)
}

// take reports whether k is remembered, and forgets it (its place in the
// order too, so that a later add of it is not evicted early).
func (r *recentIDs) take(k string) bool {
	if !r.set[k] {
		return false
	}
	delete(r.set, k)
	if i := slices.Index(r.fifo, k); i >= 0 {
		r.fifo = slices.Delete(r.fifo, i, i+1)
	}
	return true
}

// encodeRequest encodes a request, its params through memo (nil: none).
func encodeRequest(id int64, method string, params any, meta mcp.Meta, memo *toolParamsMemo) ([]byte, error) {
	_, raw := params.(json.RawMessage)
	if len(meta) == 0 && (raw || params == nil) {
		return mcp.NewRequest(id, method, params)
	}
	var obj map[string]json.RawMessage
	if params != nil {
		b, err := memo.marshal(params)
		if err != nil {
			if len(meta) == 0 {
				return nil, fmt.Errorf("encoding params: %w", err)
			}
			return nil, err
		}
		if len(meta) == 0 {
			// Compact, escaped JSON already: the request goes round it as
			// it is, not through a second encoding that checks it again.
			return requestFrame(id, method, b)
		}
		// Every modern request carries _meta: params that are an object
		// with no _meta of their own (nearly all) get it spliced in
		// front, rather than decoded into a map and encoded again.
		if len(b) >= 2 && b[0] == '{' && !bytes.Contains(b, []byte(`"_meta"`)) {
			return spliceMeta(id, method, b, meta)
		}
		if string(b) != "null" {
			if err := json.Unmarshal(b, &obj); err != nil {
				return nil, fmt.Errorf("params must be a JSON object to carry _meta: %w", err)
			}
		}
	}
	if obj == nil {
		obj = make(map[string]json.RawMessage)
	}
	merged := mcp.Meta{}
	if old, ok := obj["_meta"]; ok {
		if err := json.Unmarshal(old, &merged); err != nil {
			return nil, fmt.Errorf("params._meta must be an object: %w", err)
		}
	}
	merged = mergeMeta(merged, meta)
	b, err := json.Marshal(merged)
	if err != nil {
		return nil, err
	}
	obj["_meta"] = b
	return mcp.NewRequest(id, method, obj)
}

// toolParamsMemo keeps the tools/call params last encoded with what they
// were encoded from, so that calls of one tool with the same arguments
// (a load) encode them once. It is safe for concurrent use.
type toolParamsMemo struct {
	last atomic.Pointer[encodedToolParams]
}

type encodedToolParams struct {
	name       string
	args, task json.RawMessage // copies: the caller's may change
	b          []byte          // never written to once here
}

// maxMemoParams bounds the arguments a memo keeps.
const maxMemoParams = 4 << 10

// marshal is json.Marshal(params), from the memo when params are the
// tools/call params last encoded.
func (m *toolParamsMemo) marshal(params any) ([]byte, error) {
	p, ok := params.(mcp.CallToolParams)
	if !ok || m == nil || p.Meta != nil {
		return json.Marshal(params)
	}
	if e := m.last.Load(); e != nil && e.name == p.Name && bytes.Equal(e.args, p.Arguments) && bytes.Equal(e.task, p.Task) {
		return e.b, nil
	}
	b, err := json.Marshal(p)
	if err == nil && len(p.Arguments)+len(p.Task) <= maxMemoParams {
		m.last.Store(&encodedToolParams{name: p.Name, args: bytes.Clone(p.Arguments), task: bytes.Clone(p.Task), b: b})
	}
	return b, err
}

// spliceMeta encodes a request whose params, obj, are a JSON object with
// no _meta: meta goes in as its first member.
func spliceMeta(id int64, method string, obj []byte, meta mcp.Meta) ([]byte, error) {
	m, err := json.Marshal(meta)
	if err != nil {
		return nil, err
	}
	p := make([]byte, 0, len(obj)+len(m)+10)
	p = append(p, `{"_meta":`...)
	p = append(p, m...)
	if rest := bytes.TrimSpace(obj[1:]); len(rest) > 0 && rest[0] != '}' {
		p = append(p, ',')
	}
	p = append(p, obj[1:]...)
	return requestFrame(id, method, p)
}

// requestFrame encodes a request whose params are compact JSON as
// json.Marshal writes it (none when they are null), as mcp.NewRequest
// would: the same members in the same order.
func requestFrame(id int64, method string, params []byte) ([]byte, error) {
	if !plainMethod(method) {
		return mcp.NewRequest(id, method, json.RawMessage(params))
	}
	b := make([]byte, 0, len(params)+len(method)+48)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"method":"`...)
	b = append(b, method...)
	b = append(b, '"')
	if string(params) != "null" {
		b = append(b, `,"params":`...)
		b = append(b, params...)
	}
	return append(b, '}'), nil
}

// plainMethod reports whether a method name goes into JSON as it is,
// between quotes: the names of the spec do.
func plainMethod(m string) bool {
	for i := 0; i < len(m); i++ {
		c := m[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '/' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return m != ""
}

func mergeMeta(a, b mcp.Meta) mcp.Meta {
	out := make(mcp.Meta, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// quote returns the start of data, for error messages that show what arrived.
func quote(data []byte) []byte {
	const max = 512
	if len(data) > max {
		return append(append([]byte(nil), data[:max]...), "…"...)
	}
	return data
}

// firstBound returns the shorter of two clocks, ignoring one of zero or
// less; zero when neither bounds.
func firstBound(a, b time.Duration) time.Duration {
	switch {
	case a <= 0:
		return max(b, 0)
	case b <= 0:
		return a
	}
	return min(a, b)
}
