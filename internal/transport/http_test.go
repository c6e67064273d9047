package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// newStreamable returns a connection to url that is closed when the test ends.
func newStreamable(t *testing.T, opts HTTPOptions) *StreamableHTTP {
	t.Helper()
	h := NewStreamableHTTP(opts)
	t.Cleanup(func() { h.Close() })
	return h
}

func TestStreamableSession(t *testing.T) {
	reqs := newRequests()
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		seen := capture(r)
		reqs.add(seen)
		if r.Method == http.MethodDelete {
			return
		}
		switch method, _ := rpcMethod(seen.Body); method {
		case "initialize":
			w.Header().Set(HeaderSessionID, "sess-1")
			writeJSON(w, http.StatusOK, initResp)
		case "notifications/initialized":
			w.WriteHeader(http.StatusAccepted)
		case "tools/list":
			// Only the answer to initialize assigns the session.
			w.Header().Set(HeaderSessionID, "not-this-one")
			startSSE(w)
			writeSSE(w, ": keep-alive\n\n")
			writeSSE(w, "id: s1\ndata: "+progress+"\n\n")
			writeSSE(w, "id: s2\nevent: message\ndata: "+listResp+"\n\n")
		default:
			http.Error(w, "unexpected", http.StatusBadRequest)
		}
	})
	rec := newRecorder()
	h := newStreamable(t, HTTPOptions{URL: srv.URL, Tap: rec})
	if h.Name() != "streamable-http" {
		t.Errorf("Name() = %q", h.Name())
	}
	ctx := context.Background()
	// Set early on purpose: an initialize request never carries it.
	h.SetProtocolVersion("2025-06-18")

	if err := h.Send(ctx, []byte(initReq)); err != nil {
		t.Fatalf("Send(initialize): %v", err)
	}
	got := reqs.next(t, "initialize")
	if got.Method != http.MethodPost || got.Body != initReq {
		t.Errorf("initialize sent as %s %q", got.Method, got.Body)
	}
	if ct := got.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
	if !hasAccept(got.Header, "application/json", "text/event-stream") {
		t.Errorf("Accept = %q, want application/json and text/event-stream", got.Header.Values("Accept"))
	}
	for _, k := range []string{HeaderSessionID, HeaderProtocolVersion, HeaderLastEventID} {
		if v := got.Header.Values(k); len(v) > 0 {
			t.Errorf("initialize carries %s: %q", k, v)
		}
	}
	if f := recvFrame(t, h); string(f.Data) != initResp || f.Err != nil || f.EventID != "" {
		t.Fatalf("initialize answer = %+v", f)
	}
	if sid := h.SessionID(); sid != "sess-1" {
		t.Fatalf("SessionID() = %q, want sess-1", sid)
	}

	h.SetProtocolVersion("2025-11-25")
	if err := h.Send(ctx, []byte(initialized)); err != nil {
		t.Fatalf("Send(initialized): %v", err)
	}
	got = reqs.next(t, "initialized")
	if sid, pv := got.Header.Get(HeaderSessionID), got.Header.Get(HeaderProtocolVersion); sid != "sess-1" || pv != "2025-11-25" {
		t.Errorf("initialized carries session %q and version %q", sid, pv)
	}

	if err := h.Send(ctx, []byte(listReq)); err != nil {
		t.Fatalf("Send(tools/list): %v", err)
	}
	reqs.next(t, "tools/list")
	for _, want := range []struct{ id, data string }{{"s1", progress}, {"s2", listResp}} {
		f := recvFrame(t, h)
		if string(f.Data) != want.data || f.EventID != want.id || f.Err != nil {
			t.Fatalf("frame = %q (event id %q, err %v), want %q with id %q", f.Data, f.EventID, f.Err, want.data, want.id)
		}
	}
	if sid := h.SessionID(); sid != "sess-1" {
		t.Errorf("SessionID() = %q after a later answer named another", sid)
	}

	if err := h.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	del := reqs.next(t, "DELETE")
	if del.Method != http.MethodDelete || del.Header.Get(HeaderSessionID) != "sess-1" || del.Header.Get(HeaderProtocolVersion) != "2025-11-25" {
		t.Errorf("Close sent %s with session %q, version %q; want DELETE with both", del.Method, del.Header.Get(HeaderSessionID), del.Header.Get(HeaderProtocolVersion))
	}
	reqs.none(t)
	if err := h.Send(ctx, []byte(initialized)); !errors.Is(err, ErrClosed) {
		t.Errorf("Send after Close = %v", err)
	}
	if _, err := recv(t, h); !errors.Is(err, ErrClosed) {
		t.Errorf("Recv after Close = %v", err)
	}
	if err := h.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}

	// What the tap saw, with the HTTP side of each event.
	out := rec.find(func(e Event) bool { return e.Kind == KindFrame && e.Dir == Outgoing })
	if len(out) != 3 {
		t.Fatalf("tap saw %d outgoing frames, want 3:\n%s", len(out), rec.dump())
	}
	for i, want := range []string{initReq, initialized, listReq} {
		e := out[i]
		if string(e.Data) != want || e.HTTP == nil || e.HTTP.Method != http.MethodPost || e.HTTP.URL != srv.URL || e.HTTP.StatusCode != 0 {
			t.Errorf("outgoing event %d = %q %+v", i, e.Data, e.HTTP)
			continue
		}
		if !hasAccept(e.HTTP.RequestHeader, "text/event-stream") {
			t.Errorf("outgoing event %d request header lacks Accept: %v", i, e.HTTP.RequestHeader)
		}
	}
	if sid := out[0].HTTP.RequestHeader.Get(HeaderSessionID); sid != "" {
		t.Errorf("initialize event shows session %q", sid)
	}
	if sid := out[1].HTTP.RequestHeader.Get(HeaderSessionID); sid != "sess-1" {
		t.Errorf("initialized event shows session %q", sid)
	}

	in := rec.find(func(e Event) bool { return e.Kind == KindFrame && e.Dir == Incoming })
	if len(in) != 3 {
		t.Fatalf("tap saw %d incoming frames, want 3:\n%s", len(in), rec.dump())
	}
	wantIn := []struct{ data, ct, id, event string }{
		{initResp, "application/json", "", ""},
		{progress, "text/event-stream", "s1", ""},
		{listResp, "text/event-stream", "s2", "message"},
	}
	for i, w := range wantIn {
		e := in[i]
		if string(e.Data) != w.data || e.HTTP == nil {
			t.Errorf("incoming event %d = %q %+v", i, e.Data, e.HTTP)
			continue
		}
		m := e.HTTP
		if m.Method != http.MethodPost || m.StatusCode != http.StatusOK || m.ResponseHeader.Get("Content-Type") != w.ct || m.SSEEventID != w.id || m.SSEEvent != w.event {
			t.Errorf("incoming event %d meta = %s %d %q id %q event %q; want POST 200 %q id %q event %q",
				i, m.Method, m.StatusCode, m.ResponseHeader.Get("Content-Type"), m.SSEEventID, m.SSEEvent, w.ct, w.id, w.event)
		}
	}
	if sid := in[0].HTTP.ResponseHeader.Get(HeaderSessionID); sid != "sess-1" {
		t.Errorf("initialize answer event shows session %q", sid)
	}

	httpEvents := rec.find(func(e Event) bool { return e.Kind == KindHTTP })
	var summary []string
	for _, e := range httpEvents {
		summary = append(summary, fmt.Sprintf("%s %d", e.HTTP.Method, e.HTTP.StatusCode))
	}
	if got, want := strings.Join(summary, ", "), "POST 202, POST 200, DELETE 200"; got != want {
		t.Errorf("HTTP events = %s, want %s", got, want)
	}
	all := rec.all()
	if last := all[len(all)-1]; last.Kind != KindLifecycle || last.Text != "closed" {
		t.Errorf("last event = %s %q, want the lifecycle event closed", last.Kind, last.Text)
	}
}

