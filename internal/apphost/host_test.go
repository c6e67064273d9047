package apphost

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/apps"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// fakeServer is the MCP server behind the host: it records the calls it
// is given.
type fakeServer struct {
	mu    sync.Mutex
	calls []string
}

func (s *fakeServer) CallTool(_ context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	s.mu.Lock()
	s.calls = append(s.calls, name+" "+string(args))
	s.mu.Unlock()
	if name == "fails" {
		return nil, &session.RPCError{Method: "tools/call", RPCError: &mcp.RPCError{Code: -32602, Message: "bad series"}}
	}
	return json.RawMessage(`{"content":[{"type":"text","text":"done ` + name + `"}]}`), nil
}

func (s *fakeServer) ReadResource(_ context.Context, uri string) (json.RawMessage, error) {
	return json.RawMessage(`{"contents":[{"uri":"` + uri + `","text":"x"}]}`), nil
}

func (s *fakeServer) called() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.calls...)
}

func boolp(b bool) *bool { return &b }

var testTools = []mcp.Tool{
	{Name: "show-chart", Meta: json.RawMessage(`{"ui":{"resourceUri":"ui://c/chart"}}`), Annotations: &mcp.ToolAnnotations{ReadOnlyHint: boolp(true)}},
	{Name: "refresh-chart", Meta: json.RawMessage(`{"ui":{"resourceUri":"ui://c/chart","visibility":["app"]}}`), Annotations: &mcp.ToolAnnotations{ReadOnlyHint: boolp(true)}},
	{Name: "delete-chart", Meta: json.RawMessage(`{"ui":{"visibility":["app"]}}`), Annotations: &mcp.ToolAnnotations{DestructiveHint: boolp(true)}},
	{Name: "model-note", Meta: json.RawMessage(`{"ui":{"visibility":["model"]}}`)},
	{Name: "fails", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: boolp(true)}},
	{Name: "odd-visibility", Meta: json.RawMessage(`{"ui":{"visibility":"app"}}`), Annotations: &mcp.ToolAnnotations{ReadOnlyHint: boolp(true)}},
}

// page is a test's stand-in for the host page: it speaks the page's
// channel (POST the App's messages, read the host's events) as the page's
// script does, without a browser.
type page struct {
	*mcptest.AppPage
}

func openPage(t *testing.T, h *Host) *page { return &page{mcptest.OpenAppPage(t, h.URL())} }

// send posts a message of the App.
func (p *page) send(msg string) { p.Post(msg) }

// next returns the next message the host sends to the App, or a command
// for the page itself.
func (p *page) next(string) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	json.Unmarshal([]byte(p.Wait("")), &m)
	if to := m["to"]; string(to) == `"app"` {
		var msg map[string]json.RawMessage
		json.Unmarshal(m["msg"], &msg)
		return msg
	}
	return m
}

func startHost(t *testing.T, o Options) (*Host, *Bridge, *fakeServer) {
	t.Helper()
	srv := &fakeServer{}
	if o.Server == nil {
		o.Server = srv
	}
	if o.Info == nil {
		o.Info = &apps.Info{Tool: "show-chart", ResourceURI: "ui://c/chart", HTML: "<!DOCTYPE html><html><head><title>x</title></head><body>chart</body></html>",
			CSP: &apps.CSP{ConnectDomains: []string{"https://api.example.com"}}, Permissions: []string{"clipboard-write"}}
	}
	o.Tool, o.Tools, o.Version = testTools[0], testTools, "test"
	if o.Args == nil {
		o.Args = json.RawMessage(`{"series":"a"}`)
	}
	b := New(o)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	h, err := Listen(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h, b, srv
}

// TestHostPage: the page frames the App by srcdoc in a sandbox without
// same origin, its CSP in the document and in the page's header; the
// endpoints refuse a foreign Host, a foreign Origin and the App's own
// (null).
func TestHostPage(t *testing.T) {
	h, _, _ := startHost(t, Options{})
	resp, err := http.Get(h.URL())
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	page := string(body)
	csp := resp.Header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "connect-src 'self' https://api.example.com 'self'") && !strings.Contains(csp, "connect-src 'self' https://api.example.com") {
		t.Errorf("page CSP %q", csp)
	}
	for _, want := range []string{`sandbox="allow-scripts allow-forms"`, `allow="clipboard-write"`, `srcdoc="&lt;!DOCTYPE html&gt;&lt;html&gt;&lt;head&gt;&lt;meta http-equiv=&#34;Content-Security-Policy&#34;`, "no-referrer"} {
		if !strings.Contains(page, want) && !strings.Contains(resp.Header.Get("Referrer-Policy"), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(page, "allow-same-origin") {
		t.Errorf("the App's frame has allow-same-origin")
	}
	for name, hd := range map[string]http.Header{
		"foreign origin": {"Origin": {"https://evil.example"}},
		"the App (null)": {"Origin": {"null"}},
		"other port":     {"Origin": {"http://127.0.0.1:1"}},
	} {
		req, _ := http.NewRequest("POST", h.URL()+"app", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		req.Header = hd
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s: %v %v", name, resp.Status, err)
		}
	}
	req, _ := http.NewRequest("GET", h.URL(), nil)
	req.Host = "evil.example"
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("foreign Host: %v %v", resp.Status, err)
	}
	if resp, err := http.Get(strings.Replace(h.URL(), h.token, "0123", 1)); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Errorf("wrong token: %v %v", resp.Status, err)
	}
}

