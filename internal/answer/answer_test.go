package answer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpi-dev/mcpi/internal/chat"
	"github.com/mcpi-dev/mcpi/internal/daemon"
	"github.com/mcpi-dev/mcpi/internal/iostreams"
	"github.com/mcpi-dev/mcpi/internal/llm"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/session"
)

// terminal is a handler on a terminal (stdin and stderr TTYs) that the
// person answers with the lines of typed; what it said is in errOut.
func terminal(t *testing.T, f Flags, typed string) (h *Handler, errOut *bytes.Buffer) {
	t.Helper()
	ios, in, _, errOut := iostreams.Test()
	ios.StdinTTY, ios.StderrTTY = true, true
	in.WriteString(typed)
	return newHandler(ios, f, nil), errOut
}

// newHandler says its lines on ios's stderr, -v included, and records the
// answers that failed in failed.
func newHandler(ios *iostreams.IOStreams, f Flags, failed *[]error) *Handler {
	say := func(format string, args ...any) {
		ios.ErrOut.Write([]byte(strings.TrimSpace(fmt.Sprintf(format, args...)) + "\n"))
	}
	return New(Options{IO: ios, Flags: func() Flags { return f }, Say: say, Verbose: say, Failed: func(err error) {
		if failed != nil {
			*failed = append(*failed, err)
		}
	}})
}

const form = `{"type":"object","properties":{
	"name":{"type":"string","title":"Name"},
	"age":{"type":"integer","minimum":0},
	"color":{"type":"string","enum":["red","blue"],"default":"red"}},
	"required":["name","age"]}`

func elicitation() *mcp.ElicitParams {
	return &mcp.ElicitParams{Message: "who are you?", RequestedSchema: json.RawMessage(form)}
}

// TestElicitFromFlags: --elicit accept fills the form from --elicit-field
// and its defaults; a field that does not fit answers cancel and records
// the mistake; decline and cancel answer as they say; without the flag
// and a terminal the request is declined with the flag named.
func TestElicitFromFlags(t *testing.T) {
	ctx := context.Background()
	ios, _, _, errOut := iostreams.Test()
	var failed []error
	h := newHandler(ios, Flags{Elicit: mcp.ElicitAccept, ElicitFields: []string{"name=Ada", "age:=36"}}, &failed)
	res, err := h.Elicit(ctx, elicitation())
	if err != nil || res.Action != mcp.ElicitAccept || len(failed) != 0 {
		t.Fatalf("accept: %+v %v %v", res, err, failed)
	}
	if diff := cmp.Diff(`{"age":36,"color":"red","name":"Ada"}`, jsonOf(t, res.Content)); diff != "" {
		t.Errorf("accept's fields (-want +got):\n%s", diff)
	}

	h = newHandler(ios, Flags{Elicit: mcp.ElicitAccept, ElicitFields: []string{"nick=Ada"}}, &failed)
	res, err = h.Elicit(ctx, elicitation())
	if err != nil || res.Action != mcp.ElicitCancel || len(failed) != 1 || !strings.Contains(failed[0].Error(), `the form has no field "nick"`) {
		t.Errorf("a field the form lacks: %+v %v %v", res, err, failed)
	}

	for _, action := range []string{mcp.ElicitDecline, mcp.ElicitCancel} {
		res, err = newHandler(ios, Flags{Elicit: action}, nil).Elicit(ctx, elicitation())
		if err != nil || res.Action != action {
			t.Errorf("--elicit %s: %+v %v", action, res, err)
		}
	}

	_, err = newHandler(ios, Flags{}, nil).Elicit(ctx, elicitation())
	var rpc *mcp.RPCError
	if !errors.As(err, &rpc) || !strings.Contains(rpc.Message, "no --elicit was given") {
		t.Errorf("no flag, no terminal: %v", err)
	}
	_, err = newHandler(ios, Flags{Elicit: mcp.ElicitAccept}, nil).Elicit(ctx, &mcp.ElicitParams{RequestedSchema: json.RawMessage(`{"type":7}`)})
	if !errors.As(err, &rpc) || rpc.Code != mcp.CodeInvalidParams || !strings.Contains(errOut.String(), "schema is invalid") {
		t.Errorf("an invalid schema: %v\n%s", err, errOut)
	}
}

