package proxy

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/demoserver"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// legacyHost is a host of an HTTP+SSE server: its GET stream, and the
// message endpoint the stream announced.
type legacyHost struct {
	stream   string
	endpoint string
	frames   chan []byte
}

// endpointBase is the URL of the stream the host opened.
func (l *legacyHost) endpointBase() string { return l.stream }

// startLegacy opens the stream at u and waits for its endpoint event.
func startLegacy(t *testing.T, u string) *legacyHost {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := transport.NewHTTPClient(nil, transport.EgressPolicy{}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	l := &legacyHost{stream: u, frames: make(chan []byte, 64)}
	endpoint := make(chan string, 1)
	go func() {
		defer resp.Body.Close()
		transport.ReadSSE(resp.Body, 0, func(ev transport.SSEEvent) {
			if ev.Event == "endpoint" {
				endpoint <- strings.TrimSpace(string(ev.Data))
				return
			}
			if ev.HasData {
				l.frames <- ev.Data
			}
		})
		close(l.frames)
	}()
	select {
	case e := <-endpoint:
		base, _ := url.Parse(u)
		ep, _ := base.Parse(e)
		l.endpoint = ep.String()
	case <-time.After(10 * time.Second):
		t.Fatal("no endpoint event")
	}
	return l
}

// post sends a frame to the message endpoint and returns its status.
func (l *legacyHost) post(t *testing.T, frame string) int {
	t.Helper()
	resp, err := transport.NewHTTPClient(nil, transport.EgressPolicy{}).Post(l.endpoint, "application/json", strings.NewReader(frame))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// next is the next frame on the stream holding want.
func (l *legacyHost) next(t *testing.T, want string) []byte {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case f, ok := <-l.frames:
			if !ok {
				t.Fatalf("the stream ended before a frame with %s", want)
			}
			if bytes.Contains(f, []byte(want)) {
				return f
			}
		case <-deadline:
			t.Fatalf("no frame with %s on the stream", want)
		}
	}
}

// startLegacyProxy is the proxy with the faults of yaml in front of the
// demo server's HTTP+SSE handler; seen are the bodies it got.
func startLegacyProxy(t *testing.T, faults string) (*legacyHost, *httpProxied) {
	t.Helper()
	p := startHTTP(t, demoserver.SSEHandler(demoserver.Options{Era: demoserver.EraLegacy}), faults, 1)
	l := startLegacy(t, p.host.URL)
	if s := l.post(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"sampling":{}},"clientInfo":{"name":"legacy-host","version":"1"}}}`); s != http.StatusAccepted {
		t.Fatalf("initialize: %d", s)
	}
	l.next(t, `"id":1`)
	l.post(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return l, p
}

// Over HTTP+SSE, where a host reads every answer on its stream: a request
// of the host answered in the server's place is answered there (the POST
// 202), and a server's request on the stream answered in the host's
// place reaches the server at the message endpoint.
func TestLegacyAnswersInPlace(t *testing.T) {
	l, p := startLegacyProxy(t, "faults:\n  - match: dir:out method:ping\n    error: {code: -32001, message: busy}\n  - match: method:sampling/createMessage\n    error: {code: -32002, message: no model here}\n")
	if s := l.post(t, `{"jsonrpc":"2.0","id":2,"method":"ping"}`); s != http.StatusAccepted {
		t.Errorf("the answered ping's POST: %d", s)
	}
	if f := l.next(t, `"id":2`); !bytes.Contains(f, []byte("busy")) {
		t.Errorf("the ping's answer on the stream: %s", f)
	}
	l.post(t, sampleCall)
	f := l.next(t, `"id":2`)
	if !bytes.Contains(f, []byte("no model here")) {
		t.Errorf("the call's answer: %s", f)
	}
	if n := count(p.upstreamSaw(), "no model here"); n != 1 {
		t.Errorf("the server got the answer %d times: %q", n, p.upstreamSaw())
	}
}

// A server's endpoint event naming another origin is not where the
// proxy answers the server's requests: the answer goes to the stream's
// own origin.
func TestAnswerStaysOnTheStreamsOrigin(t *testing.T) {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the other origin got %s %s", r.Method, r.URL)
	}))
	t.Cleanup(other.Close)
	posted := make(chan string, 1)
	up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			var b bytes.Buffer
			b.ReadFrom(r.Body)
			posted <- b.String()
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte("event: endpoint\ndata: " + other.URL + "/messages\n\n" +
			"data: {\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"roots/list\"}\n\n"))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	p := startHTTP(t, up, "faults:\n  - match: method:roots/list\n    error: {code: -32003, message: no roots}\n", 1)
	openStream := func() {
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.host.URL, nil)
		resp, err := transport.NewHTTPClient(nil, transport.EgressPolicy{}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
	}
	openStream()
	select {
	case b := <-posted:
		if !strings.Contains(b, "no roots") {
			t.Errorf("the upstream got %s", b)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the answer never reached the stream's origin")
	}
}

// Two HTTP+SSE sessions use the same ids: a request of one answered in
// the server's place does not make the other's answer of that id a
// stray, though the first was kept before the second's answer came.
func TestLegacySessionsKeepTheirOwnStrays(t *testing.T) {
	b, _ := startLegacyProxy(t, "faults:\n  - match: dir:out method:ping\n    error: {code: -32001, message: busy}\n")
	b.post(t, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"long_running","arguments":{"steps":3,"interval_ms":300},"_meta":{"progressToken":"p"}}}`)
	b.next(t, "notifications/progress") // the call is under way
	a := startLegacy(t, b.endpointBase())
	a.post(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"a","version":"1"}}}`)
	a.next(t, `"id":1`)
	a.post(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	a.post(t, `{"jsonrpc":"2.0","id":4,"method":"ping"}`)
	if f := a.next(t, `"id":4`); !bytes.Contains(f, []byte("busy")) {
		t.Errorf("a's ping: %s", f)
	}
	if f := b.next(t, `"id":4`); !bytes.Contains(f, []byte(`"result"`)) {
		t.Errorf("b's call: %s", f)
	}
}
