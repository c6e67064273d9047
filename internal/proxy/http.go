package proxy

import (
	"bytes"
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/mcpi-dev/mcpi/internal/intercept"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// maxRecordedBody bounds the request or JSON response body kept whole for
// the tap; longer bodies are forwarded all the same.
const maxRecordedBody = 64 << 20

// Handler returns a reverse proxy to a Streamable HTTP (or HTTP+SSE)
// upstream that forwards requests and answers unchanged, streaming SSE as
// it comes, while the tap sees each frame with its HTTP metadata.
//
// Only the MCP endpoint is forwarded: "/" (or the upstream's own path),
// and the message endpoints an HTTP+SSE upstream announces in its
// "endpoint" events. Any other path is answered 404 and reaches nothing.
func Handler(upstream *url.URL, tap transport.Tap) http.Handler {
	return HandlerWith(upstream, HTTPOptions{Tap: tap})
}

// HTTPOptions are the tap and the faults of an HTTP proxy.
type HTTPOptions struct {
	Tap transport.Tap
	// Faults, when set, judges each frame (internal/intercept): the
	// host's POSTed frames, JSON answers and SSE events. Gate, when set,
	// holds the frames its breakpoints match (HandlerWith binds it).
	Faults *intercept.Engine
	Gate   *intercept.Gate
}

// HandlerWith is Handler with faults.
func HandlerWith(upstream *url.URL, o HTTPOptions) http.Handler {
	h := &httpProxy{upstream: upstream, tap: o.Tap, faults: o.Faults, gate: o.Gate, own: make(chan struct{}, maxOwn)}
	h.strays = newStrays(h.emit)
	if o.Gate != nil {
		// Each frame waits for its own delivery (a mailbox in its tag).
		o.Gate.Bind(func(_ transport.Direction, d intercept.Delivery) {
			if box, ok := d.Tag.(chan intercept.Delivery); ok {
				box <- d
			}
		})
	}
	h.rp = &httputil.ReverseProxy{
		Rewrite:        h.rewrite,
		FlushInterval:  -1, // SSE events go out as they arrive
		ModifyResponse: h.modifyResponse,
		ErrorHandler:   h.upstreamFailed,
	}
	if h.judging() {
		// A stream a fault ends is no error of the proxy's to log.
		h.rp.ErrorLog = log.New(io.Discard, "", 0)
	}
	return h
}

// httpProxy is the reverse proxy Handler returns, with its tap.
type httpProxy struct {
	upstream  *url.URL
	tap       transport.Tap
	faults    *intercept.Engine
	gate      *intercept.Gate
	endpoints sync.Map // paths announced by endpoint events
	legacy    sync.Map // message endpoint (legacyKey) -> its stream's *outlet
	rp        *httputil.ReverseProxy
	strays    *strays
	overtaken overtaking
	own       chan struct{} // the proxy's own requests under way (maxOwn)

	clientOnce sync.Once
	client     *http.Client
}

// announce records the message endpoint an endpoint event names, when it
// is on the upstream's origin.
func (h *httpProxy) announce(reqURL *url.URL, data []byte) (*url.URL, bool) {
	u, err := reqURL.Parse(strings.TrimSpace(string(data)))
	if err != nil || !transport.SameOrigin(u, h.upstream) {
		return nil, false
	}
	h.endpoints.Store(u.Path, true)
	return u, true
}

func (h *httpProxy) emit(e transport.Event) {
	if h.tap != nil {
		if e.Time.IsZero() {
			e.Time = time.Now()
		}
		h.tap.Observe(e)
	}
}

// target is the upstream URL a request of the host goes to: what is
// forwarded, and what the trace and its HAR record.
func (h *httpProxy) target(in *url.URL) *url.URL {
	u := *h.upstream
	u.Path, u.RawPath = joinPath(h.upstream.Path, in.Path, in.Path == "/" || in.Path == ""), ""
	if _, ok := h.endpoints.Load(in.Path); ok {
		u.Path = in.Path // an announced endpoint, as the upstream named it
	}
	u.RawQuery = in.RawQuery
	if h.upstream.RawQuery != "" && in.RawQuery == "" {
		u.RawQuery = h.upstream.RawQuery
	}
	return &u
}

func (h *httpProxy) rewrite(pr *httputil.ProxyRequest) {
	pr.SetURL(h.upstream)
	t := h.target(pr.In.URL)
	pr.Out.URL.Path, pr.Out.URL.RawPath, pr.Out.URL.RawQuery = t.Path, "", t.RawQuery
	pr.Out.Host = h.upstream.Host
}

// modifyResponse taps the upstream's answer: its status and headers, then
// each SSE event or the JSON body as the host reads it.
func (h *httpProxy) modifyResponse(resp *http.Response) error {
	ex, _ := resp.Request.Context().Value(exchangeKey{}).(uint64)
	meta := &transport.HTTPMeta{Method: resp.Request.Method, URL: resp.Request.URL.String(),
		StatusCode: resp.StatusCode, RequestHeader: resp.Request.Header.Clone(), ResponseHeader: resp.Header.Clone(), Exchange: ex}
	h.emit(transport.Event{Kind: transport.KindHTTP, HTTP: meta, Text: resp.Status})
	if resp.Request.Method == http.MethodPost {
		// The upstream has the request: one held back behind it may go.
		h.overtaken.went()
	}
	ct := strings.ToLower(resp.Header.Get("Content-Type"))
	switch {
	case h.judging() && strings.HasPrefix(ct, "text/event-stream"):
		h.judgeSSE(resp, meta)
	case h.judging() && resp.StatusCode != http.StatusAccepted && strings.Contains(ct, "json"):
		return h.judgeJSON(resp, meta, ct)
	case strings.HasPrefix(ct, "text/event-stream"):
		h.tapSSE(resp, meta)
	case resp.StatusCode != http.StatusAccepted:
		h.tapJSON(resp, meta, ct, resp.Body)
	}
	return nil
}

// tapJSON taps a JSON answer's frame once the host has read it.
func (h *httpProxy) tapJSON(resp *http.Response, meta *transport.HTTPMeta, ct string, body io.ReadCloser) {
	var buf bytes.Buffer
	resp.Body = &teeBody{r: io.TeeReader(body, &limitWriter{w: &buf, n: maxRecordedBody}), c: body, done: func() {
		if b := bytes.TrimSpace(buf.Bytes()); len(b) > 0 && strings.Contains(ct, "json") {
			emitFrame(h.emit, transport.Incoming, b, meta)
		}
	}}
}

// tapSSE parses the stream as the host reads it, each event a frame of
// the tap; endpoint events announce message endpoints.
func (h *httpProxy) tapSSE(resp *http.Response, meta *transport.HTTPMeta) {
	pr, pw := io.Pipe()
	parsed := make(chan struct{})
	go func() {
		defer close(parsed)
		transport.ReadSSE(pr, 0, func(ev transport.SSEEvent) {
			if !ev.HasData || len(bytes.TrimSpace(ev.Data)) == 0 {
				return
			}
			if ev.Event == "endpoint" {
				h.announce(resp.Request.URL, ev.Data)
			}
			m := *meta
			m.SSEEventID, m.SSEEvent = ev.ID, ev.Event
			emitFrame(h.emit, transport.Incoming, ev.Data, &m)
		})
		io.Copy(io.Discard, pr)
	}()
	// The handler returns only once every event of the stream is
	// recorded: a trace closed after the proxy stops is complete.
	resp.Body = &teeBody{r: io.TeeReader(resp.Body, pw), c: resp.Body, done: func() { pw.Close(); <-parsed }}
}

func (h *httpProxy) upstreamFailed(w http.ResponseWriter, r *http.Request, err error) {
	if r.Method == http.MethodPost {
		h.overtaken.went()
	}
	h.emit(transport.Event{Kind: transport.KindHTTP, Text: "upstream failed", Err: err.Error(),
		HTTP: &transport.HTTPMeta{Method: r.Method, URL: h.target(r.URL).String(), RequestHeader: r.Header.Clone()}})
	http.Error(w, "mcpi proxy: upstream failed: "+err.Error(), http.StatusBadGateway)
}

// ServeHTTP forwards a request of the host to the MCP endpoint, the tap
// seeing it first; any other path is answered 404.
func (h *httpProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !h.isEndpoint(r.URL.Path) {
		h.emit(transport.Event{Kind: transport.KindHTTP, Dir: transport.Outgoing, Text: r.Method + " from the host: not the MCP endpoint, not forwarded",
			HTTP: &transport.HTTPMeta{Method: r.Method, URL: (&url.URL{Scheme: "http", Host: r.Host, Path: r.URL.Path, RawQuery: r.URL.RawQuery}).String(), RequestHeader: r.Header.Clone()}})
		http.Error(w, "mcpi proxy: only the MCP endpoint is forwarded", http.StatusNotFound)
		return
	}
	ex := transport.NewExchange()
	r = r.WithContext(contextWithExchange(r.Context(), ex))
	var copies [][]byte
	if r.Body != nil && r.Method == http.MethodPost {
		body, err := io.ReadAll(io.LimitReader(r.Body, maxRecordedBody+1))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		rest := r.Body
		if len(body) <= maxRecordedBody {
			emitFrame(h.emit, transport.Outgoing, bytes.TrimSpace(body), &transport.HTTPMeta{
				Method: r.Method, URL: h.target(r.URL).String(), RequestHeader: r.Header.Clone(), Exchange: ex})
			if h.judging() {
				if m := idOf(bytes.TrimSpace(body)); m.Method != "" && len(m.ID) > 0 {
					r = r.WithContext(context.WithValue(r.Context(), ownIDKey{}, string(m.ID)))
				}
				var goOn bool
				if body, copies, goOn = h.judgeRequest(w, r, body); !goOn {
					return
				}
				r.ContentLength = int64(len(body))
			}
		}
		r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), rest))
	} else {
		h.emit(transport.Event{Kind: transport.KindHTTP, Dir: transport.Outgoing, Text: r.Method + " from the host",
			HTTP: &transport.HTTPMeta{Method: r.Method, URL: h.target(r.URL).String(), RequestHeader: r.Header.Clone(), Exchange: ex}})
	}
	h.rp.ServeHTTP(w, r)
	if len(copies) > 0 {
		h.sendCopies(r, copies)
	}
}

