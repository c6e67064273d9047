package tui

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/mcpi-dev/mcpi/internal/demoserver"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/transport"
	"github.com/mcpi-dev/mcpi/internal/tui/common"
)

// The header tells the truth about an HTTP server that dies while the TUI
// is idle, and about the new session mcpi starts when it comes back having
// forgotten the old one; the lists are fetched again for the new session.
func TestHeaderFollowsAServerThatDiesAndComesBack(t *testing.T) {
	srv := mcptest.NewRestartable(t, demoserver.HTTPHandler(demoserver.Options{Era: demoserver.EraLegacy}))
	h := start(t, 100, 30, func(o *Options) {
		o.Target = srv.URL()
		o.Dial = func(ctx context.Context, hk Hooks) (*session.Client, error) {
			conn, err := transport.DialHTTP(ctx, transport.ModeAuto, transport.HTTPOptions{URL: srv.URL(), Tap: hk.Tap})
			if err != nil {
				return nil, err
			}
			return session.Connect(ctx, conn, session.Options{
				Handler: hk.Handler, OnNotification: hk.OnNotification, OnWarning: hk.OnWarning,
				OnHealth: hk.OnHealth, KeepAlive: 200 * time.Millisecond, Era: session.EraLegacy,
				Timeout: 5 * time.Second,
			})
		}
	})
	h.waitText(toolsLoaded, "● connected", "streamable-http")
	srv.Stop()
	h.waitText("✗ unreachable", "ctrl+r reconnects")
	srv.Handler = demoserver.HTTPHandler(demoserver.Options{Era: demoserver.EraLegacy}) // a new process
	srv.Start()
	s := h.waitText("● connected", "the server forgot the session: a new one started, lists reloaded")
	if strings.Contains(s, "unreachable") {
		t.Errorf("still unreachable:\n%s", s)
	}
	// The new session answers: a call goes through.
	h.callTool("echo", "after the restart")
	h.waitText("✓ done", "after the restart")
	h.press("alt+i")
	h.waitText("sessions", "2 (the server forgot the session 1 time")
}

// A stdio server that exits is "disconnected" with its exit status, and
// ctrl+r starts it again.
func TestHeaderWhenTheServerExits(t *testing.T) {
	h := start(t, 100, 30, func(o *Options) {
		o.Target = "stdio: crash"
		o.Dial = func(ctx context.Context, hk Hooks) (*session.Client, error) {
			return dialPeer(ctx, hk, "hostile:"+mcptest.HostileCrash)
		}
	})
	h.waitText("● connected", "(1/1)")
	h.press("enter", "ctrl+s")
	h.waitText("✗ disconnected", "ctrl+r starts it again", "status 3")
	h.press("ctrl+r")
	h.waitText("● connected", "hostile-crash")
}

// The Info pane shows what the server said of itself and how the session
// was chosen.
func TestInfoPane(t *testing.T) {
	h := startLoaded(t, 100, 40)
	h.press("alt+i")
	h.golden(h.waitText("[i Info]", "Connection", "era chosen", "Capabilities", "Instructions", "mcpi-demo"))
	h.press("end")
	h.waitText("Instructions")
}

// A person answering a sampling request stops the request clock: the call
// whose server asks outlives its timeout, and the typed reply gets there.
func TestAnswerStopsTheClock(t *testing.T) {
	h := start(t, 100, 30, func(o *Options) {
		o.Dial = func(ctx context.Context, hk Hooks) (*session.Client, error) {
			return dialPeerWith(ctx, hk, "demo", func(so *session.Options) { so.Timeout = 300 * time.Millisecond })
		}
	})
	h.waitText(toolsLoaded)
	h.callTool("sample", "slow answer")
	h.waitText("sampling/createMessage", "no request times out while")
	h.typeText("took my time")
	time.Sleep(1200 * time.Millisecond) // four timeouts' worth of a person thinking
	h.press("ctrl+s")
	h.waitText("✓ done", "took my time")
}

// ctrl+c in a sampling box does not throw the reply away: it asks again;
// esc sets the request aside with what was typed, ctrl+o brings it back.
func TestCtrlCDoesNotLoseAnAnswer(t *testing.T) {
	h := startLoaded(t, 80, 24)
	h.callTool("sample", "q")
	h.waitText("sampling/createMessage")
	h.typeText("half a reply")
	h.press("ctrl+c")
	// The whole line at 80 columns: what would be lost, and the way out.
	h.waitText("ctrl+c again quits: 1 server request waiting, 1 call running; esc sets it aside", "│ half a reply")
	h.press("esc")
	h.waitText("set aside: ctrl+o brings it back")
	h.press("ctrl+o")
	h.waitText("│ half a reply")
	h.typeText(", finished")
	h.press("ctrl+s")
	h.waitText("✓ done", "half a reply, finished")
	// Nothing to lose any more: one ctrl+c quits.
	h.press("alt+2", "ctrl+c")
	h.tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
}

