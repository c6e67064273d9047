package tui

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/mcpi-dev/mcpi/internal/mcptest"
	"github.com/mcpi-dev/mcpi/internal/safetext"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// TestPoisonEveryPane opens every pane, a tool form, an elicitation and a
// sampling request against a server that puts mcptest.Poison in every
// field: every frame drawn must need nothing from the screen sink (each
// pane sanitised what it showed), and the poison must show, made visible.
func TestPoisonEveryPane(t *testing.T) {
	h := start(t, 160, 40, func(o *Options) {
		o.Dial = func(ctx context.Context, hk Hooks) (*session.Client, error) {
			return dialPeer(ctx, hk, "hostile:"+mcptest.HostilePoison)
		}
		o.Check = checkPeer("hostile:" + mcptest.HostilePoison)
	})
	h.waitText(`«\e]0;pwned`, "(7/7)")
	// The checks' findings quote the poison: the list, and one opened.
	h.press("alt+k", "enter")
	h.waitText("ERRORS (")
	h.press("enter")
	if s := h.waitText("source", "frame"); !strings.Contains(s, `\e`) {
		t.Errorf("the check pane does not show the poison:\n%s", s)
	}
	h.press("esc")
	for _, k := range []string{"alt+2", "alt+3", "alt+4", "alt+5", "alt+6", "alt+7", "alt+8", "alt+9", "alt+0", "alt+i", "alt+1"} {
		h.press(k, "enter")
		h.press("esc")
	}
	// A directory resource's children, and the subscriptions with the
	// updates of a resource named poison.
	h.press("alt+2")
	h.waitText("2 resources", "[2 Resources]")
	h.selectLine("poison://dir")
	h.press("enter")
	h.waitText("2 entries in poison://dir", `«\e]0;pwned`)
	h.press("enter")
	h.waitText("2 entries in poison://dir/«")
	h.press("esc", "esc")
	h.waitText("2 resources")
	h.selectLine("poison://ok")
	h.press("u")
	h.waitText("subscribed to poison://ok")
	h.press("U")
	h.waitText("Subscriptions (1) · 2 updates", `poison://«\e]0;p`)
	h.press("down", "enter")
	h.waitText("read poison://«", "✗")
	h.press("esc")
	h.waitText("2 resources")
	// The Info pane shows the server's name, instructions and capabilities.
	h.press("alt+i")
	if s := h.waitText("Instructions"); !strings.Contains(s, `\e]0;pwned`) {
		t.Errorf("the info pane does not show the poison:\n%s", s)
	}
	h.press("alt+1")
	// A form whose field names are poison, an elicitation whose fields are,
	// and a sampling request.
	h.press("enter")
	h.waitText("ctrl+s")
	h.press("esc")
	for _, tool := range []string{"elicit", "sample"} {
		h.callTool(tool, "")
		h.waitText("the server asks")
		h.press("esc")
		h.press("esc")
	}
	// The timeline names every span it draws, the selected one in full.
	h.press("alt+m", "home")
	for range 12 {
		h.press("down")
	}
	h.waitText("▾ Requests", "› ")
	h.press("alt+7")
	s := h.waitText("frame")
	if !strings.Contains(s, `\e]`) {
		t.Errorf("the wire pane does not show the poison:\n%s", s)
	}
	h.p.mu.Lock()
	unsafe := h.p.unsafe
	h.p.mu.Unlock()
	if unsafe != "" {
		t.Errorf("a pane drew what only the screen sink made safe (%s):\n%s", firstUnsafe(unsafe), safetext.Screen(unsafe))
	}
}

// poisonView draws mcptest.Poison raw, as a pane that forgot would.
type poisonView struct{ quit bool }

func (p poisonView) Init() tea.Cmd { return nil }
func (p poisonView) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if _, ok := msg.(tea.WindowSizeMsg); ok && !p.quit {
		return poisonView{quit: true}, tea.Quit
	}
	return p, nil
}
func (p poisonView) View() tea.View {
	v := tea.NewView("\x1b[1mbold\x1b[0m " + mcptest.Poison)
	v.WindowTitle = mcptest.Poison
	return v
}