// TestElicitOnTerminal: the person accepts and is asked each field until
// it fits (a number that is not one asked again), an empty answer takes
// the default; what the server wrote is shown made safe.
func TestElicitOnTerminal(t *testing.T) {
	h, errOut := terminal(t, Flags{}, "a\nAda\nold\n36\n\n")
	req := elicitation()
	req.Message = "who\x1b[2J are you?"
	res, err := h.Elicit(context.Background(), req)
	if err != nil || res.Action != mcp.ElicitAccept {
		t.Fatalf("%+v %v\n%s", res, err, errOut)
	}
	if diff := cmp.Diff(`{"age":36,"color":"red","name":"Ada"}`, jsonOf(t, res.Content)); diff != "" {
		t.Errorf("the fields (-want +got):\n%s", diff)
	}
	said := errOut.String()
	for _, want := range []string{`The server asks: who\e[2J are you?`, "Name (name) [string, required]: ", "age [integer, required]: ", "color [[red blue], default red]: "} {
		if !strings.Contains(said, want) {
			t.Errorf("stderr lacks %q:\n%s", want, said)
		}
	}
	if strings.Count(said, "age [integer, required]: ") != 2 || strings.Contains(said, "\x1b") {
		t.Errorf("the age is not asked again, or an escape reached the terminal:\n%q", said)
	}

	for typed, action := range map[string]string{"d\n": mcp.ElicitDecline, "x\n": mcp.ElicitCancel, "a\n\n\n\n": mcp.ElicitCancel} {
		h, errOut := terminal(t, Flags{}, typed)
		if res, err := h.Elicit(context.Background(), elicitation()); err != nil || res.Action != action {
			t.Errorf("typed %q: %+v %v\n%s", typed, res, err, errOut)
		}
	}
}

// TestElicitURL: --elicit accept says the URL to open; on a terminal the
// person says yes or no; without either the request is declined.
func TestElicitURL(t *testing.T) {
	req := &mcp.ElicitParams{Mode: "url", Message: "sign in", URL: "https://example.com/auth"}
	ios, _, _, errOut := iostreams.Test()
	res, err := newHandler(ios, Flags{Elicit: mcp.ElicitAccept}, nil).Elicit(context.Background(), req)
	if err != nil || res.Action != mcp.ElicitAccept || !strings.Contains(errOut.String(), "open https://example.com/auth: sign in") {
		t.Errorf("--elicit accept: %+v %v %s", res, err, errOut)
	}
	if _, err := newHandler(ios, Flags{}, nil).Elicit(context.Background(), req); err == nil || !strings.Contains(err.Error(), "URL elicitation declined") {
		t.Errorf("no terminal: %v", err)
	}
	for typed, action := range map[string]string{"yes\n": mcp.ElicitAccept, "n\n": mcp.ElicitDecline} {
		h, _ := terminal(t, Flags{}, typed)
		if res, err := h.Elicit(context.Background(), req); err != nil || res.Action != action {
			t.Errorf("typed %q: %+v %v", typed, res, err)
		}
	}
}

