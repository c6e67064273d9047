package tui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/mcpi-dev/mcpi/internal/collection"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
	"github.com/mcpi-dev/mcpi/internal/record"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/transport"
	"github.com/mcpi-dev/mcpi/internal/tui/tools"
)

const toolsLoaded = "(18/18)"

func TestToolsPane(t *testing.T) {
	for _, size := range [][2]int{{100, 30}, {80, 24}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			h := start(t, size[0], size[1])
			h.golden(h.waitText("● connected", toolsLoaded, "input schema"))
			// Typing filters; the details follow the selection.
			h.typeText("del")
			s := h.waitText("filter: del (2/18)", "delete_file — Delete a file (pretend)", "destructive")
			if strings.Contains(s, "echo") {
				t.Errorf("the filter left echo in:\n%s", s)
			}
		})
	}
}

// The tab line says the tabs' keys are alt+ the key shown, and gives up
// padding before it shortens titles, then numbers only.
func TestTabsFitTheWidth(t *testing.T) {
	for width, want := range map[int]string{
		175: "alt+ [1 Tools]  2 Resources  3 Templates  4 Prompts ",
		150: "alt+ [1 Tools] 2 Res 3 Tmpl 4 Prompts 5 Reqs 6 Roots 7 Wire 8 Log 9 Notifs",
		130: "alt+ [1 Tools] 2 Res 3 Tmpl 4 Prompts 5 Reqs 6 Roots 7 Wire 8 Log 9 Notifs",
		100: "alt+ [1 Tools] 2 Res 3 Tem 4 Pro",
		60:  "alt+ [1 Tools] 2 3 4 5 6 7 8 9(1) 0 i k s m",
		80:  "alt+ [1 Tools] 2Re 3Te 4Pr 5Re 6Ro 7Wi 8Lo 9No",
	} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			h := start(t, width, 24)
			h.waitText(toolsLoaded, want)
		})
	}
}

func TestNestedArgsForm(t *testing.T) {
	h := startLoaded(t, 100, 30)
	h.typeText("nested_args")
	h.press("enter")
	h.golden(h.waitText("Call nested_args", "address*", "integer 0..100"))

	// A send with missing required fields is refused once, with the
	// problems on the fields.
	h.press("ctrl+s")
	h.waitText("press ctrl+s again to send anyway", "↳ required")
	h.typeText("Ada")
	for range 9 { // name .. address/street, then city
		h.press("tab")
	}
	h.typeText("Paris")
	h.press("tab")
	h.typeText("1234x")
	h.waitText("does not match pattern")
	h.press("backspace")
	h.typeText("5")
	h.press("ctrl+s")
	h.waitText("nested_args · call #1 · ✓ done", `"city": "Paris"`)

	m := h.final()
	calls := m.Tools().Calls()
	if len(calls) != 1 || calls[0].State != tools.Done || calls[0].Result == nil {
		t.Fatalf("calls = %+v", calls)
	}
	got, _ := json.Marshal(calls[0].Args)
	want := `{"address":{"city":"Paris","zip":"12345"},"color":"green","count":3,"enabled":true,"name":"Ada","nickname":null,"ratio":0.5}`
	if string(got) != want {
		t.Errorf("arguments sent:\n got %s\nwant %s", got, want)
	}
	if text := calls[0].Result.Content[0].Text; !strings.Contains(text, `"name": "Ada"`) {
		t.Errorf("result = %s", text)
	}
}

