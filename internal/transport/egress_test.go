package transport

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// eventLog is a tap that keeps every event.
type eventLog struct {
	mu sync.Mutex
	ev []Event
}

func (l *eventLog) Observe(e Event) {
	l.mu.Lock()
	l.ev = append(l.ev, e)
	l.mu.Unlock()
}

func (l *eventLog) find(sub string) *Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range l.ev {
		if strings.Contains(l.ev[i].Text, sub) {
			return &l.ev[i]
		}
	}
	return nil
}

// otherOrigin is a second listener on loopback, standing in for another
// host: it records what reaches it and answers initialize.
type otherOrigin struct {
	*httptest.Server
	mu   sync.Mutex
	seen []seenReq
}

func newOtherOrigin(t *testing.T) *otherOrigin {
	o := &otherOrigin{}
	o.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.mu.Lock()
		o.seen = append(o.seen, capture(r))
		o.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(initResp))
	}))
	t.Cleanup(o.Close)
	return o
}

func (o *otherOrigin) requests() []seenReq {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]seenReq(nil), o.seen...)
}

// redirecting is the MCP server: every request to /mcp is redirected to
// target with status code.
func redirecting(t *testing.T, code int, target func() string) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/mcp" {
			w.Header().Set("Location", target())
			w.WriteHeader(code)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(initResp))
	}))
	t.Cleanup(s.Close)
	return s
}

// credentials are the user's and the session's secrets of the tests.
var credentials = http.Header{
	"Authorization": {"Bearer tok-secret-123"},
	"X-Api-Key":     {"key-secret-456"},
	"Cookie":        {"sid=cookie-secret-789"},
}

func recvLost(t *testing.T, c Conn) Frame {
	t.Helper()
	done := make(chan Frame, 1)
	go func() {
		f, _ := c.Recv()
		done <- f
	}()
	select {
	case f := <-done:
		return f
	case <-time.After(10 * time.Second):
		t.Fatal("no frame within 10s")
	}
	return Frame{}
}

// A cross-origin redirect of an MCP request is refused, with an error that
// names both URLs; the other origin receives nothing, and the tap shows the
// refused redirect.
func TestRedirectCrossOriginRefused(t *testing.T) {
	other := newOtherOrigin(t)
	srv := redirecting(t, http.StatusTemporaryRedirect, func() string { return other.URL + "/steal" })
	tap := &eventLog{}
	c := NewStreamableHTTP(HTTPOptions{URL: srv.URL + "/mcp", Header: credentials, Tap: tap, RedirectHint: "HINT"})
	defer c.Close()
	if err := c.Send(context.Background(), []byte(initReq)); err != nil {
		t.Fatal(err)
	}
	f := recvLost(t, c)
	if f.LostID != "1" || f.Err == nil {
		t.Fatalf("frame = %+v, want request 1 lost", f)
	}
	var re *RedirectError
	if !errors.As(f.Err, &re) {
		t.Fatalf("error %v is not a *RedirectError", f.Err)
	}
	for _, want := range []string{srv.URL + "/mcp", other.URL + "/steal", "another origin", "HINT"} {
		if !strings.Contains(f.Err.Error(), want) {
			t.Errorf("error %q does not name %q", f.Err, want)
		}
	}
	if got := other.requests(); len(got) != 0 {
		t.Errorf("the other origin received %d requests: %+v", len(got), got)
	}
	if e := tap.find("refused"); e == nil || e.Kind != KindHTTP || e.HTTP == nil || e.HTTP.StatusCode != http.StatusTemporaryRedirect {
		t.Errorf("no tap event for the refused redirect: %+v", e)
	}
}

// With AllowCrossOriginRedirect the redirect is followed, but no credential
// crosses: neither Authorization, the cookie, a -H header nor the session
// id; the body does (the user allowed it), and the tap says so.
func TestRedirectCrossOriginAllowedWithoutCredentials(t *testing.T) {
	other := newOtherOrigin(t)
	var mu sync.Mutex
	first := true
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if first {
			// initialize: answer here and give a session id.
			first = false
			w.Header().Set(HeaderSessionID, "session-secret-000")
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(initResp))
			return
		}
		w.Header().Set("Location", other.URL+"/elsewhere")
		w.WriteHeader(http.StatusPermanentRedirect)
	}))
	defer srv.Close()
	tap := &eventLog{}
	c := NewStreamableHTTP(HTTPOptions{URL: srv.URL, Header: credentials, Tap: tap, AllowCrossOriginRedirect: true})
	defer c.Close()
	ctx := context.Background()
	if err := c.Send(ctx, []byte(initReq)); err != nil {
		t.Fatal(err)
	}
	recvLost(t, c)
	if c.SessionID() == "" {
		t.Fatal("no session id")
	}
	if err := c.Send(ctx, []byte(listReq)); err != nil {
		t.Fatal(err)
	}
	recvLost(t, c)
	got := other.requests()
	if len(got) != 1 {
		t.Fatalf("the other origin received %d requests, want 1", len(got))
	}
	if got[0].Body != listReq {
		t.Errorf("body = %q, want the request", got[0].Body)
	}
	for k, vs := range got[0].Header {
		for _, v := range vs {
			if strings.Contains(v, "secret") {
				t.Errorf("the other origin received %s: %s", k, v)
			}
		}
	}
	if got[0].Header.Get("Referer") != "" {
		t.Errorf("Referer crossed: %q", got[0].Header.Get("Referer"))
	}
	if e := tap.find("another origin: followed without credentials"); e == nil {
		t.Error("no tap event for the followed redirect")
	}
}

