package transport

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// Frames the HTTP tests exchange.
const (
	initReq     = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`
	initResp    = `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}`
	initialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	listReq     = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	listResp    = `{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`
	progress    = `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`
	logNote     = `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info"}}`
)

// seenReq is what a test server saw of one request.
type seenReq struct {
	Method string
	Path   string
	Query  string
	Header http.Header
	Body   string
	At     time.Time
}

func capture(r *http.Request) seenReq {
	body, _ := io.ReadAll(r.Body)
	return seenReq{
		Method: r.Method,
		Path:   r.URL.Path,
		Query:  r.URL.RawQuery,
		Header: r.Header.Clone(),
		Body:   string(body),
		At:     time.Now(),
	}
}

// rpcMethod returns the method and id of a JSON-RPC message.
func rpcMethod(body string) (method string, id json.RawMessage) {
	var m struct {
		Method string
		ID     json.RawMessage
	}
	json.Unmarshal([]byte(body), &m)
	return m.Method, m.ID
}

func startSSE(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
}

func writeSSE(w http.ResponseWriter, s string) {
	io.WriteString(w, s)
	w.(http.Flusher).Flush()
}

func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, body)
}

// newServer starts a test server. Handlers that hold a stream open must
// return when the request's context ends: connections are closed (cleanups
// run last first) before the server waits for its handlers.
func newServer(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// requests is a channel of seen requests that fails the test when it fills.
type requests chan seenReq

func newRequests() requests { return make(requests, 100) }

func (c requests) add(r seenReq) {
	select {
	case c <- r:
	default:
		panic("too many requests")
	}
}

func (c requests) next(t *testing.T, what string) seenReq {
	t.Helper()
	return wait(t, what, c)
}

// none checks that no request is waiting in c.
func (c requests) none(t *testing.T) {
	t.Helper()
	select {
	case r := <-c:
		t.Errorf("unexpected %s %s request: %s", r.Method, r.Path, r.Body)
	default:
	}
}

func hasAccept(h http.Header, want ...string) bool {
	accept := strings.Join(h.Values("Accept"), ",")
	for _, w := range want {
		if !strings.Contains(accept, w) {
			return false
		}
	}
	return true
}
