package tui

import (
	"encoding/json"
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/mcpi-dev/mcpi/internal/surface"
	"github.com/mcpi-dev/mcpi/internal/tui/common"
	"github.com/mcpi-dev/mcpi/internal/tui/keymap"
)

// diffView lists what moved in the server's surface, a row a change with
// a cursor; enter opens the change whole (its class, rule, subject,
// pointer, message, and the values before and after).
type diffView struct {
	c       *common.Common
	title   string
	changes []surface.Change
	list    common.Cursor
	// detail: the selected change is open, scrolled by scroll.
	detail bool
	scroll common.Scroll
	w, h   int
}

func (d *diffView) SetSize(w, h int) {
	d.w, d.h = w, h
	d.list.Clamp(len(d.changes), d.rows())
}

// rows is how many lines the view shows under its title.
func (d *diffView) rows() int { return max(1, d.h-2) }

// key moves in the view; ok reports whether the key was the view's.
func (d *diffView) key(msg tea.KeyPressMsg) (ok bool) {
	k := d.c.Keys
	switch {
	case d.detail && key.Matches(msg, k.Back):
		d.detail = false
		return true
	case d.detail:
		return d.scroll.Move(d.c, msg, len(d.detailLines()), d.rows())
	case key.Matches(msg, k.Open) && len(d.changes) > 0:
		d.detail, d.scroll = true, common.Scroll{}
		return true
	}
	return d.list.Move(d.c, msg, len(d.changes), d.rows())
}

// classMark is a change's class in a few columns.
func classMark(c surface.Class) string {
	switch c {
	case surface.Breaking:
		return "✗ breaking"
	case surface.PossiblyBreaking:
		return "! possibly"
	}
	return "· " + string(c)
}

func (d *diffView) View() string {
	st := d.c.Styles
	var b strings.Builder
	title := "Diff · " + common.Line(d.title)
	if d.detail {
		title += fmt.Sprintf(" · change %d of %d", d.list.Pos+1, len(d.changes))
	}
	b.WriteString(common.Truncate(st.Title.Render(title), d.w))
	if d.detail {
		for _, l := range d.scroll.Window(d.detailLines(), d.rows()) {
			b.WriteByte('\n')
			b.WriteString(common.Truncate(l, d.w))
		}
		return b.String()
	}
	if len(d.changes) == 0 {
		b.WriteString("\nnothing moved in the server's surface")
		return b.String()
	}
	for i := d.list.Offset; i < min(len(d.changes), d.list.Offset+d.rows()); i++ {
		c := d.changes[i]
		mark := "  "
		if i == d.list.Pos {
			mark = "› "
		}
		l := fmt.Sprintf("%s%-12s %s: %s", mark, classMark(c.Class), common.Line(c.Subject), common.Line(c.Message))
		l = common.Truncate(l, d.w)
		switch {
		case i == d.list.Pos:
			l = st.Selected.Render(l)
		case c.Class == surface.Breaking:
			l = st.Error.Render(l)
		}
		b.WriteByte('\n')
		b.WriteString(l)
	}
	return b.String()
}

// detailLines are the selected change's lines, wrapped to the width.
func (d *diffView) detailLines() []string {
	if d.list.Pos < 0 || d.list.Pos >= len(d.changes) {
		return nil
	}
	c := d.changes[d.list.Pos]
	w := max(10, d.w)
	var out []string
	field := func(name, v string) {
		for i, l := range common.Wrap(common.Line(v), max(10, w-10)) {
			if i == 0 {
				out = append(out, fmt.Sprintf("%-9s %s", name, l))
			} else {
				out = append(out, strings.Repeat(" ", 10)+l)
			}
		}
	}
	field("class", string(c.Class))
	field("rule", c.Kind)
	field("subject", c.Subject)
	field("pointer", c.Pointer)
	field("message", c.Message)
	for _, v := range []struct {
		name string
		val  any
	}{{"before", c.Old}, {"after", c.New}} {
		if v.val == nil {
			continue
		}
		j, err := json.MarshalIndent(v.val, "", "  ")
		if err != nil {
			continue
		}
		out = append(out, v.name+":")
		for _, l := range strings.Split(string(j), "\n") {
			body := strings.TrimLeft(l, " ")
			out = append(out, strings.Repeat(" ", 2+len(l)-len(body))+common.Line(body))
		}
	}
	return out
}

func (d *diffView) ShortHelp() []key.Binding {
	k := d.c.Keys
	if d.detail {
		return []key.Binding{k.Up, k.Down, keymap.WithHelp(k.Back, "esc", "back to the list")}
	}
	return []key.Binding{k.Up, k.Down, keymap.WithHelp(k.Open, "enter", "open"), keymap.WithHelp(k.Back, "esc", "close diff")}
}

func (d *diffView) FullHelp() [][]key.Binding {
	k := d.c.Keys
	if d.detail {
		return [][]key.Binding{{k.Up, k.Down, k.PageUp, k.PageDown, keymap.WithHelp(k.Back, "esc", "back to the list")}}
	}
	return [][]key.Binding{{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom, keymap.WithHelp(k.Open, "enter", "open"), keymap.WithHelp(k.Back, "esc", "close diff")}}
}