// TestBridgeProtocol speaks the App's side of the protocol through the
// page's channel: initialize, the tool's input and result, the App's
// tools/call (app-visible only; a destructive one asked first), its
// resources/read, links (only http and https, asked first), the methods
// mcpi refuses, sizes, logs, teardown; every message is a tap event.
func TestBridgeProtocol(t *testing.T) {
	var tapped []transport.Event
	var tmu sync.Mutex
	var said []string
	var smu sync.Mutex
	answers := map[string]bool{"delete-chart": true, "https://example.com/docs": false}
	var opened []string
	h, b, srv := startHost(t, Options{
		Tap: transport.TapFunc(func(e transport.Event) { tmu.Lock(); tapped = append(tapped, e); tmu.Unlock() }),
		Say: func(l string) { smu.Lock(); said = append(said, l); smu.Unlock() },
		Confirm: func(_ context.Context, q string) bool {
			for k, v := range answers {
				if strings.Contains(q, k) {
					return v
				}
			}
			return false
		},
		Open: func(u string) error { opened = append(opened, u); return nil },
	})
	p := openPage(t, h)
	p.send(`{"jsonrpc":"2.0","id":1,"method":"ui/initialize","params":{"appCapabilities":{},"appInfo":{"name":"t","version":"1"},"protocolVersion":"2026-01-26"}}`)
	init := p.next("initialize result")
	var r struct {
		ProtocolVersion  string                     `json:"protocolVersion"`
		HostInfo         mcp.Implementation         `json:"hostInfo"`
		HostCapabilities map[string]json.RawMessage `json:"hostCapabilities"`
		HostContext      struct {
			ToolInfo struct {
				Tool mcp.Tool `json:"tool"`
			} `json:"toolInfo"`
			DisplayMode string `json:"displayMode"`
		} `json:"hostContext"`
	}
	if json.Unmarshal(init["result"], &r) != nil || r.ProtocolVersion != apps.Protocol || r.HostInfo.Name != "mcpi" || r.HostContext.ToolInfo.Tool.Name != "show-chart" ||
		r.HostContext.DisplayMode != "inline" || r.HostCapabilities["serverTools"] == nil || !strings.Contains(string(r.HostCapabilities["sandbox"]), "api.example.com") {
		t.Fatalf("initialize result %s", init["result"])
	}
	// Nothing reaches the App before it says it is initialized; then its
	// input, then its result.
	b.Result(json.RawMessage(`{"content":[{"type":"text","text":"chart"}],"structuredContent":{"points":[1]}}`), nil)
	p.send(`{"jsonrpc":"2.0","method":"ui/notifications/initialized","params":{}}`)
	if m := p.next("tool input"); string(m["method"]) != `"ui/notifications/tool-input"` || !strings.Contains(string(m["params"]), `"series":"a"`) {
		t.Errorf("tool input %v", m)
	}
	if m := p.next("tool result"); string(m["method"]) != `"ui/notifications/tool-result"` || !strings.Contains(string(m["params"]), `"points":[1]`) {
		t.Errorf("tool result %v", m)
	}
	cases := []struct {
		msg, want string
	}{
		{`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"refresh-chart","arguments":{"series":"b"}}}`, `"result":{"content":[{"type":"text","text":"done refresh-chart"}]}`},
		{`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"model-note"}}`, `not visible to Apps`},
		{`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"nosuch"}}`, `no tool nosuch`},
		{`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"delete-chart","arguments":{}}}`, `done delete-chart`},
		{`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"fails"}}`, `"code":-32602,"message":"bad series"`},
		{`{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":"ui://c/other"}}`, `"uri":"ui://c/other"`},
		{`{"jsonrpc":"2.0","id":8,"method":"ui/open-link","params":{"url":"javascript:alert(1)"}}`, `Invalid URL`},
		{`{"jsonrpc":"2.0","id":9,"method":"ui/open-link","params":{"url":"https://example.com/docs"}}`, `denied by user`},
		{`{"jsonrpc":"2.0","id":10,"method":"ui/message","params":{"role":"user","content":{"type":"text","text":"hi"}}}`, `mcpi has no conversation`},
		{`{"jsonrpc":"2.0","id":11,"method":"ui/update-model-context","params":{"content":[{"type":"text","text":"ctx"}]}}`, `"result":{}`},
		{`{"jsonrpc":"2.0","id":12,"method":"ui/request-display-mode","params":{"mode":"fullscreen"}}`, `"mode":"inline"`},
		{`{"jsonrpc":"2.0","id":13,"method":"sampling/createMessage","params":{}}`, `-32601`},
		{`{"jsonrpc":"2.0","id":14,"method":"ping"}`, `"result":{}`},
	}
	for _, c := range cases {
		p.send(c.msg)
		m := p.next(c.msg)
		raw, _ := json.Marshal(m)
		if !strings.Contains(string(raw), c.want) {
			t.Errorf("%s:\n got %s\nwant %s", c.msg, raw, c.want)
		}
	}
	if got := strings.Join(srv.called(), "|"); got != `refresh-chart {"series":"b"}|delete-chart {}|fails ` {
		t.Errorf("the server was called with %q", got)
	}
	if len(opened) != 0 {
		t.Errorf("opened %v", opened)
	}
	// A size the App asks for reaches the page, clamped.
	p.send(`{"jsonrpc":"2.0","method":"ui/notifications/size-changed","params":{"width":400,"height":1e9}}`)
	if m := p.next("resize"); !strings.Contains(string(m["resize"]), `"height":10000`) {
		t.Errorf("resize %v", m)
	}
	// A log with escape sequences is said on one sanitised line.
	p.send(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"\u001b[31mred\u001b]0;title\u0007"}}`)
	// Teardown is a request the App answers.
	go func() {
		m := p.next("teardown")
		if string(m["method"]) != `"ui/resource-teardown"` {
			t.Errorf("teardown %v", m)
		}
		p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{}}`, m["id"]))
	}()
	// Its clock is an hour: a teardown that waits it out though the App
	// answered is caught by the bounded wait, which fails on its own.
	tornDown := make(chan struct{})
	go func() {
		b.Teardown("test over", time.Hour)
		close(tornDown)
	}()
	select {
	case <-tornDown:
	case <-time.After(20 * time.Second):
		t.Fatal("the teardown waited for its clock though the App answered")
	}
	smu.Lock()
	for _, l := range said {
		if strings.ContainsAny(l, "\x1b\x07") {
			t.Errorf("said raw: %q", l)
		}
	}
	smu.Unlock()
	tmu.Lock()
	defer tmu.Unlock()
	in, out := 0, 0
	for _, e := range tapped {
		if e.Kind != transport.KindApp {
			t.Errorf("tap event of kind %v", e.Kind)
		}
		if e.Dir == transport.Incoming {
			in++
		} else {
			out++
		}
	}
	if in < len(cases)+4 || out < len(cases)+3 {
		t.Errorf("tapped %d from the App, %d to it", in, out)
	}
}

