package term

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpi-dev/mcpi/internal/chat"
	"github.com/mcpi-dev/mcpi/internal/iostreams"
	"github.com/mcpi-dev/mcpi/internal/llm"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// dialogue is a dialogue on test streams, the person typing typed; Say
// writes its lines on stderr.
func dialogue(o Options, typed string) (d *Dialogue, out, errOut *bytes.Buffer) {
	ios, in, out, errOut := iostreams.Test()
	in.WriteString(typed)
	var mu sync.Mutex
	o.IO = ios
	o.Say = func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(ios.ErrOut, format+"\n", args...)
	}
	return New(o), out, errOut
}

// TestEventLines: the model's text is streamed on stdout, a line it left
// open ended once before a call; calls and results are lines of stderr;
// what the model and the tool wrote is made safe.
func TestEventLines(t *testing.T) {
	d, out, errOut := dialogue(Options{}, "")
	d.Event(chat.Event{Kind: chat.EventText, Text: "Adding "})
	d.Event(chat.Event{Kind: chat.EventText, Text: "\x1b[31mnow."})
	d.Event(chat.Event{Kind: chat.EventToolCall, Call: &llm.ToolCall{Name: "add", Arguments: json.RawMessage(`{"a":2}`)}})
	d.Event(chat.Event{Kind: chat.EventToolCall, Call: &llm.ToolCall{Name: "add", Arguments: json.RawMessage(`{"a":4}`)}})
	d.Event(chat.Event{Kind: chat.EventToolResult, Result: &chat.ToolResult{Tool: "add", Text: "2\x07"}})
	d.Event(chat.Event{Kind: chat.EventToolResult, Result: &chat.ToolResult{Tool: "add", Text: "no", Denied: true}})
	d.Event(chat.Event{Kind: chat.EventToolResult, Result: &chat.ToolResult{Tool: "add", Text: "bad", IsError: true}})
	d.Event(chat.Event{Kind: chat.EventText, Text: "Done.\n"})
	if diff := cmp.Diff("Adding \\e[31mnow.\nDone.\n", out.String()); diff != "" {
		t.Errorf("stdout (-want +got):\n%s", diff)
	}
	want := "→ add {\"a\":2}\n→ add {\"a\":4}\n← add: 2\\x07\n✗ refused add: no\n← error add: bad\n"
	if diff := cmp.Diff(want, errOut.String()); diff != "" {
		t.Errorf("stderr (-want +got):\n%s", diff)
	}
}

