package otlp

import (
	"bytes"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcpi-dev/mcpi/internal/genai"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/record"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

var t0 = time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)

// writeTrace records frames (each at its offset from t0, Outgoing when
// out) into a trace of an HTTP session.
func writeTrace(t *testing.T, frames []struct {
	at  time.Duration
	out bool
	msg string
}) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t.jsonl")
	w, err := record.Create(path, record.Header{Mcpi: "test", Created: t0, Target: record.Target{Transport: record.TransportStreamableHTTP, URL: "http://127.0.0.1:1/mcp"}}, record.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range frames {
		dir := transport.Incoming
		if f.out {
			dir = transport.Outgoing
		}
		ev := transport.Event{Kind: transport.KindFrame, Dir: dir, Time: t0.Add(f.at), Data: []byte(f.msg)}
		if i == 1 {
			ev.HTTP = &transport.HTTPMeta{Method: "POST", URL: "http://127.0.0.1:1/mcp", StatusCode: 200, ResponseHeader: http.Header{"Mcp-Session-Id": {"sess-1"}}}
		}
		w.Observe(ev)
		if i == 1 {
			w.Annotate(record.NoteSession, record.SessionNote{ProtocolVersion: "2025-11-25", Era: "legacy", ServerInfo: &mcp.Implementation{Name: "demo", Version: "1"}})
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

type frameAt = struct {
	at  time.Duration
	out bool
	msg string
}

// exportedBack builds the OTLP of the trace at path and reads its
// OTLP/JSON back, as a collector would.
func exportedBack(t *testing.T, path string) ptrace.Traces {
	t.Helper()
	td, _ := fromTraceFile(t, path, "v-test")
	b, err := JSON(td)
	if err != nil {
		t.Fatal(err)
	}
	return readBack(t, b)
}

// fromTraceFile builds the OTLP of the trace at path.
func fromTraceFile(t *testing.T, path, version string) (ptrace.Traces, Stats) {
	t.Helper()
	r, err := record.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	td, st, err := FromTrace(r, version)
	if err != nil {
		t.Fatal(err)
	}
	return td, st
}

// readBack reads OTLP/JSON as a collector would.
func readBack(t *testing.T, b []byte) ptrace.Traces {
	t.Helper()
	back, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(b)
	if err != nil {
		t.Fatal(err)
	}
	return back
}

func spansByName(t *testing.T, td ptrace.Traces) map[string]ptrace.Span {
	t.Helper()
	out := map[string]ptrace.Span{}
	ss := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	for i := range ss.Len() {
		out[ss.At(i).Name()] = ss.At(i)
	}
	return out
}

func str(s ptrace.Span, k string) string {
	v, ok := s.Attributes().Get(k)
	if !ok {
		return "<none>"
	}
	return v.AsString()
}

// TestSpans: a span per request (from its sending to its answer) and per
// notification, named and attributed as the MCP conventions say, errors
// with an error status, under one session span; the OTLP/JSON reads back
// with pdata's unmarshaler, ids in hex, enums as integers.
func TestSpans(t *testing.T) {
	path := writeTrace(t, []frameAt{
		{0, true, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`},
		{5 * time.Millisecond, false, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"demo","version":"1"}}}`},
		{6 * time.Millisecond, true, `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
		{10 * time.Millisecond, true, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"q":"x"}}}`},
		{11 * time.Millisecond, false, `{"jsonrpc":"2.0","id":"s-1","method":"sampling/createMessage","params":{"messages":[],"maxTokens":5}}`},
		{12 * time.Millisecond, true, `{"jsonrpc":"2.0","id":"s-1","result":{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}}`},
		{510 * time.Millisecond, false, `{"jsonrpc":"2.0","id":1,"result":{"isError":true,"content":[{"type":"text","text":"boom"}]}}`},
		{520 * time.Millisecond, true, `{"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"name":"greet"}}`},
		{530 * time.Millisecond, false, `{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"no prompt greet"}}`},
		{540 * time.Millisecond, true, `{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"file:///a"}}`},
		{600 * time.Millisecond, false, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`},
	})
	td, st := fromTraceFile(t, path, "v-test")
	if st.Spans != 7 || st.Unanswered != 1 || st.Dropped != 0 {
		t.Errorf("stats %+v", st)
	}
	b, err := JSON(td)
	if err != nil {
		t.Fatal(err)
	}
	// OTLP/JSON, not the generic protobuf mapping.
	for _, re := range []string{`"traceId":"[0-9a-f]{32}"`, `"spanId":"[0-9a-f]{16}"`, `"kind":3`, `"kind":2`, `"code":2`} {
		if !regexp.MustCompile(re).Match(b) {
			t.Errorf("the JSON lacks %s:\n%s", re, b)
		}
	}
	spans := spansByName(t, readBack(t, b))
	root, ok := spans["mcp session"]
	if !ok {
		t.Fatalf("no session span: %v", spans)
	}
	call := spans["tools/call search"]
	for k, want := range map[string]string{
		"mcp.method.name": "tools/call", "gen_ai.tool.name": "search", "jsonrpc.request.id": "1", "mcp.session.id": "sess-1",
		"mcp.protocol.version": "2025-11-25", "network.transport": "tcp", "error.type": "tool_error",
	} {
		if got := str(call, k); got != want {
			t.Errorf("tools/call %s = %q, want %q", k, got, want)
		}
	}
	if call.Kind() != ptrace.SpanKindClient || call.Status().Code() != ptrace.StatusCodeError || call.ParentSpanID() != root.SpanID() || call.TraceID() != root.TraceID() {
		t.Errorf("tools/call: kind %v status %v parent %v root %v", call.Kind(), call.Status().Code(), call.ParentSpanID(), root.SpanID())
	}
	if d := call.EndTimestamp().AsTime().Sub(call.StartTimestamp().AsTime()); d != 500*time.Millisecond {
		t.Errorf("tools/call lasted %v, want 500ms", d)
	}
	// The initialize span started before the revision was known: its
	// answer names it.
	if got := str(spans["initialize"], "mcp.protocol.version"); got != "2025-11-25" {
		t.Errorf("initialize mcp.protocol.version = %q", got)
	}
	prompt := spans["prompts/get greet"]
	if str(prompt, "gen_ai.prompt.name") != "greet" || str(prompt, "rpc.response.status_code") != "-32602" || prompt.Status().Message() != "no prompt greet" {
		t.Errorf("prompts/get: %v %v", prompt.Attributes().AsRaw(), prompt.Status().Message())
	}
	read := spans["resources/read"]
	if str(read, "mcp.resource.uri") != "file:///a" || str(read, "mcpi.unanswered") != "true" || read.Status().Code() != ptrace.StatusCodeError {
		t.Errorf("resources/read (never answered): %v", read.Attributes().AsRaw())
	}
	sampling := spans["sampling/createMessage"]
	if sampling.Kind() != ptrace.SpanKindServer || str(sampling, "jsonrpc.request.id") != "s-1" || sampling.Status().Code() != ptrace.StatusCodeUnset {
		t.Errorf("sampling: kind %v %v", sampling.Kind(), sampling.Attributes().AsRaw())
	}
	if n := spans["notifications/message"]; n.StartTimestamp() != n.EndTimestamp() || n.Kind() != ptrace.SpanKindServer {
		t.Errorf("notification span: %v", n)
	}
	if str(root, "mcpi.server.name") != "demo" || root.EndTimestamp().AsTime() != t0.Add(600*time.Millisecond) {
		t.Errorf("session span: %v %v", root.Attributes().AsRaw(), root.EndTimestamp())
	}
	// One trace exports the same ids every time.
	r2, _ := record.Open(path)
	defer r2.Close()
	td2, _, _ := FromTrace(r2, "v-test")
	b2, _ := JSON(td2)
	if !bytes.Equal(b, b2) {
		t.Error("two exports of one trace differ")
	}
}

// TestManyNotifications: a million notifications give MaxSpans spans and
// the count of the rest, in bounded memory.
func TestManyNotifications(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a large trace")
	}
	frames := make([]frameAt, 0, MaxSpans+100)
	for i := range MaxSpans + 100 {
		frames = append(frames, frameAt{time.Duration(i) * time.Microsecond, false, fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":%d}}`, i)})
	}
	path := writeTrace(t, frames)
	td, st := fromTraceFile(t, path, "v")
	if st.Spans != MaxSpans || st.Dropped != 100 || td.SpanCount() != MaxSpans+1 {
		t.Errorf("stats %+v, %d spans", st, td.SpanCount())
	}
	root := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
	if v, _ := root.Attributes().Get("mcpi.spans.dropped"); v.Int() != 100 {
		t.Errorf("the session span does not count the dropped: %v", root.Attributes().AsRaw())
	}
}

// TestModelSpans: a model's turns are GenAI spans in the session's trace
// ("chat {model}" with the request's and the answer's attributes), a
// tool it asked for an "execute_tool {tool}" span, and the MCP request
// that tool caused is its child.
func TestModelSpans(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.jsonl")
	w, err := record.Create(path, record.Header{Mcpi: "test", Created: t0, Target: record.Target{Transport: record.TransportStdio, Command: []string{"server"}}}, record.Options{})
	if err != nil {
		t.Fatal(err)
	}
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	w.Observe(genai.Event(at(0), transport.Outgoing, genai.Turn{Op: genai.OpChat, ID: "chat-1", Purpose: "chat", Provider: "openai", Model: "gpt-4.1", Messages: 1, Tools: 1}))
	w.Observe(genai.Event(at(300), transport.Incoming, genai.Turn{Op: genai.OpChat, ID: "chat-1", Provider: "openai", Model: "gpt-4.1-2026-04-14",
		ToolCalls: []genai.ToolCall{{ID: "call_1", Name: "add"}}, FinishReasons: []string{"tool_calls"}, Usage: &genai.Usage{InputTokens: 120, OutputTokens: 18}}))
	w.Observe(genai.Event(at(310), transport.Outgoing, genai.Turn{Op: genai.OpExecuteTool, ID: "call_1", Tool: "add"}))
	w.Observe(transport.Event{Kind: transport.KindFrame, Dir: transport.Outgoing, Time: at(311), Data: []byte(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"add","arguments":{"a":1}}}`)})
	w.Observe(transport.Event{Kind: transport.KindFrame, Dir: transport.Incoming, Time: at(320), Data: []byte(`{"jsonrpc":"2.0","id":5,"result":{"content":[]}}`)})
	w.Observe(genai.Event(at(321), transport.Incoming, genai.Turn{Op: genai.OpExecuteTool, ID: "call_1", Tool: "add"}))
	w.Observe(genai.Event(at(330), transport.Outgoing, genai.Turn{Op: genai.OpChat, ID: "chat-2", Provider: "openai", Model: "gpt-4.1"}))
	w.Observe(genai.Event(at(400), transport.Incoming, genai.Turn{Op: genai.OpChat, ID: "chat-2", Error: "429 Too Many Requests"}))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	back := exportedBack(t, path)
	spans := map[string][]ptrace.Span{}
	ss := back.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	for i := range ss.Len() {
		spans[ss.At(i).Name()] = append(spans[ss.At(i).Name()], ss.At(i))
	}
	chats := spans["chat gpt-4.1"]
	if len(chats) != 2 {
		t.Fatalf("chat spans: %d; spans: %v", len(chats), spans)
	}
	chat := chats[0]
	for k, want := range map[string]string{"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4.1",
		"gen_ai.response.model": "gpt-4.1-2026-04-14", "gen_ai.usage.input_tokens": "120", "gen_ai.usage.output_tokens": "18", "gen_ai.response.finish_reasons": `["tool_calls"]`} {
		if got := str(chat, k); got != want {
			t.Errorf("chat %s = %q, want %q", k, got, want)
		}
	}
	if chat.Kind() != ptrace.SpanKindClient || chat.EndTimestamp().AsTime().Sub(chat.StartTimestamp().AsTime()) != 300*time.Millisecond {
		t.Errorf("chat span: kind %v", chat.Kind())
	}
	if failed := chats[1]; failed.Status().Code() != ptrace.StatusCodeError || failed.Status().Message() != "429 Too Many Requests" {
		t.Errorf("the failed turn: %v %q", failed.Status().Code(), failed.Status().Message())
	}
	tool := spans["execute_tool add"]
	call := spans["tools/call add"]
	if len(tool) != 1 || len(call) != 1 {
		t.Fatalf("execute_tool %d, tools/call %d", len(tool), len(call))
	}
	if str(tool[0], "gen_ai.tool.call.id") != "call_1" || tool[0].Kind() != ptrace.SpanKindInternal {
		t.Errorf("execute_tool: %v", tool[0].Attributes().AsRaw())
	}
	if call[0].ParentSpanID() != tool[0].SpanID() || call[0].TraceID() != tool[0].TraceID() {
		t.Errorf("the MCP request is not under the tool's span: parent %v, tool %v", call[0].ParentSpanID(), tool[0].SpanID())
	}
}
