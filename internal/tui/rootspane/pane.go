// Package rootspane is the Roots pane: the roots offered to the server,
// added (a directory or a file:// URI) and removed by the user, or changed
// elsewhere (a live session's roots).
package rootspane

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
	"github.com/mcpi-dev/mcpi/internal/tui/keymap"
)

// Store holds the roots offered; the session's handler answers roots/list
// from it, on the session's goroutines.
type Store interface {
	Get() []mcp.Root
	Set([]mcp.Root)
}

// Pane edits the roots offered to the server. roots/list is answered
// from them at once; each change tells the server with
// notifications/roots/list_changed.
type Pane struct {
	c      *common.Common
	store  Store
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

// New returns the roots pane. client is the session's client (nil when
// there is none); set, when not nil, takes each change instead of telling
// the client's server (Options.SetRoots).
func New(c *common.Common, store Store, client func() *session.Client, set func(context.Context, []mcp.Root) error) *Pane {
	in := textinput.New()
	in.Prompt = "add root: "
	in.Placeholder = "a directory or a file:// URI"
	in.SetStyles(c.Styles.TextInput)
	in.KeyMap.Paste.SetEnabled(false)
	return &Pane{c: c, store: store, client: client, set: set, roots: store.Get(), input: in}
}

// Title names the pane in the tab bar, with the count of roots.
func (p *Pane) Title() string { return fmt.Sprintf("Roots (%d)", len(p.roots)) }

// InputFocused reports whether a text input has the keys.
func (p *Pane) InputFocused() bool { return p.adding }

// SetSize sets the pane's size.
func (p *Pane) SetSize(w, h int) {
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

func (p *Pane) changed() tea.Cmd {
	p.store.Set(p.roots)
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

// Update handles messages for the pane.
func (p *Pane) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case common.RootsMsg:
		p.changedElsewhere(msg.Roots)
	case rootMsg:
		return p.add(msg)
	case rootsNotifiedMsg:
		if msg.err != nil {
			if p.set != nil {
				p.notice.Fail(msg.err)
			} else {
				p.notice.Failf("notifications/roots/list_changed: %v", msg.err)
			}
		}
	case tea.PasteMsg:
		if p.adding {
			var cmd tea.Cmd
			p.input, cmd = p.input.Update(msg)
			return cmd
		}
	case tea.KeyPressMsg:
		if p.adding {
			return p.updateInput(msg)
		}
		p.notice.Clear()
		return p.updateList(msg)
	}
	return nil
}

// changedElsewhere takes the roots changed elsewhere (a live session's
// roots): these are the roots now, and the server was told by whoever
// changed them.
func (p *Pane) changedElsewhere(roots []mcp.Root) {
	if slices.Equal(roots, p.roots) {
		return
	}
	p.roots = slices.Clone(roots)
	p.store.Set(p.roots)
	p.cursor = max(0, min(p.cursor, len(p.roots)-1))
	p.notice.Set("the session's roots changed elsewhere: %d root(s)", len(p.roots))
}

// add adds the root the user typed, unless it is one already.
func (p *Pane) add(msg rootMsg) tea.Cmd {
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
}

// updateInput handles the keys of the root being typed: enter makes it a
// root (off the UI goroutine), esc gives up.
func (p *Pane) updateInput(msg tea.KeyPressMsg) tea.Cmd {
	k := p.c.Keys
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

// updateList handles the keys of the list: add, remove, move.
func (p *Pane) updateList(msg tea.KeyPressMsg) tea.Cmd {
	k := p.c.Keys
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
	return nil
}

// ShortHelp is the pane's help line.
func (p *Pane) ShortHelp() []key.Binding {
	k := p.c.Keys
	if p.adding {
		return []key.Binding{keymap.WithHelp(k.Open, "enter", "add"), keymap.WithHelp(k.Back, "esc", "cancel")}
	}
	return []key.Binding{k.AddRoot, k.RemoveRoot, k.Up, k.Down}
}

// FullHelp is every key of the pane.
func (p *Pane) FullHelp() [][]key.Binding { return [][]key.Binding{p.ShortHelp()} }

// View renders the pane.
func (p *Pane) View() string {
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
