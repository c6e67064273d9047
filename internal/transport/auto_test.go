package transport

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

func newAuto(t *testing.T, opts HTTPOptions) *AutoHTTP {
	t.Helper()
	a := NewAutoHTTP(opts)
	t.Cleanup(func() { a.Close() })
	return a
}

func TestAutoHTTPFallsBackToLegacy(t *testing.T) {
	// An old server: POST to the URL is 405, GET opens the legacy stream.
	ls := newLegacyServer(t, "/mcp", "/mcp/messages", "/mcp/messages?sid=1")
	rec := newRecorder()
	a := newAuto(t, HTTPOptions{URL: ls.url + "/mcp", Tap: rec})
	if a.Name() != "http (undecided)" || a.Chosen() != nil {
		t.Errorf("before Send: Name() = %q, Chosen() = %v", a.Name(), a.Chosen())
	}
	if err := a.Send(context.Background(), []byte(initReq)); err != nil {
		t.Fatalf("Send: %v", err)
	}
	if a.Name() != "sse" {
		t.Errorf("Name() = %q, want sse", a.Name())
	}
	if _, ok := a.Chosen().(*LegacySSE); !ok {
		t.Errorf("Chosen() = %T, want *LegacySSE", a.Chosen())
	}
	// The first frame went to the URL, then again to the endpoint.
	for i, want := range []struct{ method, path, body string }{
		{http.MethodPost, "/mcp", initReq},
		{http.MethodGet, "/mcp", ""},
		{http.MethodPost, "/mcp/messages", initReq},
	} {
		r := ls.reqs.next(t, want.method)
		if r.Method != want.method || r.Path != want.path || r.Body != want.body {
			t.Errorf("request %d = %s %s %q, want %s %s %q", i, r.Method, r.Path, r.Body, want.method, want.path, want.body)
		}
	}
	if got := recvData(t, a); got != `{"jsonrpc":"2.0","id":1,"result":{}}` {
		t.Errorf("answer = %q", got)
	}
	rec.waitFor(t, "fallback", lifecycleContaining("Streamable HTTP POST answered 405 Method Not Allowed: trying the HTTP+SSE transport"))

	// Later frames go straight to the endpoint.
	if err := a.Send(context.Background(), []byte(initialized)); err != nil {
		t.Fatal(err)
	}
	if r := ls.reqs.next(t, "POST"); r.Path != "/mcp/messages" || r.Body != initialized {
		t.Errorf("second frame went to %s %s", r.Method, r.Path)
	}
	// Streamable-only calls do nothing on the legacy transport.
	a.SetProtocolVersion("2025-11-25")
	a.ResetSession()
	a.Listen()

	if err := a.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if _, err := recv(t, a); !errors.Is(err, ErrClosed) {
		t.Errorf("Recv after Close = %v", err)
	}
	if err := a.Send(context.Background(), []byte(initialized)); !errors.Is(err, ErrClosed) {
		t.Errorf("Send after Close = %v", err)
	}
	ls.reqs.none(t)
}

