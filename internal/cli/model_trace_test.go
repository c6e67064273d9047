package cli

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/genai"
	"github.com/mcpi-dev/mcpi/internal/record"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// TestReplayPrintsModelTurns: replay --print shows a model's turns and
// the tools it ran, paired with their latencies, a refused one marked;
// --filter kind:model keeps them alone.
func TestReplayPrintsModelTurns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.jsonl")
	w, err := record.Create(path, record.Header{Mcpi: "test"}, record.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	w.Observe(genai.Event(t0, transport.Outgoing, genai.Turn{Op: genai.OpChat, ID: "chat-1", Purpose: "chat", Provider: "openai", Model: "gpt-4.1", Messages: 1, Tools: 2}))
	w.Observe(genai.Event(t0.Add(250*time.Millisecond), transport.Incoming, genai.Turn{Op: genai.OpChat, ID: "chat-1", Model: "gpt-4.1",
		ToolCalls: []genai.ToolCall{{ID: "c1", Name: "delete_file"}}, Usage: &genai.Usage{InputTokens: 9, OutputTokens: 4}}))
	w.Observe(genai.Event(t0.Add(260*time.Millisecond), transport.Outgoing, genai.Turn{Op: genai.OpExecuteTool, ID: "c1", Tool: "delete_file"}))
	w.Observe(genai.Event(t0.Add(900*time.Millisecond), transport.Incoming, genai.Turn{Op: genai.OpExecuteTool, ID: "c1", Tool: "delete_file", Denied: true}))
	w.Observe(transport.Event{Kind: transport.KindStderr, Time: t0.Add(time.Second), Data: []byte("server says hi")})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	out, _ := runCLIExit(t, command.ExitOK, "replay", path, "--print")
	wantIn(t, "replay --print", out,
		"→ model chat gpt-4.1: chat · 1 messages, 2 tools",
		"← model response · chat gpt-4.1 (250ms): calls delete_file · 9 in / 4 out tokens",
		"→ model execute_tool delete_file",
		"← model response · execute_tool delete_file (640ms): denied  ✗",
	)
	_, out, _ = runCLI(t, "", "replay", path, "--print", "--filter", "kind:model status:error")
	if strings.Count(out, "model") != 1 || !strings.Contains(out, "denied") || strings.Contains(out, "stderr") {
		t.Errorf("--filter kind:model status:error:\n%s", out)
	}
}
