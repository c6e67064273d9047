package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcpi-dev/mcpi/internal/mcp"
)

// Header names of the Streamable HTTP transport.
const (
	HeaderSessionID       = "Mcp-Session-Id"
	HeaderProtocolVersion = "MCP-Protocol-Version"
	HeaderLastEventID     = "Last-Event-ID"
	HeaderMethod          = "Mcp-Method"
	HeaderName            = "Mcp-Name"
	// HeaderParamPrefix starts the headers that mirror tool parameters
	// annotated with x-mcp-header.
	HeaderParamPrefix = "Mcp-Param-"
)

// HTTPOptions configures the HTTP transports.
type HTTPOptions struct {
	URL string
	// Header is added to every request (-H). It wins over the transport's
	// own headers, so a user can force any of them.
	Header http.Header
	// Base sends the requests; nil means DefaultHTTPTransport. An OAuth
	// round tripper (auth.Transport) plugs in here. The client around it
	// is NewHTTPClient's, with the EgressPolicy below.
	Base http.RoundTripper
	// AllowCrossOriginRedirect follows a redirect to another origin,
	// without credentials; by default such a redirect fails the request.
	AllowCrossOriginRedirect bool
	// RedirectHint says, in the error of a refused redirect, how to allow
	// it (the CLI names its flag).
	RedirectHint string
	Tap          Tap
	// DefaultRetry is the reconnection delay when a stream gave no retry
	// field (default 1s).
	DefaultRetry time.Duration
	// MaxResumes bounds reconnections of one stream that bring nothing new
	// (default 5).
	MaxResumes int
	// MaxFrameBytes bounds one message as it arrives (default 1 GiB).
	// mcpi does not ask for compression, so the bytes counted are the
	// bytes the message takes.
	MaxFrameBytes int

	client *http.Client
}

func (o *HTTPOptions) defaults() {
	if o.client == nil {
		var user []string
		for k := range o.Header {
			user = append(user, k)
		}
		o.client = NewHTTPClient(o.Base, EgressPolicy{
			AllowCrossOrigin: o.AllowCrossOriginRedirect, UserHeaders: user, Tap: o.Tap, Refused: o.RedirectHint,
		})
	}
	if o.DefaultRetry <= 0 {
		o.DefaultRetry = time.Second
	}
	if o.MaxResumes <= 0 {
		o.MaxResumes = 5
	}
	if o.MaxFrameBytes <= 0 {
		o.MaxFrameBytes = 1 << 30
	}
}

// StreamableHTTP is a client connection over the Streamable HTTP transport
// (2025-03-26 and later).
type StreamableHTTP struct {
	tapper
	opts   HTTPOptions
	ctx    context.Context
	cancel context.CancelFunc
	frames chan Frame
	wg     sync.WaitGroup

	mu              sync.Mutex
	sessionID       string
	protocolVersion string
	listening       bool
	listenGen       int                // counts the GET stream loops started
	listenStop      context.CancelFunc // ends the current GET stream loop
	watch           func(open bool, err error)
	streams         map[string]context.CancelFunc // request id key -> its response stream
	closing         bool                          // set under mu before Close waits for the goroutines
	closeOnce       sync.Once
}

// NewStreamableHTTP returns a connection to the MCP endpoint at opts.URL. It
// sends nothing until the first Send.
func NewStreamableHTTP(opts HTTPOptions) *StreamableHTTP {
	opts.defaults()
	ctx, cancel := context.WithCancel(context.Background())
	return &StreamableHTTP{
		tapper:  tapper{opts.Tap},
		opts:    opts,
		ctx:     ctx,
		cancel:  cancel,
		frames:  make(chan Frame, 64),
		streams: make(map[string]context.CancelFunc),
	}
}

// SessionID returns the session id the server assigned, if any.
func (h *StreamableHTTP) SessionID() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.sessionID
}

// SetProtocolVersion sets the MCP-Protocol-Version header sent from now on.
func (h *StreamableHTTP) SetProtocolVersion(v string) {
	h.mu.Lock()
	h.protocolVersion = v
	h.mu.Unlock()
}

