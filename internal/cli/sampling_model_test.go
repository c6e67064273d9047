package cli

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
)

const samplingKey = "sk-sampling-test-key-0123456789"

// fakeModel starts a fake provider of format f and returns the spec and
// URL flags that name it; the key is in the environment.
func fakeModel(t *testing.T, f mcptest.LLMFormat, turns ...mcptest.LLMTurn) (*mcptest.FakeLLM, []string) {
	t.Helper()
	fake := mcptest.NewFakeLLM(t, f, turns...)
	spec := map[mcptest.LLMFormat]string{mcptest.LLMAnthropic: "anthropic:claude-test", mcptest.LLMOpenAIChat: "openai:gpt-test", mcptest.LLMOpenAIResponses: "openai-responses:gpt-test"}[f]
	return fake, []string{"--sampling-model", spec, "--sampling-model-url", fake.URL}
}

// TestSamplingModel: mcpi call answers the demo server's sampling with the
// model of --sampling-model, in each format and both eras: the answer is
// in the tool's result, the model's turns are in the trace, and the key
// is in no output (stdout, -v's stderr, the trace).
func TestSamplingModel(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", samplingKey)
	t.Setenv("OPENAI_API_KEY", samplingKey)
	for _, peer := range []string{"demo", "demo:modern"} {
		for _, f := range []mcptest.LLMFormat{mcptest.LLMAnthropic, mcptest.LLMOpenAIChat, mcptest.LLMOpenAIResponses} {
			fake, flags := fakeModel(t, f, mcptest.LLMTurn{Text: "The model says Paris."})
			trace := filepath.Join(t.TempDir(), "t.jsonl")
			args := with(peerArgs(peer), append([]string{"call", "sample", "prompt=Capital of France?", "-v", "--record", trace}, flags...)...)
			code, out, errOut := runCLI(t, "", args...)
			if code != command.ExitOK || !strings.Contains(out, "The model says Paris.") || !strings.Contains(out, "-fake") {
				t.Fatalf("%s %v: exit %d\nstdout: %s\nstderr: %s", peer, f, code, out, errOut)
			}
			data, err := os.ReadFile(trace)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(data), `"purpose":"sampling"`) || !strings.Contains(string(data), "The model says Paris.") {
				t.Errorf("%s %v: the trace lacks the sampling turn:\n%s", peer, f, data)
			}
			if !strings.Contains(errOut, "answering sampling/createMessage with") {
				t.Errorf("%s %v: -v does not say the model answers:\n%s", peer, f, errOut)
			}
			for name, s := range map[string]string{"stdout": out, "stderr": errOut, "trace": string(data)} {
				if strings.Contains(s, samplingKey) || strings.Contains(s, samplingKey[:16]) {
					t.Errorf("%s %v: the key is in %s", peer, f, name)
				}
			}
			if len(fake.Requests()) != 1 {
				t.Errorf("%s %v: %d requests to the provider", peer, f, len(fake.Requests()))
			}
		}
	}
}

// TestSamplingModelFails: a provider that fails, or stalls past
// --timeout, makes mcpi answer the server with an error saying the model
// failed; the command ends, and the key is in no output.
func TestSamplingModelFails(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", samplingKey)
	for _, tc := range []struct {
		name string
		turn mcptest.LLMTurn
		want string
	}{
		{"401 echoing the key", mcptest.LLMTurn{Status: 401, Body: `{"type":"error","error":{"type":"authentication_error","message":"bad key ` + samplingKey + `"}}`}, "refused the key"},
		{"stall", mcptest.LLMTurn{Stall: true}, "no answer within 2s"},
	} {
		_, flags := fakeModel(t, mcptest.LLMAnthropic, tc.turn)
		args := with(peerArgs("demo"), append([]string{"call", "sample", "prompt=hi", "-v", "--timeout", "2s"}, flags...)...)
		code, out, errOut := runCLI(t, "", args...)
		all := out + errOut
		if code == command.ExitOK || !strings.Contains(all, "the model anthropic:claude-test failed") || !strings.Contains(all, tc.want) {
			t.Errorf("%s: exit %d\nstdout: %s\nstderr: %s", tc.name, code, out, errOut)
		}
		if strings.Contains(all, samplingKey[:16]) {
			t.Errorf("%s: the key is in the output", tc.name)
		}
	}
}

// TestSamplingModelFlags: --sampling-model is refused with
// --sampling-reply, with a bad spec, or without its key, before the server
// is started.
func TestSamplingModelFlags(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "")
	demo := peerArgs("demo")
	for _, tc := range []cliCase{
		{name: "both answers", args: with(demo, "call", "sample", "prompt=hi", "--sampling-model", "ollama:qwen3", "--sampling-reply", "x"), code: command.ExitUsage, stderr: []string{"--sampling-model and --sampling-reply"}},
		{name: "bad spec", args: with(demo, "call", "sample", "prompt=hi", "--sampling-model", "gpt-4"), code: command.ExitUsage, stderr: []string{"--sampling-model", "PROVIDER:MODEL"}},
		{name: "no key", args: with(demo, "tools", "--sampling-model", "anthropic:claude-x"), code: command.ExitUsage, stderr: []string{"ANTHROPIC_API_KEY"}},
		{name: "compat needs a URL", args: with(demo, "tools", "--sampling-model", "compat:m"), code: command.ExitUsage, stderr: []string{"--sampling-model-url"}},
	} {
		t.Run(tc.name, func(t *testing.T) { checkCase(t, tc) })
	}
}

