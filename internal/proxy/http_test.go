package proxy

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// The proxy forwards the MCP endpoint only: "/" and the message endpoint
// an HTTP+SSE upstream announces; any other path is a 404 and the upstream
// never sees it.
func TestProxyForwardsOnlyTheEndpoint(t *testing.T) {
	var mu sync.Mutex
	var paths []string
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.Method+" "+r.URL.Path)
		mu.Unlock()
		if r.Method == http.MethodGet && r.URL.Path == "/sse" {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "event: endpoint\ndata: /messages?sessionId=1\n\n")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	}))
	defer upstream.Close()
	up, _ := url.Parse(upstream.URL + "/sse")
	front := httptest.NewServer(Handler(up, nil))
	defer front.Close()

	get := func(method, path string) int {
		req, _ := http.NewRequest(method, front.URL+path, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		resp, err := front.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, p := range []string{"/admin", "/../etc/passwd", "/sse/../admin", "/messages"} {
		if code := get(http.MethodPost, p); code != http.StatusNotFound {
			t.Errorf("POST %s: %d, want 404", p, code)
		}
	}
	if code := get(http.MethodGet, "/"); code != http.StatusOK {
		t.Fatalf("GET /: %d", code)
	}
	// The endpoint event announced /messages: it is forwarded now, as named.
	if code := get(http.MethodPost, "/messages"); code != http.StatusOK {
		t.Errorf("POST /messages after the endpoint event: %d", code)
	}
	mu.Lock()
	defer mu.Unlock()
	want := "GET /sse,POST /messages"
	if got := strings.Join(paths, ","); got != want {
		t.Errorf("the upstream saw %s, want %s", got, want)
	}
}