func TestContentTypesResult(t *testing.T) {
	dir := t.TempDir()
	h := startLoaded(t, 100, 36, func(o *Options) { o.SaveDir = dir })
	h.typeText("get_content")
	h.press("enter")
	h.waitText("Call get_content_types")
	h.press("ctrl+s")
	h.golden(h.waitText("✓ done", "[image image/png", "[resource] demo://binary/logo.png"))
	h.press("s")
	s := h.waitText("saved in ")
	// The notice wraps where the temporary directory's length puts it: a
	// name may be cut across two lines.
	flat := strings.Join(strings.Fields(s), "")
	for _, f := range []string{"get_content_types-1-2-image.png", "get_content_types-1-3-audio.wav", "get_content_types-1-6-blob.png"} {
		if !strings.Contains(flat, f) {
			t.Errorf("the screen does not name %s:\n%s", f, s)
		}
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil || len(data) == 0 {
			t.Errorf("%s: %d bytes, %v", f, len(data), err)
		}
	}
	png, _ := os.ReadFile(filepath.Join(dir, "get_content_types-1-2-image.png"))
	if !strings.HasPrefix(string(png), "\x89PNG") {
		t.Errorf("the saved image is not a PNG: % x", png[:min(8, len(png))])
	}
}

func TestStructuredOutputChecked(t *testing.T) {
	h := startLoaded(t, 100, 30)
	h.typeText("add")
	h.press("enter")
	h.typeText("2")
	h.press("tab")
	h.typeText("3.5")
	h.press("ctrl+s")
	h.waitText("✓ done", "✓ matches the outputSchema", `"sum": 5.5`)
	// y copies the result's JSON.
	h.press("y")
	h.waitText("copied the result's JSON (")
}

func TestToolError(t *testing.T) {
	h := startLoaded(t, 100, 30)
	h.callTool("fail", "")
	h.waitText("✗ isError", "this tool always fails")
}

func TestWirePane(t *testing.T) {
	h := startLoaded(t, 100, 30)
	h.waitAllLoaded()
	h.callTool("echo", "hi \x1b[31mred")
	h.waitText("✓ done")
	h.press("alt+7")
	// The response to the call is the last frame of the session so far.
	s := h.waitFor("the echo response on the wire", func(s string) bool {
		lines := strings.Split(s, "\n")
		for i, l := range lines {
			if strings.Contains(l, "→ frame     tools/call") && i+1 < len(lines) && strings.Contains(lines[i+1], "← frame     response") {
				return true
			}
		}
		return false
	})
	h.golden(s)

	h.press("enter")
	s = h.waitText("← recv frame · response")
	t.Run("detail", func(t *testing.T) { (&harness{t: t}).golden(s) })
	// y copies the frame through the terminal (OSC 52) and says so.
	h.press("y")
	h.waitText("copied the frame (")
	h.press("esc")

	// Filters: by direction and method, and negated.
	h.press("/")
	h.typeText("> method:tools/")
	s = h.waitText("/> method:tools/")
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, "← frame") {
			t.Errorf("an incoming frame passed the > filter: %s", l)
		}
	}
	h.press("enter")
	h.waitText("/3 of ", "filter: > method:tools/")
}

