package tui

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/roots"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/tui/common"
)

// rootsPane edits the roots offered to the server. roots/list is answered
// from them at once; each change tells the server with
// notifications/roots/list_changed.
type rootsPane struct {
	c      *common.Common
	store  *rootStore
	client func() *session.Client
	// set, when not nil, takes each change instead (Options.SetRoots).
	set func(context.Context, []mcp.Root) error

	roots  []mcp.Root
	cursor int
	adding bool
	input  textinput.Model
	notice common.Notice

	width, height int
}

func newRootsPane(c *common.Common, store *rootStore, client func() *session.Client, set func(context.Context, []mcp.Root) error) *rootsPane {
	in := textinput.New()
	in.Prompt = "add root: "
	in.Placeholder = "a directory or a file:// URI"
	in.SetStyles(c.Styles.TextInput)
	in.KeyMap.Paste.SetEnabled(false)
	return &rootsPane{c: c, store: store, client: client, set: set, roots: store.get(), input: in}
}

func (p *rootsPane) Title() string { return fmt.Sprintf("Roots (%d)", len(p.roots)) }

func (p *rootsPane) InputFocused() bool { return p.adding }

func (p *rootsPane) SetSize(w, h int) {
	p.width, p.height = w, h
	p.input.SetWidth(max(10, w-12))
}

// rootMsg carries a root made from what the user typed.
type rootMsg struct {
	root mcp.Root
	err  error
}

// rootsNotifiedMsg reports notifications/roots/list_changed.
type rootsNotifiedMsg struct{ err error }

func (p *rootsPane) changed() tea.Cmd {
	p.store.set(p.roots)
	if p.set != nil {
		set, ctx, roots := p.set, p.c.Ctx, append([]mcp.Root(nil), p.roots...)
		return func() tea.Msg {
			ctx, cancel := context.WithTimeout(ctx, session.DefaultTimeout)
			defer cancel()
			if err := set(ctx, roots); err != nil {
				return rootsNotifiedMsg{err: fmt.Errorf("the session's roots: %w", err)}
			}
			return rootsNotifiedMsg{}
		}
	}
	c := p.client()
	if c == nil {
		return nil
	}
	ctx := p.c.Ctx
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, session.DefaultTimeout)
		defer cancel()
		return rootsNotifiedMsg{err: c.RootsChanged(ctx)}
	}
}

func (p *rootsPane) Update(msg tea.Msg) tea.Cmd {
	k := p.c.Keys
	switch msg := msg.(type) {
	case common.RootsMsg:
		// Changed elsewhere (a live session's roots): these are the roots
		// now, and the server was told by whoever changed them.
		if slices.Equal(msg.Roots, p.roots) {
			return nil
		}
		p.roots = slices.Clone(msg.Roots)
		p.store.set(p.roots)
		p.cursor = max(0, min(p.cursor, len(p.roots)-1))
		p.notice.Set("the session's roots changed elsewhere: %d root(s)", len(p.roots))
		return nil
	case rootMsg:
		if msg.err != nil {
			p.notice.Fail(msg.err)
			return nil
		}
		for i, r := range p.roots {
			if r.URI == msg.root.URI {
				p.cursor = i
				p.notice.Set("already a root: %s", msg.root.URI)
				return nil
			}
		}
		p.roots = append(p.roots, msg.root)
		p.cursor = len(p.roots) - 1
		p.notice.Set("added %s", msg.root.URI)
		return p.changed()
	case rootsNotifiedMsg:
		if msg.err != nil {
			if p.set != nil {
				p.notice.Fail(msg.err)
			} else {
				p.notice.Failf("notifications/roots/list_changed: %v", msg.err)
			}
		}
		return nil
	case tea.PasteMsg:
		if p.adding {
			var cmd tea.Cmd
			p.input, cmd = p.input.Update(msg)
			return cmd
		}
	case tea.KeyPressMsg:
		if p.adding {
			switch {
			case key.Matches(msg, k.Back):
				p.adding = false
				p.input.Blur()
				return nil
			case key.Matches(msg, k.Open):
				p.adding = false
				p.input.Blur()
				s := strings.TrimSpace(p.input.Value())
				p.input.SetValue("")
				if s == "" {
					return nil
				}
				return func() tea.Msg {
					r, err := roots.Parse(s)
					return rootMsg{root: r, err: err}
				}
			}
			var cmd tea.Cmd
			p.input, cmd = p.input.Update(msg)
			return cmd
		}
		p.notice.Clear()
		switch {
		case key.Matches(msg, k.AddRoot):
			p.adding = true
			return p.input.Focus()
		case key.Matches(msg, k.RemoveRoot):
			if p.cursor >= 0 && p.cursor < len(p.roots) {
				p.notice.Set("removed %s", p.roots[p.cursor].URI)
				p.roots = append(p.roots[:p.cursor:p.cursor], p.roots[p.cursor+1:]...)
				p.cursor = max(0, min(p.cursor, len(p.roots)-1))
				return p.changed()
			}
		case key.Matches(msg, k.Up):
			p.cursor = max(0, p.cursor-1)
		case key.Matches(msg, k.Down):
			p.cursor = min(len(p.roots)-1, p.cursor+1)
		}
	}
	return nil
}

func (p *rootsPane) ShortHelp() []key.Binding {
	k := p.c.Keys
	if p.adding {
		return []key.Binding{withHelp(k.Open, "enter", "add"), withHelp(k.Back, "esc", "cancel")}
	}
	return []key.Binding{k.AddRoot, k.RemoveRoot, k.Up, k.Down}
}

func (p *rootsPane) FullHelp() [][]key.Binding { return [][]key.Binding{p.ShortHelp()} }

func (p *rootsPane) View() string {
	st := p.c.Styles
	lines := []string{st.Dim.Render(common.Truncate("The roots offered to the server; roots/list is answered from this list at once.", p.width))}
	if len(p.roots) == 0 {
		lines = append(lines, st.Dim.Render("  No roots. Press a to add one."))
	}
	for i, r := range p.roots {
		line := common.Line(r.URI)
		if r.Name != "" {
			line += st.Dim.Render("  " + common.Line(r.Name))
		}
		line = common.Truncate(line, p.width-2)
		if i == p.cursor {
			lines = append(lines, st.Cursor.Render("›")+" "+line)
		} else {
			lines = append(lines, "  "+line)
		}
	}
	body := common.Fit(strings.Join(lines, "\n"), p.width, max(1, p.height-1))
	last := p.notice.View(st, p.width)
	if p.adding {
		last = p.input.View()
	}
	return body + "\n" + last
}