// The tabs keep the counts that are news at 80 columns.
func TestTabCountsAt80(t *testing.T) {
	h := startLoaded(t, 80, 24)
	h.callTool("sample", "q")
	h.waitText("5Re(1)", "1 request waiting")
}

// A log row opens in full; the logger column is as wide as the loggers.
func TestLogRowOpens(t *testing.T) {
	h := startLoaded(t, 100, 30)
	h.press("alt+8", "L")
	h.waitText("asked the server for debug and above")
	h.press("alt+1")
	h.callTool("log", "")
	h.waitText("✓ done")
	h.press("alt+8")
	h.waitText("emergency mcpi-demo")
	h.press("enter")
	s := h.waitText("row in full", "emergency mcpi-demo", `"message": "hello from the demo server"`)
	if strings.Contains(s, "…") {
		t.Errorf("the row in full is cut:\n%s", s)
	}
	h.press("esc")
	h.waitText("showing debug and above")
}

// The resources pane never shows one resource's content under another.
func TestResourceReadStaysWithItsResource(t *testing.T) {
	h := startLoaded(t, 100, 30)
	h.press("alt+2")
	h.waitText("demo://json/config")
	for range 14 { // logo, counter, items/1..12, then the config
		h.press("down")
	}
	h.press("enter")
	h.waitText("read demo://json/config ✓ 1 content")
	h.press("down")
	s := h.waitText("demo://text/hello · text/plain", "enter reads this resource")
	if strings.Contains(s, `"mcpi-demo"`) {
		t.Errorf("the config's content shows under demo://text/hello:\n%s", s)
	}
}

// o reads a result's resource links in place.
func TestResourceLinkReadInPlace(t *testing.T) {
	h := startLoaded(t, 100, 40)
	h.callTool("get_content", "")
	h.waitText("✓ done", "o reads it here", "for user, assistant · priority 0.8")
	h.press("o")
	h.waitText("│ ✓ read: 1 content", "│ Hello from the mcpi demo server!")
}

// The composer sends a malformed frame as typed, and says so.
func TestComposerSendsAMalformedFrame(t *testing.T) {
	h := startLoaded(t, 100, 30)
	h.press("ctrl+e", "tab")
	h.typeText(`{"jsonrpc":"2.0","id":99,"method":`)
	h.press("ctrl+f")
	h.waitText("⚠ the frame sent as typed is malformed: not valid JSON", "✓ frame written")
	// The wire shows it for what it is.
	h.press("esc", "alt+7", "end")
	h.waitText("→ frame     not JSON", "34 B")
}

// alt+t on a tool that takes no tasks is refused once, then sent (2025-11-25
// tasks); in 2026-07-28, where the server decides, it calls at once.
func TestAsTaskRefusedOnce(t *testing.T) {
	h := start(t, 100, 30, func(o *Options) {
		o.Dial = func(ctx context.Context, hk Hooks) (*session.Client, error) { return dialPeer(ctx, hk, "demo-legacy") }
	})
	h.waitText(toolsLoaded)
	h.typeText("echo")
	h.press("enter")
	h.typeText("x")
	h.press("alt+t")
	h.waitText("the tool takes no tasks (taskSupport absent = forbidden)", "alt+t again sends it as a task anyway")
	h.press("alt+t")
	h.waitText("echo · call #1")

	h = start(t, 100, 30)
	h.waitText(toolsLoaded)
	h.typeText("echo")
	h.press("enter")
	h.typeText("x")
	h.press("alt+t")
	h.waitText("echo · call #1", "✓ done")
}

// The help lists a key once, with the meaning it has where the focus is.
func TestHelpListsAKeyOnce(t *testing.T) {
	h := startLoaded(t, 200, 40)
	h.typeText("echo")
	h.press("enter", "f1")
	s := h.waitText("alt+1…0 pane", "close help")
	for _, k := range []string{`alt\+i\s+info`, `alt\+k\s+check`, `alt\+s\s+skills`} {
		if !regexp.MustCompile(k).MatchString(s) {
			t.Errorf("the help lacks %s:\n%s", k, s)
		}
	}
	for _, k := range []string{"esc", "tab"} {
		if n := len(regexp.MustCompile(`(^|\s)`+k+`\s`).FindAllString(s, -1)); n > 1 {
			t.Errorf("%q is listed %d times:\n%s", k, n, s)
		}
	}
	// esc closes the help and nothing under it.
	h.press("esc")
	h.waitFor("the help closed, the form still open", func(s string) bool {
		return !strings.Contains(s, "alt+1…0 pane") && strings.Contains(s, "Call echo")
	})
}