// TestAsk: y runs the call, e edits its arguments until they are a JSON
// object, anything else refuses it with the person's words, and the end
// of input refuses it.
func TestAsk(t *testing.T) {
	call := chat.Proposal{Call: llm.ToolCall{Name: "delete_file", Arguments: json.RawMessage(`{"path":"/tmp/x"}`)}, Destructive: true}
	for _, c := range []struct {
		typed string
		want  chat.Decision
	}{
		{"y\n", chat.Decision{Verdict: chat.Allow}},
		{"YES\n", chat.Decision{Verdict: chat.Allow}},
		{"e\n[1]\n{\"path\":\"/tmp/y\"}\n", chat.Decision{Verdict: chat.Allow, Arguments: json.RawMessage(`{"path":"/tmp/y"}`)}},
		{"e\n", chat.Decision{Verdict: chat.Deny, Why: "the person stopped"}},
		{"not that one\n", chat.Decision{Verdict: chat.Deny, Why: "not that one"}},
		{"", chat.Decision{Verdict: chat.Deny, Why: "the person stopped"}},
	} {
		d, _, errOut := dialogue(Options{}, c.typed)
		if diff := cmp.Diff(c.want, d.Ask(context.Background(), call)); diff != "" {
			t.Errorf("typed %q (-want +got):\n%s", c.typed, diff)
		}
		if !strings.HasPrefix(errOut.String(), "the model calls a tool that may destroy: delete_file {\"path\":\"/tmp/x\"}\nrun it? [y]es, [e]dit, [N]o: ") {
			t.Errorf("typed %q: the question: %q", c.typed, errOut)
		}
		if strings.HasPrefix(c.typed, "e\n[1]") && !strings.Contains(errOut.String(), "not a JSON object: try again") {
			t.Errorf("an edit that is not an object is not refused: %q", errOut)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	d, _, _ := dialogue(Options{}, "")
	nobody, typing := io.Pipe() // an input nobody types on
	defer typing.Close()
	d.in.Reset(nobody)
	if got := d.Ask(ctx, call); got.Verdict != chat.Deny || got.Why != "the person stopped" {
		t.Errorf("cancelled: %+v", got)
	}
}

// adder is a server whose one tool, add, answers 5.
type adder struct{}

func (adder) CallToolRaw(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return json.RawMessage(`{"content":[{"type":"text","text":"5"}]}`), nil
}

func runner(t *testing.T, d *Dialogue, o chat.Options, turns ...mcptest.LLMTurn) *chat.Runner {
	t.Helper()
	fake := mcptest.NewFakeLLM(t, mcptest.LLMOpenAIChat, turns...)
	p, err := llm.Parse("openai:gpt-test", llm.Options{HTTPClient: transport.NewHTTPClient(nil, transport.EgressPolicy{}), BaseURL: fake.URL, APIKey: "sk-test-0123456789", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	o.Model, o.Server, o.Ask = p, adder{}, d.Ask
	if !d.o.JSON {
		o.OnEvent = d.Event // as mcpi chat: with --json, the one document
	}
	o.Tools = []mcp.Tool{{Name: "add", InputSchema: json.RawMessage(`{"type":"object"}`)}}
	return chat.New(o)
}

// TestConverse: the person's messages and their answers about the calls
// are read from one input, line after line; a budget that stops the
// model is said, and the conversation goes on until the input ends.
func TestConverse(t *testing.T) {
	d, out, errOut := dialogue(Options{Model: "openai:gpt-test", MaxTurns: 1}, "add 2 and 3\ny\n\nagain\n")
	r := runner(t, d, chat.Options{MaxTurns: 1},
		mcptest.LLMTurn{Text: "Adding.", Calls: []mcptest.LLMCall{{ID: "c1", Name: "add", Args: `{"a":2,"b":3}`}}},
		mcptest.LLMTurn{Text: "It is 5."})
	if err := d.Converse(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	said := errOut.String()
	for _, want := range []string{"talking to openai:gpt-test", "run it? [y]es", "← add: 5", "stopped: the model took 1 turns (--max-turns)"} {
		if !strings.Contains(said, want) {
			t.Errorf("stderr lacks %q:\n%s", want, said)
		}
	}
	if strings.Count(said, "you> ") != 4 || !strings.Contains(out.String(), "Adding.\nIt is 5.\n") {
		t.Errorf("stdout %q\nstderr %s", out, said)
	}
}

// TestOutcome: a --prompt run's end is a summary line, the budget that
// stopped the model said; with JSON, one document with every call.
func TestOutcome(t *testing.T) {
	d, _, errOut := dialogue(Options{Model: "openai:gpt-test", MaxCost: 0.5}, "")
	r := runner(t, d, chat.Options{Approve: chat.ApproveAll}, mcptest.LLMTurn{Text: "hi"})
	res := r.Send(context.Background(), "hello")
	res.Stop = chat.StopMaxCost
	if err := d.Outcome(r, res, &chat.Presented{}, 1500*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errOut.String(), "max-cost · 1 turns · 0 tool calls · 10 in / 5 out tokens") || !strings.Contains(errOut.String(), "· 1.5s\nstopped: the conversation cost $0.5000 (--max-cost)\n") {
		t.Errorf("the summary: %s", errOut)
	}

	d, out, errOut := dialogue(Options{Model: "openai:gpt-test", JSON: true}, "")
	r = runner(t, d, chat.Options{Approve: chat.ApproveAll},
		mcptest.LLMTurn{Calls: []mcptest.LLMCall{{ID: "c1", Name: "add", Args: `{"a":2,"b":3}`}}},
		mcptest.LLMTurn{Text: "It is 5."})
	res = r.Send(context.Background(), "add")
	res.Err = errors.New("shown")
	if err := d.Outcome(r, res, &chat.Presented{Host: "claude-code"}, time.Second); err != nil {
		t.Fatal(err)
	}
	var rep Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil || errOut.Len() != 0 {
		t.Fatalf("%v\n%s\n%s", err, out, errOut)
	}
	want := Report{Model: "openai:gpt-test", Host: "claude-code", Stop: chat.StopDone, Text: "It is 5.", Error: "shown", Duration: 1000,
		Calls: []Call{{ID: "c1", Tool: "add", Arguments: json.RawMessage(`{"a":2,"b":3}`), Result: "5"}}}
	if diff := cmp.Diff(want, rep, cmpIgnoreTotals); diff != "" {
		t.Errorf("the report (-want +got):\n%s", diff)
	}
	if len(rep.Turns) != 2 || rep.Usage.InputTokens == 0 {
		t.Errorf("turns %d, usage %+v", len(rep.Turns), rep.Usage)
	}
}

// cmpIgnoreTotals leaves out what the fake's timing and prices decide.
var cmpIgnoreTotals = cmp.FilterPath(func(p cmp.Path) bool {
	switch p.String() {
	case "Turns", "Usage", "CostUSD", "Priced":
		return true
	}
	return false
}, cmp.Ignore())

// TestPrintPresented: the tools as the host's model sees them, made safe,
// and the host's notes; or one JSON document.
func TestPrintPresented(t *testing.T) {
	p := &chat.Presented{Host: "claude-code", Tools: []llm.Tool{{Name: "mcp__demo__add", Description: "Adds.\x1b[2J"}}, Notes: []string{"renamed"}}
	ios, _, out, _ := iostreams.Test()
	if err := PrintPresented(ios, false, p); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "what the model sees, host claude-code: 1 tools\n  mcp__demo__add") || !strings.Contains(out.String(), `Adds.\e[2J`) || !strings.Contains(out.String(), "  ! renamed\n") {
		t.Errorf("%q", out)
	}
	ios, _, out, _ = iostreams.Test()
	if err := PrintPresented(ios, true, p); err != nil || !json.Valid(out.Bytes()) || !strings.Contains(out.String(), `"host"`) {
		t.Errorf("--json: %v %s", err, out)
	}
}
