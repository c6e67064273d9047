package common

import (
	tea "charm.land/bubbletea/v2"
)

// Notice is a one-line message for the status line of the TUI (the header
// of the replay): sanitised there, shown until the next key or notice.
type Notice string

// Copy puts data on the system clipboard through the terminal (OSC 52:
// the terminal must allow it; tmux needs set-clipboard on) and says so.
// what names the data in the notice ("the frame").
func Copy(what string, data []byte) tea.Cmd {
	return tea.Batch(tea.SetClipboard(string(data)), func() tea.Msg {
		return Notice("copied " + what + " (" + ByteSize(len(data)) + ") to the clipboard through the terminal (OSC 52)")
	})
}