func TestStreamableHeaders(t *testing.T) {
	reqs := newRequests()
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		reqs.add(capture(r))
		w.WriteHeader(http.StatusAccepted)
	})
	h := newStreamable(t, HTTPOptions{URL: srv.URL, Header: http.Header{
		"Authorization":        {"Bearer tok"},
		"Accept":               {"application/json"},
		"mcp-session-id":       {"forced"}, // not canonical: still wins
		"Mcp-Protocol-Version": {"1999-01-01"},
		"X-Multi":              {"a", "b"},
	}})
	h.SetProtocolVersion("2025-11-25")
	for _, frame := range []string{initialized, initReq} {
		if err := h.Send(context.Background(), []byte(frame)); err != nil {
			t.Fatalf("Send: %v", err)
		}
		got := reqs.next(t, "a POST")
		for k, want := range map[string]string{
			"Authorization":       "Bearer tok",
			"Accept":              "application/json",
			HeaderSessionID:       "forced",
			HeaderProtocolVersion: "1999-01-01", // even on initialize: the user asked for it
			"X-Multi":             "a,b",
		} {
			if v := strings.Join(got.Header.Values(k), ","); v != want {
				t.Errorf("%s: header %s = %q, want %q", frame, k, v, want)
			}
		}
	}
}

func TestStreamableSessionExpired(t *testing.T) {
	reqs := newRequests()
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		seen := capture(r)
		reqs.add(seen)
		method, _ := rpcMethod(seen.Body)
		switch {
		case method == "initialize":
			w.Header().Set(HeaderSessionID, "s1")
			writeJSON(w, http.StatusOK, initResp)
		case seen.Header.Get(HeaderSessionID) != "":
			http.Error(w, "no such session", http.StatusNotFound)
		case method == "tools/list":
			writeJSON(w, http.StatusOK, listResp)
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	})
	rec := newRecorder()
	h := newStreamable(t, HTTPOptions{URL: srv.URL, Tap: rec})
	ctx := context.Background()
	initialize := func() {
		t.Helper()
		if err := h.Send(ctx, []byte(initReq)); err != nil {
			t.Fatal(err)
		}
		reqs.next(t, "initialize")
		recvData(t, h)
		if sid := h.SessionID(); sid != "s1" {
			t.Fatalf("SessionID() = %q", sid)
		}
		h.SetProtocolVersion("2025-11-25")
	}

	// A notification: Send says so.
	initialize()
	err := h.Send(ctx, []byte(initialized))
	if !errors.Is(err, ErrSessionExpired) {
		t.Fatalf("Send of a notification to an expired session = %v, want ErrSessionExpired", err)
	}
	reqs.next(t, "initialized")
	if sid := h.SessionID(); sid != "" {
		t.Errorf("SessionID() = %q after the session expired", sid)
	}
	e := rec.waitFor(t, "404", func(e Event) bool { return e.Kind == KindHTTP && e.HTTP.StatusCode == http.StatusNotFound })
	if !strings.Contains(string(e.Data), "no such session") {
		t.Errorf("404 event data = %q, want the body", e.Data)
	}

	// A request: its answer is lost, and Recv says why.
	initialize()
	if err := h.Send(ctx, []byte(listReq)); err != nil {
		t.Fatalf("Send of a request = %v, want nil (the failure comes through Recv)", err)
	}
	f := recvFrame(t, h)
	if f.LostID != "2" || !errors.Is(f.Err, ErrSessionExpired) || f.Data != nil {
		t.Fatalf("frame = %+v, want LostID 2 with ErrSessionExpired", f)
	}
	reqs.next(t, "tools/list")

	// Without a session the server answers again; nothing carries the old
	// session or version.
	if err := h.Send(ctx, []byte(listReq)); err != nil {
		t.Fatal(err)
	}
	got := reqs.next(t, "tools/list without session")
	if sid, pv := got.Header.Get(HeaderSessionID), got.Header.Get(HeaderProtocolVersion); sid != "" || pv != "" {
		t.Errorf("request after expiry carries session %q, version %q", sid, pv)
	}
	if got := recvData(t, h); got != listResp {
		t.Errorf("answer = %q", got)
	}
}

