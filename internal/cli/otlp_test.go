package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
)

// TestOTLPEndpoint: a one-shot command with --otlp-endpoint sends its
// session's spans and the duration metric; the request carried the
// call span's context though no TRACEPARENT was set; -v names the trace.
// An endpoint that answers 500, or is not there, is a warning: the
// command's exit code and output are those without it.
func TestOTLPEndpoint(t *testing.T) {
	sink := mcptest.NewOTLPReceiver(t)
	peer := peerArgs(mcptest.LoadPrefix + mcptest.LoadTraceParent)
	out, errOut := runCLIExit(t, command.ExitOK, with(peer, "call", "t", "-v", "--otlp-endpoint", sink.URL)...)
	m := regexp.MustCompile(`exported (\d+) spans of trace ([0-9a-f]{32}) to `).FindStringSubmatch(errOut)
	if m == nil {
		t.Fatalf("-v does not name the trace: %s", errOut)
	}
	spans := sink.SpansByName()
	metrics := 0
	for _, r := range sink.Requests() {
		if r.URL.Path == "/v1/metrics" {
			metrics++
		}
	}
	call, ok := spans["tools/call t"]
	if !ok || call.TraceID().String() != m[2] || metrics == 0 {
		t.Fatalf("spans %v, %d metric exports", keys(spans), metrics)
	}
	if want := "00-" + call.TraceID().String() + "-" + call.SpanID().String() + "-01"; strings.TrimSpace(out) != want {
		t.Errorf("the server read %q, the call's span is %s", out, want)
	}
	root := spans["mcp session"]
	if call.ParentSpanID() != root.SpanID() || !root.ParentSpanID().IsEmpty() {
		t.Errorf("the call's parent %s, the session's span %s (parent %s)", call.ParentSpanID(), root.SpanID(), root.ParentSpanID())
	}
	// The session's span holds its requests' spans in time.
	if root.StartTimestamp() == 0 || root.StartTimestamp() > call.StartTimestamp() || root.EndTimestamp() < call.EndTimestamp() {
		t.Errorf("the session's span %v-%v does not hold the call's %v-%v", root.StartTimestamp(), root.EndTimestamp(), call.StartTimestamp(), call.EndTimestamp())
	}

	for name, endpoint := range map[string]string{"500": "", "absent": "http://127.0.0.1:1"} {
		if endpoint == "" {
			bad := mcptest.NewOTLPReceiver(t)
			bad.Status = 500
			endpoint = bad.URL
		}
		code, out, errOut := runCLI(t, "", with(peer, "call", "t", "--otlp-endpoint", endpoint)...)
		if code != command.ExitOK || !strings.HasPrefix(out, "00-") || !strings.Contains(errOut, "warning: the OTLP export to "+endpoint+" sent 0 of") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", name, code, out, errOut)
		}
	}
	if code, _, errOut := runCLI(t, "", with(peer, "call", "t", "--otlp-endpoint", "localhost:4318")...); code != command.ExitUsage || !strings.Contains(errOut, "not an http") {
		t.Errorf("a URL without a scheme: exit %d, %s", code, errOut)
	}
}

// TestSessionExports: in a live session the daemon exports (a flag of
// session start): the calls run in it are spans of one trace, the
// session's.
func TestSessionExports(t *testing.T) {
	sink := mcptest.NewOTLPReceiver(t)
	dir := liveDir(t)
	startSession(t, dir, "ot", with(peerArgs(mcptest.LoadPrefix+mcptest.LoadTraceParent), "--otlp-endpoint", sink.URL)...)
	for range 2 {
		runLiveOK(t, dir, "call", "t", "--session", "ot")
	}
	if code, _, errOut := runLive(t, dir, nil, "call", "t", "--session", "ot", "--otlp-endpoint", sink.URL); code != command.ExitUsage || !strings.Contains(errOut, "otlp-endpoint") {
		t.Errorf("--otlp-endpoint in a session's command: exit %d, %s", code, errOut)
	}
	runLive(t, dir, nil, "session", "stop", "ot")
	spans := sink.WaitSpan(t, "mcp session", 60*time.Second)
	root, call := spans["mcp session"], spans["tools/call t"]
	if root == (ptrace.Span{}) || call == (ptrace.Span{}) || call.TraceID() != root.TraceID() || call.ParentSpanID() != root.SpanID() {
		t.Fatalf("the session's spans: %v", keys(spans))
	}
}