// ResetSession forgets the session id, so that the next initialize starts a
// new session, and ends the GET stream of the old one (Listen opens one for
// the new session).
func (h *StreamableHTTP) ResetSession() {
	h.mu.Lock()
	h.resetLocked()
	h.mu.Unlock()
}

// resetSessionIf forgets the session id only while it is still sid: a
// request of an old session answered late must not end a new one.
func (h *StreamableHTTP) resetSessionIf(sid string) {
	h.mu.Lock()
	if h.sessionID == sid {
		h.resetLocked()
	}
	h.mu.Unlock()
}

func (h *StreamableHTTP) resetLocked() {
	h.sessionID = ""
	h.protocolVersion = ""
	if h.listenStop != nil {
		h.listenStop()
		h.listenStop = nil
		h.listening = false
	}
}

// WatchStream sets f to be told about the standalone GET stream that
// Listen keeps open: f(true, nil) each time it opens, f(false, err) each
// time opening or reopening it fails (err says why: IsUnreachable, or a
// *SessionExpiredError when the server no longer knows the session, after
// which the stream is not retried), f(false, nil) when the server offers
// no such stream. f is called from the connection's goroutines and must
// not block; set it before Listen.
func (h *StreamableHTTP) WatchStream(f func(open bool, err error)) {
	h.mu.Lock()
	h.watch = f
	h.mu.Unlock()
}

func (h *StreamableHTTP) reportStream(open bool, err error) {
	h.mu.Lock()
	f := h.watch
	h.mu.Unlock()
	if f != nil {
		f(open, err)
	}
}

// outgoing is what the transport needs to know of a frame it sends.
type outgoing struct {
	ids     []string // keys of the requests in the frame
	initial bool     // the frame is an initialize request
	method  string   // the method of a frame holding one message
	name    string   // its params.name or params.uri (for Mcp-Name)
	extra   http.Header
}

func peekOutgoing(frame []byte) outgoing {
	var out outgoing
	msgs, _, err := mcp.DecodeFrame(frame)
	if err != nil {
		return out
	}
	for _, m := range msgs {
		if m.IsRequest() {
			if k, ok := mcp.IDKey(m.ID); ok {
				out.ids = append(out.ids, k)
			}
			if m.Method == "initialize" {
				out.initial = true
			}
		}
	}
	if len(msgs) == 1 {
		out.method = msgs[0].Method
		switch out.method {
		case "tools/call", "prompts/get", "resources/read", "tasks/get", "tasks/update", "tasks/cancel":
			// The tasks extension (SEP-2663) names its task in Mcp-Name.
			var p struct {
				Name   string `json:"name"`
				URI    string `json:"uri"`
				TaskID string `json:"taskId"`
			}
			json.Unmarshal(msgs[0].Params, &p)
			switch out.method {
			case "resources/read":
				out.name = p.URI
			case "tasks/get", "tasks/update", "tasks/cancel":
				out.name = p.TaskID
			default:
				out.name = p.Name
			}
		}
	}
	return out
}

// incomingPeek reads the id of a response without copying its result.
type incomingPeek struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result skipJSON        `json:"result"`
	Error  skipJSON        `json:"error"`
}

type skipJSON bool

func (s *skipJSON) UnmarshalJSON([]byte) error { *s = true; return nil }

// responseIDs returns the keys of the responses in a frame.
func responseIDs(data []byte) []string {
	var one incomingPeek
	var many []incomingPeek
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '[' {
		if json.Unmarshal(data, &many) != nil {
			return nil
		}
	} else {
		if json.Unmarshal(data, &one) != nil {
			return nil
		}
		many = []incomingPeek{one}
	}
	var ids []string
	for _, m := range many {
		if m.Method == "" && (m.Result || m.Error) {
			if k, ok := mcp.IDKey(m.ID); ok {
				ids = append(ids, k)
			}
		}
	}
	return ids
}