func TestStreamableErrorStatus(t *testing.T) {
	for _, status := range []int{http.StatusBadRequest, http.StatusNotFound, http.StatusInternalServerError, http.StatusServiceUnavailable} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			body := fmt.Sprintf("something went wrong (%d)", status)
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
				capture(r)
				w.Header().Set("X-Why", "because")
				http.Error(w, body, status)
			})
			rec := newRecorder()
			h := newStreamable(t, HTTPOptions{URL: srv.URL, Tap: rec})
			check := func(err error) {
				t.Helper()
				var he *HTTPError
				if !errors.As(err, &he) {
					t.Fatalf("error = %v, want an *HTTPError", err)
				}
				if errors.Is(err, ErrSessionExpired) {
					t.Errorf("a %d without a session id reported as session expiry", status)
				}
				if he.StatusCode != status || he.Method != http.MethodPost || he.URL != srv.URL ||
					strings.TrimSpace(string(he.Body)) != body || he.Header.Get("X-Why") != "because" {
					t.Errorf("HTTPError = %+v", he)
				}
				if !strings.Contains(he.Error(), body) || !strings.Contains(he.Error(), fmt.Sprint(status)) {
					t.Errorf("error text %q lacks the status or body", he.Error())
				}
				if IsUnauthorized(err) {
					t.Errorf("IsUnauthorized(%d) = true", status)
				}
			}

			check(h.Send(context.Background(), []byte(initialized)))
			e := rec.waitFor(t, "error status", func(e Event) bool { return e.Kind == KindHTTP })
			if e.HTTP.StatusCode != status || strings.TrimSpace(string(e.Data)) != body {
				t.Errorf("HTTP event = %d %q", e.HTTP.StatusCode, e.Data)
			}

			if err := h.Send(context.Background(), []byte(listReq)); err != nil {
				t.Fatalf("Send of a request = %v", err)
			}
			f := recvFrame(t, h)
			if f.LostID != "2" {
				t.Fatalf("frame = %+v, want LostID 2", f)
			}
			check(f.Err)
			rec.waitFor(t, "response lost", lifecycleContaining("response lost"))
		})
	}
}

func TestStreamableErrorBodyBounded(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		capture(r)
		http.Error(w, strings.Repeat("x", 100<<10), http.StatusInternalServerError)
	})
	h := newStreamable(t, HTTPOptions{URL: srv.URL})
	var he *HTTPError
	if err := h.Send(context.Background(), []byte(initialized)); !errors.As(err, &he) {
		t.Fatalf("Send = %v", err)
	}
	if len(he.Body) != 4096 {
		t.Errorf("kept %d bytes of the body, want 4096", len(he.Body))
	}
	if n := len(he.Error()); n > 400 {
		t.Errorf("error text is %d bytes long", n)
	}
}

func TestStreamableJSONAnswers(t *testing.T) {
	tests := []struct {
		name     string
		ct, body string
		maxFrame int
		wantData string
		wantErr  error  // for a frame with data
		wantLost string // part of the error of a lost-response frame
	}{
		{name: "object", ct: "application/json", body: listResp, wantData: listResp},
		{name: "charset", ct: "application/json; charset=utf-8", body: listResp, wantData: listResp},
		{name: "no content type", body: listResp, wantData: listResp},
		{name: "batch", ct: "application/json", body: "[" + listResp + "," + progress + "]", wantData: "[" + listResp + "," + progress + "]"},
		{name: "not JSON", ct: "application/json", body: "oops", wantData: "oops", wantErr: ErrNotJSON},
		{name: "not UTF-8", ct: "application/json", body: "{\"a\":\"\xff\"}", wantData: "{\"a\":\"\xff\"}", wantErr: ErrNotUTF8},
		{name: "empty", ct: "application/json", body: "", wantLost: "empty body"},
		{name: "blank", ct: "application/json", body: " \n", wantLost: "empty body"},
		{name: "too large", ct: "application/json", body: listResp, maxFrame: 10, wantLost: "exceeds the 10-byte limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
				capture(r)
				if tt.ct != "" {
					w.Header().Set("Content-Type", tt.ct)
				} else {
					w.Header()["Content-Type"] = nil // no sniffing
				}
				w.Write([]byte(tt.body))
			})
			rec := newRecorder()
			h := newStreamable(t, HTTPOptions{URL: srv.URL, Tap: rec, MaxFrameBytes: tt.maxFrame})
			if err := h.Send(context.Background(), []byte(listReq)); err != nil {
				t.Fatal(err)
			}
			f := recvFrame(t, h)
			if tt.wantLost != "" {
				if f.LostID != "2" || !errorContains(f.Err, tt.wantLost) || f.Data != nil {
					t.Fatalf("frame = %+v, want LostID 2 with %q", f, tt.wantLost)
				}
				return
			}
			if string(f.Data) != tt.wantData || f.LostID != "" {
				t.Fatalf("frame = %+v, want %q", f, tt.wantData)
			}
			if tt.wantErr == nil && f.Err != nil || tt.wantErr != nil && !errors.Is(f.Err, tt.wantErr) {
				t.Fatalf("frame error = %v, want %v", f.Err, tt.wantErr)
			}
			kind := KindFrame
			if tt.wantErr != nil {
				kind = KindBadFrame
			}
			e := rec.waitFor(t, "incoming", func(e Event) bool { return e.Dir == Incoming })
			if e.Kind != kind || e.HTTP == nil || e.HTTP.StatusCode != http.StatusOK {
				t.Errorf("incoming event = %s %+v, want %s with HTTP 200", e.Kind, e.HTTP, kind)
			}
		})
	}
}

