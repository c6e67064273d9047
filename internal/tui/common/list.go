package common

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// Cursor is the selection and scroll offset of a list whose rows are
// rendered from Offset on: only the visible rows are ever formatted.
type Cursor struct {
	Pos    int
	Offset int
}

// Clamp keeps Pos within n rows and visible in a window of rows rows.
func (c *Cursor) Clamp(n, rows int) {
	rows = max(1, rows)
	c.Pos = max(0, min(c.Pos, n-1))
	if c.Pos < c.Offset {
		c.Offset = c.Pos
	}
	if c.Pos >= c.Offset+rows {
		c.Offset = c.Pos - rows + 1
	}
	c.Offset = max(0, min(c.Offset, n-rows))
}

// Move handles the list keys (up, down, page, home, end); it reports
// whether msg was one of them.
func (c *Cursor) Move(cm *Common, msg tea.KeyPressMsg, n, rows int) bool {
	k := cm.Keys
	switch {
	case key.Matches(msg, k.Up):
		c.Pos--
	case key.Matches(msg, k.Down):
		c.Pos++
	case key.Matches(msg, k.PageUp):
		c.Pos -= rows
	case key.Matches(msg, k.PageDown):
		c.Pos += rows
	case key.Matches(msg, k.Top):
		c.Pos = 0
	case key.Matches(msg, k.Bottom):
		c.Pos = n - 1
	default:
		return false
	}
	c.Clamp(n, rows)
	return true
}