func (h *StreamableHTTP) newRequest(ctx context.Context, method string, body []byte) (*http.Request, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(withExchange(ctx), method, h.opts.URL, r)
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	sid, pv := h.sessionID, h.protocolVersion
	h.mu.Unlock()
	if sid != "" {
		req.Header.Set(HeaderSessionID, sid)
	}
	if pv != "" {
		req.Header.Set(HeaderProtocolVersion, pv)
	}
	switch method {
	case http.MethodPost:
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
	case http.MethodGet:
		req.Header.Set("Accept", "text/event-stream")
	}
	for k, vs := range h.opts.Header {
		req.Header.Del(k)
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	return req, nil
}

// requestHeaders adds the headers that mirror the body (2026-07-28): the
// method, the name of a tool, prompt or resource, and what the caller put in
// the context (Mcp-Param-*). Headers the user set with -H win.
func (h *StreamableHTTP) requestHeaders(req *http.Request, out outgoing) {
	set := func(k, v string) {
		if !hasHeader(h.opts.Header, k) {
			req.Header.Set(k, v)
		}
	}
	if mcp.IsModern(req.Header.Get(HeaderProtocolVersion)) && out.method != "" {
		set(HeaderMethod, out.method)
		if out.name != "" {
			set(HeaderName, EncodeHeaderValue(out.name))
		}
	}
	for k, vs := range out.extra {
		for _, v := range vs {
			set(k, v)
		}
	}
}

// hasHeader reports whether h sets key, however the key is spelt.
func hasHeader(h http.Header, key string) bool {
	for k := range h {
		if strings.EqualFold(k, key) {
			return true
		}
	}
	return false
}

type exchangeKey struct{}

var exchanges atomic.Uint64

// withExchange gives a request's context its exchange number.
func withExchange(ctx context.Context) context.Context {
	return context.WithValue(ctx, exchangeKey{}, exchanges.Add(1))
}

// NewExchange returns a fresh exchange number, for HTTP events made outside
// this package (the HTTP proxy).
func NewExchange() uint64 { return exchanges.Add(1) }

func httpMeta(req *http.Request, resp *http.Response) *HTTPMeta {
	m := &HTTPMeta{Method: req.Method, URL: req.URL.String(), RequestHeader: req.Header.Clone()}
	m.Exchange, _ = req.Context().Value(exchangeKey{}).(uint64)
	if resp != nil {
		m.StatusCode = resp.StatusCode
		m.ResponseHeader = resp.Header.Clone()
	}
	return m
}

// Send POSTs one frame. A frame without requests (notifications, answers to
// the server) is sent before Send returns, and an error status is returned.
// A frame with requests is sent in the background so that no caller waits
// on a server that is slow to send its headers; if it fails, the failure
// arrives through Recv as a Frame with LostID set for each request (with
// ErrSessionExpired after a 404 on a known session).
func (h *StreamableHTTP) Send(ctx context.Context, frame []byte) error {
	if h.ctx.Err() != nil {
		return ErrClosed
	}
	out := peekOutgoing(frame)
	out.extra = headerFrom(ctx)
	if len(out.ids) == 0 {
		return h.post(ctx, frame, out)
	}
	if !h.spawn(func() {
		if err := h.post(h.ctx, frame, out); err != nil && h.ctx.Err() == nil {
			if mayHaveArrived(err) {
				h.lostAccepted(out.ids, err, nil)
			} else {
				h.lost(out.ids, err, nil)
			}
		}
	}) {
		return ErrClosed
	}
	return nil
}

// post sends one frame and returns once the server has answered with a
// status; the answer's messages arrive through Recv.
func (h *StreamableHTTP) post(ctx context.Context, frame []byte, out outgoing) error {
	// The response stream outlives Send: it belongs to the connection, and
	// ctx only bounds the wait for the server's status line.
	reqCtx, cancelReq := context.WithCancel(h.ctx)
	stop := context.AfterFunc(ctx, cancelReq)
	h.track(out.ids, cancelReq)
	req, err := h.newRequest(reqCtx, http.MethodPost, frame)
	if err != nil {
		stop()
		cancelReq()
		return err
	}
	if out.initial && !hasHeader(h.opts.Header, HeaderProtocolVersion) {
		req.Header.Del(HeaderProtocolVersion)
	}
	h.requestHeaders(req, out)
	hadSession := req.Header.Get(HeaderSessionID) != ""
	h.emit(Event{Kind: KindFrame, Dir: Outgoing, Data: frame, HTTP: httpMeta(req, nil)})
	resp, err := h.opts.client.Do(req)
	if !stop() {
		cancelReq()
		h.untrack(out.ids)
		if resp != nil {
			resp.Body.Close()
		}
		return ctx.Err()
	}
	if err != nil {
		cancelReq()
		h.untrack(out.ids)
		if h.ctx.Err() != nil {
			return ErrClosed
		}
		h.emit(Event{Kind: KindHTTP, Text: "POST failed", Err: err.Error(), HTTP: httpMeta(req, nil)})
		return fmt.Errorf("POST %s: %w", h.opts.URL, bareNetError(err))
	}
	meta := httpMeta(req, resp)
	if sid := resp.Header.Get(HeaderSessionID); sid != "" && out.initial {
		h.mu.Lock()
		h.sessionID = sid
		h.mu.Unlock()
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer cancelReq()
		h.untrack(out.ids)
		return h.refused(req, resp, meta, hadSession)
	}
	return h.takeAnswer(reqCtx, cancelReq, resp, meta, out.ids)
}

// refused reads the body of an error status and returns its error: a
// *SessionExpiredError when the session the POST named is gone.
func (h *StreamableHTTP) refused(req *http.Request, resp *http.Response, meta *HTTPMeta, hadSession bool) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	resp.Body.Close()
	h.emitErrorBody(body, meta, resp.Status)
	if sid := req.Header.Get(HeaderSessionID); hadSession && sessionGone(resp.StatusCode, body) {
		h.resetSessionIf(sid)
		return &SessionExpiredError{Method: http.MethodPost, SessionID: sid, StatusCode: resp.StatusCode, Body: body}
	}
	return &HTTPError{Method: http.MethodPost, URL: h.opts.URL, StatusCode: resp.StatusCode, Status: resp.Status, Header: resp.Header, Body: body}
}

