package otlp

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcpi-dev/mcpi/internal/mcptest"
	"github.com/mcpi-dev/mcpi/internal/record"
	"github.com/mcpi-dev/mcpi/internal/tracectx"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// session feeds a live export the events of a short session through a
// trace tap, as the CLI does.
func session(t *testing.T, l *Live, h record.Header, frames []frameAt) {
	t.Helper()
	w := record.NewTap(h, record.Options{SecretValues: []string{"hunter2-is-secret"}, Events: l.Event})
	for _, f := range frames {
		dir := transport.Incoming
		if f.out {
			dir = transport.Outgoing
		}
		w.Observe(transport.Event{Kind: transport.KindFrame, Dir: dir, Time: t0.Add(f.at), Data: []byte(f.msg)})
	}
	w.Close()
}

func startLive(t *testing.T, h record.Header, endpoint string, timeout time.Duration) *Live {
	t.Helper()
	l, err := StartLive(h, LiveOptions{Endpoint: endpoint, Client: transport.NewHTTPClient(nil, transport.EgressPolicy{}), Version: "test", Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestLiveExport: the spans of a session reach an OTLP/HTTP receiver
// through the SDK with the ids the conventions and the propagated context
// call for (the session's span is the traceparent's, each request's the
// one its _meta gave the server), their statuses, redacted like the
// trace; and the mcp.client.operation.duration histogram counts mcpi's
// requests by method and tool.
func TestLiveExport(t *testing.T) {
	rcv := mcptest.NewOTLPReceiver(t)
	tc := tracectx.New()
	h := record.Header{Mcpi: "test", Created: t0, Target: record.Target{Transport: record.TransportStdio, Command: []string{"server"}},
		TraceParent: tc.TraceParent(), TraceRoot: true}
	call := tc.Child()
	l := startLive(t, h, rcv.URL, 2*time.Second)
	session(t, l, h, []frameAt{
		{0, true, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"mcpi","version":"1"}}}`},
		{10 * time.Millisecond, false, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`},
		{20 * time.Millisecond, true, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"login","arguments":{"password":"hunter2-is-secret"},"_meta":{"traceparent":"` + call.TraceParent() + `"}}}`},
		{25 * time.Millisecond, false, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":2,"progress":1}}`},
		{520 * time.Millisecond, false, `{"jsonrpc":"2.0","id":2,"result":{"content":[],"isError":true}}`},
		{530 * time.Millisecond, true, `{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"file:///x"}}`},
		{540 * time.Millisecond, false, `{"jsonrpc":"2.0","id":3,"error":{"code":-32002,"message":"not found"}}`},
		{550 * time.Millisecond, true, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"never"}}`},
	})
	st := l.Close()
	if st.Err != nil || st.Failed != 0 || st.Dropped != 0 || st.Exported != 6 || st.Spans != 6 {
		t.Fatalf("stats %+v", st)
	}
	spans, metrics := rcv.Spans(), rcv.Metrics()
	by := map[string]ptrace.Span{}
	for _, s := range spans {
		by[s.Name()] = s
		if [16]byte(s.TraceID()) != tc.TraceID {
			t.Errorf("%s: trace %s, want %x", s.Name(), s.TraceID(), tc.TraceID)
		}
	}
	root, ok := by["mcp session"]
	if !ok || [8]byte(root.SpanID()) != tc.SpanID || !root.ParentSpanID().IsEmpty() {
		t.Fatalf("session span %v (ok %v): want the traceparent's span %x, no parent", root.SpanID(), ok, tc.SpanID)
	}
	login := by["tools/call login"]
	if [8]byte(login.SpanID()) != call.SpanID || login.ParentSpanID() != root.SpanID() || login.Kind() != ptrace.SpanKindClient ||
		login.Status().Code() != ptrace.StatusCodeError || login.EndTimestamp().AsTime().Sub(login.StartTimestamp().AsTime()) != 500*time.Millisecond {
		t.Errorf("the call's span: id %s parent %s kind %v status %v", login.SpanID(), login.ParentSpanID(), login.Kind(), login.Status().Code())
	}
	if v, _ := login.Attributes().Get("gen_ai.tool.name"); v.Str() != "login" {
		t.Errorf("gen_ai.tool.name = %q", v.Str())
	}
	if by["resources/read"].Status().Message() != "not found" {
		t.Errorf("resources/read status %q", by["resources/read"].Status().Message())
	}
	if v, _ := by["tools/call never"].Attributes().Get("mcpi.unanswered"); !v.Bool() {
		t.Errorf("the unanswered call is not said so")
	}
	if by["notifications/progress"].Kind() != ptrace.SpanKindServer {
		t.Errorf("the server's notification is kind %v", by["notifications/progress"].Kind())
	}
	for _, s := range spans {
		s.Attributes().Range(func(k string, v pcommon.Value) bool {
			if strings.Contains(v.AsString(), "hunter2") {
				t.Errorf("%s: %s holds the secret", s.Name(), k)
			}
			return true
		})
	}

	var hist pmetric.Histogram
	for _, m := range metrics {
		if m.Name() == DurationMetric {
			hist = m.Histogram()
			if m.Unit() != "s" {
				t.Errorf("unit %q", m.Unit())
			}
		}
	}
	if hist == (pmetric.Histogram{}) {
		t.Fatalf("no %s among %d metrics", DurationMetric, len(metrics))
	}
	counts := map[string]uint64{}
	for i := range hist.DataPoints().Len() {
		dp := hist.DataPoints().At(i)
		m, _ := dp.Attributes().Get("mcp.method.name")
		tool, _ := dp.Attributes().Get("gen_ai.tool.name")
		e, _ := dp.Attributes().Get("error.type")
		counts[fmt.Sprintf("%s %s %s", m.Str(), tool.Str(), e.Str())] += dp.Count()
		if m.Str() == "tools/call" && tool.Str() == "login" && (dp.Sum() < 0.49 || dp.Sum() > 0.51) {
			t.Errorf("the login call's duration sums to %v s", dp.Sum())
		}
	}
	// The call never answered took no time to report: it is no point.
	want := map[string]uint64{"initialize  ": 1, "tools/call login tool_error": 1, "resources/read  -32002": 1, "tools/call never ": 0}
	for k, n := range want {
		if counts[k] != n {
			t.Errorf("duration points %q = %d, want %d (all: %v)", k, counts[k], n, counts)
		}
	}
}

// hangingEndpoint is the URL of an endpoint that answers nothing until
// the test is over.
func hangingEndpoint(t *testing.T) string {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // runs first: srv.Close waits for the held requests
	return srv.URL
}

// TestLiveHostileEndpoints: an endpoint that hangs, answers 500, or
// redirects to another origin costs the session no more than the export
// clock, loses no credential, and is said in the stats.
func TestLiveHostileEndpoints(t *testing.T) {
	frames := []frameAt{
		{0, true, `{"jsonrpc":"2.0","id":1,"method":"ping"}`},
		{time.Millisecond, false, `{"jsonrpc":"2.0","id":1,"result":{}}`},
	}
	h := record.Header{Mcpi: "test", Created: t0}
	t.Run("hangs", func(t *testing.T) {
		l := startLive(t, h, hangingEndpoint(t), 300*time.Millisecond)
		session(t, l, h, frames)
		// The endpoint answers only once the test is over: a Close that
		// waits for it rather than for its export clock is caught by the
		// bounded wait, which fails on its own.
		closed := make(chan LiveStats, 1)
		go func() { closed <- l.Close() }()
		var st LiveStats
		select {
		case st = <-closed:
		case <-time.After(20 * time.Second):
			t.Fatal("Close waits for an endpoint that hangs, past its export clock of 300ms")
		}
		if st.Exported != 0 || st.Err == nil {
			t.Errorf("stats %+v", st)
		}
	})
	t.Run("500", func(t *testing.T) {
		rcv := mcptest.NewOTLPReceiver(t)
		rcv.Status = 500
		l := startLive(t, h, rcv.URL, time.Second)
		session(t, l, h, frames)
		st := l.Close()
		if st.Exported != 0 || st.Failed != 2 || st.Err == nil || !strings.Contains(st.Err.Error(), "500") {
			t.Errorf("stats %+v", st)
		}
	})
	t.Run("redirect", func(t *testing.T) {
		other := mcptest.NewOTLPReceiver(t)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
		}))
		defer srv.Close()
		t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer%20otlp-secret")
		l := startLive(t, h, srv.URL, time.Second)
		session(t, l, h, frames)
		st := l.Close()
		if st.Exported != 0 || st.Err == nil || !strings.Contains(st.Err.Error(), "redirect") {
			t.Errorf("stats %+v", st)
		}
		if reqs := other.Requests(); len(reqs) != 0 {
			t.Errorf("the other origin was sent %d requests (headers %v)", len(reqs), reqs[0].Header)
		}
	})
}

// TestLiveManyNotifications: a server that sends notifications faster
// than they can leave fills a queue of MaxQueue spans, no more; the rest
// are counted as dropped, and the session goes on.
func TestLiveManyNotifications(t *testing.T) {
	h := record.Header{Mcpi: "test", Created: t0}
	l := startLive(t, h, hangingEndpoint(t), 200*time.Millisecond)
	w := record.NewTap(h, record.Options{Events: l.Event})
	const n = 100_000
	note := []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`)
	for i := range n {
		w.Observe(transport.Event{Kind: transport.KindFrame, Dir: transport.Incoming, Time: t0.Add(time.Duration(i) * time.Microsecond), Data: note})
	}
	w.Close()
	st := l.Close()
	if st.Spans != n+1 || st.Dropped < n-2*MaxQueue || st.Exported != 0 {
		t.Errorf("stats %+v: want %d spans, most dropped", st, n+1)
	}
}

