package common

import (
	"fmt"

	tea "charm.land/bubbletea/v2"

	"github.com/mcpi-dev/mcpi/internal/tui/styles"
)

// Notice is the one line a pane, the modal or the status line has to say
// about the last thing done. It is sanitised once, when it is set, and
// drawn by one rule: a failure in the error style, anything else dim, cut
// to the width. The zero Notice says nothing.
//
// A Notice is also a message: a Cmd that returns one (Noticef, Failuref,
// Copy) puts it on the status line (the header of the replay) until the
// next key or notice.
type Notice struct {
	text string
	err  bool
}

// Set says what happened.
func (n *Notice) Set(format string, args ...any) { n.set(fmt.Sprintf(format, args...), false) }

// Fail says that something failed: "✗ " and the error.
func (n *Notice) Fail(err error) { n.set("✗ "+err.Error(), true) }

// Failf says that something failed, in words: "✗ " and the text.
func (n *Notice) Failf(format string, args ...any) { n.set("✗ "+fmt.Sprintf(format, args...), true) }

// Clear says nothing again.
func (n *Notice) Clear() { *n = Notice{} }

func (n *Notice) set(s string, err bool) { n.text, n.err = Line(s), err }

// Text is what the notice says, sanitised ("" = nothing).
func (n Notice) Text() string { return n.text }

// Err reports whether the notice tells of a failure.
func (n Notice) Err() bool { return n.err }

// Empty reports whether the notice says nothing.
func (n Notice) Empty() bool { return n.text == "" }

// View draws the notice within width cells ("" when it says nothing).
func (n Notice) View(st *styles.Styles, width int) string {
	if n.text == "" {
		return ""
	}
	style := st.Dim
	if n.err {
		style = st.Error
	}
	return style.Render(Truncate(n.text, width))
}

// Noticef returns a Cmd that shows a notice on the status line.
func Noticef(format string, args ...any) tea.Cmd {
	var n Notice
	n.Set(format, args...)
	return func() tea.Msg { return n }
}

// Failuref returns a Cmd that shows a failure on the status line.
func Failuref(format string, args ...any) tea.Cmd {
	var n Notice
	n.Failf(format, args...)
	return func() tea.Msg { return n }
}

// Over draws the notice in place of head, a pane's dim first line; head
// itself when the notice says nothing.
func (n Notice) Over(st *styles.Styles, head string, width int) string {
	if n.text == "" {
		return st.Dim.Render(Truncate(head, width))
	}
	return n.View(st, width)
}