// isEndpoint reports whether p is the MCP endpoint ("/", the upstream's
// own path) or a message endpoint the upstream announced.
func (h *httpProxy) isEndpoint(p string) bool {
	if p == "/" || p == "" || p == h.upstream.Path {
		return true
	}
	if _, ok := h.endpoints.Load(joinPath(h.upstream.Path, p, false)); ok {
		return true
	}
	_, ok := h.endpoints.Load(p)
	return ok
}

func joinPath(base, in string, root bool) string {
	if root || in == base {
		return base
	}
	return strings.TrimSuffix(base, "/") + "/" + strings.TrimPrefix(in, "/")
}

func emitFrame(emit func(transport.Event), dir transport.Direction, data []byte, meta *transport.HTTPMeta) {
	if err := frameError(data); err != nil {
		emit(transport.Event{Kind: transport.KindBadFrame, Dir: dir, Data: data, Err: err.Error(), HTTP: meta})
		return
	}
	emit(transport.Event{Kind: transport.KindFrame, Dir: dir, Data: data, HTTP: meta})
}

type teeBody struct {
	r    io.Reader
	c    io.Closer
	done func()
	once bool
}

func (t *teeBody) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if err != nil && !t.once {
		t.once = true
		t.done()
	}
	return n, err
}

func (t *teeBody) Close() error {
	if !t.once {
		t.once = true
		t.done()
	}
	return t.c.Close()
}

type limitWriter struct {
	w io.Writer
	n int
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		l.w.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}
