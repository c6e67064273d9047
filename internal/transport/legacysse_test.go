package transport

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// legacyServer serves the HTTP+SSE transport of 2024-11-05: GET ssePath
// opens the stream, whose first event names endpoint; messages POSTed to
// msgPath are answered on the stream. Any other POST gets 405, as an old
// server does for a Streamable HTTP client.
type legacyServer struct {
	url  string
	reqs requests
	out  chan string   // raw SSE text to send on the stream
	end  chan struct{} // closed to end the stream
}

func newLegacyServer(t *testing.T, ssePath, msgPath, endpoint string) *legacyServer {
	t.Helper()
	ls := &legacyServer{reqs: newRequests(), out: make(chan string, 10), end: make(chan struct{})}
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		seen := capture(r)
		ls.reqs.add(seen)
		switch {
		case r.Method == http.MethodGet && r.URL.Path == ssePath:
			startSSE(w)
			writeSSE(w, "event: endpoint\ndata: "+endpoint+"\n\n")
			for {
				select {
				case s := <-ls.out:
					writeSSE(w, s)
				case <-ls.end:
					for {
						select {
						case s := <-ls.out:
							writeSSE(w, s)
						default:
							return
						}
					}
				case <-r.Context().Done():
					return
				}
			}
		case r.Method == http.MethodPost && r.URL.Path == msgPath:
			if r.URL.Query().Get("sid") != "1" {
				http.Error(w, "unknown session", http.StatusBadRequest)
				return
			}
			w.WriteHeader(http.StatusAccepted)
			if method, id := rpcMethod(seen.Body); method != "" && len(id) > 0 {
				ls.out <- fmt.Sprintf("event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{}}\n\n", id)
			}
		default:
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		}
	})
	ls.url = srv.URL
	return ls
}