// TestWireEscapes: what a server sends is shown with its escape sequences
// visible, in rows and in the detail view, never interpreted.
func TestWireEscapes(t *testing.T) {
	h := startLoaded(t, 100, 30)
	h.waitAllLoaded()
	hooks := h.m.hooks
	hooks.Tap.Observe(transport.Event{Time: frozen, Kind: transport.KindStderr, Dir: transport.Incoming,
		Data: []byte("boom \x1b]0;pwned\x07 \x1b[2J")})
	hooks.Tap.Observe(transport.Event{Time: frozen, Kind: transport.KindBadFrame, Dir: transport.Incoming,
		Data: []byte("not json \x1b[31mred\u202e"), Err: "invalid character 'o' in literal null"})
	hooks.Tap.Observe(transport.Event{Time: frozen, Kind: transport.KindFrame, Dir: transport.Incoming,
		Data: []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"csi \u009b31m \u001b[1m"}}`)})
	h.press("alt+7")
	s := h.waitText(`boom \e]0;pwned\x07 \e[2J`, `not json \e[31mred\u202e`)
	if strings.ContainsAny(s, "\x1b\x07\u202e") {
		t.Fatalf("raw control characters on screen: %q", s)
	}
	h.press("up", "enter")
	h.waitText("← recv bad-frame", "error: invalid character", `not json \e[31mred\u202e`)
	h.press("esc", "down", "enter")
	s = h.waitText("notifications/message", `"csi \u009b31m \u001b[1m"`)
	if strings.ContainsAny(s, "\x1b\u009b") {
		t.Fatalf("raw control characters on screen: %q", s)
	}
}

func TestSamplingModal(t *testing.T) {
	h := start(t, 100, 30)
	h.callSample()
	h.golden(h.waitText("sampling/createMessage", "user: What is 2+2?", "1 request waiting"))
	// "?" is typed into the reply; f1 shows the whole help and hides it.
	h.typeText("Four?")
	h.press("f1")
	// The whole help lists what works here: the request's keys, not the
	// tabs it covers.
	s := h.waitText("esc    later", "f1/esc close help", "│ Four?")
	if strings.Contains(s, "alt+1…0") {
		t.Errorf("the help over a request lists the tabs' keys:\n%s", s)
	}
	h.press("f1")
	h.waitFor("the short help", func(s string) bool { return !strings.Contains(s, "close help") })
	h.press("ctrl+s")
	s = h.waitText("✓ done", "Four?", `model "mcpi-user"`)
	if strings.Contains(s, "request waiting") {
		t.Errorf("the answered request is still queued:\n%s", s)
	}
	if m := h.final(); len(m.Queue()) != 0 {
		t.Errorf("queue = %v", m.Queue())
	}
}

func TestSamplingRejected(t *testing.T) {
	h := startLoaded(t, 100, 30)
	h.callTool("sample", "hello")
	h.waitText("sampling/createMessage")
	h.press("ctrl+x")
	h.waitText("✗ failed", "user rejected the")
}

func TestElicitationModal(t *testing.T) {
	h := startLoaded(t, 100, 30)
	h.callTool("elicit", "")
	h.golden(h.waitText("elicitation/create", "Tell the demo server", "‹ Medium (m) ›"))
	// Clear the name: accepting is refused once.
	for range 3 {
		h.press("backspace")
	}
	h.press("ctrl+s")
	h.waitText("press ctrl+s again to accept anyway", "↳ required")
	h.typeText("Grace")
	h.press("tab", "tab", "tab", "tab", "space") // subscribe
	h.press("ctrl+s")
	s := h.waitText("✓ done", `"action": "accept"`, `"name": "Grace"`)
	if !strings.Contains(s, `"subscribe": true`) {
		t.Errorf("subscribe not sent:\n%s", s)
	}
}

func TestElicitationURL(t *testing.T) {
	opened := make(chan string, 1)
	h := start(t, 100, 30, func(o *Options) {
		o.OpenURL = func(u string) error { opened <- u; return nil }
	})
	h.waitText(toolsLoaded)
	h.callTool("elicit_url", "")
	h.waitText("the server asks you to open a page", "URL:", "https://example.com/mcpi-demo/connect", "host: example.com")
	h.press("ctrl+b")
	select {
	case u := <-opened:
		if !strings.HasPrefix(u, "https://example.com/") {
			t.Errorf("opened %q", u)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the URL was not opened")
	}
	h.waitText("opened in the browser")
	h.press("ctrl+s")
	h.waitText("✓ done", `"action": "accept"`)
}

func TestCancelCall(t *testing.T) {
	h := startLoaded(t, 100, 30)
	h.typeText("long_running")
	h.press("enter")
	h.press("backspace")
	h.typeText("1000") // steps
	h.press("tab")
	h.press("backspace", "backspace", "backspace")
	h.typeText("20") // interval_ms
	h.press("ctrl+s")
	h.waitText("⟳ running", "/1000 step")
	h.press("esc")
	h.waitText("⊘ cancelled")
	// The session tells the server.
	h.press("alt+7", "/")
	h.typeText("method:cancelled")
	h.waitText("→ frame     notifications/cancelled")

	m := h.final()
	c := m.Tools().Calls()[0]
	if c.State != tools.Cancelled || !errors.Is(c.Err, context.Canceled) {
		t.Errorf("state %v, err %v", c.State, c.Err)
	}
	if c.Progress == nil || c.Progress.Progress < 1 {
		t.Errorf("no progress recorded: %+v", c.Progress)
	}
}

func TestSeveralCallsAtOnce(t *testing.T) {
	h := startLoaded(t, 100, 30)
	h.typeText("slow")
	h.press("enter")
	h.press("backspace", "backspace", "backspace", "backspace")
	h.typeText("60000")
	h.press("ctrl+s")
	h.waitText("slow · call #1 · ⟳ running")
	// While it runs, another call goes and comes back.
	h.press("alt+l", "ctrl+u") // back to the list; esc would cancel
	h.callTool("echo", "meanwhile")
	h.waitText("echo · call #2 · ✓ done", "[2/2]")
	h.press("[")
	h.waitText("slow · call #1 · ⟳ running", "[1/2]")
	h.press("ctrl+c") // cancels the call on screen rather than quitting
	h.waitText("⊘ cancelled")
}

func TestRootsAnsweredFromThePane(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "my repo")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	uri := "file://" + strings.ReplaceAll(filepath.ToSlash(dir), " ", "%20")
	h := start(t, 100, 30, func(o *Options) {
		o.Roots = []mcp.Root{{URI: "file:///tmp/project", Name: "project"}}
	})
	h.waitText(toolsLoaded)
	h.press("alt+6")
	h.waitText("file:///tmp/project")
	// Roots are file:// URIs of paths that exist; anything else is
	// refused with what was typed.
	h.press("a")
	h.typeText("https://example.com/repo")
	h.press("enter")
	h.golden(h.waitText(`✗ root "https://example.com/repo": roots are paths or file:// URIs, not https URIs`, "Roots (1)"))
	h.press("a")
	h.typeText("not a uri at all::")
	h.press("enter")
	h.waitText(`✗ root "not a uri at all::": `, "does not exist", "Roots (1)")
	h.press("a")
	h.typeText(dir)
	h.press("enter")
	h.waitText("added "+uri, "Roots (2)")
	h.press("alt+1")
	h.callTool("list_roots", "")
	s := h.waitText("✓ done", "2 root(s)")
	if !strings.Contains(s, "file:///tmp/project (project)") || !strings.Contains(s, uri+" (my repo)") {
		t.Errorf("roots answered:\n%s", s)
	}
	if strings.Contains(s, "request waiting") {
		t.Error("roots/list went through the queue")
	}
}

func TestReconnect(t *testing.T) {
	h := startLoaded(t, 100, 30)
	h.press("ctrl+r")
	<-h.hooks // the first dial
	<-h.hooks // the reconnect dial
	h.waitText("● connected", toolsLoaded, "reconnected: a new session")
	m := h.final()
	if st, err := m.State(); st != Connected || err != nil || m.conn.gen != 2 {
		t.Errorf("state %v %v gen %d", st, err, m.conn.gen)
	}
}

func TestDialFailure(t *testing.T) {
	h := start(t, 80, 24, func(o *Options) {
		o.Dial = func(context.Context, Hooks) (*session.Client, error) {
			return nil, errors.New("could not connect: exec: \"nope\": executable file not found")
		}
	})
	h.golden(h.waitText("✗ disconnected · ctrl+r reconnects", "could not connect: exec:", "Not connected."))
}

// TestFlood sends 100,000 notifications and 100,000 tap events through the
// callbacks while the UI's event loop is held: the callbacks must return
// anyway (they never wait for the UI), and once released the UI must have
// counted every notification, kept or counted every tap event, and still
// answer keys.
func TestFlood(t *testing.T) {
	const n = 100_000
	var real atomic.Int64
	h := start(t, 100, 30, func(o *Options) {
		o.Dial = func(ctx context.Context, hk Hooks) (*session.Client, error) {
			inner := hk.Tap
			hk.Tap = transport.TapFunc(func(e transport.Event) { real.Add(1); inner.Observe(e) })
			return dialDemo(ctx, hk)
		}
	})
	// The start is over (its last frames are the subscriptions/listen and its
	// acknowledgement): from here on every frame is the flood's.
	h.waitText(toolsLoaded, "notifications 1")
	hooks := h.m.hooks

	block := blockMsg{blocked: make(chan struct{}), release: make(chan struct{})}
	go h.tm.Send(block)
	<-block.blocked
	done := make(chan time.Duration, 1)
	go func() {
		start := time.Now()
		frame := []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"flood"}}`)
		for range n {
			hooks.Tap.Observe(transport.Event{Time: frozen, Kind: transport.KindFrame, Dir: transport.Incoming, Data: frame})
		}
		for range n {
			hooks.OnNotification(session.Notification{Time: frozen, Method: "notifications/message"})
		}
		done <- time.Since(start)
	}()
	select {
	case d := <-done:
		t.Logf("%d callbacks took %v with the UI blocked", 2*n, d)
	case <-time.After(20 * time.Second):
		close(block.release)
		t.Fatal("the callbacks blocked while the UI was busy")
	}
	close(block.release)
	// The one more is the acknowledgement of the session's subscriptions/listen.
	h.waitText(fmt.Sprintf("notifications %d", n+1))
	// Still responsive: a key switches panes.
	h.press("alt+7")
	h.waitText("[7 Wire")

	m := h.final()
	store := m.Wire().Store()
	if got, want := store.Len()+store.Dropped, n+int(real.Load()); got != want {
		t.Errorf("wire rows %d + dropped %d = %d, want %d", store.Len(), store.Dropped, got, want)
	}
	if m.Notifications() != n+1 {
		t.Errorf("notifications = %d, want %d", m.Notifications(), n+1)
	}
	// How long the slowest Update took is a figure, not a verdict (the
	// machine may be busy): the key above is what says the UI kept up.
	t.Logf("the slowest Update took %v", time.Duration(h.p.maxUpdate.Load()))
}

func TestPicker(t *testing.T) {
	items := []PickItem{
		{Title: "github", Transport: "http", Detail: "https://api.githubcopilot.com/mcp/", Source: "/home/u/.vscode/mcp.json"},
		{Title: "filesystem", Transport: "stdio", Detail: "npx -y @modelcontextprotocol/server-filesystem /tmp /home/u/projects/a-long-one", Source: "/home/u/.claude.json"},
		{Title: "evil\x1b[2J", Transport: "auto", Detail: "node x.js", Source: "/p/.mcp.json", Note: "disabled"},
	}
	// The files that could not be read are on the picker's screen, their
	// errors sanitised; the columns are aligned, the target truncated.
	p := newPicker("Choose a server (3 configured)", items, false)
	p.problems = []PickProblem{
		{Path: "/home/u/.cursor/mcp.json", Err: "/home/u/.cursor/mcp.json:3:7: invalid character '}'"},
		{Path: "/p/.vscode/mcp.json", Err: "permission denied \x1b]0;owned\x07"},
	}
	tm := teatest.NewTestModel(t, screen{p}, teatest.WithInitialTermSize(80, 12),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.ASCII)))
	tm.Type("fil")
	tm.Send(keyMsg("enter"))
	final := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(screen).Model.(*picker)
	if final.chosen != 1 {
		t.Errorf("chosen = %d", final.chosen)
	}
	final.filter = ""
	final.apply()
	final.cursor = 0
	golden.RequireEqual(t, ansi.Strip(final.View().Content)+"\n")
}

func TestRecordingToggle(t *testing.T) {
	h := startLoaded(t, 100, 30)
	h.press("alt+r")
	h.waitText("● rec", "recording started")
	path := h.m.rec.active()
	h.callTool("echo", "recorded in the tui")
	h.waitText("✓ done")
	h.press("alt+r")
	h.waitText("recording stopped")
	r, err := record.Open(path)
	if err != nil {
		t.Fatalf("opening %s: %v", path, err)
	}
	defer r.Close()
	var sent, recv bool
	for {
		e, err := r.Next()
		if err != nil {
			break
		}
		if e.Type == record.TypeFrame && strings.Contains(string(e.Msg), "recorded in the tui") {
			sent = true
		}
		if e.Type == record.TypeFrame && e.Dir == transport.Incoming && strings.Contains(string(e.Msg), `"text":"recorded in the tui"`) {
			recv = true
		}
	}
	if !sent || !recv {
		t.Errorf("the trace lacks the call (sent %v, answer %v)", sent, recv)
	}
}

// onEverything dials the npm reference server over stdio, with session
// options of the test's own (edit may be nil).
func onEverything(t *testing.T, edit func(*session.Options)) func(*Options) {
	cmd := mcptest.Everything(t)
	return func(o *Options) {
		o.Dial = func(ctx context.Context, hk Hooks) (*session.Client, error) {
			conn, err := transport.Spawn(transport.StdioOptions{Command: cmd[0], Args: cmd[1:], Tap: hk.Tap})
			if err != nil {
				return nil, err
			}
			opts := session.Options{Handler: hk.Handler, OnNotification: hk.OnNotification, OnWarning: hk.OnWarning}
			if edit != nil {
				edit(&opts)
			}
			return session.Connect(ctx, conn, opts)
		}
	}
}

// TestCallAsTask runs a tool as a task against the npm reference server,
// which supports tasks: the call returns a task, which is polled to its end
// and whose result is shown.
func TestCallAsTask(t *testing.T) {
	h := start(t, 100, 30, onEverything(t, nil))
	h.waitText("simulate-research-query")
	h.typeText("simulate-research-query")
	h.press("enter")
	h.typeText("tide pools")
	h.press("alt+t")
	// The task's states show while it is polled, then its result.
	h.waitText("task ", ": working")
	h.waitText("✓ done", "tide pools")
	s := h.p.Screen()
	if !strings.Contains(s, "simulate-research-query") {
		t.Errorf("screen:\n%s", s)
	}
}

// A tool that runs only as a task, under a revision without tasks, is
// refused once with why (no tasks/get could follow it), then sent.
func TestRequiredTaskUnderOldRevision(t *testing.T) {
	h := start(t, 120, 30, onEverything(t, func(o *session.Options) { o.ProtocolVersion = mcp.Rev20250618 }))
	h.waitText("simulate-research-query")
	h.typeText("simulate-research-query")
	h.press("enter")
	h.typeText("tide pools")
	h.press("ctrl+s")
	h.waitText("the tool runs only as a task, and 2025-06-18 has no tasks/get to follow it", "ctrl+s again sends it as a task anyway")
	if strings.Contains(h.p.Screen(), "call #1") {
		t.Errorf("the call was sent before the second ctrl+s:\n%s", h.p.Screen())
	}
}

// TestCallFollowsTask calls tools of a 2026-07-28 server of the tasks
// extension: the task it creates unasked is followed, its states shown as
// a 2025-11-25 task's are, then its result; esc on a running one cancels
// the task.
func TestCallFollowsTask(t *testing.T) {
	dial := func(o *Options) {
		o.Dial = func(ctx context.Context, hk Hooks) (*session.Client, error) {
			return dialPeer(ctx, hk, mcptest.TasksPeer)
		}
	}
	h := start(t, 100, 30, dial)
	h.waitText("forever")
	h.callTool("slow", "")
	h.waitText("✓ done", "slow done")

	h = start(t, 100, 30, dial)
	h.waitText("forever")
	h.callTool("forever", "")
	h.waitText("task t-1: working")
	h.press("esc")
	h.waitText("Cancelled by you")
	h.press("alt+7")
	h.waitText("tasks/cancel")
}

// With the mouse on, a wheel notch moves three rows and a click on a tab
// opens its pane; without it, mouse events change nothing.
func TestMouse(t *testing.T) {
	wheel := tea.MouseWheelMsg{Button: tea.MouseWheelDown}
	t.Run("on", func(t *testing.T) {
		h := start(t, 100, 30, func(o *Options) { o.Mouse = true })
		h.waitText(toolsLoaded, "› add")
		h.tm.Send(wheel)
		h.waitText("› delete_file")
		s := h.waitText("3 Tem")
		line := strings.Split(s, "\n")[2]
		x := strings.Index(line, "3 Tem")
		h.tm.Send(tea.MouseClickMsg{Button: tea.MouseLeft, X: x + 1, Y: 2})
		h.waitText("[3 Templates]")
		// A click elsewhere on the screen does not switch panes; the wheel
		// after it moves the templates' cursor, so the click was handled
		// when that shows.
		h.waitText("2 templates", "› demo://greeting/")
		h.tm.Send(tea.MouseClickMsg{Button: tea.MouseLeft, X: 2, Y: 5}) // under the Tools tab
		h.tm.Send(wheel)
		h.waitText("[3 Templates]", "› demo://items/")
	})
	t.Run("off", func(t *testing.T) {
		h := start(t, 100, 30)
		h.waitText(toolsLoaded, "› add")
		h.tm.Send(wheel)
		h.tm.Send(tea.MouseClickMsg{Button: tea.MouseLeft, X: 12, Y: 2})
		h.press("down")
		s := h.waitText("› big_output")
		if !strings.Contains(s, "[1 Tools]") {
			t.Errorf("a mouse event changed the screen without --mouse:\n%s", s)
		}
	})
}

// TestRerunACall: r in a call's result sends it again, with its
// arguments, as a new call (after --watch restarted the server, the same
// call against the new code).
func TestRerunACall(t *testing.T) {
	h := startLoaded(t, 100, 30)
	h.waitAllLoaded()
	h.callTool("echo", "again and again")
	h.waitText("✓ done", "call #1")
	h.press("r")
	s := h.waitText("call #2", "[2/2]", "✓ done")
	if !strings.Contains(s, "again and again") {
		t.Errorf("the call sent again lost its arguments:\n%s", s)
	}
}

// TestSaveCallAsStep: t in a call's result saves it as a step of the
// collection file (made when there is none): its arguments, the answer the
// person gave while it ran, and its result as the expectation; mcpi test
// reads the file back as written.
func TestSaveCallAsStep(t *testing.T) {
	path := filepath.Join(t.TempDir(), "calls.yaml")
	h := startLoaded(t, 100, 30, func(o *Options) { o.Collection = path })
	h.callTool("echo", "saved: text")
	h.waitText("✓ done", "call #1")
	h.press("t", "t")
	h.waitText("call #1 saved as step 2 of", "calls.yaml")

	h.press("alt+l", "ctrl+u")
	h.callTool("sample", "2+2?")
	h.waitText("sampling/createMessage")
	h.typeText("four")
	h.press("ctrl+s")
	h.waitText("✓ done", "call #2")
	h.press("t")
	h.waitText("call #2 saved as step 3 of")

	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := collection.Parse(data)
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if len(f.Steps) != 3 {
		t.Fatalf("%d steps (two quick t make two):\n%s", len(f.Steps), data)
	}
	echo, sample := f.Steps[0], f.Steps[2]
	if echo.Call != "echo" || echo.Args["text"] != "saved: text" || *echo.Expect.IsError || echo.Expect.Snapshot == nil || !strings.Contains(*echo.Expect.Snapshot, "saved: text") {
		t.Errorf("step 1 %+v\n%s", echo, data)
	}
	if sample.Call != "sample" || sample.Answers == nil || sample.Answers.Sampling != "four" || !strings.Contains(*sample.Expect.Snapshot, `four`+"\n"+`(model "`+mcp.ReplyModel+`"`) {
		t.Errorf("step 2 %+v\n%s", sample, data)
	}
	if !strings.HasPrefix(string(data), collection.NewFileHeader) {
		t.Errorf("the new file has no header:\n%s", data)
	}
}
