package session_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/demoserver"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// healthLog keeps the health events a client reported.
type healthLog struct {
	mu      sync.Mutex
	events  []session.HealthEvent
	changed chan struct{}
}

func newHealthLog() *healthLog { return &healthLog{changed: make(chan struct{}, 1)} }

func (l *healthLog) record(e session.HealthEvent) {
	l.mu.Lock()
	l.events = append(l.events, e)
	l.mu.Unlock()
	select {
	case l.changed <- struct{}{}:
	default:
	}
}

// waitFor waits, with a generous deadline, for an event after the first
// from that matches, and returns its index.
func (l *healthLog) waitFor(t *testing.T, from int, what string, match func(session.HealthEvent) bool) int {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		l.mu.Lock()
		for i := from; i < len(l.events); i++ {
			if match(l.events[i]) {
				l.mu.Unlock()
				return i
			}
		}
		l.mu.Unlock()
		select {
		case <-l.changed:
		case <-deadline:
			t.Fatalf("no health event %s; saw %s", what, l)
		}
	}
}

func (l *healthLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	for _, e := range l.events {
		fmt.Fprintf(&b, "[%s err=%v note=%q] ", e.Health, e.Err, e.Note)
	}
	return b.String()
}

func (l *healthLog) healths(from int) []session.Health {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []session.Health
	for _, e := range l.events[from:] {
		out = append(out, e.Health)
	}
	return out
}

func is(h session.Health) func(session.HealthEvent) bool {
	return func(e session.HealthEvent) bool { return e.Health == h }
}

// legacyDemoURL serves the legacy demo server at /mcp, with answer in
// front of it: a request answer answers (it returns true) goes no further.
// It returns the endpoint's URL.
func legacyDemoURL(t *testing.T, answer func(w http.ResponseWriter, r *http.Request) bool) string {
	sdk := demoserver.HTTPHandler(demoserver.Options{Era: demoserver.EraLegacy})
	mux := http.NewServeMux()
	mux.Handle("/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !answer(w, r) {
			sdk.ServeHTTP(w, r)
		}
	}))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// jsonError answers status with the JSON-RPC error body.
func jsonError(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprint(w, body)
}

func healthPeer(t *testing.T, url string, log *healthLog, opts session.Options) *peer {
	t.Helper()
	opts.OnHealth = log.record
	return mustPeer(t)(httpPeer(t, url, transport.ModeAuto, peerConfig{opts: opts, noSchema: true}))
}

func sessionID(p *peer) string { return p.c.Conn().(*transport.AutoHTTP).SessionID() }

// echo calls the demo server's echo tool.
func echo(t *testing.T, p *peer) {
	t.Helper()
	r, err := p.c.CallTool(ctxT(t), "echo", json.RawMessage(`{"text":"still there"}`), nil)
	if err != nil || !strings.Contains(textOf(r), "still there") {
		t.Fatalf("echo: %v %+v", err, r)
	}
}

// A server that dies mid-session is noticed through the GET stream that
// cannot be reopened (HealthUnreachable, with the error), and the same
// server back (it still knows the session) is HealthUp again.
func TestHealthUnreachableThenUp(t *testing.T) {
	t.Parallel()
	srv := mcptest.NewRestartable(t, (demoserver.HTTPHandler(demoserver.Options{Era: demoserver.EraLegacy})))
	log := newHealthLog()
	p := healthPeer(t, srv.URL(), log, session.Options{Era: session.EraLegacy})
	if h, err := p.c.Health(); h != session.HealthUp || err != nil {
		t.Fatalf("Health() = %v, %v at the start", h, err)
	}
	sid := sessionID(p)
	srv.Stop()
	i := log.waitFor(t, 0, "unreachable", is(session.HealthUnreachable))
	if e := log.events[i]; e.Err == nil || !transport.IsUnreachable(e.Err) {
		t.Errorf("the unreachable event carries %v, want the error that says so", e.Err)
	}
	if h, err := p.c.Health(); h != session.HealthUnreachable || err == nil {
		t.Errorf("Health() = %v, %v while the server is down", h, err)
	}
	srv.Start()
	log.waitFor(t, i, "up again", is(session.HealthUp))
	echo(t, p)
	if got := sessionID(p); got != sid {
		t.Errorf("session %s became %s: the server still knew it", sid, got)
	}
	if n := len(log.healths(0)); n != 2 {
		t.Errorf("health events %s, want unreachable, up", log)
	}
}

