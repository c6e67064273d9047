package proxy

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/mcpi-dev/mcpi/internal/bounds"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// ownPost bounds a request the proxy sends the upstream on its own: a
// copy of the host's request (a duplicate), or an answer to the server's
// request given in the host's place.
var ownPost = bounds.Clock{Name: "the proxy's own request to the upstream", D: 30 * time.Second}

// wayBack is where a stream's server requests are answered, and with
// which of the host's headers: the MCP endpoint the stream came from
// (Streamable HTTP), or the message endpoint its endpoint event named
// (HTTP+SSE).
type wayBack struct {
	mu     sync.Mutex
	url    *url.URL
	header http.Header
	// legacy is the message endpoint an endpoint event named (path and
	// query), under which the stream is registered for answers given in
	// the server's place.
	legacy string
}

func newWayBack(resp *http.Response) *wayBack {
	h := resp.Request.Header.Clone()
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" && h.Get("Mcp-Session-Id") == "" {
		h.Set("Mcp-Session-Id", id)
	}
	return &wayBack{url: resp.Request.URL, header: h}
}

// endpoint takes the message endpoint an endpoint event announced (on
// the upstream's origin: announce checked it), and returns its key.
func (w *wayBack) endpoint(u *url.URL) (legacy string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.url, w.legacy = u, legacyKey(u)
	return w.legacy
}

// legacyKey names an HTTP+SSE message endpoint: its path and query.
func legacyKey(u *url.URL) string { return u.Path + "?" + u.RawQuery }

// session is the session of the stream: its Streamable HTTP session, or
// the HTTP+SSE message endpoint it announced ("" for neither).
func (w *wayBack) session() string {
	if id := w.header.Get("Mcp-Session-Id"); id != "" {
		return id
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.legacy != "" {
		return "sse:" + w.legacy
	}
	return ""
}

// sessionOf is the session a request of the host's (or the one a
// response answers) belongs to: its Mcp-Session-Id, or the HTTP+SSE
// message endpoint it was sent to ("" for neither).
func (h *httpProxy) sessionOf(r *http.Request) string {
	if id := r.Header.Get("Mcp-Session-Id"); id != "" {
		return id
	}
	t := h.target(r.URL)
	if _, ok := h.endpoints.Load(t.Path); ok && t.RawQuery != "" {
		return "sse:" + legacyKey(t)
	}
	return ""
}

func (w *wayBack) get() (*url.URL, http.Header) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.url, w.header
}

// answerUpstream sends the upstream an answer to its request, given in
// the host's place, as the host would: a POST to the way back, off the
// stream's goroutine (the upstream may wait for the stream to be read
// before it reads the answer).
func (h *httpProxy) answerUpstream(ctx context.Context, way *wayBack, frame []byte) {
	u, header := way.get()
	if !h.takeOwn(ctx) {
		return
	}
	go func() {
		defer h.giveOwn()
		h.post(context.WithoutCancel(ctx), u, header, frame)
	}()
}

// maxOwn bounds the proxy's own requests under way at once: past it, the
// stream (or the host's request) that makes one more waits for a turn.
const maxOwn = 64

