package collection

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/daemon"
	"github.com/mcpi-dev/mcpi/internal/mcp"
)

// TestSamplingModelAnswers: a step's sampling is a text or {model:
// PROVIDER:MODEL}; a model key misspelt, empty, or a mapping without it
// is refused with its line.
func TestSamplingModelAnswers(t *testing.T) {
	f, err := Parse([]byte("steps:\n  - call: sample\n    answers: {sampling: {model: \"openai:gpt-test\"}}\n  - call: sample\n    answers: {sampling: by hand}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if a := f.Steps[0].Answers; a == nil || a.SamplingModel != "openai:gpt-test" || a.Sampling != "" {
		t.Errorf("step 1's answers = %+v, want the model", a)
	}
	if a := f.Steps[1].Answers; a == nil || a.Sampling != "by hand" || a.SamplingModel != "" {
		t.Errorf("step 2's answers = %+v, want the text", a)
	}
	for doc, want := range map[string]string{
		"steps: [{call: x, answers: {sampling: {modle: a:b}}}]":                `unknown key "modle"`,
		"steps:\n  - call: x\n    answers:\n      sampling:\n        model:\n": "model: has no value",
		"steps: [{call: x, answers: {sampling: {}}}]":                          "{model: PROVIDER:MODEL}",
	} {
		_, err := Parse([]byte(doc))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want an error saying %q", doc, err, want)
		}
	}
}

// modelFallback answers sampling with the model named, or fails.
type modelFallback struct {
	Handler
	spec string
	fail error
}

func (m *modelFallback) SampleWith(_ context.Context, spec string, _ *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	m.spec = spec
	if m.fail != nil {
		return nil, m.fail
	}
	return &mcp.CreateMessageResult{Role: "assistant", Model: spec + "-answered"}, nil
}

// TestSamplingModelHandler: a step's model answers its sampling through
// the Fallback's SampleWith; a model that fails fails the step, and the
// server gets the error.
func TestSamplingModelHandler(t *testing.T) {
	fb := &modelFallback{}
	h := &Handler{Fallback: fb}
	h.begin(&Answers{SamplingModel: "openai:gpt-test"})
	if !h.Answers(daemon.KindSampling) {
		t.Error("a step with a sampling model does not answer sampling")
	}
	res, err := h.CreateMessage(context.Background(), &mcp.CreateMessageParams{})
	if err != nil || res.Model != "openai:gpt-test-answered" || fb.spec != "openai:gpt-test" {
		t.Fatalf("CreateMessage = %+v, %v", res, err)
	}
	if p := h.end(); len(p) != 0 {
		t.Errorf("problems %+v", p)
	}
	fb.fail = &mcp.RPCError{Code: mcp.CodeInternalError, Message: "sampling: the model openai:gpt-test failed: boom"}
	h.begin(&Answers{SamplingModel: "openai:gpt-test"})
	if _, err := h.CreateMessage(context.Background(), &mcp.CreateMessageParams{}); !errors.Is(err, fb.fail) {
		t.Errorf("the server got %v, want the model's failure", err)
	}
	if p := h.end(); len(p) != 1 || !strings.Contains(p[0].Message, "failed: boom") {
		t.Errorf("problems %+v, want the model's failure", p)
	}
}