func dialLegacy(t *testing.T, opts HTTPOptions) *LegacySSE {
	t.Helper()
	c, err := DialLegacySSE(context.Background(), opts)
	if err != nil {
		t.Fatalf("DialLegacySSE: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestLegacySSE(t *testing.T) {
	ls := newLegacyServer(t, "/mcp/sse", "/mcp/messages", "messages?sid=1")
	rec := newRecorder()
	c := dialLegacy(t, HTTPOptions{URL: ls.url + "/mcp/sse", Tap: rec, Header: http.Header{"Authorization": {"Bearer t"}}})
	if c.Name() != "sse" {
		t.Errorf("Name() = %q", c.Name())
	}
	if want := ls.url + "/mcp/messages?sid=1"; c.Endpoint() != want {
		t.Errorf("Endpoint() = %q, want %q", c.Endpoint(), want)
	}
	get := ls.reqs.next(t, "GET")
	if get.Method != http.MethodGet || !hasAccept(get.Header, "text/event-stream") || get.Header.Get("Authorization") != "Bearer t" {
		t.Errorf("GET = %s, headers %v", get.Method, get.Header)
	}
	rec.waitFor(t, "endpoint", lifecycleContaining("endpoint: "+c.Endpoint()))

	ctx := context.Background()
	if err := c.Send(ctx, []byte(initReq)); err != nil {
		t.Fatalf("Send: %v", err)
	}
	post := ls.reqs.next(t, "POST")
	if post.Path != "/mcp/messages" || post.Query != "sid=1" || post.Body != initReq ||
		post.Header.Get("Content-Type") != "application/json" || post.Header.Get("Authorization") != "Bearer t" {
		t.Errorf("POST %s?%s %q headers %v", post.Path, post.Query, post.Body, post.Header)
	}
	if got := recvData(t, c); got != `{"jsonrpc":"2.0","id":1,"result":{}}` {
		t.Errorf("answer = %q", got)
	}
	if err := c.Send(ctx, []byte(initialized)); err != nil {
		t.Fatalf("Send(initialized): %v", err)
	}
	ls.reqs.next(t, "POST")

	ls.out <- ": comment\n\ndata: " + progress + "\n\n"
	ls.out <- "event: other\ndata: {}\n\n"
	ls.out <- "event: message\ndata: nope\n\n"
	ls.out <- "event: message\n\n" // no data: nothing to deliver
	ls.out <- "id: 9\nevent: message\ndata: " + logNote + "\n\n"
	want := []struct{ data, id, errText string }{
		{progress, "", ""},
		{"{}", "", `unexpected SSE event type "other"`},
		{"nope", "", "not JSON"},
		{logNote, "9", ""},
	}
	for i, w := range want {
		f := recvFrame(t, c)
		if string(f.Data) != w.data || f.EventID != w.id || w.errText == "" && f.Err != nil || w.errText != "" && !errorContains(f.Err, w.errText) {
			t.Fatalf("frame %d = %q id %q err %v; want %q id %q err %q", i, f.Data, f.EventID, f.Err, w.data, w.id, w.errText)
		}
	}
	e := rec.waitFor(t, "frame 9", func(e Event) bool { return e.Kind == KindFrame && e.Dir == Incoming && string(e.Data) == logNote })
	if m := e.HTTP; m == nil || m.Method != http.MethodGet || m.StatusCode != http.StatusOK || m.SSEEventID != "9" || m.SSEEvent != "message" {
		t.Errorf("incoming meta = %+v", m)
	}
	if bad := rec.find(func(e Event) bool { return e.Kind == KindBadFrame }); len(bad) != 2 {
		t.Errorf("bad frames:\n%s", rec.dump())
	}
	posts := rec.find(func(e Event) bool { return e.Kind == KindHTTP && e.HTTP.Method == http.MethodPost })
	if len(posts) != 2 || posts[0].HTTP.StatusCode != http.StatusAccepted || posts[0].HTTP.URL != c.Endpoint() {
		t.Errorf("POST events:\n%s", rec.dump())
	}

	// The server ends the stream: what was sent is still delivered, then
	// Recv says the stream ended, and keeps saying it.
	ls.out <- "data: " + progress + "\n\n"
	close(ls.end)
	if got := recvData(t, c); got != progress {
		t.Fatalf("last frame = %q", got)
	}
	for range 2 {
		if _, err := recv(t, c); !errorContains(err, "the server closed the SSE stream") {
			t.Fatalf("Recv after the stream ended = %v", err)
		}
	}
	rec.waitFor(t, "stream ended", lifecycleContaining("SSE stream ended"))

	c.Close()
	if _, err := recv(t, c); !errors.Is(err, ErrClosed) {
		t.Errorf("Recv after Close = %v", err)
	}
	if err := c.Send(ctx, []byte(initialized)); !errors.Is(err, ErrClosed) {
		t.Errorf("Send after Close = %v", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
}

func TestLegacySSECloseUnblocksRecv(t *testing.T) {
	ls := newLegacyServer(t, "/sse", "/messages", "/messages?sid=1")
	rec := newRecorder()
	c := dialLegacy(t, HTTPOptions{URL: ls.url + "/sse", Tap: rec})
	recvDone := make(chan error, 1)
	go func() {
		_, err := c.Recv()
		recvDone <- err
	}()
	c.Close()
	if err := wait(t, "Recv", recvDone); !errors.Is(err, ErrClosed) {
		t.Errorf("Recv = %v, want ErrClosed", err)
	}
	rec.waitFor(t, "closed", lifecycleContaining("closed"))
	if got := rec.find(lifecycleContaining("SSE stream ended")); len(got) != 0 {
		t.Errorf("Close reported as the stream ending: %v", got)
	}
}

func TestLegacySSEEndpointURL(t *testing.T) {
	tests := []struct{ path, endpoint, want string }{
		{"/mcp/sse", "messages?sid=1", "/mcp/messages?sid=1"},
		{"/mcp/sse", "/messages?sid=1", "/messages?sid=1"},
		{"/mcp/sse", "?sid=1", "/mcp/sse?sid=1"},
		{"/mcp/sse/", "post", "/mcp/sse/post"},
	}
	for _, tt := range tests {
		t.Run(tt.endpoint, func(t *testing.T) {
			ls := newLegacyServer(t, tt.path, "/unused", tt.endpoint)
			c := dialLegacy(t, HTTPOptions{URL: ls.url + tt.path})
			want := tt.want
			if strings.HasPrefix(want, "/") {
				want = ls.url + want
			}
			if c.Endpoint() != want {
				t.Errorf("Endpoint() = %q, want %q", c.Endpoint(), want)
			}
		})
	}
}

func TestLegacySSERefusesForeignEndpoint(t *testing.T) {
	// The endpoint gets every message with the user's headers, so an
	// endpoint on another origin would leak them.
	ls := newLegacyServer(t, "/sse", "/unused", "http://other.example/messages")
	_, err := DialLegacySSE(context.Background(), HTTPOptions{URL: ls.url + "/sse"})
	if err == nil || !strings.Contains(err.Error(), "another origin") {
		t.Fatalf("DialLegacySSE = %v, want a refusal", err)
	}
}

func TestLegacySSEDialErrors(t *testing.T) {
	tests := []struct {
		name       string
		handler    http.HandlerFunc
		wantStatus int // of an *HTTPError; 0: another error
		wantErr    string
	}{
		{
			name: "not an event stream",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				w.Write([]byte("<html>hello</html>"))
			},
			wantStatus: http.StatusOK,
			wantErr:    "not an event stream",
		},
		{
			name: "not found",
			handler: func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, "nothing here", http.StatusNotFound)
			},
			wantStatus: http.StatusNotFound,
			wantErr:    "nothing here",
		},
		{
			name: "stream ends before the endpoint event",
			handler: func(w http.ResponseWriter, r *http.Request) {
				startSSE(w)
				writeSSE(w, "data: {}\n\n")
			},
			wantErr: "ended before the endpoint event",
		},
		{
			name: "bad endpoint",
			handler: func(w http.ResponseWriter, r *http.Request) {
				startSSE(w)
				writeSSE(w, "event: endpoint\ndata: http://[::1\n\n")
			},
			wantErr: "bad endpoint event",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, tt.handler)
			rec := newRecorder()
			c, err := DialLegacySSE(context.Background(), HTTPOptions{URL: srv.URL, Tap: rec})
			if err == nil {
				c.Close()
				t.Fatal("DialLegacySSE succeeded")
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error = %v, want it to contain %q", err, tt.wantErr)
			}
			var he *HTTPError
			if tt.wantStatus != 0 && (!errors.As(err, &he) || he.StatusCode != tt.wantStatus || he.Method != http.MethodGet) {
				t.Errorf("error = %#v, want an *HTTPError with status %d", err, tt.wantStatus)
			}
		})
	}
}

