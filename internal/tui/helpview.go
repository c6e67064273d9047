package tui

import (
	"strings"

	"charm.land/bubbles/v2/key"

	"github.com/mcpi-dev/mcpi/internal/tui/common"
)

// helpSep is what stands between two columns of the whole help.
const helpSep = "    "

// fullHelp is the whole help laid out at the width; keys[i] is how many
// keys line i shows.
type fullHelp struct {
	lines []string
	keys  []int
}

// helpColumns cuts the whole help into columns of rows keys, the groups
// one after another, top to bottom then left to right; with rows the
// longest group's length, each group is a column.
func helpColumns(groups [][]key.Binding, rows, longest int) [][]key.Binding {
	var cols [][]key.Binding
	chunk := func(bs []key.Binding) {
		for start := 0; start < len(bs); start += rows {
			cols = append(cols, bs[start:min(len(bs), start+rows)])
		}
	}
	if rows <= longest {
		for _, g := range groups {
			chunk(g)
		}
		return cols
	}
	var all []key.Binding
	for _, g := range groups {
		all = append(all, g...)
	}
	chunk(all)
	return cols
}

// columnWidths are the widest key and description of a column.
func columnWidths(col []key.Binding) (kw, dw int) {
	for _, b := range col {
		kw = max(kw, common.Width(b.Help().Key))
		dw = max(dw, common.Width(b.Help().Desc))
	}
	return kw, dw
}

// layoutHelp lays the whole help out at the width: a column a group when
// they fit side by side, else in more lines and fewer columns, none of its
// keys left out (a key too long for the width is cut, not dropped).
func (m *Model) layoutHelp() fullHelp {
	var groups [][]key.Binding
	n, longest := 0, 0
	for _, col := range m.keys().FullHelp() {
		var g []key.Binding
		for _, b := range col {
			if b.Enabled() {
				g = append(g, b)
			}
		}
		if len(g) > 0 {
			groups = append(groups, g)
			n += len(g)
			longest = max(longest, len(g))
		}
	}
	if n == 0 {
		return fullHelp{}
	}
	var cols [][]key.Binding
	for rows := longest; rows <= n; rows++ {
		cols = helpColumns(groups, rows, longest)
		w := len(helpSep) * (len(cols) - 1)
		for _, col := range cols {
			kw, dw := columnWidths(col)
			w += kw + 1 + dw
		}
		if w <= m.width {
			break
		}
	}
	st := m.help.Styles
	var h fullHelp
	x := 0 // where the column starts
	for _, col := range cols {
		kw, dw := columnWidths(col)
		for i, b := range col {
			if i == len(h.lines) {
				h.lines = append(h.lines, "")
				h.keys = append(h.keys, 0)
			}
			// A line a shorter column left blank is padded to this one.
			h.lines[i] += strings.Repeat(" ", max(0, x-common.Width(h.lines[i])))
			k, d := b.Help().Key, b.Help().Desc
			h.lines[i] += st.FullKey.Render(k) + strings.Repeat(" ", kw-common.Width(k)+1) + st.FullDesc.Render(d)
			h.keys[i]++
		}
		x += kw + 1 + dw + len(helpSep)
	}
	for i, l := range h.lines {
		h.lines[i] = common.Truncate(l, m.width)
	}
	return h
}

// helpRoom is the most lines the whole help may take: all the screen but
// the header, the tabs, the status line and one line of what it covers.
func (m *Model) helpRoom() int { return max(2, m.height-5) }

// fullHelpView is the whole help in the lines it gets: when it needs more,
// its last line says how many keys are out of sight and how to see them.
func (m *Model) fullHelpView() string {
	h := m.layoutHelp()
	shown, below, more := m.helpScroll.Overflow(h.lines, m.helpRoom())
	if !more {
		return strings.Join(shown, "\n")
	}
	hidden := 0
	for i, n := range h.keys {
		if i < m.helpScroll.Offset || i >= m.helpScroll.Offset+len(shown) {
			hidden += n
		}
	}
	say := "… " + common.Plural(hidden, "more key") + ": pgup/pgdn"
	if below == 0 {
		say = "… the end; " + common.Plural(hidden, "key") + " above: pgup"
	}
	return strings.Join(append(shown[:len(shown):len(shown)], m.help.Styles.FullDesc.Render(common.Truncate(say, m.width))), "\n")
}