// TestSessionSamplingModel: a live session started with --sampling-model
// answers with the model the sampling of a command that gives no answer
// of its own; a command's own --sampling-reply still answers its own.
func TestSessionSamplingModel(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", samplingKey)
	dir := liveDir(t)
	fake, flags := fakeModel(t, mcptest.LLMAnthropic, mcptest.LLMTurn{Text: "The session's model answers."})
	trace := filepath.Join(t.TempDir(), "s.jsonl")
	startSession(t, dir, "sm", append(append(flags, "--record", trace), peerArgs("demo")...)...)
	code, out, errOut := runLive(t, dir, nil, "call", "sample", "prompt=hi", "--session", "sm")
	if code != command.ExitOK || !strings.Contains(out, "The session's model answers.") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	code, out, errOut = runLive(t, dir, nil, "call", "sample", "prompt=hi", "--session", "sm", "--sampling-reply", "by hand")
	if code != command.ExitOK || !strings.Contains(out, "by hand") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	if n := len(fake.Requests()); n != 1 {
		t.Errorf("%d requests to the provider, want 1", n)
	}
	if strings.Contains(out+errOut, samplingKey[:16]) {
		t.Error("the key is in the output")
	}
	// A command's own model answers its own requests, its turns in the
	// session's trace.
	_, own := fakeModel(t, mcptest.LLMAnthropic, mcptest.LLMTurn{Text: "The command's model answers."})
	code, out, errOut = runLive(t, dir, nil, append([]string{"call", "sample", "prompt=hi", "--session", "sm"}, own...)...)
	if code != command.ExitOK || !strings.Contains(out, "The command's model answers.") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	runLive(t, dir, nil, "session", "stop", "sm")
	data, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	// Two turns, each a request and an answer.
	if n := strings.Count(string(data), `"purpose":"sampling"`); n != 4 {
		t.Errorf("the session's trace has %d sampling events, want 4:\n%s", n, data)
	}
	if strings.Contains(string(data), samplingKey[:16]) {
		t.Error("the key is in the session's trace")
	}
}

// TestCollectionSamplingModel: a step of mcpi test whose answers name a
// model has its sampling answered by it (the URL from
// --sampling-model-url); a model that fails fails the step, saying so.
func TestCollectionSamplingModel(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", samplingKey)
	fake := mcptest.NewFakeLLM(t, mcptest.LLMOpenAIChat, mcptest.LLMTurn{Text: "four, says the model"}, mcptest.LLMTurn{Status: 400})
	path := writeCollection(t, `steps:
  - call: sample
    args: {prompt: "2+2?"}
    answers: {sampling: {model: "openai:gpt-test"}}
    expect: {text: {contains: "four, says the model"}}
  - call: sample
    args: {prompt: "2+2?"}
    answers: {sampling: {model: "openai:gpt-test"}}
`)
	code, out, errOut := runCLI(t, "", with(peerArgs("demo"), "test", path, "--sampling-model-url", fake.URL)...)
	if code == command.ExitOK || !strings.Contains(out, "1 passed, 1 failed") || !strings.Contains(out, "the model openai:gpt-test failed") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	if strings.Contains(out+errOut, samplingKey[:16]) {
		t.Error("the key is in the output")
	}
}

// TestSamplingApproveFlag: --sampling-approve is ask or auto, and auto
// needs the model whose drafts it sends.
func TestSamplingApproveFlag(t *testing.T) {
	for _, tc := range []struct {
		approve, want string
	}{{"auto", "give the model"}, {"yes", "want ask or auto"}} {
		o := &command.ConnOptions{SamplingApprove: tc.approve}
		_, err := o.NewSamplingModel(true)
		var fe *command.FlagError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("--sampling-approve %s: got %v, want a usage error saying %q", tc.approve, err, tc.want)
		}
	}
}

// TestSamplingModelExports: with --otlp-endpoint, the model's answer to
// sampling is a GenAI chat span marked purpose sampling, with the model
// asked and the model that answered.
func TestSamplingModelExports(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", samplingKey)
	sink := mcptest.NewOTLPReceiver(t)
	_, flags := fakeModel(t, mcptest.LLMAnthropic, mcptest.LLMTurn{Text: "exported"})
	runCLIExit(t, command.ExitOK, with(peerArgs("demo"), append([]string{"call", "sample", "prompt=hi", "--otlp-endpoint", sink.URL}, flags...)...)...)
	spans := sink.SpansByName()
	span, ok := spans["chat claude-test"]
	if !ok {
		t.Fatalf("no chat span: %v", keys(spans))
	}
	attrs := span.Attributes().AsRaw()
	if attrs["mcpi.purpose"] != "sampling" || attrs["gen_ai.response.model"] != "claude-test-fake" || attrs["gen_ai.provider.name"] != "anthropic" {
		t.Errorf("the chat span's attributes: %v", attrs)
	}
}