// A server back without our session (it answers 404) is a renewed session:
// HealthRenewing, then HealthUp with a note that names both sessions.
func TestHealthRenewedSession(t *testing.T) {
	t.Parallel()
	srv := mcptest.NewRestartable(t, (demoserver.HTTPHandler(demoserver.Options{Era: demoserver.EraLegacy})))
	log := newHealthLog()
	p := healthPeer(t, srv.URL(), log, session.Options{Era: session.EraLegacy})
	old := sessionID(p)
	srv.Stop()
	log.waitFor(t, 0, "unreachable", is(session.HealthUnreachable))
	srv.Handler = (demoserver.HTTPHandler(demoserver.Options{Era: demoserver.EraLegacy})) // a new process
	srv.Start()
	r := log.waitFor(t, 0, "renewing", is(session.HealthRenewing))
	u := log.waitFor(t, r, "up", is(session.HealthUp))
	echo(t, p)
	now := sessionID(p)
	if now == "" || now == old {
		t.Fatalf("session %q after the renewal (was %q)", now, old)
	}
	if e := log.events[r]; !errors.Is(e.Err, transport.ErrSessionExpired) {
		t.Errorf("renewing because of %v, want ErrSessionExpired", e.Err)
	}
	if note := log.events[u].Note; !strings.Contains(note, old) || !strings.Contains(note, now) {
		t.Errorf("note %q does not name the old session %s and the new %s", note, old, now)
	}
	if ws := statusWarnings(p); len(ws) != 0 {
		t.Errorf("session-status warnings for a 404: %+v", ws)
	}
}

// A server that answers 400 "No valid session ID provided" (as
// server-everything does) to a request with our session id is taken for
// one that forgot the session, with one warning naming the deviation.
func TestHealthSession400(t *testing.T) {
	t.Parallel()
	var forgotten atomic.Value // the session id the server no longer knows
	forgotten.Store("")
	url := legacyDemoURL(t, func(w http.ResponseWriter, r *http.Request) bool {
		if sid := r.Header.Get(transport.HeaderSessionID); sid != "" && sid == forgotten.Load().(string) {
			jsonError(w, http.StatusBadRequest, `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":null}`)
			return true
		}
		return false
	})
	log := newHealthLog()
	p := healthPeer(t, url, log, session.Options{Era: session.EraLegacy})
	old := sessionID(p)
	forgotten.Store(old)
	echo(t, p)
	now := sessionID(p)
	if now == "" || now == old {
		t.Fatalf("session %q after the 400 (was %q)", now, old)
	}
	if got := log.healths(0); len(got) != 2 || got[0] != session.HealthRenewing || got[1] != session.HealthUp {
		t.Errorf("health events %s, want renewing, up", log)
	}
	ws := statusWarnings(p)
	if len(ws) != 1 {
		t.Fatalf("%d session-status warnings, want 1: %+v", len(ws), ws)
	}
	for _, want := range []string{"400", "404", "2025-11-25", "session management", old} {
		if !strings.Contains(ws[0].Message, want) {
			t.Errorf("warning %q does not say %q", ws[0].Message, want)
		}
	}
}

// statusWarnings returns the warnings about a 400 taken for a 404.
func statusWarnings(p *peer) []session.Warning {
	p.rec.mu.Lock()
	defer p.rec.mu.Unlock()
	var ws []session.Warning
	for _, w := range p.rec.warnings {
		if w.Kind == "session-status" {
			ws = append(ws, w)
		}
	}
	return ws
}

// With no GET stream (the server refuses it), KeepAlive pings notice a dead
// server while idle, and its return.
func TestKeepAliveNoticesDeadServer(t *testing.T) {
	t.Parallel()
	sdk := demoserver.HTTPHandler(demoserver.Options{Era: demoserver.EraLegacy})
	srv := mcptest.NewRestartable(t, (http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			http.Error(w, "no GET stream here", http.StatusMethodNotAllowed)
			return
		}
		sdk.ServeHTTP(w, r)
	})))
	log := newHealthLog()
	p := healthPeer(t, srv.URL(), log, session.Options{Era: session.EraLegacy, KeepAlive: 100 * time.Millisecond})
	p.rec.waitFor(t, "a keepalive ping", func() bool {
		for _, e := range p.rec.events {
			if e.Kind == transport.KindFrame && e.Dir == transport.Outgoing && strings.Contains(string(e.Data), `"method":"ping"`) {
				return true
			}
		}
		return false
	})
	if got := log.healths(0); len(got) != 0 {
		t.Fatalf("health events %s while the server answers pings", log)
	}
	srv.Stop()
	i := log.waitFor(t, 0, "unreachable", is(session.HealthUnreachable))
	if log.events[i].Err == nil {
		t.Error("the unreachable event carries no error")
	}
	srv.Start()
	log.waitFor(t, i, "up again", is(session.HealthUp))
	echo(t, p)
}