// A tool added by the server shows without a key in the modern era: the
// session's one subscriptions/listen asks for every list's changes.
func TestToolsListChangedModern(t *testing.T) {
	h := start(t, 100, 30)
	h.waitText(toolsLoaded, "modern")
	h.callTool("toggle_tool", "")
	h.waitText("✓ done")
	h.press("alt+l", "ctrl+u")
	h.waitText("(19/19)")
	// and ctrl+l lists again on demand
	h.press("ctrl+l")
	h.waitText("listing the tools again")
}

// The recording's file name is on the status line at 80 columns.
func TestRecordingFileShown(t *testing.T) {
	h := startLoaded(t, 80, 24)
	h.press("alt+r")
	s := h.waitText("● rec", "recording started")
	if !strings.Contains(s, ".jsonl") {
		t.Errorf("the trace's name is not visible:\n%s", s)
	}
	h.press("down")
	h.waitText("● rec", ".jsonl")
	h.press("alt+r")
	h.waitText("recording stopped")
}

// A resize clears the screen, so that a terminal's reflowed lines do not
// stay behind the new frame.
func TestResizeClears(t *testing.T) {
	m := New(context.Background(), Options{})
	defer m.Close()
	_, cmd := m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	if cmd == nil {
		t.Fatal("no command on resize")
	}
	if got, want := cmd(), tea.ClearScreen(); got != want {
		t.Errorf("resize gives %T, want %T", got, want)
	}
}

// A question that wraps stays on screen at 80x24 however many fields the
// form has: the form gives up its blank lines first.
func TestElicitationQuestionShowsAt80(t *testing.T) {
	m := New(context.Background(), Options{NoColor: true})
	defer m.Close()
	msg := strings.Repeat("The research query could have several meanings; please say which one you mean. ", 2)
	r := common.NewRequest(context.Background(), 1, common.Elicitation, frozen)
	r.Elicit = &mcp.ElicitParams{Message: msg, RequestedSchema: json.RawMessage(`{"type":"object","properties":{
		"a":{"type":"string"},"b":{"type":"string"},"c":{"type":"string"},"d":{"type":"boolean"},
		"e":{"type":"string","enum":["x","y"]},"f":{"type":"number"}}}`)}
	md := newModal(m.c, r)
	md.SetSize(80, 24-5)
	view := ansi.Strip(md.View())
	flat := strings.Join(strings.Fields(strings.ReplaceAll(view, "│", " ")), " ")
	if !strings.Contains(flat, strings.TrimSpace(msg)) {
		t.Errorf("the question is not all on screen:\n%s", view)
	}
	if !strings.Contains(view, "› a") {
		t.Errorf("the first field is not on screen:\n%s", view)
	}
}

// A server request of a session that is gone is dropped when a new session
// starts: an answer could only reach a session that never asked. One set
// aside does not open again by itself.
func TestRequestsOfAnOldSessionAreDropped(t *testing.T) {
	h := startLoaded(t, 100, 30)
	hk := <-h.hooks
	answered := make(chan error, 1)
	go func() {
		_, err := hk.Handler.CreateMessage(context.Background(), &mcp.CreateMessageParams{
			Messages: []mcp.SamplingMessage{{Role: "user", Content: json.RawMessage(`{"type":"text","text":"from the old session"}`)}}, MaxTokens: 10})
		answered <- err
	}()
	h.waitText("from the old session")
	h.press("esc")
	h.waitText("1 request waiting", "set aside")
	// Any batch (a notification) must not bring it back.
	hk.OnNotification(session.Notification{Time: frozen, Method: "notifications/message", Params: json.RawMessage(`{"level":"info","data":"x"}`)})
	h.waitText("notifications 2")
	if s := h.p.Screen(); strings.Contains(s, "the server asks") {
		t.Errorf("the request set aside opened by itself:\n%s", s)
	}
	hk.OnHealth(session.HealthEvent{Health: session.HealthRenewing, At: frozen})
	hk.OnHealth(session.HealthEvent{Health: session.HealthUp, At: frozen, Note: "session a, now b"})
	s := h.waitText("the server forgot the session: a new one started")
	if strings.Contains(s, "request waiting") {
		t.Errorf("the old session's request still waits:\n%s", s)
	}
	select {
	case err := <-answered:
		if err == nil {
			t.Error("the dropped request was answered as if a person had")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the handler of the dropped request still waits")
	}
}
