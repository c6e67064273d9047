package cli

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/chat/term"
	"github.com/mcpi-dev/mcpi/internal/command"

	"github.com/mcpi-dev/mcpi/internal/mcptest"
)

const chatKey = "sk-chat-secret-0123456789"

// TestChatPrompt: mcpi chat --prompt against a fake OpenAI provider (the
// official SDK pointed at it) and the demo server: the model's tool call
// runs (--approve all), its result goes back, the answer is printed; --json
// is one document with every turn and call; the trace has the model's
// turns; the key is nowhere in what mcpi wrote.
func TestChatPrompt(t *testing.T) {
	fake := mcptest.NewFakeLLM(t, mcptest.LLMOpenAIChat,
		mcptest.LLMTurn{Text: "Adding.", Calls: []mcptest.LLMCall{{ID: "call_1", Name: "add", Args: `{"a":2,"b":3}`}}},
		mcptest.LLMTurn{Text: "It is 5."},
		mcptest.LLMTurn{Calls: []mcptest.LLMCall{{ID: "call_2", Name: "add", Args: `{"a":1,"b":1}`}}},
		mcptest.LLMTurn{Text: "It is 2."})
	t.Setenv("OPENAI_API_KEY", chatKey)
	trace := filepath.Join(t.TempDir(), "chat.jsonl")
	code, out, errOut := runCLI(t, "", with(peerArgs("demo"), "chat", "--model", "openai:gpt-4.1", "--model-url", fake.URL, "--prompt", "add 2 and 3",
		"--approve", "all", "--record", trace, "-v")...)
	if code != command.ExitOK || !strings.Contains(out, "It is 5.") || !strings.Contains(errOut, "→ add") || !strings.Contains(errOut, "done · 2 turns · 1 tool calls") ||
		!strings.Contains(errOut, "model: → chat gpt-4.1 (1 messages, ") || !strings.Contains(errOut, "model: ← chat gpt-4.1-fake · 10 in / 5 out tokens") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	b, _ := os.ReadFile(trace)
	wantIn(t, "the trace", string(b), `"type":"model"`, `"op":"chat"`, `"op":"execute_tool"`, `"name":"add"`)
	code, out, errOut = runCLI(t, "", with(peerArgs("demo"), "chat", "--model", "openai:gpt-4.1", "--model-url", fake.URL, "--prompt", "add 1 and 1", "--approve", "all", "--json")...)
	var rep term.Report
	if code != command.ExitOK || json.Unmarshal([]byte(out), &rep) != nil || rep.Stop != "done" || rep.Text != "It is 2." || len(rep.Calls) != 1 || rep.Calls[0].Tool != "add" || len(rep.Turns) != 2 {
		t.Fatalf("--json: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, s := range []string{out, errOut, string(b)} {
		if strings.Contains(s, chatKey) {
			t.Fatalf("the key is in mcpi's output: %s", s)
		}
	}
	// The fake saw the key: it went to the provider, and only there.
	if h := fake.Requests()[0].Header.Get("Authorization"); h != "Bearer "+chatKey {
		t.Errorf("the provider got Authorization %q", h)
	}
}

// TestChatOutcomes: a refused key is exit 11 with the variable named and
// the key not echoed; without --approve nobody allows a call and the model
// is told; a budget stops the model with exit 1; --show-tools prints what a
// host's model sees and calls no model.
func TestChatOutcomes(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", chatKey)
	refused := mcptest.NewFakeLLM(t, mcptest.LLMOpenAIChat, mcptest.LLMTurn{Status: http.StatusUnauthorized})
	code, out, errOut := runCLI(t, "", with(peerArgs("demo"), "chat", "--model", "openai:gpt-4.1", "--model-url", refused.URL, "--prompt", "hi")...)
	if code != command.ExitModel || !strings.Contains(errOut, "OPENAI_API_KEY") || strings.Contains(out+errOut, chatKey) {
		t.Errorf("a refused key: exit %d\n%s\n%s", code, out, errOut)
	}
	denied := mcptest.NewFakeLLM(t, mcptest.LLMAnthropic,
		mcptest.LLMTurn{Calls: []mcptest.LLMCall{{ID: "c1", Name: "delete_file", Args: `{"path":"/tmp/x"}`}}},
		mcptest.LLMTurn{Text: "I could not."})
	t.Setenv("ANTHROPIC_API_KEY", chatKey)
	code, _, errOut = runCLI(t, "", with(peerArgs("demo"), "chat", "--model", "anthropic:claude-test", "--model-url", denied.URL, "--prompt", "delete it", "--approve", "destructive")...)
	if code != command.ExitOK || !strings.Contains(errOut, "✗ refused delete_file") {
		t.Errorf("a destructive call with nobody to ask: exit %d\n%s", code, errOut)
	}
	if body := string(denied.Requests()[1].Body); !strings.Contains(body, "refused") {
		t.Errorf("the model was not told: %s", body)
	}
	var loop []mcptest.LLMTurn
	for range 3 {
		loop = append(loop, mcptest.LLMTurn{Calls: []mcptest.LLMCall{{ID: "c", Name: "echo", Args: `{"text":"again"}`}}})
	}
	looping := mcptest.NewFakeLLM(t, mcptest.LLMOpenAIChat, loop...)
	code, out, _ = runCLI(t, "", with(peerArgs("demo"), "chat", "--model", "openai:gpt-4.1", "--model-url", looping.URL, "--prompt", "loop", "--approve", "all", "--max-turns", "2", "--json")...)
	if code != command.ExitToolError || !strings.Contains(out, `"stop":"max-turns"`) {
		t.Errorf("--max-turns: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "", with(peerArgs("demo"), "chat", "--show-tools", "--host", "claude-code")...)
	if code != command.ExitOK || !strings.Contains(out, "mcp__mcpi-demo__add") || !strings.Contains(out, "host claude-code") {
		t.Errorf("--show-tools: exit %d\n%s", code, out)
	}
	if code, _, errOut = runCLI(t, "", with(peerArgs("demo"), "chat", "--show-tools", "--host", "nosuch")...); code != command.ExitUsage || !strings.Contains(errOut, "claude-code") {
		t.Errorf("--host nosuch: exit %d %s", code, errOut)
	}
	if code, _, errOut = runCLI(t, "", with(peerArgs("demo"), "chat", "--model", "openai:gpt-4.1")...); code != command.ExitUsage || !strings.Contains(errOut, "--prompt") {
		t.Errorf("no prompt off a terminal: exit %d %s", code, errOut)
	}
}

// TestChatInASession: mcpi chat --session runs in the session's daemon,
// the model's calls on the held session; the key is the environment's the
// session started in.
func TestChatInASession(t *testing.T) {
	fake := mcptest.NewFakeLLM(t, mcptest.LLMOpenAIChat,
		mcptest.LLMTurn{Calls: []mcptest.LLMCall{{ID: "call_1", Name: "add", Args: `{"a":2,"b":3}`}}},
		mcptest.LLMTurn{Text: "It is 5."})
	t.Setenv("OPENAI_API_KEY", chatKey)
	dir := demoSession(t, "chat")
	code, out, errOut := runLive(t, dir, nil, "chat", "--session", "chat", "--model", "openai:gpt-4.1", "--model-url", fake.URL, "--prompt", "add", "--approve", "all", "--json")
	var rep term.Report
	if code != command.ExitOK || json.Unmarshal([]byte(out), &rep) != nil || rep.Stop != "done" || len(rep.Calls) != 1 || !strings.Contains(rep.Calls[0].Result, "5") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestChatPrintsNoEscapes: a model's text with escape sequences (split
// across the stream's pieces) and a tool result with them are made
// visible, never interpreted, on stdout and stderr.
func TestChatPrintsNoEscapes(t *testing.T) {
	fake := mcptest.NewFakeLLM(t, mcptest.LLMAnthropic,
		mcptest.LLMTurn{Text: "\x1b[31mred\x1b]0;title\x07 and \u202e", Calls: []mcptest.LLMCall{{ID: "c1", Name: "echo", Args: `{"text":"\u001b[2Jclear"}`}}},
		mcptest.LLMTurn{Text: "done \x1b[1mbold"})
	t.Setenv("ANTHROPIC_API_KEY", chatKey)
	out, errOut := runCLIExit(t, command.ExitOK, with(peerArgs("demo"), "chat", "--model", "anthropic:claude-test", "--model-url", fake.URL, "--prompt", "x", "--approve", "all")...)
	for _, s := range []string{out, errOut} {
		if strings.ContainsAny(s, "\x1b\x07\u202e") {
			t.Errorf("raw control characters reached the terminal: %q", s)
		}
	}
	if !strings.Contains(out, `\e[31mred`) || !strings.Contains(errOut, `\e[2Jclear`) {
		t.Errorf("the escapes are not shown:\nstdout %q\nstderr %q", out, errOut)
	}
}

// TestChatLines: the model's text is on stdout line by line, as it would
// be on a terminal where stderr's calls come between: a line it left open
// is ended once before a call, and no empty line is printed for a turn
// with no text (Gemini's two parallel calls here).
func TestChatLines(t *testing.T) {
	fake := mcptest.NewFakeLLM(t, mcptest.LLMGemini,
		mcptest.LLMTurn{Text: "Adding both.", Calls: []mcptest.LLMCall{
			{ID: "function-call-1", Name: "add", Args: `{"a":2,"b":3}`},
			{ID: "function-call-2", Name: "add", Args: `{"a":4,"b":5}`},
		}},
		mcptest.LLMTurn{Calls: []mcptest.LLMCall{{ID: "function-call-3", Name: "add", Args: `{"a":1,"b":1}`}}},
		mcptest.LLMTurn{Text: "5, 9 and 2."})
	code, out, errOut := runCLI(t, "", with(peerArgs("demo"), "chat", "--model", "compat:gemini-3-flash", "--model-url", fake.URL, "--prompt", "add", "--approve", "all")...)
	if code != command.ExitOK || out != "Adding both.\n5, 9 and 2.\n" || strings.Count(errOut, "← add") != 3 {
		t.Errorf("exit %d\nstdout %q\nstderr %s", code, out, errOut)
	}
}