// server-everything (npm), killed and started again on the same port: the
// next call succeeds in a new session; on the way the client reported the
// server unreachable (a call was made while it was down), renewing, up.
func TestHealthEverythingRestarted(t *testing.T) {
	t.Parallel()
	url, stop := mcptest.StartEverythingHTTP(t, "0")
	port := url[strings.LastIndex(url, ":")+1 : strings.LastIndex(url, "/")]
	log := newHealthLog()
	p := healthPeer(t, url, log, session.Options{})
	old := sessionID(p)
	stop()
	_, err := p.c.CallTool(ctxT(t), "echo", json.RawMessage(`{"message":"anyone?"}`), nil)
	if err == nil || !transport.IsUnreachable(err) {
		t.Errorf("a call to the dead server: %v, want it unreachable", err)
	}
	log.waitFor(t, 0, "unreachable", is(session.HealthUnreachable))
	url2, _ := mcptest.StartEverythingHTTP(t, port)
	if url2 != url {
		t.Fatalf("restarted on %s, want %s", url2, url)
	}
	r, err := p.c.CallTool(ctxT(t), "echo", json.RawMessage(`{"message":"back"}`), nil)
	if err != nil || !strings.Contains(textOf(r), "back") {
		t.Fatalf("echo after the restart: %v %+v", err, r)
	}
	now := sessionID(p)
	if now == "" || now == old {
		t.Errorf("session %q after the restart (was %q)", now, old)
	}
	rn := log.waitFor(t, 0, "renewing", is(session.HealthRenewing))
	u := log.waitFor(t, rn, "up", is(session.HealthUp))
	if note := log.events[u].Note; !strings.Contains(note, old) || !strings.Contains(note, now) {
		t.Errorf("note %q does not name %s and %s", note, old, now)
	}
	if ws := statusWarnings(p); len(ws) != 1 || !strings.Contains(ws[0].Message, "404") {
		t.Errorf("session-status warnings %+v, want one that names the 404 of the spec", ws)
	}
	t.Logf("health events: %s", log)
}

// A new session that cannot be started is HealthSessionLost; the next
// request tries again, and its success is HealthUp.
func TestHealthSessionLostThenRenewed(t *testing.T) {
	t.Parallel()
	var forgotten atomic.Value
	forgotten.Store("")
	var refuseInit atomic.Bool
	url := legacyDemoURL(t, func(w http.ResponseWriter, r *http.Request) bool {
		sid := r.Header.Get(transport.HeaderSessionID)
		switch {
		case sid != "" && sid == forgotten.Load().(string):
			http.Error(w, "no such session", http.StatusNotFound)
			return true
		case sid == "" && r.Method == http.MethodPost && refuseInit.CompareAndSwap(true, false):
			jsonError(w, http.StatusInternalServerError, `{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"out of sessions"}}`)
			return true
		}
		return false
	})
	log := newHealthLog()
	p := healthPeer(t, url, log, session.Options{Era: session.EraLegacy})
	old := sessionID(p)
	forgotten.Store(old)
	refuseInit.Store(true)
	if _, err := p.c.CallTool(ctxT(t), "echo", json.RawMessage(`{"text":"x"}`), nil); err == nil || !strings.Contains(err.Error(), "out of sessions") {
		t.Fatalf("a call whose new session was refused: %v", err)
	}
	if h, err := p.c.Health(); h != session.HealthSessionLost || err == nil {
		t.Fatalf("Health() = %v, %v after the refusal, want session lost with its error", h, err)
	}
	echo(t, p)
	got := log.healths(0)
	want := []session.Health{session.HealthRenewing, session.HealthSessionLost, session.HealthRenewing, session.HealthUp}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("health events %s, want %v", log, want)
	}
	if now := sessionID(p); now == "" || now == old {
		t.Errorf("session %q after the second renewal (was %q)", now, old)
	}
	if note := log.events[len(log.events)-1].Note; !strings.Contains(note, old) {
		t.Errorf("note %q does not name the lost session %s", note, old)
	}
}

// A call whose server forgets the session while it runs is not sent again
// to the new session: the old server had it and may have run it. It fails,
// saying so, and the next call gets the new session.
func TestCallInFlightIsNotSentAgain(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	reached := make(chan struct{}) // closed when the first slow call arrives
	counting := func() http.Handler {
		sdk := demoserver.HTTPHandler(demoserver.Options{Era: demoserver.EraLegacy})
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost {
				body, _ := io.ReadAll(r.Body)
				if strings.Contains(string(body), `"tools/call"`) && strings.Contains(string(body), `"slow"`) && calls.Add(1) == 1 {
					close(reached)
				}
				r.Body = io.NopCloser(bytes.NewReader(body))
			}
			sdk.ServeHTTP(w, r)
		})
	}
	srv := mcptest.NewRestartable(t, counting())
	log := newHealthLog()
	p := healthPeer(t, srv.URL(), log, session.Options{Era: session.EraLegacy})
	done := make(chan error, 1)
	go func() {
		_, err := p.c.CallTool(ctxT(t), "slow", json.RawMessage(`{"ms":60000}`), nil)
		done <- err
	}()
	select {
	case <-reached:
	case <-time.After(10 * time.Second):
		t.Fatal("the slow call never reached the server")
	}
	srv.Stop()
	srv.Handler = counting() // a new process, which knows no session
	srv.Start()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not sent again") {
			t.Fatalf("the call in flight: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the call in flight never ended")
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("the slow call reached the servers %d times, want once", n)
	}
	echo(t, p)
}
