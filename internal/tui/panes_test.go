package tui

import (
	"context"
	"strings"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/mcptest"
	"github.com/mcpi-dev/mcpi/internal/session"

	"github.com/mcpi-dev/mcpi/internal/transport"
)

// selectLine moves the selection (the row marked ›) to the row holding
// text, one key at a time, waiting for each move to show.
func (h *harness) selectLine(text string) {
	h.t.Helper()
	find := func(s string) (sel, target int, selText string) {
		sel, target = -1, -1
		for i, l := range strings.Split(s, "\n") {
			l, _, _ = strings.Cut(l, "│") // the list, not the details beside it
			if strings.Contains(l, "›") {
				sel, selText = i, l
			}
			if target < 0 && strings.Contains(l, text) {
				target = i
			}
		}
		return sel, target, selText
	}
	for range 40 {
		sel, target, cur := find(h.p.Screen())
		if sel >= 0 && strings.Contains(cur, text) {
			return
		}
		if target >= 0 && target < sel {
			h.press("up")
		} else {
			h.press("down")
		}
		h.waitFor("the selection to move", func(s string) bool { _, _, now := find(s); return now != cur })
	}
	h.t.Fatalf("could not select %q:\n%s", text, h.p.Screen())
}

// waitAllLoaded waits until every list is loaded: the other lists load
// after the tools, and the wire is stable once the prompts (the last) are in.
func (h *harness) waitAllLoaded() {
	h.t.Helper()
	h.press("alt+4")
	h.waitText("3 prompts")
	h.press("alt+1")
	h.waitText("[1 Tools]")
}

func TestResourcesPane(t *testing.T) {
	h := startLoaded(t, 100, 30)
	h.press("alt+2")
	// Every page is listed: the demo server pages by 10.
	h.waitText("16 resources", "demo://text/hello")
	h.selectLine("demo://json/config")
	h.press("enter")
	h.golden(h.waitText("✓ 1 content", `"name": "mcpi-demo"`))
	h.selectLine("demo://binary/logo.png")
	h.press("enter")
	h.waitText("binary data", "(s saves it)")
	h.press("s")
	h.waitText("saved in ")
	// Subscribing (a subscriptions/listen in the modern era) marks updates.
	h.selectLine("demo://counter")
	h.press("u")
	h.waitText("listening to 1 resource")
	h.waitText("✱")
	h.press("u")
	h.waitText("no resource subscriptions left")
	m := h.final()
	if m.Resources().Subscribed("demo://counter") || m.Resources().Updates("demo://counter") == 0 {
		t.Errorf("counter: subscribed %v, updates %d", m.Resources().Subscribed("demo://counter"), m.Resources().Updates("demo://counter"))
	}
}

// In the legacy era, u sends resources/subscribe and resources/unsubscribe.
func TestResourcesSubscribeLegacy(t *testing.T) {
	h := start(t, 100, 30, func(o *Options) {
		o.Dial = func(ctx context.Context, hk Hooks) (*session.Client, error) { return dialPeer(ctx, hk, "demo-legacy") }
	})
	h.waitText(toolsLoaded, "legacy")
	h.press("alt+2")
	h.waitText("16 resources")
	h.selectLine("demo://counter")
	h.press("u")
	h.waitText("subscribed to demo://counter", "›● demo://counter")
	h.press("alt+1")
	h.callTool("bump_counter", "")
	h.waitText("✓ done")
	h.press("alt+2")
	h.waitText("✱")
	h.press("u")
	h.waitText("unsubscribed from demo://counter")
}

func TestTemplatesPane(t *testing.T) {
	h := startLoaded(t, 100, 30)
	h.press("alt+3")
	h.waitText("2 templates")
	h.selectLine("greeting")
	h.press("enter")
	h.waitText("Read demo://greeting/{lang}/{name}", "de", "ja")
	h.typeText("f")
	h.waitFor("the fr suggestion alone", func(s string) bool {
		return strings.Contains(s, "\n    fr") && !strings.Contains(s, "\n    de")
	})
	h.press("ctrl+n", "enter", "tab")
	h.waitText("Amélie", "Camille")
	h.press("ctrl+n", "ctrl+n", "enter")
	h.waitText("→ demo://greeting/fr/Baptiste")
	h.press("enter")
	h.golden(h.waitText("✓ 1 content", "Bonjour"))
}

func TestPromptsPane(t *testing.T) {
	h := startLoaded(t, 100, 30)
	h.press("alt+4")
	h.waitText("3 prompts")
	h.selectLine("showcase")
	h.press("enter")
	h.waitText("✓", "message(s)", "1 user", "assistant")
	h.selectLine("greet")
	h.press("enter")
	h.waitText("Get greet", "name*")
	h.typeText("Ada")
	h.press("tab")
	h.waitText("casual", "formal", "pirate")
	h.typeText("p")
	h.waitFor("pirate alone", func(s string) bool {
		return strings.Contains(s, "\n    pirate") && !strings.Contains(s, "\n    formal")
	})
	h.press("ctrl+n", "enter", "enter")
	h.golden(h.waitText("prompts/get greet name=Ada style=pirate", "✓ 1 message(s)", "1 user"))
}