func TestLegacySSEEventsBeforeEndpoint(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		startSSE(w)
		writeSSE(w, "data: early\n\nevent: endpoint\ndata: /m?sid=1\n\n")
		<-r.Context().Done()
	})
	rec := newRecorder()
	c := dialLegacy(t, HTTPOptions{URL: srv.URL, Tap: rec})
	if c.Endpoint() != srv.URL+"/m?sid=1" {
		t.Errorf("Endpoint() = %q", c.Endpoint())
	}
	bad := rec.find(func(e Event) bool { return e.Kind == KindBadFrame })
	if len(bad) != 1 || string(bad[0].Data) != "early" || !strings.Contains(bad[0].Err, "before the endpoint event") {
		t.Errorf("events:\n%s", rec.dump())
	}
}

func TestLegacySSEDialContext(t *testing.T) {
	entered := make(chan struct{})
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		startSSE(w)
		close(entered)
		<-r.Context().Done()
	})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-entered
		cancel()
	}()
	if _, err := DialLegacySSE(ctx, HTTPOptions{URL: srv.URL}); !errors.Is(err, context.Canceled) {
		t.Errorf("DialLegacySSE = %v, want context.Canceled", err)
	}

	srv.Close()
	if _, err := DialLegacySSE(context.Background(), HTTPOptions{URL: srv.URL}); err == nil || !strings.Contains(err.Error(), "GET "+srv.URL) {
		t.Errorf("DialLegacySSE to a closed server = %v", err)
	}
}

func TestLegacySSESendError(t *testing.T) {
	ls := newLegacyServer(t, "/sse", "/messages", "/messages?sid=wrong")
	c := dialLegacy(t, HTTPOptions{URL: ls.url + "/sse"})
	err := c.Send(context.Background(), []byte(initReq))
	var he *HTTPError
	if !errors.As(err, &he) || he.StatusCode != http.StatusBadRequest || he.Method != http.MethodPost ||
		he.URL != c.Endpoint() || !strings.Contains(string(he.Body), "unknown session") {
		t.Errorf("Send = %#v", err)
	}
}
