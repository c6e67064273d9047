package transport

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestSessionGone(t *testing.T) {
	for _, tc := range []struct {
		status int
		body   string
		want   bool
	}{
		{404, "", true},
		{404, "not found", true},
		{400, `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":null}`, true},
		{400, `{"jsonrpc":"2.0","error":{"code":-32000,"message":"SESSION unknown"}}`, true},
		{400, `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request"}}`, false},
		{400, `Bad Request: no valid session`, false}, // not JSON-RPC
		{500, `{"jsonrpc":"2.0","error":{"code":-32000,"message":"session store down"}}`, false},
	} {
		if got := sessionGone(tc.status, []byte(tc.body)); got != tc.want {
			t.Errorf("sessionGone(%d, %s) = %v, want %v", tc.status, tc.body, got, tc.want)
		}
	}
}

func TestIsUnreachable(t *testing.T) {
	// A port nothing listens on: connection refused.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	h := NewStreamableHTTP(HTTPOptions{URL: "http://" + addr + "/mcp"})
	defer h.Close()
	err = h.Send(context.Background(), []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	if !IsUnreachable(err) {
		t.Errorf("connection refused: IsUnreachable(%v) = false", err)
	}
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&HTTPError{StatusCode: 502}, true},
		{&HTTPError{StatusCode: 503}, true},
		{&HTTPError{StatusCode: 504}, true},
		{fmt.Errorf("POST: %w", &HTTPError{StatusCode: 500}), false},
		{&HTTPError{StatusCode: 401}, false},
		{context.Canceled, false},
		{errors.New("something else"), false},
		{nil, false},
	} {
		if got := IsUnreachable(tc.err); got != tc.want {
			t.Errorf("IsUnreachable(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// A server that answers 400 with a JSON-RPC error about the session, to a
// POST and to the GET stream that carried our session id, is taken for one
// that forgot the session, as after a 404.
func TestSession400IsExpiry(t *testing.T) {
	const body = `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":null}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(HeaderSessionID) == "" && r.Method == http.MethodPost {
			w.Header().Set(HeaderSessionID, "s1")
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"x","version":"1"}}}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, body)
	}))
	defer srv.Close()
	h := NewStreamableHTTP(HTTPOptions{URL: srv.URL})
	defer h.Close()
	ctx := context.Background()
	if err := h.Send(ctx, []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Recv(); err != nil {
		t.Fatal(err)
	}
	if h.SessionID() != "s1" {
		t.Fatalf("SessionID() = %q", h.SessionID())
	}
	// The GET stream: refused, reported, not retried.
	reports := make(chan error, 4)
	h.WatchStream(func(open bool, err error) {
		if !open {
			reports <- err
		}
	})
	h.Listen()
	select {
	case err := <-reports:
		var se *SessionExpiredError
		if !errors.As(err, &se) || se.StatusCode != 400 || se.SessionID != "s1" || se.Method != http.MethodGet {
			t.Fatalf("GET stream report %v, want a SessionExpiredError for s1 with 400", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the GET stream's refusal was not reported")
	}
	// A POST: ErrSessionExpired, with the status and the body.
	err := h.Send(ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	var se *SessionExpiredError
	if !errors.Is(err, ErrSessionExpired) || !errors.As(err, &se) || se.StatusCode != 400 || string(se.Body) != body {
		t.Fatalf("Send = %v, want a SessionExpiredError with 400 and the body", err)
	}
	if h.SessionID() != "" {
		t.Errorf("SessionID() = %q after the session expired", h.SessionID())
	}
}