// TestHostileApp: a flood of requests the page never takes the answers
// of stops the host at its budget; an App's request past MaxInFlight is
// refused; a message past MaxMessage is refused; with nobody to ask, a
// destructive call and a link are refused.
func TestHostileApp(t *testing.T) {
	t.Run("flood", func(t *testing.T) {
		h, b, _ := startHost(t, Options{})
		client := &http.Client{Timeout: 5 * time.Second}
		for i := range QueueCount + 10 {
			resp, err := client.Post(h.URL()+"app", "application/json", strings.NewReader(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i)))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		select {
		case <-b.Stopped():
			if b.Err() == nil || !strings.Contains(b.Err().Error(), "does not take") {
				t.Errorf("stopped with %v", b.Err())
			}
		case <-time.After(5 * time.Second):
			t.Fatal("a flood nobody reads did not stop the host")
		}
	})
	t.Run("too big", func(t *testing.T) {
		h, _, _ := startHost(t, Options{})
		p := openPage(t, h)
		big := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("a", MaxMessage) + `"}}`
		p.send(big)
		if m := p.next("refusal"); string(m["id"]) != "null" || !strings.Contains(string(m["error"]), "at most") {
			t.Errorf("a message too big: %v", m)
		}
		p.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
		if m := p.next("ping"); string(m["id"]) != "2" {
			t.Errorf("after a message too big: %v", m)
		}
		p.send(`{not json`)
		if m := p.next("parse error"); !strings.Contains(string(m["error"]), "-32700") {
			t.Errorf("not JSON: %v", m)
		}
		p.send(`{"jsonrpc":"1.0","id":3,"method":"ping"}`)
		if m := p.next("invalid request"); string(m["id"]) != "3" || !strings.Contains(string(m["error"]), "-32600") {
			t.Errorf("jsonrpc 1.0: %v", m)
		}
		// One page hosts the App: a second event stream is refused.
		if resp, err := http.Get(h.URL() + "events"); err != nil || resp.StatusCode != http.StatusConflict {
			t.Errorf("a second page: %v %v", resp.Status, err)
		}
		// A request the browser says came from another site is refused.
		req, _ := http.NewRequest("GET", h.URL()+"events", nil)
		req.Header.Set("Sec-Fetch-Site", "cross-site")
		if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusForbidden {
			t.Errorf("cross-site: %v %v", resp.Status, err)
		}
	})
	t.Run("nobody to ask", func(t *testing.T) {
		h, _, srv := startHost(t, Options{Open: func(string) error { t.Error("opened"); return nil }})
		p := openPage(t, h)
		p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"delete-chart"}}`)
		if m := p.next("delete"); !strings.Contains(string(m["error"]), "no terminal") {
			t.Errorf("delete without a terminal: %v", m)
		}
		p.send(`{"jsonrpc":"2.0","id":2,"method":"ui/open-link","params":{"url":"https://example.com"}}`)
		if m := p.next("link"); m["error"] == nil {
			t.Errorf("link without a terminal: %v", m)
		}
		// A visibility that does not read grants nothing.
		p.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"odd-visibility"}}`)
		if m := p.next("odd visibility"); !strings.Contains(string(m["error"]), "not visible to Apps") {
			t.Errorf("a tool whose visibility is a string: %v", m)
		}
		if len(srv.called()) != 0 {
			t.Errorf("called %v", srv.called())
		}
	})
	t.Run("in flight", func(t *testing.T) {
		release := make(chan struct{})
		slow := &slowServer{release: release}
		h, _, _ := startHost(t, Options{Server: slow})
		defer close(release)
		p := openPage(t, h)
		for i := range MaxInFlight + 1 {
			p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"resources/read","params":{"uri":"ui://x"}}`, i))
		}
		if m := p.next("refusal"); !strings.Contains(string(m["error"]), "at most 8 at once") {
			t.Errorf("past MaxInFlight: %v", m)
		}
	})
}

type slowServer struct{ release chan struct{} }

func (s *slowServer) CallTool(ctx context.Context, _ string, _ json.RawMessage) (json.RawMessage, error) {
	<-s.release
	return nil, ctx.Err()
}

func (s *slowServer) ReadResource(ctx context.Context, uri string) (json.RawMessage, error) {
	select {
	case <-s.release:
	case <-ctx.Done():
	}
	return nil, context.Canceled
}