func TestStreamableSSEEvents(t *testing.T) {
	multiLine := "{\"jsonrpc\":\"2.0\",\n\"method\":\"x\"}"
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		capture(r)
		w.Header().Set("Content-Type", "Text/Event-Stream; charset=utf-8")
		writeSSE(w, ": comment\n\n")
		writeSSE(w, "event: message\ndata: "+progress+"\n\n")
		writeSSE(w, "event: ping\ndata: {}\n\n")
		writeSSE(w, "data: not json\n\n")
		writeSSE(w, "data: {\"jsonrpc\":\"2.0\",\ndata: \"method\":\"x\"}\n\n")
		writeSSE(w, "id: 5\ndata: \n\n")
		writeSSE(w, "id: 6\nevent: keepalive\n\n")
		writeSSE(w, "data: "+listResp+"\r\n\r\n")
	})
	rec := newRecorder()
	h := newStreamable(t, HTTPOptions{URL: srv.URL, Tap: rec})
	if err := h.Send(context.Background(), []byte(listReq)); err != nil {
		t.Fatal(err)
	}
	want := []struct {
		data    string
		errText string
	}{
		{progress, ""},
		{"{}", `unexpected SSE event type "ping"`},
		{"not json", ErrNotJSON.Error()},
		{multiLine, ""},
		{listResp, ""},
	}
	for i, w := range want {
		f := recvFrame(t, h)
		if string(f.Data) != w.data || w.errText == "" && f.Err != nil || w.errText != "" && !errorContains(f.Err, w.errText) {
			t.Fatalf("frame %d = %q (err %v), want %q (err %q)", i, f.Data, f.Err, w.data, w.errText)
		}
	}
	bad := rec.find(func(e Event) bool { return e.Kind == KindBadFrame })
	if len(bad) != 2 || bad[0].HTTP == nil || bad[0].HTTP.SSEEvent != "ping" {
		t.Errorf("bad frame events:\n%s", rec.dump())
	}
	// The stream ended after the answer: no resumption, nothing lost.
	h.Close()
	if got := rec.find(lifecycleContaining("resum")); len(got) != 0 {
		t.Errorf("resumed a complete stream: %v", got)
	}
	if len(h.frames) != 0 {
		t.Errorf("%d frames left after the answer", len(h.frames))
	}
}

// answer is what a scripted server sends on one connection.
type answer struct {
	status int    // 0: 200
	ct     string // "": text/event-stream
	body   string
}

// scriptedServer answers the n-th request with answers[n], repeating the last
// one. It reports each request, and the time each handler finished.
func scriptedServer(t *testing.T, answers ...answer) (url string, reqs requests, ended chan time.Time) {
	t.Helper()
	reqs = newRequests()
	ended = make(chan time.Time, 100)
	var mu sync.Mutex
	n := 0
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		seen := capture(r)
		mu.Lock()
		a := answers[min(n, len(answers)-1)]
		n++
		mu.Unlock()
		reqs.add(seen)
		if a.ct == "" {
			a.ct = "text/event-stream"
		}
		if a.status == 0 {
			a.status = http.StatusOK
		}
		w.Header().Set("Content-Type", a.ct)
		w.WriteHeader(a.status)
		writeSSE(w, a.body)
		ended <- time.Now()
	})
	return srv.URL, reqs, ended
}

