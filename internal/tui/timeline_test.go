package tui

import (
	"context"
	"strings"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/tracectx"
)

// TestTimelinePane: against the demo server, with a trace going on, the
// timeline shows a call that failed, its details carry the trace id, and
// enter goes to the call's row in the wire pane, whose detail shows the
// trace id too.
func TestTimelinePane(t *testing.T) {
	tc, err := tracectx.Parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "")
	if err != nil {
		t.Fatal(err)
	}
	h := start(t, 120, 30, func(o *Options) {
		o.Dial = func(ctx context.Context, hk Hooks) (*session.Client, error) {
			return dialPeerWith(ctx, hk, "demo", func(so *session.Options) { so.TraceContext = &tc })
		}
	})
	h.waitText(toolsLoaded)
	h.waitAllLoaded()
	h.callTool("fail", "")
	h.waitText("fail · call #1")
	h.press("alt+m")
	h.waitText("[m Timeline]", "▾ Requests", "▾ Errors 1", "✗", "(whole session)")

	h.press("/")
	h.typeText("tool:fail")
	h.press("enter", "home")
	h.waitText("› tools/call fail", "✗ isError", "trace 4bf92f3577b34da6a3ce929d0e0e4736", "filter: tool:fail")
	h.press("+")
	h.waitFor("a zoomed window", func(s string) bool { return !strings.Contains(s, "(whole session)") })
	h.press("0")
	h.waitText("(whole session)")
	h.press("enter")
	s := h.waitText("[7 Wire")
	if !strings.Contains(lineWith(s, "›"), "tools/call fail") {
		t.Errorf("enter did not select the call's row in the wire:\n%s", s)
	}
	h.press("enter")
	h.waitText("→ send frame · tools/call fail", "trace id 4bf92f3577b34da6a3ce929d0e0e4736 (Y copies it)")
	h.press("Y")
	h.waitText("copied the trace id 4bf92f3577b34da6a3ce929d0e0e4736")
}

// TestTimelineFolds: c folds the lane of the selected span to one line,
// C opens them all.
func TestTimelineFolds(t *testing.T) {
	h := startLoaded(t, 100, 30)
	h.press("alt+m")
	h.waitText("▾ Requests")
	h.press("home", "c")
	h.waitText("▸ Requests")
	h.press("C")
	h.waitText("▾ Requests")
}

func lineWith(s, sub string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}
