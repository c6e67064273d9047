// Package requestspane is the Requests pane: the server requests
// (sampling, elicitation) waiting for the user, in the order they came.
// The queue is the root's; the pane shows it and asks the root to open a
// request's modal.
package requestspane

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/mcpi-dev/mcpi/internal/tui/common"
	"github.com/mcpi-dev/mcpi/internal/tui/keymap"
)

// Pane lists the server requests waiting for the user; enter opens the
// selected one's modal (the root shows it).
type Pane struct {
	c      *common.Common
	queue  *[]*common.Request
	cursor int
	width  int
	height int
}

// Title names the pane in the tab bar, with the count of requests waiting.
func (p *Pane) Title() string {
	if n := len(*p.queue); n > 0 {
		return fmt.Sprintf("Requests (%d)", n)
	}
	return "Requests"
}

// ShortTitle is the title of the abbreviated tab labels.
func (p *Pane) ShortTitle() string { return "Reqs" }

// InputFocused reports whether a text input has the keys.
func (p *Pane) InputFocused() bool { return false }

// SetSize sets the pane's size.
func (p *Pane) SetSize(w, h int) { p.width, p.height = w, h }

// Update handles messages for the pane.
func (p *Pane) Update(msg tea.Msg) tea.Cmd {
	kp, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil
	}
	k := p.c.Keys
	n := len(*p.queue)
	switch {
	case key.Matches(kp, k.Up):
		p.cursor--
	case key.Matches(kp, k.Down):
		p.cursor++
	case key.Matches(kp, k.Open):
		if p.cursor >= 0 && p.cursor < n {
			r := (*p.queue)[p.cursor]
			return func() tea.Msg { return common.OpenRequestMsg{Req: r} }
		}
	}
	p.cursor = max(0, min(p.cursor, n-1))
	return nil
}

// ShortHelp is the pane's help line.
func (p *Pane) ShortHelp() []key.Binding {
	k := p.c.Keys
	return []key.Binding{keymap.WithHelp(k.Open, "enter", "answer"), k.Up, k.Down}
}

// FullHelp is every key of the pane.
func (p *Pane) FullHelp() [][]key.Binding { return [][]key.Binding{p.ShortHelp()} }

// View renders the pane.
func (p *Pane) View() string {
	st := p.c.Styles
	q := *p.queue
	if len(q) == 0 {
		msg := "No server request is waiting. Sampling and elicitation requests from the server, and what an MCP App asks you, queue here."
		return strings.Join(common.Wrap(st.Dim.Render(msg), p.width), "\n")
	}
	var lines []string
	for i, r := range q {
		if i >= p.height {
			break
		}
		line := fmt.Sprintf("#%d %s %s", r.ID, r.Method(), common.Line(r.Summary()))
		line = common.Truncate(line, p.width-2)
		if i == p.cursor {
			lines = append(lines, st.Cursor.Render("›")+" "+st.Selected.Render(line))
		} else {
			lines = append(lines, "  "+line)
		}
	}
	return strings.Join(lines, "\n")
}

// New returns the pane of the requests in queue, which the root keeps.
func New(c *common.Common, queue *[]*common.Request) *Pane { return &Pane{c: c, queue: queue} }