func TestStreamableResume(t *testing.T) {
	const retry = 100 * time.Millisecond
	tests := []struct {
		name         string
		defaultRetry time.Duration
		answers      []answer // [0] answers the POST, the rest the GETs
		wantLastIDs  []string // Last-Event-ID of each GET
		wantDelays   []time.Duration
		wantFrames   []string // "event-id data"
	}{
		{
			name: "priming event, then the connection closes",
			answers: []answer{
				{body: "id: e1\nretry: 100\ndata: \n\n"},
				{body: "id: e2\ndata: " + listResp + "\n\n"},
			},
			wantLastIDs: []string{"e1"},
			wantDelays:  []time.Duration{retry},
			wantFrames:  []string{"e2 " + listResp},
		},
		{
			name: "priming event and a notification, then the connection closes",
			answers: []answer{
				{body: "id: e1\nretry: 100\ndata: \n\nid: e2\ndata: " + progress + "\n\n"},
				{body: "id: e3\ndata: " + listResp + "\n\n"},
			},
			wantLastIDs: []string{"e2"},
			wantDelays:  []time.Duration{retry},
			wantFrames:  []string{"e2 " + progress, "e3 " + listResp},
		},
		{
			name: "the resumed stream breaks too, with a new retry",
			answers: []answer{
				{body: "id: e1\nretry: 100\ndata: \n\n"},
				{body: "retry: 150\nid: e2\ndata: " + progress + "\n\n"},
				{body: "data: " + listResp + "\n\n"},
			},
			wantLastIDs: []string{"e1", "e2"},
			wantDelays:  []time.Duration{retry, 150 * time.Millisecond},
			wantFrames:  []string{"e2 " + progress, " " + listResp},
		},
		{
			name:         "no retry field: the default delay",
			defaultRetry: 120 * time.Millisecond,
			answers: []answer{
				{body: "id: e1\ndata: \n\n"},
				{body: "data: " + listResp + "\n\n"},
			},
			wantLastIDs: []string{"e1"},
			wantDelays:  []time.Duration{120 * time.Millisecond},
			wantFrames:  []string{" " + listResp},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url, reqs, ended := scriptedServer(t, tt.answers...)
			rec := newRecorder()
			h := newStreamable(t, HTTPOptions{URL: url, Tap: rec, DefaultRetry: tt.defaultRetry})
			if err := h.Send(context.Background(), []byte(listReq)); err != nil {
				t.Fatal(err)
			}
			if post := reqs.next(t, "POST"); post.Method != http.MethodPost {
				t.Fatalf("first request is %s", post.Method)
			}
			prevEnd := wait(t, "the POST answer to end", ended)
			for i, wantID := range tt.wantLastIDs {
				get := reqs.next(t, "GET")
				if get.Method != http.MethodGet || get.Body != "" {
					t.Fatalf("resumed with %s %q, want GET", get.Method, get.Body)
				}
				if id := get.Header.Get(HeaderLastEventID); id != wantID {
					t.Errorf("GET %d Last-Event-ID = %q, want %q", i, id, wantID)
				}
				if !hasAccept(get.Header, "text/event-stream") {
					t.Errorf("GET %d Accept = %q", i, get.Header.Values("Accept"))
				}
				// The client must wait the retry delay after the
				// connection closed before reconnecting.
				if d := get.At.Sub(prevEnd); d < tt.wantDelays[i] {
					t.Errorf("GET %d came %v after the stream ended, before the retry delay of %v", i, d, tt.wantDelays[i])
				}
				prevEnd = wait(t, "the GET answer to end", ended)
			}
			for _, want := range tt.wantFrames {
				f := recvFrame(t, h)
				if got := f.EventID + " " + string(f.Data); got != want || f.Err != nil {
					t.Fatalf("frame = %q (err %v), want %q", got, f.Err, want)
				}
			}
			// Once the answer is in, no more requests and nothing lost.
			h.Close()
			reqs.none(t)
			if len(h.frames) != 0 {
				t.Errorf("%d frames left over", len(h.frames))
			}
			resuming := rec.find(lifecycleContaining("resuming after"))
			if len(resuming) != len(tt.wantLastIDs) || !strings.Contains(resuming[0].Text, fmt.Sprintf("Last-Event-ID %q", tt.wantLastIDs[0])) {
				t.Errorf("resume events = %v", resuming)
			}
			getEvents := rec.find(func(e Event) bool {
				return e.Kind == KindHTTP && e.HTTP.Method == http.MethodGet && e.HTTP.StatusCode == http.StatusOK
			})
			if len(getEvents) != len(tt.wantLastIDs) || getEvents[0].HTTP.RequestHeader.Get(HeaderLastEventID) != tt.wantLastIDs[0] {
				t.Errorf("GET events:\n%s", rec.dump())
			}
			last := rec.find(func(e Event) bool { return e.Kind == KindFrame && e.Dir == Incoming })
			if m := last[len(last)-1].HTTP; m == nil || m.Method != http.MethodGet || m.StatusCode != http.StatusOK {
				t.Errorf("resumed answer's meta = %+v, want the GET", m)
			}
		})
	}
}

func TestStreamableResumeFailures(t *testing.T) {
	primed := answer{body: "id: e1\nretry: 10\ndata: \n\n"}
	tests := []struct {
		name       string
		maxResumes int
		answers    []answer
		wantFrames []string // before the lost-response frame
		wantGETs   int
		wantErr    string
		wantStatus int // of an *HTTPError in the lost frame's error
	}{
		{
			name:       "stream closed without an event id",
			answers:    []answer{{body: "data: " + progress + "\n\n"}},
			wantFrames: []string{progress},
			wantErr:    "cannot be resumed (no event id)",
		},
		{
			name:    "empty stream",
			answers: []answer{{}},
			wantErr: "cannot be resumed (no event id)",
		},
		{
			name:       "resumed streams bring nothing",
			maxResumes: 2,
			answers:    []answer{primed, {}},
			wantGETs:   2,
			wantErr:    "gave up resuming the response stream after 2 attempts",
		},
		{
			name:       "resuming fails",
			maxResumes: 2,
			answers:    []answer{primed, {status: http.StatusInternalServerError, ct: "text/plain", body: "down"}},
			wantGETs:   2,
			wantErr:    "gave up resuming the response stream after 2 attempts",
		},
		{
			name:       "resuming answers a non-stream",
			maxResumes: 1,
			answers:    []answer{primed, {ct: "application/json", body: "{}"}},
			wantGETs:   1,
			wantErr:    "gave up resuming",
		},
		{
			name:       "progress resets the count",
			maxResumes: 1,
			answers:    []answer{primed, {body: "id: e2\ndata: " + progress + "\n\n"}, {}},
			wantFrames: []string{progress},
			wantGETs:   2,
			wantErr:    "gave up resuming the response stream after 1 attempts",
		},
		{
			name:       "server cannot resume",
			answers:    []answer{primed, {status: http.StatusMethodNotAllowed, ct: "text/plain"}},
			wantGETs:   1,
			wantErr:    "cannot resume the response stream",
			wantStatus: http.StatusMethodNotAllowed,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url, reqs, _ := scriptedServer(t, tt.answers...)
			rec := newRecorder()
			h := newStreamable(t, HTTPOptions{URL: url, Tap: rec, MaxResumes: tt.maxResumes, DefaultRetry: 10 * time.Millisecond})
			if err := h.Send(context.Background(), []byte(listReq)); err != nil {
				t.Fatal(err)
			}
			for _, want := range tt.wantFrames {
				if got := recvData(t, h); got != want {
					t.Fatalf("frame = %q, want %q", got, want)
				}
			}
			f := recvFrame(t, h)
			if f.LostID != "2" || !errorContains(f.Err, tt.wantErr) {
				t.Fatalf("frame = %+v, want LostID 2 with %q", f, tt.wantErr)
			}
			// The server answered the POST: the request must not be sent again.
			var accepted *AcceptedLostError
			if !errors.As(f.Err, &accepted) {
				t.Errorf("error %v does not say the server took the request", f.Err)
			}
			if tt.wantStatus != 0 {
				var he *HTTPError
				if !errors.As(f.Err, &he) || he.StatusCode != tt.wantStatus {
					t.Errorf("error %v does not wrap an HTTP %d", f.Err, tt.wantStatus)
				}
			}
			rec.waitFor(t, "response lost", lifecycleContaining("response lost"))
			// The connection has given up on the stream: the count is final.
			reqs.next(t, "POST")
			for i := range tt.wantGETs {
				if r := reqs.next(t, "GET"); r.Method != http.MethodGet || r.Header.Get(HeaderLastEventID) == "" {
					t.Fatalf("request %d: %s with Last-Event-ID %q", i+1, r.Method, r.Header.Get(HeaderLastEventID))
				}
			}
			reqs.none(t)
		})
	}
}

