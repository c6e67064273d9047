package tui

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/tui/common"
)

// TestAttachedPanes: what a live session's daemon gives a TUI attached to
// it reaches the panes as it should: the notifications of the session's
// past the log and notification panes, at their own times (acting on
// none); the session's roots, changed elsewhere, the Roots pane; and what
// the daemon says itself the wire, as the session's, never the
// notification pane, as the server's.
func TestAttachedPanes(t *testing.T) {
	h := startLoaded(t, 140, 30, func(o *Options) { o.Session = "demo" })
	hk := <-h.hooks
	then := frozen.Add(-time.Hour)
	hk.OnPast(session.Notification{Time: then, Method: "notifications/message",
		Params: json.RawMessage(`{"level":"warning","logger":"old","data":"said before the client attached"}`)})
	hk.OnPast(session.Notification{Time: then, Method: "notifications/resources/updated",
		Params: json.RawMessage(`{"uri":"demo://before"}`)})
	h.press("alt+8")
	h.waitText("11:00:00", "said before the client attached")
	h.press("alt+9")
	h.waitText("11:00:00", "demo://before")

	hk.OnRoots([]mcp.Root{{URI: "file:///set/elsewhere", Name: "there"}})
	h.press("alt+6")
	h.waitText("Roots (1)", "file:///set/elsewhere", "changed elsewhere")

	hk.OnNotification(session.Notification{Time: frozen, Method: "notifications/cancelled",
		Params: json.RawMessage(`{"requestId":1,"reason":"answered elsewhere, or withdrawn","_meta":{"` + mcp.MetaFromSession + `":"demo"}}`)})
	h.press("alt+7")
	h.waitText("session demo withdrew its request 1")
	h.press("alt+9")
	s := h.waitText("demo://before")
	if strings.Contains(s, "notifications/cancelled") {
		t.Errorf("the session's own word is shown as the server's notification:\n%s", s)
	}
}

// TestWithdrawnBySession: a server request withdrawn by a live session's
// daemon (answered elsewhere) says so, not that the server withdrew it.
func TestWithdrawnBySession(t *testing.T) {
	marked := `{"requestId":1,"reason":"answered elsewhere, or withdrawn","_meta":{"` + mcp.MetaFromSession + `":"demo"}}`
	for _, c := range []struct {
		session, params string
		want            string
	}{
		{"demo", marked, "by session demo: answered elsewhere, or withdrawn"},
		{"demo", `{"requestId":1,"reason":"no longer needed"}`, "by the server"},
		// Attached to no session, or another: the mark is the server's.
		{"", marked, "by the server"},
		{"other", marked, "by the server"},
	} {
		in := common.NewInbox()
		hd := &handler{inbox: in, roots: &rootStore{}, now: time.Now, session: c.session}
		ctx, cancel := context.WithCancelCause(context.Background())
		var p mcp.CancelledParams
		json.Unmarshal([]byte(c.params), &p)
		cancel(&session.CancelledError{Params: json.RawMessage(c.params), Reason: p.Reason})
		if _, err := hd.CreateMessage(ctx, &mcp.CreateMessageParams{}); err == nil {
			t.Fatal("a withdrawn request was answered")
		}
		done := make(chan struct{})
		b, _ := in.Next(done)().(*common.Batch)
		close(done)
		if b == nil || len(b.Gone) != 1 || b.Gone[0].Why != c.want {
			t.Errorf("attached to %q, withdrawn with %s: %+v, want why %q", c.session, c.params, b, c.want)
		}
	}
}
