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
	pos, ok := Step(cm, msg, c.Pos, n, rows)
	if !ok {
		return false
	}
	c.Pos = pos
	c.Clamp(n, rows)
	return true
}

// Step is where the list keys (up, down, page, home, end) take a position
// pos among n lines shown rows at a time, unclamped; ok is false when msg is
// not one of them. Cursors and scrolls both move by it.
func Step(cm *Common, msg tea.KeyPressMsg, pos, n, rows int) (int, bool) {
	k := cm.Keys
	switch {
	case key.Matches(msg, k.Up):
		return pos - 1, true
	case key.Matches(msg, k.Down):
		return pos + 1, true
	case key.Matches(msg, k.PageUp):
		return pos - rows, true
	case key.Matches(msg, k.PageDown):
		return pos + rows, true
	case key.Matches(msg, k.Top):
		return 0, true
	case key.Matches(msg, k.Bottom):
		return n - 1, true
	}
	return pos, false
}

// Scroll is the offset of a text too long for its box (a result, a frame's
// detail, a row opened in full): the list keys move it a line or a page at
// a time.
type Scroll struct {
	Offset int
}

// Move handles the scroll keys for a text of n lines shown rows at a time;
// it reports whether msg was one of them.
func (s *Scroll) Move(cm *Common, msg tea.KeyPressMsg, n, rows int) bool {
	off, ok := Step(cm, msg, s.Offset, n+1, rows)
	if !ok {
		return false
	}
	s.Offset = off
	s.Clamp(n, rows)
	return true
}

// Clamp keeps the offset within a text of n lines shown rows at a time.
func (s *Scroll) Clamp(n, rows int) { s.Offset = max(0, min(s.Offset, n-max(1, rows))) }

// Overflow returns the lines shown in a box of rows rows whose last row,
// when the text does not fit, says what the window leaves out: the bound
// of the offset counts that row, so the text's last line can be reached.
// below is how many lines are under the window; more reports that the
// text did not fit, and that the caller is to draw that row.
func (s *Scroll) Overflow(lines []string, rows int) (shown []string, below int, more bool) {
	rows = max(1, rows)
	if len(lines) <= rows {
		s.Offset = 0
		return lines, 0, false
	}
	body := max(1, rows-1)
	shown = s.Window(lines, body)
	return shown, len(lines) - s.Offset - len(shown), true
}

// Window returns the lines shown, from the offset on.
func (s *Scroll) Window(lines []string, rows int) []string {
	s.Clamp(len(lines), rows)
	return lines[s.Offset:min(len(lines), s.Offset+max(1, rows))]
}