func TestStreamableBatchAnswers(t *testing.T) {
	batch := `[{"jsonrpc":"2.0","id":3,"method":"a"},{"jsonrpc":"2.0","id":"four","method":"b"},{"jsonrpc":"2.0","method":"n"}]`
	resp3 := `{"jsonrpc":"2.0","id":3,"result":{}}`
	resp4 := `{"jsonrpc":"2.0","id":"four","error":{"code":1,"message":"no"}}`
	t.Run("one answer lost", func(t *testing.T) {
		url, _, _ := scriptedServer(t, answer{body: "data: " + resp3 + "\n\n"})
		h := newStreamable(t, HTTPOptions{URL: url})
		if err := h.Send(context.Background(), []byte(batch)); err != nil {
			t.Fatal(err)
		}
		if got := recvData(t, h); got != resp3 {
			t.Fatalf("frame = %q", got)
		}
		if f := recvFrame(t, h); f.LostID != `"four"` || f.Err == nil {
			t.Fatalf("frame = %+v, want the answer to \"four\" lost", f)
		}
	})
	t.Run("answers in a batch and across a resume", func(t *testing.T) {
		url, reqs, _ := scriptedServer(t,
			answer{body: "id: 1\nretry: 10\ndata: " + resp3 + "\n\n"},
			answer{body: "data: [" + resp4 + "]\n\n"},
		)
		h := newStreamable(t, HTTPOptions{URL: url})
		if err := h.Send(context.Background(), []byte(batch)); err != nil {
			t.Fatal(err)
		}
		recvData(t, h)
		recvData(t, h)
		h.Close()
		reqs.next(t, "POST")
		reqs.next(t, "GET")
		reqs.none(t)
		if len(h.frames) != 0 {
			t.Errorf("%d frames left over", len(h.frames))
		}
	})
}

func TestStreamableListen(t *testing.T) {
	t.Run("405: no stream", func(t *testing.T) {
		reqs := newRequests()
		srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
			reqs.add(capture(r))
			http.Error(w, "no", http.StatusMethodNotAllowed)
		})
		rec := newRecorder()
		h := newStreamable(t, HTTPOptions{URL: srv.URL, Tap: rec})
		h.Listen()
		rec.waitFor(t, "no GET stream", lifecycleContaining("the server offers no GET stream (405 Method Not Allowed)"))
		e := rec.waitFor(t, "HTTP 405", func(e Event) bool { return e.Kind == KindHTTP })
		if e.HTTP.Method != http.MethodGet || e.HTTP.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("HTTP event = %+v", e.HTTP)
		}
		h.Close()
		if r := reqs.next(t, "GET"); r.Method != http.MethodGet || !hasAccept(r.Header, "text/event-stream") {
			t.Errorf("request = %s %v", r.Method, r.Header)
		}
		reqs.none(t)
	})

	t.Run("stream with reconnection", func(t *testing.T) {
		reqs := newRequests()
		var mu sync.Mutex
		gets := 0
		srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
			seen := capture(r)
			reqs.add(seen)
			switch r.Method {
			case http.MethodPost:
				w.Header().Set(HeaderSessionID, "L1")
				writeJSON(w, http.StatusOK, initResp)
				return
			case http.MethodDelete:
				return
			}
			mu.Lock()
			gets++
			n := gets
			mu.Unlock()
			startSSE(w)
			if n == 1 {
				writeSSE(w, "id: g1\nretry: 10\ndata: "+logNote+"\n\n")
				return // closes the connection: the client reconnects
			}
			writeSSE(w, "data: "+progress+"\n\n")
			<-r.Context().Done()
		})
		rec := newRecorder()
		h := newStreamable(t, HTTPOptions{URL: srv.URL, Tap: rec})
		if err := h.Send(context.Background(), []byte(initReq)); err != nil {
			t.Fatal(err)
		}
		recvData(t, h)
		reqs.next(t, "initialize")
		h.SetProtocolVersion("2025-11-25")
		h.Listen()
		h.Listen() // a second call opens no second stream

		f := recvFrame(t, h)
		if string(f.Data) != logNote || f.EventID != "g1" {
			t.Fatalf("first frame = %+v", f)
		}
		if got := recvData(t, h); got != progress {
			t.Fatalf("second frame = %q", got)
		}
		for i, wantLast := range []string{"", "g1"} {
			r := reqs.next(t, "GET")
			if r.Method != http.MethodGet || r.Header.Get(HeaderSessionID) != "L1" || r.Header.Get(HeaderProtocolVersion) != "2025-11-25" || r.Header.Get(HeaderLastEventID) != wantLast {
				t.Errorf("GET %d: %s session %q version %q last id %q", i, r.Method, r.Header.Get(HeaderSessionID), r.Header.Get(HeaderProtocolVersion), r.Header.Get(HeaderLastEventID))
			}
		}
		e := rec.waitFor(t, "listen frame", func(e Event) bool { return e.Kind == KindFrame && e.Dir == Incoming && string(e.Data) == logNote })
		if e.HTTP == nil || e.HTTP.Method != http.MethodGet || e.HTTP.SSEEventID != "g1" {
			t.Errorf("listen frame meta = %+v", e.HTTP)
		}
		h.Close() // ends the held stream
		if r := reqs.next(t, "DELETE"); r.Method != http.MethodDelete {
			t.Errorf("request = %s, want DELETE", r.Method)
		}
		reqs.none(t)
	})

	t.Run("server errors: gives up", func(t *testing.T) {
		url, reqs, _ := scriptedServer(t, answer{status: http.StatusBadGateway, ct: "text/plain"})
		rec := newRecorder()
		h := newStreamable(t, HTTPOptions{URL: url, Tap: rec, MaxResumes: 1, DefaultRetry: 5 * time.Millisecond})
		h.Listen()
		rec.waitFor(t, "give up", lifecycleContaining("gave up on the GET stream"))
		reqs.next(t, "GET")
		reqs.next(t, "GET")
		reqs.none(t)
	})
}

