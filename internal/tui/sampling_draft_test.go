package tui

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/mcp"
)

// drafting is a sampling model that drafts text, or fails with err.
func drafting(text string, err error, auto bool) func(*Options) {
	return func(o *Options) {
		o.Sampling = &SamplingModel{Name: "fake:drafter", Auto: auto, Draft: func(context.Context, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			if err != nil {
				return nil, err
			}
			content, _ := json.Marshal(map[string]string{"type": "text", "text": text})
			return &mcp.CreateMessageResult{Role: "assistant", Content: content, Model: "drafter-1", StopReason: "endTurn"}, nil
		}}
	}
}

// callSample calls the demo server's sample tool from the tools pane.
func (h *harness) callSample() {
	h.waitText(toolsLoaded)
	h.typeText("sample")
	h.press("enter")
	h.typeText("What is 2+2?")
	h.press("tab", "tab")
	h.typeText("0")
	h.press("ctrl+s")
}

// TestSamplingDraftSent: with a sampling model, the modal opens with the
// model's draft and says which model drafted it; sent unedited, the
// server gets the draft with the model that made it.
func TestSamplingDraftSent(t *testing.T) {
	h := start(t, 100, 30, drafting("Four, drafted.", nil, false))
	h.callSample()
	s := h.waitText("sampling/createMessage", "Drafted by fake:drafter", "│ Four, drafted.")
	if strings.Contains(s, `Reply (as model "mcpi-user"`) {
		t.Errorf("the reply with a draft is said to go as mcpi-user's:\n%s", s)
	}
	h.press("ctrl+s")
	h.waitText("✓ done", "Four, drafted.", `model "drafter-1"`)
}

// TestSamplingDraftEdited: an edited draft goes as the person's reply.
func TestSamplingDraftEdited(t *testing.T) {
	h := start(t, 100, 30, drafting("Four", nil, false))
	h.callSample()
	h.waitText("Drafted by fake:drafter", "│ Four")
	h.typeText("!")
	h.press("ctrl+s")
	s := h.waitText("✓ done", "Four!", `model "mcpi-user"`)
	if strings.Contains(s, "drafter-1") {
		t.Errorf("an edited draft went as the model's:\n%s", s)
	}
}

// TestSamplingDraftFailed: a model that fails leaves the reply to the
// person, the modal saying why there is no draft.
func TestSamplingDraftFailed(t *testing.T) {
	h := start(t, 100, 30, drafting("", errors.New("sampling: the model fake:drafter failed: HTTP 500"), false))
	h.callSample()
	h.waitText("sampling/createMessage", "no draft: sampling: the model fake:drafter failed: HTTP 500")
	h.typeText("by hand")
	h.press("ctrl+s")
	h.waitText("✓ done", "by hand", `model "mcpi-user"`)
}

// TestSamplingDraftAuto: with Auto the draft is sent unattended: no modal.
func TestSamplingDraftAuto(t *testing.T) {
	h := start(t, 100, 30, drafting("Four, unattended.", nil, true))
	h.callSample()
	s := h.waitText("✓ done", "Four, unattended.", `model "drafter-1"`)
	if strings.Contains(s, "request waiting") {
		t.Errorf("an unattended draft was queued:\n%s", s)
	}
}