func TestAutoHTTPNoFallback(t *testing.T) {
	for _, tt := range []struct {
		status       int
		unauthorized bool
	}{
		{http.StatusUnauthorized, true},
		{http.StatusForbidden, true},
		{http.StatusInternalServerError, false},
		{http.StatusBadGateway, false},
	} {
		t.Run(fmt.Sprint(tt.status), func(t *testing.T) {
			reqs := newRequests()
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
				reqs.add(capture(r))
				w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="x"`)
				http.Error(w, "no", tt.status)
			})
			a := newAuto(t, HTTPOptions{URL: srv.URL})
			err := a.Send(context.Background(), []byte(initReq))
			var he *HTTPError
			if !errors.As(err, &he) || he.StatusCode != tt.status {
				t.Fatalf("Send = %v, want an HTTP %d", err, tt.status)
			}
			if IsUnauthorized(err) != tt.unauthorized {
				t.Errorf("IsUnauthorized = %v", !tt.unauthorized)
			}
			if he.Header.Get("WWW-Authenticate") == "" {
				t.Error("the error lost the WWW-Authenticate header")
			}
			if a.Chosen() != nil || a.Name() != "http (undecided)" {
				t.Errorf("Chosen() = %v after a failure", a.Chosen())
			}
			if r := reqs.next(t, "POST"); r.Method != http.MethodPost {
				t.Errorf("request = %s", r.Method)
			}
			reqs.none(t) // no GET: no fallback
			// The next Send tries again.
			a.Send(context.Background(), []byte(initReq))
			if r := reqs.next(t, "POST"); r.Method != http.MethodPost {
				t.Errorf("request = %s", r.Method)
			}
		})
	}
}

func TestAutoHTTPStreamable(t *testing.T) {
	reqs := newRequests()
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		seen := capture(r)
		reqs.add(seen)
		switch method, _ := rpcMethod(seen.Body); {
		case r.Method == http.MethodGet:
			w.WriteHeader(http.StatusMethodNotAllowed)
		case method == "initialize":
			w.Header().Set(HeaderSessionID, "A1")
			writeJSON(w, http.StatusOK, initResp)
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	})
	rec := newRecorder()
	a := newAuto(t, HTTPOptions{URL: srv.URL, Tap: rec})
	if err := a.Send(context.Background(), []byte(initReq)); err != nil {
		t.Fatal(err)
	}
	if a.Name() != "streamable-http" {
		t.Errorf("Name() = %q", a.Name())
	}
	if got := recvData(t, a); got != initResp {
		t.Errorf("answer = %q", got)
	}
	reqs.next(t, "initialize")

	a.SetProtocolVersion("2025-11-25")
	if err := a.Send(context.Background(), []byte(initialized)); err != nil {
		t.Fatal(err)
	}
	if r := reqs.next(t, "initialized"); r.Header.Get(HeaderSessionID) != "A1" || r.Header.Get(HeaderProtocolVersion) != "2025-11-25" {
		t.Errorf("initialized carries session %q and version %q", r.Header.Get(HeaderSessionID), r.Header.Get(HeaderProtocolVersion))
	}
	a.Listen()
	if r := reqs.next(t, "GET"); r.Method != http.MethodGet {
		t.Errorf("Listen sent %s", r.Method)
	}
	rec.waitFor(t, "no GET stream", lifecycleContaining("offers no GET stream"))
	a.ResetSession()
	if sid := a.Chosen().(*StreamableHTTP).SessionID(); sid != "" {
		t.Errorf("SessionID() = %q after ResetSession", sid)
	}
	a.Close()
	reqs.none(t) // no session left: no DELETE
	if got := rec.find(lifecycleContaining("trying the HTTP+SSE")); len(got) != 0 {
		t.Errorf("fell back: %v", got)
	}
}

func TestAutoHTTPNeitherWorks(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		capture(r)
		http.Error(w, "nope: "+r.Method, http.StatusNotFound)
	})
	a := newAuto(t, HTTPOptions{URL: srv.URL})
	err := a.Send(context.Background(), []byte(initReq))
	if !errorContains(err, "neither transport works") {
		t.Fatalf("Send = %v", err)
	}
	var he *HTTPError
	if !errors.As(err, &he) || he.Method != http.MethodGet || he.StatusCode != http.StatusNotFound {
		t.Errorf("error wraps %#v, want the GET's 404", he)
	}
	if !strings.Contains(err.Error(), "POST") {
		t.Errorf("error %q does not mention the POST", err)
	}
	if a.Chosen() != nil {
		t.Errorf("Chosen() = %T", a.Chosen())
	}
}

func TestAutoHTTPRecvBeforeSend(t *testing.T) {
	a := NewAutoHTTP(HTTPOptions{URL: "http://127.0.0.1:1/unused"})
	recvDone := make(chan error, 1)
	go func() {
		_, err := a.Recv()
		recvDone <- err
	}()
	if err := a.Close(); err != nil {
		t.Errorf("Close = %v", err)
	}
	if err := wait(t, "Recv", recvDone); !errors.Is(err, ErrClosed) {
		t.Errorf("Recv = %v, want ErrClosed", err)
	}
	if err := a.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
	if err := a.Send(context.Background(), []byte(initReq)); !errors.Is(err, ErrClosed) {
		t.Errorf("Send after Close = %v", err)
	}
}

func TestDialHTTP(t *testing.T) {
	ls := newLegacyServer(t, "/sse", "/messages", "/messages?sid=1")
	for _, tt := range []struct {
		mode HTTPMode
		url  string
		want string
	}{
		{"", ls.url, "*transport.AutoHTTP"},
		{ModeAuto, ls.url, "*transport.AutoHTTP"},
		{ModeStreamable, ls.url, "*transport.StreamableHTTP"},
		{ModeSSE, ls.url + "/sse", "*transport.LegacySSE"},
	} {
		c, err := DialHTTP(context.Background(), tt.mode, HTTPOptions{URL: tt.url})
		if err != nil {
			t.Errorf("DialHTTP(%q) = %v", tt.mode, err)
			continue
		}
		if got := fmt.Sprintf("%T", c); got != tt.want {
			t.Errorf("DialHTTP(%q) = %s, want %s", tt.mode, got, tt.want)
		}
		c.Close()
	}
	if _, err := DialHTTP(context.Background(), "websocket", HTTPOptions{URL: ls.url}); !errorContains(err, `unknown HTTP transport "websocket"`) {
		t.Errorf("DialHTTP(websocket) = %v", err)
	}
}

func TestAutoHTTPCloseDuringFirstSend(t *testing.T) {
	// The server takes its time over the first POST: Close must not wait
	// for it, and must unblock Recv.
	entered := make(chan struct{}, 1)
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		capture(r)
		entered <- struct{}{}
		<-r.Context().Done()
	})
	a := NewAutoHTTP(HTTPOptions{URL: srv.URL})
	sendDone := make(chan error, 1)
	go func() { sendDone <- a.Send(context.Background(), []byte(initReq)) }()
	recvDone := make(chan error, 1)
	go func() {
		_, err := a.Recv()
		recvDone <- err
	}()
	wait(t, "the POST", entered)
	closeDone := make(chan error, 1)
	go func() { closeDone <- a.Close() }()
	if err := wait(t, "Close", closeDone); err != nil {
		t.Errorf("Close = %v", err)
	}
	if err := wait(t, "Recv", recvDone); !errors.Is(err, ErrClosed) {
		t.Errorf("Recv = %v, want ErrClosed", err)
	}
	if err := wait(t, "Send", sendDone); err == nil {
		t.Error("the interrupted Send succeeded")
	}
	if a.Chosen() != nil {
		t.Errorf("Chosen() = %T after Close", a.Chosen())
	}
}
