package auth

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/transport"
)

// hits records the Authorization headers a listener received.
type hits struct {
	mu   sync.Mutex
	auth []string
}

func (h *hits) add(r *http.Request) {
	h.mu.Lock()
	h.auth = append(h.auth, r.Header.Get("Authorization"))
	h.mu.Unlock()
}

func (h *hits) get() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.auth...)
}

// The access token goes to the server's origin only: net/http calls the
// round tripper again for each hop of a redirect, and a token added there
// would follow the redirect to any host. Even a client whose policy
// follows cross-origin redirects sends it nothing.
func TestTokenStaysOnItsOrigin(t *testing.T) {
	var other hits
	os := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		other.add(r)
		w.WriteHeader(http.StatusOK)
	}))
	defer os.Close()
	var own hits
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		own.add(r)
		w.Header().Set("Location", os.URL+"/steal")
		w.WriteHeader(http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	tr := NewTransport(Options{ServerURL: srv.URL + "/mcp"})
	tr.use(&Entry{ServerURL: srv.URL + "/mcp", Token: &Token{AccessToken: "tok-0123456789"}})

	// The MCP client's own policy refuses the redirect.
	resp, err := tr.Client().Post(srv.URL+"/mcp", "application/json", strings.NewReader("{}"))
	if err == nil {
		resp.Body.Close()
		t.Fatal("the redirect to another origin was followed")
	}
	if got := other.get(); len(got) != 0 {
		t.Fatalf("the other origin received %d requests", len(got))
	}
	// A policy that follows it (--allow-cross-origin-redirect) still
	// sends no token there.
	c := transport.NewHTTPClient(tr, transport.EgressPolicy{AllowCrossOrigin: true})
	resp, err = c.Post(srv.URL+"/mcp", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := own.get(); len(got) != 2 || got[0] != "Bearer tok-0123456789" {
		t.Errorf("the server received %q, want the token", got)
	}
	if got := other.get(); len(got) != 1 || got[0] != "" {
		t.Errorf("the other origin received Authorization %q, want none", got)
	}
}

// Metadata on loopback that redirects to plain HTTP off this machine is
// not fetched: HTTPS-or-loopback holds for every hop. The dialer sends the
// other host's name to a loopback listener, so a followed hop would reach it.
func TestDiscoveryRedirectMustStaySecure(t *testing.T) {
	var other hits
	os := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		other.add(r)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"resource":"x","authorization_servers":["http://evil.example/"]}`))
	}))
	defer os.Close()
	_, port, _ := net.SplitHostPort(os.Listener.Addr().String())
	meta := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "http://evil.example:"+port+r.URL.Path)
		w.WriteHeader(http.StatusFound)
	}))
	defer meta.Close()
	base := transport.DefaultHTTPTransport().(*http.Transport).Clone()
	base.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if strings.HasPrefix(addr, "evil.example:") {
			addr = os.Listener.Addr().String()
		}
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	tr := NewTransport(Options{ServerURL: meta.URL + "/mcp", Base: base})
	var into map[string]any
	ok, status, err := tr.getJSON(context.Background(), "metadata", meta.URL+"/.well-known/oauth-protected-resource", &into)
	if ok || err != nil || !strings.Contains(status, "neither HTTPS nor on this machine") {
		t.Fatalf("ok %v, status %q, err %v: want the hop refused", ok, status, err)
	}
	if got := other.get(); len(got) != 0 {
		t.Fatalf("the plain-HTTP host received %d requests", len(got))
	}
}
