package tui

import (
	"strings"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/chat"
	"github.com/mcpi-dev/mcpi/internal/llm"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
	"github.com/mcpi-dev/mcpi/internal/transport"
	"github.com/mcpi-dev/mcpi/internal/tui/chatpane"
)

// TestChatTab: a person talks to a fake model (the official SDK pointed at
// it) in the Chat tab: the model's tool call waits, its arguments shown,
// until ctrl+s runs it; the result goes back and the answer streams in; a
// second call refused with ctrl+x reaches the model as a refusal; the
// model's turns are rows of kind model in the Wire pane.
func TestChatTab(t *testing.T) {
	fake := mcptest.NewFakeLLM(t, mcptest.LLMOpenAIChat,
		mcptest.LLMTurn{Text: "Let me add.", Calls: []mcptest.LLMCall{{ID: "call_1", Name: "add", Args: `{"a":2,"b":3}`}}},
		mcptest.LLMTurn{Text: "It is 5."},
		mcptest.LLMTurn{Calls: []mcptest.LLMCall{{ID: "call_2", Name: "delete_file", Args: `{"path":"/tmp/x"}`}}},
		mcptest.LLMTurn{Text: "I did not delete it."})
	h := chatHarness(t, "openai:gpt-test", fake, "sk-tui-key-0123456789", chat.ApproveNone)
	h.typeText("add 2 and 3")
	h.press("enter")
	h.waitText("the model asks to run a tool that may destroy: add", `"a": 2`, "ctrl+s runs it")
	h.press("ctrl+s")
	h.waitText(`← add: {"sum":5}`, "model> It is 5.")
	h.typeText("now delete /tmp/x")
	h.press("enter")
	h.waitText("the model asks to run a tool that may destroy: delete_file")
	h.press("ctrl+x")
	s := h.waitText("✗ refused delete_file", "I did not delete it.")
	if strings.Contains(s, "sk-tui-key") {
		t.Fatalf("the key is on screen:\n%s", s)
	}
	if body := string(fake.Requests()[3].Body); !strings.Contains(body, "refused") {
		t.Errorf("the refusal did not reach the model: %s", body)
	}
	h.press("alt+7")
	h.press("/")
	h.typeText("kind:model")
	h.press("enter")
	h.waitText("model", "chat", "execute_tool")
}

// TestChatParallelCalls: two calls of one turn (Gemini's, each whole with
// no index) wait one after the other, and the transcript has no empty
// model line between or before them.
func TestChatParallelCalls(t *testing.T) {
	fake := mcptest.NewFakeLLM(t, mcptest.LLMGemini,
		mcptest.LLMTurn{Calls: []mcptest.LLMCall{
			{ID: "function-call-1", Name: "add", Args: `{"a":2,"b":3}`},
			{ID: "function-call-2", Name: "add", Args: `{"a":4,"b":5}`},
		}},
		mcptest.LLMTurn{Text: "5 and 9."})
	h := chatHarness(t, "compat:gemini-test", fake, "", chat.ApproveAll)
	h.typeText("add 2+3 and 4+5")
	h.press("enter")
	s := h.waitText(`← add: {"sum":5}`, `← add: {"sum":9}`, "model> 5 and 9.")
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) == "model>" {
			t.Fatalf("an empty model line:\n%s", s)
		}
	}
}

// chatHarness starts the TUI with spec's model at fake and opens its Chat
// pane.
func chatHarness(t *testing.T, spec string, fake *mcptest.FakeLLM, key string, approve chat.Approval) *harness {
	t.Helper()
	model, err := llm.Parse(spec, llm.Options{HTTPClient: transport.NewHTTPClient(nil, transport.EgressPolicy{}), BaseURL: fake.URL, APIKey: key})
	if err != nil {
		t.Fatal(err)
	}
	h := startLoaded(t, 100, 30, func(o *Options) { o.Chat = chatpane.Options{Model: model, Approve: approve} })
	h.press("alt+c")
	h.waitText("Chat · "+spec, "you>")
	return h
}

// TestChatNoModelWrapped: without a model, what the Chat pane says of how
// to start one is wrapped to the width, whole.
func TestChatNoModelWrapped(t *testing.T) {
	h := startLoaded(t, 80, 24)
	h.press("alt+c")
	s := h.waitText("No model: start mcpi connect with")
	flat := strings.Join(strings.Fields(s), " ")
	if !strings.Contains(flat, "docs/models.md) to talk to one here.") {
		t.Errorf("the guidance is cut:\n%s", s)
	}
}
