package replay

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/mcp"
)

const miniTrace = `{"type":"header","format":"mcpi-trace","version":1,"mcpi":"t","created":"2026-03-14T15:09:26Z","target":{"transport":"stdio"}}
{"type":"frame","t":"2026-03-14T15:09:26.002000000Z","seq":1,"dir":"send","msg":{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{}},"clientInfo":{"name":"host","version":"9"}}}}
{"type":"frame","t":"2026-03-14T15:09:26.003000000Z","seq":2,"dir":"recv","msg":{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}}
`

func answerOf(t *testing.T, s *Server, method, params string) map[string]json.RawMessage {
	t.Helper()
	msgs, _, err := mcp.DecodeValidFrame([]byte(`{"jsonrpc":"2.0","id":7,"method":"` + method + `","params":` + params + `}`))
	if err != nil {
		t.Fatal(err)
	}
	out := s.Answer(msgs[0])
	if len(out) != 1 {
		t.Fatalf("%s: %d frames", method, len(out))
	}
	var m map[string]json.RawMessage
	json.Unmarshal(out[0], &m)
	return m
}

func TestServeUnrecordedAndNegotiated(t *testing.T) {
	tr, err := Read(strings.NewReader(miniTrace))
	if err != nil {
		t.Fatal(err)
	}
	s := NewServer(tr)
	for _, method := range []string{"ping", "logging/setLevel"} {
		if m := answerOf(t, s, method, `{"level":"info"}`); string(m["result"]) != "{}" || m["error"] != nil {
			t.Errorf("%s: %v", method, m)
		}
	}
	for _, tc := range []struct{ asked, want string }{
		{"2025-03-26", "2025-03-26"}, // older: the recorded server would have taken it
		{"2025-11-25", "2025-06-18"}, // newer than it spoke: its own
		{"2099-01-01", "2025-06-18"},
	} {
		m := answerOf(t, s, "initialize", `{"protocolVersion":"`+tc.asked+`","capabilities":{},"clientInfo":{"name":"x","version":"1"}}`)
		var r struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		json.Unmarshal(m["result"], &r)
		if r.ProtocolVersion != tc.want {
			t.Errorf("asked %s: got %s, want %s", tc.asked, r.ProtocolVersion, tc.want)
		}
	}
	info, caps, ok := RecordedClient(tr)
	if !ok || info == nil || info.Name != "host" || caps == nil || caps.Roots == nil {
		t.Errorf("recorded client: %+v %+v %v", info, caps, ok)
	}
	if Comparable(tr) != 1 {
		t.Errorf("comparable %d", Comparable(tr))
	}
	if err := CheckIgnore([]string{"result.content[*].text", "result._meta"}); err != nil {
		t.Error(err)
	}
	for _, bad := range []string{"", ".", "[", "**", "result", "*"} {
		if CheckIgnore([]string{bad}) == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