// takeOwn waits for a turn to send a request of the proxy's own; false
// when ctx ends first.
func (h *httpProxy) takeOwn(ctx context.Context) bool {
	select {
	case h.own <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

func (h *httpProxy) giveOwn() { <-h.own }

// sendCopies sends the upstream the copies of a duplicated request, one
// after the other, once the host has its answer to the first; their
// answers are recorded, not sent to the host.
func (h *httpProxy) sendCopies(r *http.Request, copies [][]byte) {
	u, header := h.target(r.URL), r.Header.Clone()
	// The host may have gone once it has its answer: the copies go all
	// the same, a turn waited for under the proxy's own clock.
	ctx := context.WithoutCancel(r.Context())
	turn, cancel := ownPost.Context(ctx)
	defer cancel()
	if !h.takeOwn(turn) {
		return
	}
	go func() {
		defer h.giveOwn()
		for _, c := range copies {
			h.post(ctx, u, header, c)
		}
	}()
}

// hopHeaders are the headers of the host's request the proxy's own
// request does not copy: a connection's (and those its Connection header
// names), and those it sets itself.
var hopHeaders = []string{"Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization", "Te", "Trailer",
	"Transfer-Encoding", "Upgrade", "Content-Length", "Content-Type", "Accept", "Accept-Encoding", "Last-Event-Id"}

// post sends frame to the upstream at u with the host's headers (its
// session, protocol version and credentials: the upstream's own origin),
// recording it and the answer as the host's exchanges are recorded.
func (h *httpProxy) post(ctx context.Context, u *url.URL, header http.Header, frame []byte) {
	ctx, cancel := ownPost.Context(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(frame))
	if err != nil {
		return
	}
	for k, vs := range header {
		req.Header[k] = append([]string(nil), vs...)
	}
	for _, f := range req.Header.Values("Connection") {
		for _, k := range strings.Split(f, ",") {
			req.Header.Del(strings.TrimSpace(k))
		}
	}
	for _, k := range hopHeaders {
		req.Header.Del(k)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	meta := &transport.HTTPMeta{Method: http.MethodPost, URL: u.String(), RequestHeader: req.Header.Clone(), Exchange: transport.NewExchange()}
	emitFrame(h.emit, transport.Outgoing, frame, meta)
	resp, err := h.ownClient().Do(req)
	if err != nil {
		h.emit(transport.Event{Kind: transport.KindHTTP, Text: "upstream failed", Err: err.Error(), HTTP: meta})
		return
	}
	defer resp.Body.Close()
	m := *meta
	m.StatusCode, m.ResponseHeader = resp.StatusCode, resp.Header.Clone()
	h.emit(transport.Event{Kind: transport.KindHTTP, HTTP: &m, Text: resp.Status})
	ct := strings.ToLower(resp.Header.Get("Content-Type"))
	switch {
	case strings.HasPrefix(ct, "text/event-stream"):
		transport.ReadSSE(resp.Body, maxRecordedBody, func(ev transport.SSEEvent) {
			if ev.HasData && len(bytes.TrimSpace(ev.Data)) > 0 {
				em := m
				em.SSEEventID, em.SSEEvent = ev.ID, ev.Event
				emitFrame(h.emit, transport.Incoming, ev.Data, &em)
			}
		})
	case strings.Contains(ct, "json"):
		body, _ := io.ReadAll(io.LimitReader(resp.Body, maxRecordedBody))
		if b := bytes.TrimSpace(body); len(b) > 0 {
			emitFrame(h.emit, transport.Incoming, b, &m)
		}
	}
}

// ownClient is the client of the proxy's own requests: mcpi's, following
// no redirect (what the upstream answers is recorded as it came).
func (h *httpProxy) ownClient() *http.Client {
	h.clientOnce.Do(func() {
		h.client = transport.NewHTTPClient(nil, transport.EgressPolicy{NoFollow: true})
	})
	return h.client
}

// overtaking counts the host's requests the upstream has (it answered,
// or failed), for a request held back until later ones overtook it.
type overtaking struct {
	mu   sync.Mutex
	n    uint64
	more chan struct{}
}

// went counts one more request the upstream has.
func (o *overtaking) went() {
	o.mu.Lock()
	o.n++
	if o.more != nil {
		close(o.more)
		o.more = nil
	}
	o.mu.Unlock()
}

// wait returns once k more requests went on, or reorderWait passed (true
// either way), or ctx ended (false).
func (o *overtaking) wait(ctx context.Context, k int) bool {
	o.mu.Lock()
	target := o.n + uint64(k)
	o.mu.Unlock()
	parent := ctx
	ctx, cancel := reorderClock().Context(ctx)
	defer cancel()
	for {
		o.mu.Lock()
		if o.n >= target {
			o.mu.Unlock()
			return true
		}
		if o.more == nil {
			o.more = make(chan struct{})
		}
		more := o.more
		o.mu.Unlock()
		select {
		case <-more:
		case <-ctx.Done():
			return parent.Err() == nil
		}
	}
}

// replyToHost answers the host's request in the server's place: in the
// POST's body (Streamable HTTP), or, for a request to an HTTP+SSE message
// endpoint, as a message event on the stream that announced it (a legacy
// host reads answers there only), the POST itself 202 Accepted.
func (h *httpProxy) replyToHost(w http.ResponseWriter, r *http.Request, reply []byte) {
	if out, ok := h.legacy.Load(legacyKey(h.target(r.URL))); ok {
		out.(*outlet).send([][]byte{[]byte("event: message\ndata: " + string(reply) + "\n\n")}, 0)
		w.WriteHeader(http.StatusAccepted)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(reply)
}