// takeAnswer takes the answer to a POST the server accepted: an SSE
// stream or a JSON body, read in the background and ended with
// cancelReq, or nothing (202, or a frame without requests).
func (h *StreamableHTTP) takeAnswer(reqCtx context.Context, cancelReq context.CancelFunc, resp *http.Response, meta *HTTPMeta, ids []string) error {
	switch {
	case isEventStream(resp.Header.Get("Content-Type")):
		h.emit(Event{Kind: KindHTTP, HTTP: meta, Text: resp.Status + ": SSE stream opened"})
		if !h.spawn(func() {
			defer cancelReq()
			h.readPostStream(reqCtx, resp, ids)
		}) {
			resp.Body.Close()
			cancelReq()
			return ErrClosed
		}
	case resp.StatusCode == http.StatusAccepted || len(ids) == 0:
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		cancelReq()
		h.untrack(ids)
		h.emit(Event{Kind: KindHTTP, HTTP: meta, Text: resp.Status})
	default:
		// application/json, or a server that did not say: one message or batch.
		if !h.spawn(func() {
			defer h.untrack(ids)
			defer cancelReq()
			defer resp.Body.Close()
			h.readJSONAnswer(resp, meta, ids)
		}) {
			resp.Body.Close()
			cancelReq()
			return ErrClosed
		}
	}
	return nil
}