func TestStreamableCloseStream(t *testing.T) {
	reqs := newRequests()
	cancelled := make(chan struct{})
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		reqs.add(capture(r))
		startSSE(w)
		writeSSE(w, "id: c1\ndata: \n\n")
		writeSSE(w, "id: c2\ndata: "+progress+"\n\n")
		<-r.Context().Done()
		close(cancelled)
	})
	rec := newRecorder()
	h := newStreamable(t, HTTPOptions{URL: srv.URL, Tap: rec})
	if err := h.Send(context.Background(), []byte(`{"jsonrpc":"2.0","id":"abc","method":"tools/call"}`)); err != nil {
		t.Fatal(err)
	}
	if got := recvData(t, h); got != progress {
		t.Fatalf("frame = %q", got)
	}
	if h.CloseStream("abc") {
		t.Error(`CloseStream("abc") found a stream: id keys of strings are quoted`)
	}
	if !h.CloseStream(`"abc"`) {
		t.Fatal(`CloseStream("\"abc\"") found no stream`)
	}
	wait(t, "the server to see the stream closed", cancelled)
	h.Close()
	if h.CloseStream(`"abc"`) {
		t.Error("CloseStream found the stream again")
	}
	// Closed on purpose: no resumption, no lost answer.
	reqs.next(t, "POST")
	reqs.none(t)
	if len(h.frames) != 0 {
		t.Errorf("%d frames after CloseStream", len(h.frames))
	}
	if got := rec.find(lifecycleContaining("response lost")); len(got) != 0 {
		t.Errorf("lost events: %v", got)
	}
}

func TestStreamableClose(t *testing.T) {
	t.Run("no session: no DELETE; Close unblocks Recv and ends streams", func(t *testing.T) {
		reqs := newRequests()
		srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
			reqs.add(capture(r))
			startSSE(w)
			writeSSE(w, "id: 1\ndata: "+progress+"\n\n")
			<-r.Context().Done()
		})
		rec := newRecorder()
		h := newStreamable(t, HTTPOptions{URL: srv.URL, Tap: rec})
		if err := h.Send(context.Background(), []byte(listReq)); err != nil {
			t.Fatal(err)
		}
		recvData(t, h)
		recvDone := make(chan error, 1)
		go func() {
			_, err := h.Recv()
			recvDone <- err
		}()
		h.Close()
		if err := wait(t, "Recv", recvDone); !errors.Is(err, ErrClosed) {
			t.Errorf("Recv = %v, want ErrClosed", err)
		}
		reqs.next(t, "POST")
		reqs.none(t)
		if got := rec.find(lifecycleContaining("response lost")); len(got) != 0 {
			t.Errorf("Close reported lost answers: %v", got)
		}
	})
	t.Run("DELETE refused", func(t *testing.T) {
		srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
			capture(r)
			if r.Method == http.MethodDelete {
				w.WriteHeader(http.StatusMethodNotAllowed)
				return
			}
			w.Header().Set(HeaderSessionID, "x")
			writeJSON(w, http.StatusOK, initResp)
		})
		rec := newRecorder()
		h := newStreamable(t, HTTPOptions{URL: srv.URL, Tap: rec})
		h.Send(context.Background(), []byte(initReq))
		recvData(t, h)
		if err := h.Close(); err != nil {
			t.Errorf("Close = %v", err)
		}
		rec.waitFor(t, "DELETE 405", func(e Event) bool {
			return e.Kind == KindHTTP && e.HTTP.Method == http.MethodDelete && e.HTTP.StatusCode == http.StatusMethodNotAllowed
		})
	})
}

