package tui

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/surface"
	"github.com/mcpi-dev/mcpi/internal/tui/common"
	"github.com/mcpi-dev/mcpi/internal/tui/keymap"
)

// spyPane stands under the overlays and counts what reaches it.
type spyPane struct {
	keys  []string
	input bool // it has a text field focused, as a tool's form does
}

func (s *spyPane) ShortHelp() []key.Binding  { return nil }
func (s *spyPane) FullHelp() [][]key.Binding { return nil }
func (s *spyPane) Title() string             { return "Spy" }
func (s *spyPane) View() string              { return "spy" }
func (s *spyPane) SetSize(int, int)          {}
func (s *spyPane) InputFocused() bool        { return s.input }
func (s *spyPane) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		s.keys = append(s.keys, msg.String())
	case tea.PasteMsg:
		s.keys = append(s.keys, "paste:"+msg.Content)
	}
	return nil
}

// everyKey is every printable character and every key of every binding of
// the keymap, but ctrl+c (the one key the root keeps: it asks before it
// quits).
func everyKey() []string {
	var ks []string
	for r := ' ' + 1; r <= '~'; r++ {
		ks = append(ks, string(r))
	}
	ks = append(ks, "space", "enter", "backspace", "delete")
	v := reflect.ValueOf(*keymap.Default())
	add := func(b key.Binding) {
		for _, k := range b.Keys() {
			if k != "ctrl+c" {
				ks = append(ks, k)
			}
		}
	}
	for i := range v.NumField() {
		switch f := v.Field(i).Interface().(type) {
		case key.Binding:
			add(f)
		case []key.Binding:
			for _, b := range f {
				add(b)
			}
		}
	}
	return ks
}

// TestOverlaysTakeEveryKey: while an overlay is in front (the Diff view,
// the help, the composer, each kind of server request), every key and
// every paste goes to it or is swallowed; none reaches the pane it covers,
// even one whose form has a text field focused.
func TestOverlaysTakeEveryKey(t *testing.T) {
	ctx := t.Context()
	form, _ := json.Marshal(map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}})
	req := func(kind common.RequestKind, edit func(*common.Request)) *common.Request {
		r := common.NewRequest(ctx, 1, kind, frozen)
		edit(r)
		return r
	}
	overlays := []struct {
		name string
		open func(m *Model)
	}{
		{"diff", func(m *Model) {
			m.diff = &diffView{c: m.c, title: "restarted", changes: []surface.Change{{Class: surface.Breaking, Pointer: "/tools/greet", Message: "required property name was added"}}}
			m.diff.SetSize(m.width, m.paneHeight())
			m.openLayer(diffLayer)
		}},
		{"help", func(m *Model) { m.openLayer(helpLayer) }},
		{"composer", func(m *Model) { m.openLayer(composerLayer) }},
		{"sampling", func(m *Model) {
			m.openModal(req(common.Sampling, func(r *common.Request) {
				r.Sampling = &mcp.CreateMessageParams{MaxTokens: 10}
			}))
		}},
		{"elicitation form", func(m *Model) {
			m.openModal(req(common.Elicitation, func(r *common.Request) {
				r.Elicit = &mcp.ElicitParams{Message: "who?", RequestedSchema: form}
			}))
		}},
		{"elicitation url", func(m *Model) {
			m.openModal(req(common.Elicitation, func(r *common.Request) {
				r.Elicit = &mcp.ElicitParams{Mode: "url", Message: "sign in", URL: "https://example.com/x"}
			}))
		}},
		{"app question", func(m *Model) {
			m.openModal(req(common.Consent, func(r *common.Request) { r.Question = "call delete_all?" }))
		}},
	}
	keys := everyKey()
	for _, o := range overlays {
		for _, input := range []bool{false, true} {
			m := New(ctx, Options{Width: 80, Height: 24, Now: func() time.Time { return frozen }, OpenURL: func(string) error { return nil }})
			t.Cleanup(m.Close)
			spy := &spyPane{input: input}
			m.panes[0] = spy
			m.resize()
			for _, k := range keys {
				// Each key meets the overlay as it was opened: a key that
				// closes it (esc) or opens another over it (f1) is taken by
				// it, and the next key finds it again.
				m.focus.closeAll()
				m.modal = nil
				m.help.ShowAll = false
				o.open(m)
				m.handleKey(keyMsg(k))
				if len(spy.keys) > 0 {
					t.Fatalf("%s (pane input %v): %q reached the pane under it: %v", o.name, input, k, spy.keys)
				}
			}
			m.focus.closeAll()
			m.modal = nil
			o.open(m)
			m.paste(tea.PasteMsg{Content: "Zed"})
			if len(spy.keys) > 0 {
				t.Errorf("%s: a paste reached the pane under it: %v", o.name, spy.keys)
			}
		}
	}
}

// TestOverlayOpensOverAnother: a request that comes while the composer or
// the Diff view is open goes in front of it, esc sets it aside and what
// was under it is in front again; the help opens over everything.
func TestOverlayOpensOverAnother(t *testing.T) {
	m := New(context.Background(), Options{Width: 80, Height: 24})
	t.Cleanup(m.Close)
	spy := &spyPane{}
	m.panes[0] = spy
	m.openLayer(composerLayer)
	m.openModal(common.NewRequest(t.Context(), 1, common.Consent, frozen))
	if got := m.focus.front(); got != modalLayer {
		t.Fatalf("front = %v, want the request", got)
	}
	m.diff = &diffView{c: m.c}
	m.openLayer(diffLayer)
	if got := m.focus.front(); got != modalLayer {
		t.Fatalf("a Diff view opened over a request: front = %v", got)
	}
	m.handleKey(keyMsg("f1"))
	if got := m.focus.front(); got != helpLayer || !m.help.ShowAll {
		t.Fatalf("f1 on a request: front = %v, ShowAll %v", got, m.help.ShowAll)
	}
	m.handleKey(keyMsg("esc"))
	m.handleKey(keyMsg("esc"))
	if got := m.focus.front(); got != diffLayer || m.modal != nil {
		t.Fatalf("after the help and the request: front = %v, want the Diff view", got)
	}
	m.handleKey(keyMsg("esc"))
	m.handleKey(keyMsg("esc"))
	if got := m.focus.front(); got != paneLayer {
		t.Fatalf("after every layer: front = %v", got)
	}
	m.handleKey(keyMsg("x"))
	if len(spy.keys) != 1 || spy.keys[0] != "x" {
		t.Errorf("the pane in front got %v, want [x]", spy.keys)
	}
}