// A redirect to the same origin keeps the credentials and is a tap event.
func TestRedirectSameOrigin(t *testing.T) {
	var mu sync.Mutex
	var seen []seenReq
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/old" {
			w.Header().Set("Location", "/new")
			w.WriteHeader(http.StatusTemporaryRedirect)
			return
		}
		mu.Lock()
		seen = append(seen, capture(r))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(initResp))
	}))
	defer srv.Close()
	tap := &eventLog{}
	c := NewStreamableHTTP(HTTPOptions{URL: srv.URL + "/old", Header: credentials, Tap: tap})
	defer c.Close()
	if err := c.Send(context.Background(), []byte(initReq)); err != nil {
		t.Fatal(err)
	}
	if f := recvLost(t, c); f.Err != nil {
		t.Fatal(f.Err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 1 || seen[0].Header.Get("X-Api-Key") != "key-secret-456" || seen[0].Header.Get("Authorization") == "" {
		t.Fatalf("same-origin redirect lost the credentials: %+v", seen)
	}
	if tap.find("(same origin)") == nil {
		t.Error("no tap event for the redirect")
	}
}

// A redirect from HTTPS to plain HTTP on another origin is refused even
// when cross-origin redirects are allowed.
func TestRedirectDowngradeRefused(t *testing.T) {
	other := newOtherOrigin(t)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", other.URL)
		w.WriteHeader(http.StatusFound)
	}))
	defer srv.Close()
	c := NewHTTPClient(srv.Client().Transport, EgressPolicy{AllowCrossOrigin: true})
	_, err := c.Get(srv.URL)
	if err == nil || !strings.Contains(err.Error(), "from HTTPS to plain HTTP") {
		t.Fatalf("err = %v, want a refused downgrade", err)
	}
	if n := len(other.requests()); n != 0 {
		t.Errorf("the other origin received %d requests", n)
	}
}

// SecureOnly (OAuth) refuses a hop to plain HTTP off this machine: the
// dialer sends the other host's name to the other origin's listener, so
// that a followed redirect would reach it.
func TestRedirectSecureOnly(t *testing.T) {
	other := newOtherOrigin(t)
	_, port, _ := net.SplitHostPort(other.Listener.Addr().String())
	srv := redirecting(t, http.StatusFound, func() string { return "http://metadata.example:" + port + "/latest" })
	base := DefaultHTTPTransport().(*http.Transport).Clone()
	base.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if strings.HasPrefix(addr, "metadata.example:") {
			addr = other.Listener.Addr().String()
		}
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	c := NewHTTPClient(base, EgressPolicy{SecureOnly: true, AllowCrossOriginGET: true})
	_, err := c.Get(srv.URL + "/mcp")
	if err == nil || !strings.Contains(err.Error(), "neither HTTPS nor on this machine") {
		t.Fatalf("err = %v, want the hop refused", err)
	}
	if n := len(other.requests()); n != 0 {
		t.Errorf("the plain-HTTP host received %d requests", n)
	}
	// A request with a body never follows a redirect to another origin
	// there (a token request's form holds the code and the secrets).
	loop := newOtherOrigin(t)
	srv2 := redirecting(t, http.StatusTemporaryRedirect, func() string { return loop.URL })
	_, err = c.Post(srv2.URL+"/mcp", "application/x-www-form-urlencoded", strings.NewReader("client_secret=s3cr3t"))
	if err == nil || len(loop.requests()) != 0 {
		t.Fatalf("err = %v, requests %d: a POST followed a redirect to another origin", err, len(loop.requests()))
	}
}