func TestStreamableSendContext(t *testing.T) {
	// The caller's context bounds the wait for the status of a frame
	// without requests.
	entered := make(chan struct{}, 1)
	sawCancel := make(chan struct{}, 1)
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		capture(r)
		entered <- struct{}{}
		<-r.Context().Done()
		sawCancel <- struct{}{}
	})
	h := newStreamable(t, HTTPOptions{URL: srv.URL})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-entered
		cancel()
	}()
	if err := h.Send(ctx, []byte(initialized)); !errors.Is(err, context.Canceled) {
		t.Fatalf("Send = %v, want context.Canceled", err)
	}
	wait(t, "the server to see the request cancelled", sawCancel)
}

func TestStreamableRequestOutlivesSendContext(t *testing.T) {
	// The caller's context bounds Send, not the answer's stream.
	proceed := make(chan struct{})
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		capture(r)
		startSSE(w)
		select {
		case <-proceed:
		case <-r.Context().Done():
			return
		}
		writeSSE(w, "data: "+listResp+"\n\n")
	})
	h := newStreamable(t, HTTPOptions{URL: srv.URL})
	ctx, cancel := context.WithCancel(context.Background())
	if err := h.Send(ctx, []byte(listReq)); err != nil {
		t.Fatal(err)
	}
	cancel()
	close(proceed)
	if got := recvData(t, h); got != listResp {
		t.Fatalf("frame = %q", got)
	}
}

func TestStreamableNetworkError(t *testing.T) {
	srv := newServer(t, func(http.ResponseWriter, *http.Request) {})
	url := srv.URL
	srv.Close()
	rec := newRecorder()
	h := newStreamable(t, HTTPOptions{URL: url, Tap: rec})
	if err := h.Send(context.Background(), []byte(initialized)); err == nil || !strings.Contains(err.Error(), "POST "+url) {
		t.Errorf("Send to a closed server = %v", err)
	}
	if err := h.Send(context.Background(), []byte(listReq)); err != nil {
		t.Fatal(err)
	}
	if f := recvFrame(t, h); f.LostID != "2" || f.Err == nil {
		t.Errorf("frame = %+v, want the answer lost", f)
	}
	rec.waitFor(t, "POST failed", func(e Event) bool { return e.Kind == KindHTTP && e.Text == "POST failed" && e.Err != "" })
}

func TestResponseIDs(t *testing.T) {
	tests := []struct {
		data string
		want string
	}{
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, "1"},
		{`{"jsonrpc":"2.0","id":"a","error":{"code":1,"message":"x"}}`, `"a"`},
		{`{"jsonrpc":"2.0","id":7,"result":null}`, "7"},  // a null result is a result
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, ""}, // a request from the server
		{`{"jsonrpc":"2.0","method":"n"}`, ""},
		{`{"jsonrpc":"2.0","id":null,"error":{}}`, ""},
		{` [{"id":1,"result":{}},{"id":2,"method":"x"},{"id":"3","error":{}}]`, `1,"3"`},
		{`[1,2]`, ""},
		{`nonsense`, ""},
	}
	for _, tt := range tests {
		if got := strings.Join(responseIDs([]byte(tt.data)), ","); got != tt.want {
			t.Errorf("responseIDs(%s) = %q, want %q", tt.data, got, tt.want)
		}
	}
}

func TestPeekOutgoing(t *testing.T) {
	tests := []struct {
		frame   string
		ids     string
		initial bool
	}{
		{initReq, "1", true},
		{listReq, "2", false},
		{initialized, "", false},
		{`{"jsonrpc":"2.0","id":5,"result":{}}`, "", false}, // an answer to the server
		{`[` + initReq + `,` + listReq + `,` + initialized + `]`, "1,2", true},
		{`not json`, "", false},
	}
	for _, tt := range tests {
		out := peekOutgoing([]byte(tt.frame))
		if got := strings.Join(out.ids, ","); got != tt.ids || out.initial != tt.initial {
			t.Errorf("peekOutgoing(%s) = %q %v, want %q %v", tt.frame, got, out.initial, tt.ids, tt.initial)
		}
	}
}

func TestIsEventStream(t *testing.T) {
	for ct, want := range map[string]bool{
		"text/event-stream":                true,
		"TEXT/EVENT-STREAM; charset=utf-8": true,
		"text/event-stream;":               true,
		"application/json":                 false,
		"":                                 false,
		"text/event-streams":               false,
	} {
		if got := isEventStream(ct); got != want {
			t.Errorf("isEventStream(%q) = %v", ct, got)
		}
	}
}

// TestPostClosedAfterTheRequestMayHaveArrived: a server that reads a
// request and closes the connection without answering may have run it:
// the lost frame says so (never to be sent again); a server nobody listens
// on got nothing.
func TestPostClosedAfterTheRequestMayHaveArrived(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	}))
	defer srv.Close()
	h := newStreamable(t, HTTPOptions{URL: srv.URL})
	if err := h.Send(context.Background(), []byte(listReq)); err != nil {
		t.Fatal(err)
	}
	f := recvFrame(t, h)
	var accepted *AcceptedLostError
	if f.LostID != "2" || !errors.As(f.Err, &accepted) {
		t.Errorf("a request the server read, unanswered: %+v, want it lost and taken", f)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nobody listens there now
	h = newStreamable(t, HTTPOptions{URL: "http://" + addr + "/mcp"})
	if err := h.Send(context.Background(), []byte(listReq)); err != nil {
		t.Fatal(err)
	}
	f = recvFrame(t, h)
	if f.LostID != "2" || errors.As(f.Err, &accepted) {
		t.Errorf("a request nobody received: %+v, want it lost and not taken", f)
	}
}