// readJSONAnswer delivers the one message or batch of a JSON answer; the
// requests it cannot answer are lost.
func (h *StreamableHTTP) readJSONAnswer(resp *http.Response, meta *HTTPMeta, ids []string) {
	body, err := readAllLimited(resp.Body, h.opts.MaxFrameBytes)
	if err != nil {
		h.lostAccepted(ids, fmt.Errorf("reading response body: %w", err), meta)
		return
	}
	if IsBlank(body) {
		h.lostAccepted(ids, fmt.Errorf("server answered %s with an empty body", resp.Status), meta)
		return
	}
	ferr := checkFrame(body)
	h.deliver(Frame{Data: body, Err: ferr}, meta)
	if ferr != nil {
		// The answer to these requests came, unreadable: they must not
		// wait for another (a session that could read it anyway has
		// already taken it, and ignores this).
		h.lostAccepted(ids, fmt.Errorf("the answer to the POST could not be read: %w", ferr), meta)
	}
}

func readAllLimited(r io.Reader, max int) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, int64(max)+1))
	if err != nil {
		return nil, err
	}
	if len(b) > max {
		return nil, &LimitError{What: "a response body", Limit: max}
	}
	return b, nil
}

func (h *StreamableHTTP) track(ids []string, cancel context.CancelFunc) {
	h.mu.Lock()
	for _, id := range ids {
		h.streams[id] = cancel
	}
	h.mu.Unlock()
}

func (h *StreamableHTTP) untrack(ids []string) {
	h.mu.Lock()
	for _, id := range ids {
		delete(h.streams, id)
	}
	h.mu.Unlock()
}

// CloseStream closes the response stream of the request with the given id
// key, if it is still open. In the modern era this is how a request is
// cancelled over HTTP.
func (h *StreamableHTTP) CloseStream(idKey string) bool {
	h.mu.Lock()
	cancel, ok := h.streams[idKey]
	h.mu.Unlock()
	if ok {
		cancel()
	}
	return ok
}

func (h *StreamableHTTP) deliver(f Frame, meta *HTTPMeta) {
	if f.Err != nil {
		h.emit(Event{Kind: KindBadFrame, Dir: Incoming, Data: f.Data, Err: f.Err.Error(), HTTP: meta})
	} else {
		h.emit(Event{Kind: KindFrame, Dir: Incoming, Data: f.Data, HTTP: meta})
	}
	select {
	case h.frames <- f:
	case <-h.ctx.Done():
	}
}

// lostAccepted tells the session that the requests ids, which the server
// took, will get no answer.
func (h *StreamableHTTP) lostAccepted(ids []string, err error, meta *HTTPMeta) {
	h.lost(ids, &AcceptedLostError{Err: err}, meta)
}

// lost tells the session that the requests ids will get no answer.
func (h *StreamableHTTP) lost(ids []string, err error, meta *HTTPMeta) {
	h.emit(Event{Kind: KindLifecycle, Text: "response lost", Err: err.Error(), HTTP: meta})
	for _, id := range ids {
		select {
		case h.frames <- Frame{Err: err, LostID: id}:
		case <-h.ctx.Done():
			return
		}
	}
}

// readPostStream reads the SSE answer to a POST. When the stream ends before
// every request in it has its response, it resumes with GET and
// Last-Event-ID after the server's retry delay, as SEP-1699 asks.
func (h *StreamableHTTP) readPostStream(ctx context.Context, resp *http.Response, ids []string) {
	defer h.untrack(ids)
	waiting := make(map[string]bool, len(ids))
	for _, id := range ids {
		waiting[id] = true
	}
	st := &streamState{retry: h.opts.DefaultRetry}
	req := resp.Request
	failures := 0
	for {
		// resp is nil when the last attempt to resume failed.
		if resp != nil {
			progressed, err := h.readStream(ctx, resp, st, func(data []byte) {
				for _, id := range responseIDs(data) {
					delete(waiting, id)
				}
			})
			if len(waiting) == 0 || ctx.Err() != nil {
				return
			}
			var le *LimitError
			if errors.As(err, &le) {
				// Resuming would bring the same event again.
				h.lostAccepted(keys(waiting), err, httpMeta(req, resp))
				return
			}
			if progressed {
				failures = 0
			} else {
				failures++
			}
		}
		if st.lastID == "" {
			h.lostAccepted(keys(waiting), errors.New("the server closed the response stream before answering, and the stream cannot be resumed (no event id)"), httpMeta(req, resp))
			return
		}
		if failures >= h.opts.MaxResumes {
			h.lostAccepted(keys(waiting), fmt.Errorf("gave up resuming the response stream after %d attempts", failures), httpMeta(req, resp))
			return
		}
		h.emit(Event{Kind: KindLifecycle, Text: fmt.Sprintf("response stream closed before the answer: resuming after %v with Last-Event-ID %q", st.retry, st.lastID)})
		select {
		case <-time.After(st.retry):
		case <-ctx.Done():
			return
		}
		var err error
		resp, err = h.get(ctx, st.lastID)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			var he *HTTPError
			if errors.As(err, &he) && he.StatusCode == http.StatusMethodNotAllowed || errors.Is(err, ErrSessionExpired) {
				h.lostAccepted(keys(waiting), fmt.Errorf("cannot resume the response stream: %w", err), nil)
				return
			}
			failures++
			continue
		}
		req = resp.Request
	}
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