// mcpi does not ask for compression, so that the limits count what
// arrives: a gzip body sent anyway stays compressed (a bad frame), and a
// body over the limit is refused by a limit error that says so.
func TestNoCompressionAndLimits(t *testing.T) {
	var bomb bytes.Buffer
	zw := gzip.NewWriter(&bomb)
	zw.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{"x":"`))
	zw.Write(bytes.Repeat([]byte("a"), 8<<20))
	zw.Write([]byte(`"}}`))
	zw.Close()
	var asked []string
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.Header.Get("Accept-Encoding"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(bomb.Bytes())
	}))
	defer srv.Close()
	c := NewStreamableHTTP(HTTPOptions{URL: srv.URL, MaxFrameBytes: 1 << 20})
	defer c.Close()
	if err := c.Send(context.Background(), []byte(initReq)); err != nil {
		t.Fatal(err)
	}
	f := recvLost(t, c)
	if f.Err == nil || len(f.Data) > bomb.Len() {
		t.Fatalf("frame of %d bytes, err %v: the gzip body was decompressed", len(f.Data), f.Err)
	}
	mu.Lock()
	if len(asked) != 1 || strings.Contains(asked[0], "gzip") {
		t.Errorf("Accept-Encoding = %q: mcpi asked for compression", asked)
	}
	mu.Unlock()

	big := `{"jsonrpc":"2.0","id":1,"result":{"x":"` + strings.Repeat("a", 5000) + `"}}`
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(big))
	}))
	defer plain.Close()
	c2 := NewStreamableHTTP(HTTPOptions{URL: plain.URL, MaxFrameBytes: 1000})
	defer c2.Close()
	c2.Send(context.Background(), []byte(initReq))
	f = recvLost(t, c2)
	var le *LimitError
	if !errors.As(f.Err, &le) || !strings.Contains(f.Err.Error(), "1000-byte limit") {
		t.Fatalf("err = %v, want the limit named", f.Err)
	}
}

// On an SSE answer, an event over the limit fails the request with the
// limit, not with "the server closed the stream", and is not resumed.
func TestSSELimitNamed(t *testing.T) {
	gets := 0
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			mu.Lock()
			gets++
			mu.Unlock()
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		startSSE(w)
		fmt.Fprintf(w, "id: 1\ndata: %s\n\n", `{"jsonrpc":"2.0","id":1,"result":{"x":"`+strings.Repeat("a", 5000)+`"}}`)
	}))
	defer srv.Close()
	c := NewStreamableHTTP(HTTPOptions{URL: srv.URL, MaxFrameBytes: 1000, DefaultRetry: time.Millisecond})
	defer c.Close()
	c.Send(context.Background(), []byte(initReq))
	f := recvLost(t, c)
	if f.LostID != "1" || f.Err == nil || !strings.Contains(f.Err.Error(), "1000-byte limit") || strings.Contains(f.Err.Error(), "closed") {
		t.Fatalf("frame = %+v, want request 1 lost to the limit", f)
	}
	mu.Lock()
	defer mu.Unlock()
	if gets != 0 {
		t.Errorf("%d resumptions of a stream that broke a limit", gets)
	}
}

// TestOneHTTPClientConstructor keeps NewHTTPClient the only place an
// http.Client is made, and keeps out http.DefaultClient and its helpers
// (http.Get, http.Post...), which follow redirects with no policy: every
// non-test file of the module is parsed and searched.
func TestOneHTTPClientConstructor(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	var bad []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, path, src, 0)
		if err != nil {
			return nil // someone's work in progress; not this test's business
		}
		allowed := filepath.ToSlash(path) == "../../internal/transport/egress.go"
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CompositeLit:
				if isHTTPSel(n.Type, "Client") && !allowed {
					bad = append(bad, fset.Position(n.Pos()).String()+": http.Client{...}")
				}
			case *ast.CallExpr:
				if id, ok := n.Fun.(*ast.Ident); ok && id.Name == "new" && len(n.Args) == 1 && isHTTPSel(n.Args[0], "Client") {
					bad = append(bad, fset.Position(n.Pos()).String()+": new(http.Client)")
				}
			case *ast.SelectorExpr:
				for _, name := range []string{"DefaultClient", "Get", "Post", "PostForm", "Head"} {
					if isHTTPSel(n, name) {
						bad = append(bad, fset.Position(n.Pos()).String()+": http."+name)
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Errorf("%s: make HTTP clients with transport.NewHTTPClient, which applies the egress policy", b)
	}
}

func isHTTPSel(e ast.Expr, name string) bool {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != name {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && id.Name == "http"
}

// A loopback listener serves only requests whose Host and Origin name
// this machine (DNS rebinding); the others get 403, as the official SDK's
// servers answer.
func TestGuardLoopback(t *testing.T) {
	srv := httptest.NewServer(GuardLoopback(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
	})))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	for _, tc := range []struct {
		host, origin string
		want         int
	}{
		{"", "", http.StatusOK},
		{"localhost:" + port, "", http.StatusOK},
		{"[::1]:" + port, "http://localhost:6274", http.StatusOK},
		{"mcp.localhost", "https://127.0.0.1", http.StatusOK},
		{"rebind.example:" + port, "", http.StatusForbidden},
		{"127.0.0.1.nip.io:" + port, "", http.StatusForbidden},
		{"", "http://rebind.example", http.StatusForbidden},
		{"", "null", http.StatusForbidden},
		{"", "file://", http.StatusForbidden},
	} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader("{}"))
		if tc.host != "" {
			req.Host = tc.host
		}
		if tc.origin != "" {
			req.Header.Set("Origin", tc.origin)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("Host %q Origin %q: %d, want %d", tc.host, tc.origin, resp.StatusCode, tc.want)
		}
	}
}
