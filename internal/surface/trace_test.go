package surface

import (
	"fmt"
	"strings"
	"testing"
)

// traceOf builds a trace: each frame is "> JSON" (sent) or "< JSON"
// (received).
func traceOf(frames ...string) string {
	var b strings.Builder
	b.WriteString(`{"type":"header","format":"mcpi-trace","version":1,"mcpi":"0.1.0","created":"2026-03-14T15:09:26Z","target":{"transport":"stdio","command":["s"]}}` + "\n")
	for i, f := range frames {
		dir := "send"
		if strings.HasPrefix(f, "<") {
			dir = "recv"
		}
		fmt.Fprintf(&b, `{"type":"frame","seq":%d,"dir":%q,"msg":%s}`+"\n", i+1, dir, strings.TrimSpace(f[1:]))
	}
	return b.String()
}

const (
	initReq  = `> {"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{"listChanged":true}},"clientInfo":{"name":"mcpi","version":"1"}}}`
	initResp = `< {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true},"prompts":{}},"serverInfo":{"name":"s","version":"1"}}}`
)

func listReq(id int, cursor string) string {
	if cursor == "" {
		return fmt.Sprintf(`> {"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, id)
	}
	return fmt.Sprintf(`> {"jsonrpc":"2.0","id":%d,"method":"tools/list","params":{"cursor":%q}}`, id, cursor)
}

func listResp(id int, next string, names ...string) string {
	var tools []string
	for _, n := range names {
		tools = append(tools, fmt.Sprintf(`{"name":%q,"inputSchema":{"type":"object"}}`, n))
	}
	nc := ""
	if next != "" {
		nc = fmt.Sprintf(`,"nextCursor":%q`, next)
	}
	return fmt.Sprintf(`< {"jsonrpc":"2.0","id":%d,"result":{"tools":[%s]%s}}`, id, strings.Join(tools, ","), nc)
}

func names(es []Entry) []string {
	if es == nil {
		return nil
	}
	out := []string{}
	for _, e := range es {
		out = append(out, keyOf(e, "name"))
	}
	return out
}

func TestFromTrace(t *testing.T) {
	changed := `< {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`
	for _, tc := range []struct {
		name   string
		frames []string
		tools  []string // nil: unknown
	}{
		{"two pages", []string{initReq, initResp, listReq(1, ""), listResp(1, "c1", "a"), listReq(2, "c1"), listResp(2, "", "b")}, []string{"a", "b"}},
		{"the last complete listing", []string{initReq, initResp, listReq(1, ""), listResp(1, "", "a"), listReq(2, ""), listResp(2, "", "b"),
			listReq(3, ""), listResp(3, "c1", "c")}, []string{"b"}},
		{"never listed", []string{initReq, initResp}, nil},
		{"stale after list_changed", []string{initReq, initResp, listReq(1, ""), listResp(1, "", "a"), changed}, nil},
		{"listed again after list_changed", []string{initReq, initResp, listReq(1, ""), listResp(1, "", "a"), changed, listReq(2, ""), listResp(2, "", "b")}, []string{"b"}},
		{"a listing cut by list_changed", []string{initReq, initResp, listReq(1, ""), listResp(1, "c1", "a"), changed, listReq(2, "c1"), listResp(2, "", "b")}, nil},
		{"cursors that go round", []string{initReq, initResp, listReq(1, ""), listResp(1, "c1", "a"), listReq(2, "c1"), listResp(2, "c2", "b"),
			listReq(3, "c2"), listResp(3, "c1", "c"), listReq(4, "c1"), listResp(4, "", "d")}, nil},
		{"a page answered twice", []string{initReq, initResp, listReq(1, ""), listResp(1, "c1", "a"), listReq(2, "c1"), listResp(2, "", "b"), listResp(2, "", "b")}, []string{"a", "b"}},
		{"a page asked twice", []string{initReq, initResp, listReq(1, ""), listResp(1, "c1", "a"), listReq(2, "c1"), listResp(2, "", "b"), listReq(3, "c1"), listResp(3, "", "b")}, []string{"a", "b"}},
		{"an error page", []string{initReq, initResp, listReq(1, ""), listResp(1, "c1", "a"), listReq(2, "c1"), `< {"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"x"}}`}, nil},
		{"a batch", []string{initReq, initResp, listReq(1, ""), "<[" + listResp(1, "", "a")[1:] + "]"}, []string{"a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := FromTrace(strings.NewReader(traceOf(tc.frames...)))
			if err != nil {
				t.Fatal(err)
			}
			if got := names(s.Tools); fmt.Sprint(got) != fmt.Sprint(tc.tools) || (got == nil) != (tc.tools == nil) {
				t.Fatalf("tools = %v, want %v", got, tc.tools)
			}
			if s.Era != "legacy" || s.Revision != "2025-11-25" || s.ServerInfo["name"] != "s" {
				t.Fatalf("handshake: %+v", s.Surface)
			}
			if s.Prompts != nil {
				t.Fatalf("prompts were never listed, but are %v", s.Prompts)
			}
			if s.Resources == nil || len(s.Resources) != 0 {
				t.Fatalf("resources were not declared, so there are none; got %v", s.Resources)
			}
			if s.ClientCapabilities["roots"] == nil {
				t.Fatalf("client capabilities: %v", s.ClientCapabilities)
			}
		})
	}
}

func TestFromTraceEndlessPages(t *testing.T) {
	frames := []string{initReq, initResp, listReq(0, ""), listResp(0, "c0", "t0")}
	for i := 1; i <= 10001; i++ {
		frames = append(frames, listReq(i, fmt.Sprintf("c%d", i-1)), listResp(i, fmt.Sprintf("c%d", i), fmt.Sprintf("t%d", i)))
	}
	// A complete listing after the endless one still counts.
	frames = append(frames, listReq(20000, ""), listResp(20000, "", "z"))
	s, err := FromTrace(strings.NewReader(traceOf(frames...)))
	if err != nil {
		t.Fatal(err)
	}
	if got := names(s.Tools); fmt.Sprint(got) != "[z]" {
		t.Fatalf("tools = %v", got)
	}
	s, err = FromTrace(strings.NewReader(traceOf(frames[:len(frames)-2]...)))
	if err != nil {
		t.Fatal(err)
	}
	if s.Tools != nil {
		t.Fatalf("an endless listing is no list: %d tools", len(s.Tools))
	}
}

func TestFromTraceModern(t *testing.T) {
	tr := traceOf(
		`> {"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"x":{}}}}}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"m","version":"2"}}}}`,
		listReq(2, ""), listResp(2, "", "a"))
	s, err := Read(strings.NewReader(tr))
	if err != nil {
		t.Fatal(err)
	}
	if s.Era != "modern" || s.Revision != "2026-07-28" || s.ServerInfo["name"] != "m" || s.ClientCapabilities["extensions"] == nil || len(s.Tools) != 1 || s.Prompts == nil {
		t.Fatalf("%+v", s.Surface)
	}
}

func TestReadSniffs(t *testing.T) {
	if _, err := Read(strings.NewReader("")); err == nil {
		t.Fatal("an empty file read")
	}
	s, err := Read(strings.NewReader(traceOf(initReq, initResp)))
	if err != nil || s.ServerInfo["name"] != "s" {
		t.Fatalf("a trace: %v", err)
	}
	doc, _ := Marshal(s)
	back, err := Read(strings.NewReader(string(doc)))
	if err != nil || back.ServerInfo["name"] != "s" {
		t.Fatalf("a snapshot: %v", err)
	}
	if _, err := Read(strings.NewReader(`{"type":"header","format":"mcpi-trace","version":99}` + "\n")); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("a newer trace: %v", err)
	}
}