// TestProgramScreen: what runProgram writes to the terminal holds no
// escape sequence of the model's but its colours, whatever the model drew.
func TestProgramScreen(t *testing.T) {
	var out bytes.Buffer
	if _, err := runProgram(context.Background(), poisonView{}, programIO{In: strings.NewReader(""), Out: &out, Width: 200, Height: 5}); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, bad := range []string{"\x1b]0;pwned", "\x1b]52;", "\x1bP+q", "\u009b", "\u202e", "\U000E0041"} {
		if strings.Contains(s, bad) {
			t.Errorf("the terminal got %q raw: %q", bad, s)
		}
	}
	if !strings.Contains(s, `\e]0;pwned`) {
		t.Errorf("the poison was not drawn, made visible: %q", s)
	}
}

// rawProbe records the first frame its model drew that needed the screen
// sink: a pane that forgot to sanitise.
type rawProbe struct {
	tea.Model
	unsafe *atomic.Pointer[string]
}

func (p rawProbe) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	m, cmd := p.Model.Update(msg)
	return rawProbe{m, p.unsafe}, cmd
}

func (p rawProbe) View() tea.View {
	v := p.Model.View()
	if s := safetext.Screen(v.Content); s != v.Content {
		p.unsafe.CompareAndSwap(nil, &v.Content)
	}
	return screen{p.Model}.View()
}

// TestPoisonReplay: the replay TUI shows every field of a crafted trace
// (frames with HTTP metadata, bad frames, stderr, lifecycle and HTTP
// events) sanitised, in its rows and in the detail of each.
func TestPoisonReplay(t *testing.T) {
	P := mcptest.Poison
	meta := &transport.HTTPMeta{Method: P, URL: "http://x/" + P, StatusCode: 500, SSEEventID: P, SSEEvent: P,
		RequestHeader: http.Header{P: {P}}, ResponseHeader: http.Header{"Content-Type": {P}}}
	frame, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": P, "params": map[string]any{"name": P, "uri": P}})
	answer, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "error": map[string]any{"code": 1, "message": P}})
	events := []transport.Event{
		{Time: frozen, Kind: transport.KindFrame, Dir: transport.Outgoing, Data: frame, HTTP: meta},
		{Time: frozen, Kind: transport.KindFrame, Dir: transport.Incoming, Data: answer, HTTP: meta},
		{Time: frozen, Kind: transport.KindBadFrame, Dir: transport.Incoming, Data: []byte(P), Err: P, HTTP: meta},
		{Time: frozen, Kind: transport.KindStderr, Dir: transport.Incoming, Data: []byte(P)},
		{Time: frozen, Kind: transport.KindLifecycle, Text: P, Err: P},
		{Time: frozen, Kind: transport.KindHTTP, Text: P, Err: P, HTTP: meta},
	}
	m := NewReplay(context.Background(), ReplayOptions{
		Title: P, NoColor: true, Width: 120, Height: 30,
		Feed: func(ctx context.Context, tap transport.Tap) error {
			for _, e := range events {
				tap.Observe(e)
			}
			return nil
		},
	})
	t.Cleanup(m.Close)
	var unsafe atomic.Pointer[string]
	tm := teatest.NewTestModel(t, rawProbe{m, &unsafe}, teatest.WithInitialTermSize(120, 30),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.ASCII)))
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return strings.Contains(string(b), "6/6") }, teatest.WithDuration(10*time.Second))
	for range events {
		tm.Send(keyMsg("enter"))
		tm.Send(keyMsg("esc"))
		tm.Send(keyMsg("up"))
	}
	// The timeline of the same trace, every span selected in turn.
	tm.Send(keyMsg("tab"))
	tm.Send(keyMsg("home"))
	for range events {
		tm.Send(keyMsg("down"))
	}
	tm.Send(keyMsg("q"))
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
	if s := unsafe.Load(); s != nil {
		t.Errorf("the replay drew what only the screen sink made safe (%s):\n%s", firstUnsafe(*s), safetext.Screen(*s))
	}
}

// firstUnsafe quotes the frame around the first byte the screen sink had
// to change.
func firstUnsafe(frame string) string {
	safe := safetext.Screen(frame)
	i := 0
	for i < len(frame) && i < len(safe) && frame[i] == safe[i] {
		i++
	}
	return fmt.Sprintf("at byte %d: %q", i, frame[max(0, i-60):min(len(frame), i+20)])
}
