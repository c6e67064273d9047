package loadmcp

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/collection"
	"github.com/mcpi-dev/mcpi/internal/load"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/record"
	"github.com/mcpi-dev/mcpi/internal/session"
)

// A result bench need not decode: isError absent or false, content an
// array; anything else is decoded.
func TestSucceededWithoutDecoding(t *testing.T) {
	for raw, want := range map[string]bool{
		`{"content":[{"type":"text","text":"x"}]}`:        true,
		`{"isError":false,"content":[]}`:                  true,
		` {"content" : [] , "structuredContent":{"a":1}}`: true,
		`{"content":[],"isError":true}`:                   false,
		`{"content":[],"isError":null}`:                   false,
		`{"isError":false}`:                               false,
		`{"content":5}`:                                   false,
		`{"content":[],"is\u0045rror":true}`:              false,
		`[]`:                                              false,
		`{"content":[]`:                                   false,
	} {
		if got := succeeded([]byte(raw)); got != want {
			t.Errorf("succeeded(%s) = %v, want %v", raw, got, want)
		}
	}
}

// A request's clock ending is a timeout; the run's interruption is not.
func TestTimedOut(t *testing.T) {
	for err, want := range map[error]bool{
		session.ErrTimeout: true,
		fmt.Errorf("call: %w", context.DeadlineExceeded): true,
		context.Canceled: false,
		fmt.Errorf("%w: %w", context.Canceled, session.ErrTimeout): false,
		session.ErrDisconnected: false,
	} {
		if got := timedOut(err); got != want {
			t.Errorf("timedOut(%v) = %v, want %v", err, got, want)
		}
	}
}

// A step that expected its error passes; a JSON-RPC error keeps its code;
// a failed isError expectation is a tool error, any other an expectation.
func TestStepOutcome(t *testing.T) {
	if got := stepOutcome(collection.StepReport{Outcome: collection.Outcome{OK: true}, RPCErr: &session.RPCError{RPCError: &mcp.RPCError{Code: -32602}}}); !got.OK() {
		t.Errorf("an expected error: %+v", got)
	}
	got := stepOutcome(collection.StepReport{RPCErr: &session.RPCError{Method: "tools/call", RPCError: &mcp.RPCError{Code: -32602, Message: "bad"}}})
	if got.Kind != load.RPC || got.Code != -32602 {
		t.Errorf("an RPC error: %+v", got)
	}
	got = stepOutcome(collection.StepReport{Failures: []collection.Failure{{Path: "content", Message: "m1"}, {Path: "isError", Message: "m2"}}})
	if got.Kind != load.ToolError || got.Message != "m1" {
		t.Errorf("isError failed: %+v", got)
	}
	got = stepOutcome(collection.StepReport{Failures: []collection.Failure{{Path: "content.0.text", Message: "m"}}})
	if got.Kind != load.Expectation {
		t.Errorf("an expectation: %+v", got)
	}
}

// Warnings are counted by kind, bounded, and said once each, redacted.
func TestHeardWarnings(t *testing.T) {
	var h Heard
	h.Warned(session.Warning{Message: "frame has\nsecret-1"})
	h.Warned(session.Warning{Message: "frame has\nsecret-1"})
	for i := range load.MaxKinds + 3 {
		h.Warned(session.Warning{Message: fmt.Sprint("kind ", i)})
	}
	h.Notified(session.Notification{})
	var b strings.Builder
	h.SayWarnings(&b, record.NewRedactor([]string{"secret-1"}))
	out := b.String()
	if strings.Contains(out, "secret-1") || !strings.Contains(out, "warning (2 times): frame has") {
		t.Errorf("warnings:\n%s", out)
	}
	if n := strings.Count(out, "\n"); n != load.MaxKinds+1 {
		t.Errorf("%d lines, want %d (the kinds past the bound are one more):\n%s", n, load.MaxKinds+1, out)
	}
	if !strings.Contains(out, "other warnings") || h.Notifications() != 1 {
		t.Errorf("other warnings / notifications %d:\n%s", h.Notifications(), out)
	}
}