func TestLogAndNotificationPanes(t *testing.T) {
	h := startLoaded(t, 100, 30)
	h.press("alt+8")
	h.waitText("showing debug and above")
	h.press("L")
	h.waitText("asked the server for debug and above")
	h.press("+", "+", "+")
	h.waitText("showing warning and above")
	h.press("alt+1")
	h.callTool("log", "unit")
	h.waitText("✓ done")
	h.press("alt+8")
	s := h.waitText("(error)", "(alert)")
	if strings.Contains(s, "(notice)") {
		t.Errorf("the level filter shows notice:\n%s", s)
	}
	h.press("-", "-", "-")
	h.waitText("(debug)", "(notice)")
	h.press("alt+9")
	h.waitText("notifications/message", "notifications, newest last")
}

// TestLogPaneGolden shows the log pane with a filtered level.
func TestLogPaneGolden(t *testing.T) {
	h := startLoaded(t, 100, 30)
	h.press("alt+8", "L")
	h.waitText("asked the server for debug and above")
	h.press("alt+1")
	h.callTool("log", "golden")
	h.waitText("✓ done")
	h.press("alt+8", "+", "+", "+")
	h.golden(h.waitText("showing warning and above", "emergency"))
}

// TestNotificationsPaneGolden shows every notification of a log call.
func TestNotificationsPaneGolden(t *testing.T) {
	h := start(t, 100, 30)
	// The acknowledgement of the session's subscriptions/listen first.
	h.waitText(toolsLoaded, "notifications 1")
	h.press("alt+8", "L")
	h.waitText("asked the server for debug and above")
	h.press("alt+1")
	h.callTool("log", "")
	h.waitText("✓ done")
	h.press("alt+9")
	h.golden(h.waitText("9 notifications, newest last", "Notifs (9)", "subscriptions/ackn"))
}

func TestStderrPane(t *testing.T) {
	h := startLoaded(t, 100, 30)
	hooks := <-h.hooks
	hooks.Tap.Observe(transport.Event{Time: frozen, Kind: transport.KindStderr, Dir: transport.Incoming, Data: []byte("panic: \x1b[31mboom")})
	h.press("alt+0")
	s := h.waitText(`panic: \e[31mboom`)
	if strings.Contains(s, "\x1b") {
		t.Errorf("raw escape on screen")
	}
	h.golden(s)
}

func TestComposer(t *testing.T) {
	h := startLoaded(t, 100, 30)
	h.press("ctrl+e")
	h.waitText("Raw JSON-RPC")
	h.typeText("prompts/list")
	h.press("enter")
	h.golden(h.waitText("✓ result", `"resultType"`))
	h.press("tab")
	h.typeText(`{"jsonrpc":"2.0","method":"notifications/nothing"}`)
	h.press("ctrl+f")
	h.waitText("✓ frame written")
	h.press("esc")
	h.waitText(toolsLoaded)
}

// The subscriptions view lists the resources subscribed to with the times
// of their updates; enter reads one; u unsubscribes, the history staying.
func TestSubscriptionsView(t *testing.T) {
	h := startLoaded(t, 100, 30)
	h.press("alt+2")
	h.waitText("16 resources")
	h.press("U")
	h.waitText("Subscriptions (0) · 0 updates", "No subscriptions")
	h.press("esc")
	h.waitText("16 resources")
	h.selectLine("demo://counter")
	h.press("u")
	h.waitText("listening to 1 resource")
	h.waitText("✱")
	h.press("U")
	h.waitText("Subscriptions (1) · ", "›● demo://counter", "subscribed · ", "2025-11-25 12:00:00.000")
	h.press("enter")
	h.waitText("read demo://counter", "✓ 1 content")
	h.press("u")
	h.waitText("no resource subscriptions left")
	h.waitText("not subscribed")
	m := h.final()
	times, n := m.Resources().History("demo://counter")
	if n == 0 || len(times) != min(n, 64) || !times[0].Equal(frozen) {
		t.Errorf("history: %d update(s), %d time(s) kept: %v", n, len(times), times)
	}
}

// Enter on a directory resource lists its entries (resources/directory/read,
// every page), enter on a child directory descends, enter on a file reads
// it, esc goes up.
func TestResourcesDirectory(t *testing.T) {
	h := start(t, 100, 24, skillsServer(mcptest.SkillsHonest))
	h.press("alt+2")
	h.waitText("›  skill://pdf-processing", "a directory: enter lists its entries")
	h.press("enter")
	h.waitText("2 entries in skill://pdf-processing", "SKILL.md", "references/")
	h.selectLine("references/")
	h.press("enter")
	h.waitText("1 entry in skill://pdf-processing/ref", "FORMS.md")
	h.press("enter")
	h.golden(h.waitText("✓ 1 content", "Supporting content."))
	h.press("esc")
	h.waitText("2 entries in skill://pdf-processing")
	h.press("esc")
	h.waitText("›  skill://pdf-processing")
	h.press("alt+7")
	h.waitText("resources/directory/read skill://pdf-processing", "directory skill://pdf-processing page-2")
}