type streamState struct {
	lastID string
	retry  time.Duration
}

// readStream delivers the messages of one SSE response until it ends. It
// reports whether any event arrived, and why the stream ended when it was
// not its end (a limit, a broken connection).
func (h *StreamableHTTP) readStream(ctx context.Context, resp *http.Response, st *streamState, onFrame func([]byte)) (bool, error) {
	defer resp.Body.Close()
	meta := httpMeta(resp.Request, resp)
	r := newSSEReader(resp.Body, h.opts.MaxFrameBytes)
	progressed := false
	for {
		ev, err := r.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return progressed, nil
			}
			if ctx.Err() == nil {
				h.emit(Event{Kind: KindLifecycle, Text: "SSE stream broke", Err: err.Error(), HTTP: meta})
			}
			return progressed, err
		}
		progressed = true
		if ev.HasID {
			st.lastID = ev.ID
		}
		if ev.HasRetry {
			st.retry = ev.Retry
		}
		if !ev.HasData || IsBlank(ev.Data) {
			continue // a priming or keep-alive event
		}
		m := *meta
		m.SSEEventID, m.SSEEvent = ev.ID, ev.Event
		f := Frame{Data: ev.Data, EventID: ev.ID, Err: checkFrame(ev.Data)}
		if ev.Event != "" && ev.Event != "message" && f.Err == nil {
			f.Err = fmt.Errorf("unexpected SSE event type %q", ev.Event)
		}
		h.deliver(f, &m)
		if f.Err == nil {
			onFrame(ev.Data)
		}
	}
}

// get opens a GET stream, resuming after lastID when it is set.
func (h *StreamableHTTP) get(ctx context.Context, lastID string) (*http.Response, error) {
	req, err := h.newRequest(ctx, http.MethodGet, nil)
	if err != nil {
		return nil, err
	}
	if lastID != "" {
		req.Header.Set(HeaderLastEventID, lastID)
	}
	resp, err := h.opts.client.Do(req)
	if err != nil {
		h.emit(Event{Kind: KindHTTP, Text: "GET failed", Err: err.Error(), HTTP: httpMeta(req, nil)})
		return nil, err
	}
	meta := httpMeta(req, resp)
	ct := resp.Header.Get("Content-Type")
	if resp.StatusCode != http.StatusOK || !isEventStream(ct) {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		h.emit(Event{Kind: KindHTTP, Data: body, HTTP: meta, Text: resp.Status})
		if sid := req.Header.Get(HeaderSessionID); sid != "" && sessionGone(resp.StatusCode, body) {
			return nil, &SessionExpiredError{Method: http.MethodGet, SessionID: sid, StatusCode: resp.StatusCode, Body: body}
		}
		status := resp.Status
		if resp.StatusCode == http.StatusOK {
			status += " (not an event stream: " + ct + ")"
		}
		return nil, &HTTPError{Method: http.MethodGet, URL: h.opts.URL, StatusCode: resp.StatusCode, Status: status, Header: resp.Header, Body: body}
	}
	h.emit(Event{Kind: KindHTTP, HTTP: meta, Text: resp.Status + ": SSE stream opened"})
	return resp, nil
}

