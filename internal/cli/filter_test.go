package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
)

// TestReplayFilter: replay --filter prints what the query matches, with
// the latencies of answers whose requests it hides; status:pending is
// the requests the whole trace never answers; a bad query is a usage
// error.
func TestReplayFilter(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "t.jsonl")
	path := writeCollection(t, `steps:
  - call: echo
    args: {text: hello}
  - call: fail
    expect: {isError: true}
  - call: add
    args: {a: 1, b: 2}
`)
	runCLIExit(t, command.ExitOK, with(peerArgs("demo"), "test", path, "--record", trace)...)
	replay := func(filter string) string {
		t.Helper()
		out, _ := runCLIExit(t, command.ExitOK, "replay", trace, "--print", "--filter", filter)
		return out
	}
	out := replay("tool:fail")
	if !strings.Contains(out, "tools/call fail") || !strings.Contains(out, "result isError of tools/call (") || strings.Contains(out, "tools/call echo") || strings.Contains(out, "tools/list") {
		t.Errorf("tool:fail (its isError result marked):\n%s", out)
	}
	// The session's note is a row of kind note: hiding stderr keeps it.
	if out = replay("-kind:stderr"); !strings.Contains(out, "note session:") {
		t.Errorf("-kind:stderr hides the session's note:\n%s", out)
	}
	if out = replay("kind:note"); !strings.Contains(out, "note session:") || strings.Contains(out, "tools/call") {
		t.Errorf("kind:note:\n%s", out)
	}
	out = replay("method:tools/call status:error")
	if n := strings.Count(out, "\n"); n != 2 || !strings.Contains(out, "result isError of tools/call") {
		t.Errorf("status:error prints %d lines:\n%s", n, out)
	}
	out = replay("> method:tools/call -tool:echo")
	if !strings.Contains(out, "tools/call fail") || !strings.Contains(out, "tools/call add") || strings.Contains(out, "←") {
		t.Errorf("> -tool:echo:\n%s", out)
	}
	if out = replay("status:pending"); strings.Count(out, "\n") != 1 {
		t.Errorf("every request of the trace was answered; status:pending printed:\n%s", out)
	}
	if out = replay(`text:"Hello"`); !strings.Contains(out, "tools/call echo") {
		t.Errorf("text:Hello:\n%s", out)
	}
	code, _, errOut := runCLI(t, "", "replay", trace, "--print", "--filter", "dur:>soon")
	if code != command.ExitUsage || !strings.Contains(errOut, "--filter: dur:>soon: want a comparison and a duration") {
		t.Errorf("a bad query: exit %d, %q", code, errOut)
	}
}

// TestTailFilter: tail --filter follows only what matches, frames and
// log messages alike.
func TestTailFilter(t *testing.T) {
	t.Parallel()
	dir := demoSession(t, "flt")
	runLiveOK(t, dir, "log-level", "debug", "--session", "flt")
	adds := startLive(t, dir, "tail", "--wire", "--filter", "tool:add", "--session", "flt")
	logs := startLive(t, dir, "tail", "--filter", "kind:log text:marker", "--session", "flt")
	ok := poll(10*time.Second, func() bool {
		for _, args := range [][]string{{"call", "echo", "text=echo-call"}, {"call", "add", "a=1", "b=2"}, {"call", "log", "message=marker"}, {"call", "log", "message=other"}} {
			runLiveOK(t, dir, append(args, "--session", "flt")...)
		}
		return strings.Contains(adds.out.String(), `"name":"add"`) && strings.Contains(logs.out.String(), "marker")
	})
	if !ok {
		t.Fatalf("the tails did not see the add call and the marker log:\n%s\n%s\n%s\n%s", adds.out, adds.errOut, logs.out, logs.errOut)
	}
	if out := adds.out.String(); strings.Contains(out, "echo-call") || strings.Contains(out, "notifications/message") {
		t.Errorf("tail tool:add shows more:\n%s", out)
	}
	if out := logs.out.String(); strings.Contains(out, "other") || strings.Contains(out, "tools/call") {
		t.Errorf("tail kind:log text:marker shows more:\n%s", out)
	}
}

// TestTraceExportOTLP: a recorded session exports as OTLP/JSON that the
// collector's pdata reads back: a tools/call span under the session span.
func TestTraceExportOTLP(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "t.jsonl")
	runCLIExit(t, command.ExitOK, with(peerArgs("demo"), "call", "echo", "text=hi", "--record", trace)...)
	out, _ := runCLIExit(t, command.ExitOK, "trace", "export", "--otlp", trace)
	spans := otlpSpans(t, out)
	root, call := spans["mcp session"], spans["tools/call echo"]
	if root.Name() == "" || call.Name() == "" || call.ParentSpanID() != root.SpanID() {
		t.Fatalf("no tools/call echo span under the session:\n%s", out)
	}
	if v, _ := call.Attributes().Get("gen_ai.tool.name"); v.AsString() != "echo" {
		t.Errorf("attributes %v", call.Attributes().AsRaw())
	}
	code, _, errOut := runCLI(t, "", "trace", "export", "--otlp", "--har", trace)
	if code != command.ExitUsage || !strings.Contains(errOut, "--har or --otlp") {
		t.Errorf("both formats: exit %d, %s", code, errOut)
	}
}

