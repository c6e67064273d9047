package session

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/mcp"
)

// TestEncodeRequestMeta: _meta joins the params whatever their shape: an
// object without one (spliced in), an empty object, none, an object with
// its own _meta (merged, the request's keys winning), an object whose
// arguments hold a _meta of their own (left alone); params that are not
// an object are refused.
func TestEncodeRequestMeta(t *testing.T) {
	meta := mcp.Meta{"io.modelcontextprotocol/protocolVersion": "2026-07-28", "progressToken": 3}
	for _, tc := range []struct {
		name   string
		params any
		want   string // the params as JSON
	}{
		{"object", map[string]any{"name": "echo", "arguments": map[string]any{"text": "<hi>"}},
			`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":3},"arguments":{"text":"<hi>"},"name":"echo"}`},
		{"empty object", struct{}{}, `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":3}}`},
		{"no params", nil, `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":3}}`},
		{"its own _meta", map[string]any{"name": "x", "_meta": map[string]any{"progressToken": 1, "mine": true}},
			`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","mine":true,"progressToken":3},"name":"x"}`},
		{"a _meta in the arguments", map[string]any{"arguments": map[string]any{"_meta": 1}},
			`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":3},"arguments":{"_meta":1}}`},
		{"raw object with spaces", json.RawMessage(` { "a" : 1 } `),
			`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":3},"a":1}`},
	} {
		frame, err := encodeRequest(9, "tools/call", tc.params, meta, nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var m struct {
			ID     int             `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if err := json.Unmarshal(frame, &m); err != nil || m.ID != 9 || m.Method != "tools/call" {
			t.Fatalf("%s: %s (%v)", tc.name, frame, err)
		}
		var got, want any
		json.Unmarshal(m.Params, &got)
		json.Unmarshal([]byte(tc.want), &want)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: params %s, want %s", tc.name, m.Params, tc.want)
		}
	}
	if _, err := encodeRequest(1, "x", []int{1}, meta, nil); err == nil {
		t.Error("params that are an array took _meta")
	}
}

// BenchmarkEncodeModernRequest is the encoding of a modern tools/call
// with the _meta every one carries (docs/performance.md).
func BenchmarkEncodeModernRequest(b *testing.B) {
	caps := mcp.ClientCapabilities{Roots: &mcp.RootsCapability{}, Sampling: &mcp.SamplingCapability{}}
	meta := mcp.Meta{mcp.MetaProtocolVersion: "2026-07-28", mcp.MetaClientCapabilities: caps, mcp.MetaClientInfo: mcp.Implementation{Name: "mcpi", Version: "1"}}
	params := map[string]any{"name": "echo", "arguments": map[string]any{"text": "hi"}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := encodeRequest(7, "tools/call", params, meta, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// TestEncodeRequestAsNewRequest: a request without _meta is the frame
// mcp.NewRequest makes, byte for byte, whatever its params and method.
func TestEncodeRequestAsNewRequest(t *testing.T) {
	var none *mcp.CallToolParams
	for _, tc := range []struct {
		method string
		params any
	}{
		{"tools/call", mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"text": "<a & b>", "n": 1.5}`)}},
		{"tools/call", map[string]any{"name": "x\u2028y", "arguments": map[string]any{}}},
		{"ping", nil},
		{"ping", none},
		{"ping", struct{}{}},
		{"resources/read", json.RawMessage(` { "uri" : "a" } `)},
		{"odd \"method\" <é>", map[string]int{"a": 1}},
		{"", map[string]int{"a": 1}},
	} {
		got, err := encodeRequest(12345, tc.method, tc.params, nil, nil)
		if err != nil {
			t.Fatalf("%s %v: %v", tc.method, tc.params, err)
		}
		want, err := mcp.NewRequest(12345, tc.method, tc.params)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%s %#v:\n got %s\nwant %s", tc.method, tc.params, got, want)
		}
	}
	if _, err := encodeRequest(1, "x", func() {}, nil, nil); err == nil {
		t.Error("params that are no JSON were encoded")
	}
}

// TestIDKey: the ids mcpi sends are their own key; every other id is keyed
// as mcp.IDKey keys it.
func TestIDKey(t *testing.T) {
	for _, id := range []string{"1", "42", "123456789012345678", "1234567890123456789", "0", "007", "-3", "1.0", "1e3", `"7"`, `"a"`, " 5", "null", "", "[1]"} {
		gotKey, gotOK := idKey(json.RawMessage(id))
		wantKey, wantOK := mcp.IDKey(json.RawMessage(id))
		if gotKey != wantKey || gotOK != wantOK {
			t.Errorf("idKey(%q) = %q, %v; want %q, %v", id, gotKey, gotOK, wantKey, wantOK)
		}
	}
}

// TestToolParamsMemo: a tools/call encoded through the memo is the frame
// encoded without it, call after call: the same arguments again, other
// arguments in the same buffer, another tool, a task, _meta, and
// arguments the memo does not keep.
func TestToolParamsMemo(t *testing.T) {
	var memo toolParamsMemo
	args := []byte(`{"text": "<a & b>"}`)
	big := json.RawMessage(`{"text":"` + strings.Repeat("x", maxMemoParams) + `"}`)
	for i, p := range []mcp.CallToolParams{
		{Name: "echo", Arguments: args},
		{Name: "echo", Arguments: args},
		{Name: "echo", Arguments: args}, // args changed in place below
		{Name: "add", Arguments: args},
		{Name: "add"},
		{Name: "add", Arguments: json.RawMessage(`{}`)},
		{Name: "add", Arguments: json.RawMessage(`{}`), Task: json.RawMessage(`{"ttl":5}`)},
		{Name: "add", Arguments: json.RawMessage(`{}`), Meta: mcp.Meta{"k": 1}},
		{Name: "add", Arguments: json.RawMessage(`{}`)},
		{Name: "big", Arguments: big},
		{Name: "big", Arguments: big},
	} {
		if i == 2 {
			copy(args, `{"text": "<b & a>"}`)
		}
		for _, meta := range []mcp.Meta{nil, {"progressToken": 3}} {
			want, err := encodeRequest(int64(i), "tools/call", p, meta, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := encodeRequest(int64(i), "tools/call", p, meta, &memo)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("call %d (meta %v): through the memo\n%s\nwant\n%s", i, meta, got, want)
			}
		}
	}
	if _, err := encodeRequest(1, "tools/call", mcp.CallToolParams{Name: "x", Arguments: json.RawMessage(`{bad`)}, nil, &memo); err == nil {
		t.Error("invalid arguments were encoded")
	}
}
