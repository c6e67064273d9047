package common

import (
	tea "charm.land/bubbletea/v2"
)

// Copy puts data on the system clipboard through the terminal (OSC 52:
// the terminal must allow it; tmux needs set-clipboard on) and says so.
// what names the data in the notice ("the frame").
func Copy(what string, data []byte) tea.Cmd {
	return tea.Batch(tea.SetClipboard(string(data)),
		Noticef("copied %s (%s) to the clipboard through the terminal (OSC 52)", what, ByteSize(len(data))))
}
