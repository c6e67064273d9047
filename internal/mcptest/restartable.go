package mcptest

import (
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// Restartable is an HTTP server on loopback that can die and come back on
// the same address, as a server process restarted by its author does. Its
// handler is served at /mcp.
type Restartable struct {
	t    testing.TB
	addr string
	// Handler serves /mcp from the next Start on: a new one stands for a
	// new process, which knows no session of the old.
	Handler http.Handler
	srv     *httptest.Server
}

// NewRestartable starts h on a free loopback port; the test's cleanup
// stops it.
func NewRestartable(t testing.TB, h http.Handler) *Restartable {
	r := &Restartable{t: t, addr: "127.0.0.1:0", Handler: h}
	r.Start()
	r.addr = r.srv.Listener.Addr().String()
	t.Cleanup(r.Stop)
	return r
}

// URL is the server's MCP endpoint.
func (r *Restartable) URL() string { return "http://" + r.addr + "/mcp" }

// Start serves Handler again on the same address.
func (r *Restartable) Start() {
	var l net.Listener
	var err error
	for range 50 {
		if l, err = net.Listen("tcp", r.addr); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond) // the old socket may linger a moment
	}
	if err != nil {
		r.t.Fatalf("listening again on %s: %v", r.addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", r.Handler)
	r.srv = &httptest.Server{Listener: l, Config: &http.Server{Handler: mux}}
	r.srv.Start()
}

// Stop kills the server as a crash would: every connection is cut.
func (r *Restartable) Stop() {
	if r.srv == nil {
		return
	}
	r.srv.CloseClientConnections()
	r.srv.Close()
	r.srv = nil
}
