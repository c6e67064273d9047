package rows

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/genai"
	"github.com/mcpi-dev/mcpi/internal/query"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// TestModelTurns: a model's turns are rows of kind model, a request and
// its answer paired by the turn's id (latency, answered), a failed turn an
// error, all found by the search language.
func TestModelTurns(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := NewParser()
	s := NewStore(0, 0)
	add := func(at time.Duration, dir transport.Direction, turn genai.Turn) *Entry {
		seq := s.Append(p.Event(genai.Event(t0.Add(at), dir, turn)))
		return s.Get(seq)
	}
	req := add(0, transport.Outgoing, genai.Turn{Op: genai.OpChat, ID: "chat-1", Purpose: "chat", Provider: "openai", Model: "gpt-4.1", Messages: 2, Tools: 3})
	if req.Kind != KindModel || req.Method != "chat" || req.Name != "gpt-4.1" || !strings.Contains(req.Text, "2 messages, 3 tools") {
		t.Fatalf("request row: %+v", req)
	}
	ans := add(640*time.Millisecond, transport.Incoming, genai.Turn{Op: genai.OpChat, ID: "chat-1", Model: "gpt-4.1-2026",
		ToolCalls: []genai.ToolCall{{ID: "c1", Name: "add", Arguments: json.RawMessage(`{"a":1}`)}}, Usage: &genai.Usage{InputTokens: 10, OutputTokens: 5}})
	if req = s.Get(req.Seq); ans.Method != "response" || ans.Answers != "chat" || ans.Latency != 640*time.Millisecond || !req.Answered || !strings.Contains(ans.Text, "calls add") {
		t.Fatalf("answer row: %+v (request answered %v)", ans, req.Answered)
	}
	add(700*time.Millisecond, transport.Outgoing, genai.Turn{Op: genai.OpExecuteTool, ID: "c1", Tool: "add", Arguments: json.RawMessage(`{"a":1}`)})
	end := add(720*time.Millisecond, transport.Incoming, genai.Turn{Op: genai.OpExecuteTool, ID: "c1", Tool: "add", Denied: true})
	if end.Label() != "response · execute_tool add" || !end.ToolError || end.Latency != 20*time.Millisecond {
		t.Fatalf("tool end row: %q %+v", end.Label(), end)
	}
	match := func(q string) int {
		pq, err := query.Parse(q)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for seq := s.First(); seq < s.Next(); seq++ {
			r := s.Get(seq).Record()
			if pq.Match(&r) {
				n++
			}
		}
		return n
	}
	for q, want := range map[string]int{"kind:model": 4, "kind:model status:error": 1, "method:execute_tool": 2, "method:gpt": 2} {
		if got := match(q); got != want {
			t.Errorf("%s matches %d rows, want %d", q, got, want)
		}
	}
	if bad := p.Event(transport.Event{Kind: transport.KindModel, Dir: transport.Incoming, Data: []byte("garbage")}); bad.Err == "" {
		t.Errorf("a model event that is no turn: %+v", bad)
	}
}