// ListenWait bounds how long Listen waits for the server to answer the
// first GET.
const ListenWait = 2 * time.Second

// Listen opens the optional GET stream on which the server may send requests
// and notifications outside any request, and keeps it open, reconnecting with
// Last-Event-ID, until Close. A server that answers 405 offers no such stream.
//
// Listen returns once the server has answered the first GET (the stream is
// open, or refused) or after ListenWait: a server may send a request on the
// stream as soon as the client's next request arrives, and it must not find
// the stream missing.
//
// When the server no longer knows the session (404, or 400 speaking of the
// session: see SessionExpiredError) or the stream was given up, Listen may
// be called again, after a new session started, to open a new one;
// ResetSession ends the stream. WatchStream reports what happens to it.
func (h *StreamableHTTP) Listen() {
	h.mu.Lock()
	if h.listening {
		h.mu.Unlock()
		return
	}
	h.listening = true
	h.listenGen++
	gen := h.listenGen
	lctx, stop := context.WithCancel(h.ctx)
	h.listenStop = stop
	h.mu.Unlock()
	answered := make(chan struct{})
	var once sync.Once
	signal := func() { once.Do(func() { close(answered) }) }
	if !h.spawn(func() {
		defer signal()
		defer func() {
			h.mu.Lock()
			if h.listenGen == gen && h.listenStop != nil {
				h.listening = false
				h.listenStop = nil
			}
			h.mu.Unlock()
			stop()
		}()
		h.keepListening(lctx, signal)
	}) {
		h.mu.Lock()
		h.listening = false
		h.mu.Unlock()
		return
	}
	select {
	case <-answered:
	case <-time.After(ListenWait):
		h.emit(Event{Kind: KindLifecycle, Text: fmt.Sprintf("the server has not answered the GET stream request after %v; going on", ListenWait)})
	}
}

// keepListening opens the GET stream and opens it again, resuming from
// the last event, until lctx ends, the server refuses it, or it failed
// more than MaxResumes times in a row. answered is called after each GET.
func (h *StreamableHTTP) keepListening(lctx context.Context, answered func()) {
	st := &streamState{retry: h.opts.DefaultRetry}
	failures := 0
	var lastErr error
	for lctx.Err() == nil {
		resp, err := h.get(lctx, st.lastID)
		answered()
		if err != nil {
			if lctx.Err() != nil || h.streamRefused(err) {
				return
			}
			failures++
			lastErr = err
			h.reportStream(false, err)
		} else {
			h.reportStream(true, nil)
			if progressed, _ := h.readStream(lctx, resp, st, func([]byte) {}); progressed {
				failures = 0
			} else {
				failures++
			}
		}
		if failures > h.opts.MaxResumes {
			h.emit(Event{Kind: KindLifecycle, Text: "gave up on the GET stream"})
			if lastErr == nil {
				lastErr = errors.New("the stream closed at once each time")
			}
			h.reportStream(false, fmt.Errorf("gave up on the GET stream after %d attempts: %w", failures, lastErr))
			return
		}
		delay := st.retry << min(failures, 5)
		select {
		case <-time.After(delay):
		case <-lctx.Done():
		}
	}
}

// streamRefused reports, and tells, whether the GET failed for good: the
// session is gone, or the server offers no GET stream (a 4xx).
func (h *StreamableHTTP) streamRefused(err error) bool {
	var he *HTTPError
	var se *SessionExpiredError
	switch {
	case errors.As(err, &se):
		h.emit(Event{Kind: KindLifecycle, Text: fmt.Sprintf("the GET stream was refused with HTTP %d: the server no longer knows session %s", se.StatusCode, se.SessionID)})
		h.reportStream(false, err)
		return true
	case errors.As(err, &he) && he.StatusCode/100 == 4:
		h.emit(Event{Kind: KindLifecycle, Text: "the server offers no GET stream (" + he.Status + ")"})
		h.reportStream(false, nil)
		return true
	}
	return false
}

