package tui

import (
	"github.com/mcpi-dev/mcpi/internal/tui/logs"
	"github.com/mcpi-dev/mcpi/internal/tui/prompts"
	"github.com/mcpi-dev/mcpi/internal/tui/resources"
	"github.com/mcpi-dev/mcpi/internal/tui/tools"
	"github.com/mcpi-dev/mcpi/internal/tui/wire"
)

// The tests reach the panes by their types; the root itself names none.

// paneOf returns the first pane of type T.
func paneOf[T pane](m *Model) T {
	for _, p := range m.panes {
		if t, ok := p.(T); ok {
			return t
		}
	}
	var zero T
	return zero
}

// Tools returns the tools pane.
func (m *Model) Tools() *tools.Pane { return paneOf[*tools.Pane](m) }

// Wire returns the wire pane.
func (m *Model) Wire() *wire.Pane { return paneOf[*wire.Pane](m) }

// Resources returns the resources pane.
func (m *Model) Resources() *resources.Pane { return paneOf[*resources.Pane](m) }

// Prompts returns the prompts pane.
func (m *Model) Prompts() *prompts.Pane { return paneOf[*prompts.Pane](m) }

func (m *Model) logPane(k logs.Kind) *logs.Pane {
	for _, p := range m.panes {
		if lp, ok := p.(*logs.Pane); ok && lp.Kind() == k {
			return lp
		}
	}
	return nil
}

// Log, NotificationsPane and Stderr return the stream panes.
func (m *Model) Log() *logs.Pane               { return m.logPane(logs.KindLog) }
func (m *Model) NotificationsPane() *logs.Pane { return m.logPane(logs.KindNotifications) }
func (m *Model) Stderr() *logs.Pane            { return m.logPane(logs.KindStderr) }