func TestEndpoints(t *testing.T) {
	for _, c := range []struct{ in, traces, metrics, err string }{
		{"http://127.0.0.1:4318", "http://127.0.0.1:4318/v1/traces", "http://127.0.0.1:4318/v1/metrics", ""},
		{"http://127.0.0.1:4318/", "http://127.0.0.1:4318/v1/traces", "http://127.0.0.1:4318/v1/metrics", ""},
		{"https://otel.example/base/v1/traces", "https://otel.example/base/v1/traces", "https://otel.example/base/v1/metrics", ""},
		{"127.0.0.1:4318", "", "", "not an http"},
		{"ftp://x/", "", "", "not an http"},
		{"http://user:pw@127.0.0.1:4318", "", "", "credentials"},
	} {
		tr, me, err := Endpoints(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: err %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || tr != c.traces || me != c.metrics {
			t.Errorf("%s: %s %s %v", c.in, tr, me, err)
		}
	}
}

// TestStreamOpenAtEnd: a subscription stream still open when the session
// ends is no error; a request never answered is.
func TestStreamOpenAtEnd(t *testing.T) {
	var spans []*Span
	h := record.Header{Mcpi: "test", Created: t0}
	b := NewBuilder(h, func(s *Span) { spans = append(spans, s) })
	w := record.NewTap(h, record.Options{Events: func(ev record.Event) { b.Event(&ev) }})
	for i, f := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"never"}}`,
	} {
		w.Observe(transport.Event{Kind: transport.KindFrame, Dir: transport.Outgoing, Time: t0.Add(time.Duration(i) * time.Second), Data: []byte(f)})
	}
	w.Close()
	b.Finish()
	by := map[string]*Span{}
	for _, s := range spans {
		by[s.Name] = s
	}
	if s := by["subscriptions/listen"]; s == nil || s.Error || s.Attr("mcpi.open_at_end") != "true" {
		t.Errorf("the stream's span: %+v", s)
	}
	if s := by["tools/call never"]; s == nil || !s.Error || s.Attr("mcpi.unanswered") != "true" {
		t.Errorf("the unanswered call's span: %+v", s)
	}
}