// Recv returns the next frame from any of the connection's streams.
func (h *StreamableHTTP) Recv() (Frame, error) {
	select {
	case f := <-h.frames:
		return f, nil
	case <-h.ctx.Done():
		return Frame{}, ErrClosed
	}
}

// Close ends the session with DELETE (when the server gave a session id),
// closes every stream and waits for the connection's goroutines.
func (h *StreamableHTTP) Close() error {
	h.closeOnce.Do(func() {
		if sid := h.SessionID(); sid != "" {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			if req, err := h.newRequest(ctx, http.MethodDelete, nil); err == nil {
				resp, err := h.opts.client.Do(req)
				if err == nil {
					resp.Body.Close()
					h.emit(Event{Kind: KindHTTP, HTTP: httpMeta(req, resp), Text: resp.Status})
				} else {
					h.emit(Event{Kind: KindHTTP, HTTP: httpMeta(req, nil), Err: err.Error()})
				}
			}
			cancel()
		}
		h.mu.Lock()
		h.closing = true
		h.mu.Unlock()
		h.cancel()
		h.wg.Wait()
		h.emit(Event{Kind: KindLifecycle, Text: "closed"})
	})
	return nil
}

// isEventStream reports whether a Content-Type is text/event-stream.
func isEventStream(ct string) bool {
	mt, _, _ := mime.ParseMediaType(ct)
	return strings.EqualFold(mt, "text/event-stream")
}

// Name names the transport.
func (h *StreamableHTTP) Name() string { return "streamable-http" }

// emitErrorBody reports the body of an error status: as a frame when it is
// a JSON-RPC message (a modern server answers some errors that way, and
// that message is the server's answer), else as an HTTP event.
func (h *StreamableHTTP) emitErrorBody(body []byte, meta *HTTPMeta, status string) {
	if len(bytes.TrimSpace(body)) > 0 && checkFrame(body) == nil && bytes.Contains(body, []byte(`"jsonrpc"`)) {
		h.emit(Event{Kind: KindFrame, Dir: Incoming, Data: bytes.TrimSpace(body), HTTP: meta, Text: status})
		return
	}
	h.emit(Event{Kind: KindHTTP, Data: body, HTTP: meta, Text: status})
}

// spawn runs f on a goroutine that Close waits for. It reports false, and
// runs nothing, once Close has begun.
func (h *StreamableHTTP) spawn(f func()) bool {
	h.mu.Lock()
	if h.closing {
		h.mu.Unlock()
		return false
	}
	h.wg.Add(1)
	h.mu.Unlock()
	go func() {
		defer h.wg.Done()
		f()
	}()
	return true
}

// DefaultHTTPTransport returns the round tripper mcpi's HTTP clients share
// when none is given: http.DefaultTransport, but keeping as many idle
// connections to one host as many calls in flight need (the default keeps
// two, so 32 concurrent calls opened and closed connections all the time
// and left thousands of sockets in TIME_WAIT), and not asking for
// compression: Go's transport would add "Accept-Encoding: gzip" and
// decompress the answer behind the limits, so that a megabyte on the wire
// could cost gigabytes. A body a server compresses unasked arrives as it
// was sent, and is a bad frame.
var DefaultHTTPTransport = sync.OnceValue(func() http.RoundTripper {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 64
	t.DisableCompression = true
	return t
})

// mayHaveArrived reports whether a POST that failed without an answer may
// have reached the server: the connection closed (or was reset) after the
// request was written. (Go's transport sends again by itself a request it
// knows it wrote nothing of; a dial that failed reached nothing.)
func mayHaveArrived(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return false
	}
	var ue *url.Error
	if !errors.As(err, &ue) {
		return false
	}
	return errors.Is(ue.Err, io.EOF) || errors.Is(ue.Err, io.ErrUnexpectedEOF) || errors.Is(ue.Err, syscall.ECONNRESET)
}