// TestTraceContext: with TRACEPARENT set, each request carries a child of
// it in params._meta, and the OTLP export of the session's trace makes
// the call's span the parent the server read (the server's spans join
// mcpi's trace) and the session a child of the environment's span.
// Without it, or with one that is malformed or 10 KB long, the frames are
// those sent without tracing, with a warning for the bad ones.
func TestTraceContext(t *testing.T) {
	const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	dir := t.TempDir()
	trace := filepath.Join(dir, "t.jsonl")
	peer := peerArgs(mcptest.LoadPrefix + mcptest.LoadTraceParent)
	t.Setenv("TRACEPARENT", parent)
	t.Setenv("TRACESTATE", "mcpi=1")
	code, out, errOut := runCLI(t, "", with(peer, "call", "t", "--record", trace)...)
	if code != command.ExitOK || !strings.HasPrefix(out, "00-4bf92f3577b34da6a3ce929d0e0e4736-") || strings.Contains(out, "00f067aa0ba902b7") {
		t.Fatalf("the server read %q (exit %d, %s)", out, code, errOut)
	}
	seen := strings.TrimSpace(out)
	code, doc, errOut := runCLI(t, "", "trace", "export", "--otlp", trace)
	if code != command.ExitOK {
		t.Fatalf("export: %d %s", code, errOut)
	}
	spans := otlpSpans(t, doc)
	root, call := spans["mcp session"], spans["tools/call t"]
	if root.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" || root.ParentSpanID().String() != "00f067aa0ba902b7" {
		t.Errorf("session span: trace %s parent %s", root.TraceID(), root.ParentSpanID())
	}
	if want := "00-" + call.TraceID().String() + "-" + call.SpanID().String() + "-01"; want != seen {
		t.Errorf("the call's span is %s, the server was given %s", want, seen)
	}
	// A second command under the same TRACEPARENT joins the same trace
	// with spans of its own.
	trace2 := filepath.Join(dir, "t2.jsonl")
	runCLIExit(t, command.ExitOK, with(peer, "call", "t", "--record", trace2)...)
	_, doc2, _ := runCLI(t, "", "trace", "export", "--otlp", trace2)
	root2 := otlpSpans(t, doc2)["mcp session"]
	if root2.TraceID() != root.TraceID() || root2.SpanID() == root.SpanID() {
		t.Errorf("two sessions under one TRACEPARENT: trace %s/%s, span %s/%s", root.TraceID(), root2.TraceID(), root.SpanID(), root2.SpanID())
	}
	for _, bad := range []string{"garbage", "00-" + strings.Repeat("a", 10<<10)} {
		t.Setenv("TRACEPARENT", bad)
		code, out, errOut := runCLI(t, "", with(peer, "call", "t")...)
		if code != command.ExitOK || strings.TrimSpace(out) != "none" || !strings.Contains(errOut, "TRACEPARENT is not used") || len(errOut) > 600 {
			t.Errorf("TRACEPARENT %.20q: exit %d, the server read %q, stderr %q", bad, code, out, errOut)
		}
	}
	os.Unsetenv("TRACEPARENT")
	if code, out, _ := runCLI(t, "", with(peer, "call", "t")...); code != command.ExitOK || strings.TrimSpace(out) != "none" {
		t.Errorf("without TRACEPARENT the server read %q", out)
	}
}

// TestReplayLatency: replay --latency sums a trace up by method and by
// tool, with --filter and --json.
func TestReplayLatency(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "t.jsonl")
	path := writeCollection(t, "steps:\n  - call: echo\n    args: {text: a}\n  - call: echo\n    args: {text: b}\n  - call: fail\n    expect: {isError: true}\n")
	runCLIExit(t, command.ExitOK, with(peerArgs("demo"), "test", path, "--record", trace)...)
	code, out, errOut := runCLI(t, "", "replay", trace, "--latency")
	if code != command.ExitOK || !strings.Contains(out, "METHOD") || !regexp.MustCompile(`tools/call echo\s+2\s+0\s`).MatchString(out) || !regexp.MustCompile(`tools/call fail\s+1\s+1\s`).MatchString(out) {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, _ = runCLI(t, "", "replay", trace, "--latency", "--json", "--filter", "tool:echo")
	var rows []struct {
		Method string
		Count  int
		P50Ms  float64
	}
	if err := json.Unmarshal([]byte(out), &rows); err != nil || code != command.ExitOK || len(rows) != 1 || rows[0].Method != "tools/call echo" || rows[0].Count != 2 || rows[0].P50Ms <= 0 {
		t.Errorf("exit %d, %v, %s", code, err, out)
	}
	if code, _, errOut := runCLI(t, "", "replay", trace, "--latency", "--follow"); code != command.ExitUsage || !strings.Contains(errOut, "--latency sums up a trace") {
		t.Errorf("--latency --follow: exit %d, %s", code, errOut)
	}
}

// otlpSpans reads an OTLP/JSON export back with pdata: its spans by name.
func otlpSpans(t *testing.T, doc string) map[string]ptrace.Span {
	t.Helper()
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces([]byte(doc))
	if err != nil {
		t.Fatalf("%v\n%s", err, doc)
	}
	out := map[string]ptrace.Span{}
	spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	for i := range spans.Len() {
		out[spans.At(i).Name()] = spans.At(i)
	}
	return out
}