// TestJaegerRoundTrip sends a session's spans to a real receiver, Jaeger
// (built by scripts/jaeger.sh), and reads them back through its query
// API: the tree (the session's span, the requests' spans under it, and
// the span of a server that joined the trace through
// _meta.traceparent under mcpi's call span) and the attributes of the
// conventions.
func TestJaegerRoundTrip(t *testing.T) {
	otlpURL, queryURL := mcptest.Jaeger(t)
	peer := []string{"-e", mcptest.TracedServerEnv + "=" + otlpURL}
	peer = append(peer, peerArgs(mcptest.LoadPrefix+mcptest.LoadTraced)...)
	code, out, errOut := runCLI(t, "", with(peer, "call", "t", "-v", "--otlp-endpoint", otlpURL)...)
	if code != command.ExitOK || strings.Contains(errOut, "exporting the server's span") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	m := regexp.MustCompile(`exported \d+ spans of trace ([0-9a-f]{32})`).FindStringSubmatch(errOut)
	if m == nil {
		t.Fatalf("no trace id in: %s", errOut)
	}
	traceID := m[1]
	if !strings.Contains(out, traceID) {
		t.Errorf("the server read %q, not a context of trace %s", out, traceID)
	}

	type ref struct {
		RefType string `json:"refType"`
		SpanID  string `json:"spanID"`
	}
	type tag struct {
		Key   string `json:"key"`
		Value any    `json:"value"`
	}
	type span struct {
		SpanID     string `json:"spanID"`
		Operation  string `json:"operationName"`
		References []ref  `json:"references"`
		Tags       []tag  `json:"tags"`
		ProcessID  string `json:"processID"`
	}
	var got struct {
		Data []struct {
			Spans     []span `json:"spans"`
			Processes map[string]struct {
				ServiceName string `json:"serviceName"`
			} `json:"processes"`
		} `json:"data"`
	}
	// Jaeger stores what it receives a moment later: ask until the
	// server's span is there too.
	byName := map[string]span{}
	service := map[string]string{}
	poll(30*time.Second, func() bool {
		resp, err := http.Get(queryURL + "/api/traces/" + traceID)
		if err != nil {
			t.Fatal(err)
		}
		got.Data = nil
		json.NewDecoder(resp.Body).Decode(&got)
		resp.Body.Close()
		clear(byName)
		for _, d := range got.Data {
			for _, s := range d.Spans {
				byName[s.Operation] = s
				service[s.Operation] = d.Processes[s.ProcessID].ServiceName
			}
		}
		_, ok := byName["server tools/call"]
		return ok && len(byName) >= 4
	})
	names := func() []string {
		var out []string
		for k := range byName {
			out = append(out, k)
		}
		return out
	}
	root, ok := byName["mcp session"]
	if !ok || len(root.References) != 0 || service["mcp session"] != "mcpi" {
		t.Fatalf("Jaeger holds %v: no session span at the root", names())
	}
	childOf := func(s span, parent span) bool {
		return len(s.References) == 1 && s.References[0].RefType == "CHILD_OF" && s.References[0].SpanID == parent.SpanID
	}
	for _, name := range []string{"initialize", "tools/list", "tools/call t"} {
		if s, ok := byName[name]; !ok || !childOf(s, root) {
			t.Errorf("%s: not a child of the session's span (%v)", name, names())
		}
	}
	call := byName["tools/call t"]
	server, ok := byName["server tools/call"]
	if !ok || !childOf(server, call) || service["server tools/call"] != "traced-server" {
		t.Errorf("the server's span is not under mcpi's call span: %+v (spans %v)", server, names())
	}
	tags := map[string]string{}
	for _, tg := range call.Tags {
		tags[tg.Key] = fmt.Sprint(tg.Value)
	}
	for k, v := range map[string]string{"mcp.method.name": "tools/call", "gen_ai.tool.name": "t", "jsonrpc.request.id": "", "mcp.protocol.version": "2025-11-25", "network.transport": "pipe", "span.kind": "client"} {
		if got, ok := tags[k]; !ok || (v != "" && got != v) {
			t.Errorf("the call's tag %s = %q (present %v), want %q", k, got, ok, v)
		}
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
