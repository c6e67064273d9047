package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/demoserver"
	"github.com/mcpi-dev/mcpi/internal/intercept"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
)

// httpProxied is a host, the HTTP proxy with the faults of yaml, and an
// upstream; seen are the bodies the upstream got.
type httpProxied struct {
	host *mcptest.HTTPHost
	tap  *taps
	mu   sync.Mutex
	seen []string
}

func (p *httpProxied) upstreamSaw() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.seen...)
}

func (p *httpProxied) changes(t *testing.T) []intercept.Change {
	return (&proxied{tap: p.tap}).changes(t)
}

// startHTTP runs the proxy in front of upstream (the demo server when
// nil) with the faults of yaml ("" for none).
func startHTTP(t *testing.T, upstream http.Handler, faults string, seed uint64) *httpProxied {
	return startHTTPGate(t, upstream, faults, seed, nil)
}

// startHTTPGate is startHTTP with a gate.
func startHTTPGate(t *testing.T, upstream http.Handler, faults string, seed uint64, gate *intercept.Gate) *httpProxied {
	t.Helper()
	p := &httpProxied{tap: &taps{}}
	if upstream == nil {
		upstream = demoserver.HTTPHandler(demoserver.Options{Era: demoserver.EraLegacy})
	}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			b, _ := io.ReadAll(r.Body)
			p.mu.Lock()
			p.seen = append(p.seen, string(b))
			p.mu.Unlock()
			r.Body = io.NopCloser(bytes.NewReader(b))
		}
		upstream.ServeHTTP(w, r)
	}))
	t.Cleanup(up.Close)
	u, _ := url.Parse(up.URL)
	var eng *intercept.Engine
	if faults != "" {
		fs, err := intercept.ParseFaults([]byte(faults))
		if err != nil {
			t.Fatal(err)
		}
		eng = intercept.NewEngine(intercept.Options{Faults: fs, Seed: seed, Tap: p.tap})
	}
	front := httptest.NewServer(HandlerWith(u, HTTPOptions{Tap: p.tap, Faults: eng, Gate: gate}))
	t.Cleanup(front.Close)
	p.host = &mcptest.HTTPHost{URL: front.URL + "/"}
	return p
}

