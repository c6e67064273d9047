package tui

import (
	"bytes"
	"context"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/mcpi-dev/mcpi/internal/mcptest"
	"github.com/mcpi-dev/mcpi/internal/safetext"
	"github.com/mcpi-dev/mcpi/internal/session"
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
	})
	h.waitText(`«\e]0;pwned`, "(7/7)")
	for _, k := range []string{"alt+2", "alt+3", "alt+4", "alt+5", "alt+6", "alt+7", "alt+8", "alt+9", "alt+0", "alt+1"} {
		h.press(k, "enter")
		h.press("esc")
	}
	// A form whose field names are poison, an elicitation whose fields are,
	// and a sampling request.
	h.press("enter")
	h.waitText("ctrl+s")
	h.press("esc")
	for _, tool := range []string{"elicit", "sample"} {
		h.typeText(tool)
		h.press("enter", "ctrl+s")
		h.waitText("the server asks")
		h.press("esc")
		h.press("esc")
	}
	h.press("alt+7")
	s := h.waitText("frame")
	if !strings.Contains(s, `\e]`) {
		t.Errorf("the wire pane does not show the poison:\n%s", s)
	}
	h.p.mu.Lock()
	unsafe := h.p.unsafe
	h.p.mu.Unlock()
	if unsafe != "" {
		t.Errorf("a pane drew what only the screen sink made safe:\n%s", safetext.Screen(unsafe))
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