// TestSampling: --sampling-reply's text or @FILE answers; a file that is
// not a CreateMessageResult is an error; on a terminal the person's reply
// answers, an empty one rejects; without either, declined.
func TestSampling(t *testing.T) {
	ctx := context.Background()
	req := &mcp.CreateMessageParams{MaxTokens: 10, SystemPrompt: "be brief", Messages: []mcp.SamplingMessage{{Role: "user", Content: json.RawMessage(`{"type":"text","text":"hi"}`)}}}
	ios, _, _, _ := iostreams.Test()
	ios.Dir = t.TempDir()
	if res, err := newHandler(ios, Flags{SamplingReply: "hello"}, nil).CreateMessage(ctx, req); err != nil || res.Role != "assistant" || !strings.Contains(string(res.Content), `"hello"`) {
		t.Errorf("a text reply: %+v %v", res, err)
	}
	if err := os.WriteFile(filepath.Join(ios.Dir, "r.json"), []byte(`{"role":"assistant","content":{"type":"text","text":"from a file"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if res, err := newHandler(ios, Flags{SamplingReply: "@r.json"}, nil).CreateMessage(ctx, req); err != nil || res.Model != "mcpi" || !strings.Contains(string(res.Content), "from a file") {
		t.Errorf("@FILE: %+v %v", res, err)
	}
	if _, err := newHandler(ios, Flags{SamplingReply: "@nosuch.json"}, nil).CreateMessage(ctx, req); err == nil || !strings.Contains(err.Error(), "could not read its sampling reply") {
		t.Errorf("@FILE missing: %v", err)
	}
	if _, err := newHandler(ios, Flags{}, nil).CreateMessage(ctx, req); err == nil || !strings.Contains(err.Error(), "no --sampling-reply or --sampling-model was given") {
		t.Errorf("no terminal: %v", err)
	}

	h, errOut := terminal(t, Flags{}, "typed\n")
	res, err := h.CreateMessage(ctx, req)
	if err != nil || !strings.Contains(string(res.Content), `"typed"`) || !strings.Contains(errOut.String(), "system: be brief") || !strings.Contains(errOut.String(), "user: hi") {
		t.Errorf("on a terminal: %+v %v\n%s", res, err, errOut)
	}
	h, _ = terminal(t, Flags{}, "\n")
	if _, err := h.CreateMessage(ctx, req); !errors.Is(err, session.ErrRejected) {
		t.Errorf("an empty reply: %v", err)
	}
}

// failing is a model that always fails.
type failing struct{}

func (failing) Name() string  { return "fake" }
func (failing) Model() string { return "m" }
func (failing) Stream(context.Context, *llm.Request, func(llm.Event)) (*llm.Response, error) {
	return nil, errors.New("down")
}

// TestSampleWith: a step's model is made once per spec, and a spec that
// cannot be made is the request's error.
func TestSampleWith(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	var made []string
	h := New(Options{IO: ios, Model: func(spec string) (*chat.Sampler, error) {
		made = append(made, spec)
		if spec == "bad:x" {
			return nil, errors.New("no such provider")
		}
		return &chat.Sampler{Model: failing{}}, nil
	}})
	req := &mcp.CreateMessageParams{Messages: []mcp.SamplingMessage{{Role: "user", Content: json.RawMessage(`{"type":"text","text":"hi"}`)}}}
	for range 2 {
		if _, err := h.SampleWith(context.Background(), "fake:m", req); err == nil || !strings.Contains(err.Error(), "the model fake:m failed: down") {
			t.Errorf("the model's failure: %v", err)
		}
	}
	if _, err := h.SampleWith(context.Background(), "bad:x", req); err == nil || !strings.Contains(err.Error(), "sampling: no such provider") {
		t.Errorf("a spec that cannot be made: %v", err)
	}
	if diff := cmp.Diff([]string{"fake:m", "bad:x"}, made); diff != "" {
		t.Errorf("models made (-want +got):\n%s", diff)
	}
}

// TestRootsAndAnswers: the flags are read when a request comes (a
// command makes its roots and model after its handler); the first
// roots/list closes RootsAsked; Answers says which kinds the flags answer.
func TestRootsAndAnswers(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	var f Flags
	h := New(Options{IO: ios, Flags: func() Flags { return f }})
	if h.Answers(daemon.KindSampling) || h.Answers(daemon.KindElicit) {
		t.Error("no flags answer, yet Answers says so")
	}
	select {
	case <-h.RootsAsked():
		t.Fatal("RootsAsked closed before roots/list")
	default:
	}
	f = Flags{Roots: []mcp.Root{{URI: "file:///tmp"}}, SamplingReply: "x", Elicit: mcp.ElicitDecline}
	for range 2 {
		res, err := h.ListRoots(context.Background())
		if err != nil || len(res.Roots) != 1 || res.Roots[0].URI != "file:///tmp" {
			t.Fatalf("roots: %+v %v", res, err)
		}
	}
	<-h.RootsAsked()
	if !h.Answers(daemon.KindSampling) || !h.Answers(daemon.KindElicit) {
		t.Error("the flags answer, yet Answers says not")
	}
}

// TestAskGivesUp: a question nobody answers ends with ctx, its line
// ended; stdin's end with no line is the read's error, a last line
// without its newline an answer.
func TestAskGivesUp(t *testing.T) {
	r, w := io.Pipe()
	defer w.Close()
	ios, _, _, errOut := iostreams.Test()
	ios.In = r
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := NewTerminal(ios).Ask(ctx, "name? "); !errors.Is(err, context.Canceled) || errOut.String() != "name? \n" {
		t.Errorf("cancelled: %v %q", err, errOut)
	}
	ios, in, _, _ := iostreams.Test()
	in.WriteString("last\r")
	term := NewTerminal(ios)
	if s, err := term.Ask(context.Background(), ""); s != "last" || err != nil {
		t.Errorf("a last line: %q %v", s, err)
	}
	if _, err := term.Ask(context.Background(), ""); !errors.Is(err, io.EOF) {
		t.Errorf("stdin's end: %v", err)
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