// jsonUpstream answers every request with a JSON answer of its id.
var jsonUpstream = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	json.NewDecoder(r.Body).Decode(&m)
	if m.ID == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{}}`)
})

const mcptestDemo = "demo"

const ping = `{"jsonrpc":"2.0","id":2,"method":"ping"}`

func TestHTTPFaults(t *testing.T) {
	cases := []struct {
		name, faults string
		upstream     http.Handler
		check        func(t *testing.T, p *httpProxied, a mcptest.HTTPAnswer)
		action       string
	}{
		{"status", "faults:\n  - match: method:ping\n    status: {code: 429, retryAfter: 3}\n", nil, func(t *testing.T, p *httpProxied, a mcptest.HTTPAnswer) {
			if a.Status != 429 || a.Header.Get("Retry-After") != "3" {
				t.Errorf("answer %d %v", a.Status, a.Header)
			}
			if saw := p.upstreamSaw(); strings.Contains(strings.Join(saw, ""), `"ping"`) {
				t.Errorf("the upstream saw the ping: %v", saw)
			}
		}, "status"},
		{"error", "faults:\n  - match: method:ping\n    error: {code: -32001, message: busy}\n", nil, func(t *testing.T, p *httpProxied, a mcptest.HTTPAnswer) {
			if a.Status != 200 || len(a.Frames) != 1 || string(a.Frames[0]) != `{"jsonrpc":"2.0","id":2,"error":{"code":-32001,"message":"busy"}}` {
				t.Errorf("answer %d %q", a.Status, a.Frames)
			}
		}, "error"},
		{"drop request", "faults:\n  - match: method:ping\n    drop: true\n", nil, func(t *testing.T, p *httpProxied, a mcptest.HTTPAnswer) {
			if a.Status != http.StatusAccepted || len(a.Frames) != 0 {
				t.Errorf("answer %d %q", a.Status, a.Frames)
			}
		}, "drop"},
		{"corrupt request", "faults:\n  - match: method:ping\n    corrupt: json\n", nil, func(t *testing.T, p *httpProxied, a mcptest.HTTPAnswer) {
			saw := p.upstreamSaw()
			if last := saw[len(saw)-1]; json.Valid([]byte(last)) {
				t.Errorf("the upstream got valid JSON %s", last)
			}
		}, "corrupt"},
		{"close request", "faults:\n  - match: method:ping\n    close: true\n", nil, func(t *testing.T, p *httpProxied, a mcptest.HTTPAnswer) {
			if a.Err == nil {
				t.Errorf("answer %d %q, want a broken connection", a.Status, a.Frames)
			}
		}, "close"},
		{"delay request", "faults:\n  - match: method:ping dir:out\n    delay: 5ms\n", nil, func(t *testing.T, p *httpProxied, a mcptest.HTTPAnswer) {
			if len(a.Frames) != 1 || !bytes.Contains(a.Frames[0], []byte(`"id":2`)) {
				t.Errorf("answer %d %q", a.Status, a.Frames)
			}
		}, "delay"},
		{"drop SSE event", "faults:\n  - match: dir:in id:2\n    drop: true\n", nil, func(t *testing.T, p *httpProxied, a mcptest.HTTPAnswer) {
			if len(a.Frames) != 0 {
				t.Errorf("frames %q", a.Frames)
			}
		}, "drop"},
		{"duplicate SSE event", "faults:\n  - match: dir:in id:2\n    duplicate: 2\n", nil, func(t *testing.T, p *httpProxied, a mcptest.HTTPAnswer) {
			if len(a.Frames) != 2 || !bytes.Equal(a.Frames[0], a.Frames[1]) {
				t.Errorf("frames %q", a.Frames)
			}
		}, "duplicate"},
		{"corrupt SSE event", "faults:\n  - match: dir:in id:2\n    corrupt: id\n", nil, func(t *testing.T, p *httpProxied, a mcptest.HTTPAnswer) {
			if len(a.Frames) != 1 || !bytes.Contains(a.Frames[0], []byte(`"id":1000002`)) {
				t.Errorf("frames %q", a.Frames)
			}
		}, "corrupt"},
		{"slow SSE event", "faults:\n  - match: dir:in id:2\n    slow: 100000\n", nil, func(t *testing.T, p *httpProxied, a mcptest.HTTPAnswer) {
			if len(a.Frames) != 1 || string(a.Frames[0]) != `{"jsonrpc":"2.0","id":2,"result":{}}` {
				t.Errorf("frames %q", a.Frames)
			}
		}, "slow"},
		{"cut SSE event", "faults:\n  - match: dir:in id:2\n    cut: true\n", nil, func(t *testing.T, p *httpProxied, a mcptest.HTTPAnswer) {
			if a.Err == nil || len(a.Frames) != 0 {
				t.Errorf("answer %q %v, want a stream broken mid-event", a.Frames, a.Err)
			}
		}, "cut"},
		{"close SSE stream", "faults:\n  - match: dir:in id:2\n    close: true\n", nil, func(t *testing.T, p *httpProxied, a mcptest.HTTPAnswer) {
			if a.Err == nil || len(a.Frames) != 0 {
				t.Errorf("answer %q %v, want a broken stream", a.Frames, a.Err)
			}
		}, "close"},
		{"drop JSON answer", "faults:\n  - match: dir:in id:2\n    drop: true\n", jsonUpstream, func(t *testing.T, p *httpProxied, a mcptest.HTTPAnswer) {
			if a.Status != http.StatusAccepted || len(a.Frames) != 0 {
				t.Errorf("answer %d %q", a.Status, a.Frames)
			}
		}, "drop"},
		{"corrupt JSON answer", "faults:\n  - match: dir:in id:2\n    corrupt: utf8\n", jsonUpstream, func(t *testing.T, p *httpProxied, a mcptest.HTTPAnswer) {
			if len(a.Frames) != 1 || string(a.Frames[0]) != "{\"\xff\xfejsonrpc\":\"2.0\",\"id\":2,\"result\":{}}" {
				t.Errorf("frames %q", a.Frames)
			}
		}, "corrupt"},
		{"cut JSON answer", "faults:\n  - match: dir:in id:2\n    cut: true\n", jsonUpstream, func(t *testing.T, p *httpProxied, a mcptest.HTTPAnswer) {
			if a.Err == nil {
				t.Errorf("answer %q, want a broken body", a.Frames)
			}
		}, "cut"},
		{"slow JSON answer", "faults:\n  - match: dir:in id:2\n    slow: 100000\n", jsonUpstream, func(t *testing.T, p *httpProxied, a mcptest.HTTPAnswer) {
			if len(a.Frames) != 1 || string(a.Frames[0]) != `{"jsonrpc":"2.0","id":2,"result":{}}` {
				t.Errorf("frames %q", a.Frames)
			}
		}, "slow"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := startHTTP(t, c.upstream, c.faults, 1)
			if c.upstream == nil {
				if a := p.host.Initialize(t); a.Status != 200 {
					t.Fatalf("initialize: %d %q", a.Status, a.Frames)
				}
			}
			c.check(t, p, p.host.Post(t, ping))
			ch := p.changes(t)
			if len(ch) != 1 || ch[0].Action != c.action {
				t.Errorf("changes %+v, want one %s", ch, c.action)
			}
		})
	}
}

// With faults that change nothing, the host reads what it read without
// the engine: the SSE events as the upstream wrote them.
func TestHTTPUnchangedByIdleFaults(t *testing.T) {
	var got [][]byte
	for _, faults := range []string{"", "faults:\n  - match: method:never\n    drop: true\n"} {
		p := startHTTP(t, nil, faults, 1)
		p.host.Initialize(t)
		a := p.host.Post(t, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
		if len(a.Frames) != 1 {
			t.Fatalf("frames %q", a.Frames)
		}
		got = append(got, a.Frames[0])
	}
	if !bytes.Equal(got[0], got[1]) {
		t.Errorf("with idle faults %s, without %s", got[1], got[0])
	}
}

// Over SSE, a reorder lets a later event of the stream overtake the one
// it holds back; the stream keeps every event.
func TestHTTPReorderSSE(t *testing.T) {
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"long_running","arguments":{"steps":3,"interval_ms":1},"_meta":{"progressToken":"p"}}}`
	frames := func(faults string) []string {
		p := startHTTP(t, nil, faults, 1)
		p.host.Initialize(t)
		a := p.host.Post(t, call)
		var out []string
		for _, f := range a.Frames {
			var m struct {
				Method string `json:"method"`
				Params struct {
					Progress float64 `json:"progress"`
				} `json:"params"`
			}
			json.Unmarshal(f, &m)
			out = append(out, fmt.Sprintf("%s%v", m.Method, m.Params.Progress))
		}
		return out
	}
	plain := frames("")
	reordered := frames("faults:\n  - match: method:notifications/progress\n    reorder: 1\n    count: 1\n")
	if len(plain) < 3 || len(reordered) != len(plain) || reordered[0] != plain[1] || reordered[1] != plain[0] {
		t.Errorf("without faults %v, with the reorder %v", plain, reordered)
	}
}
