package tui

import (
	"slices"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/mcpi-dev/mcpi/internal/tui/common"
)

// layer is one thing that can be in front of the panes. What is in front
// receives every key, and nothing under it does: a key typed at the Diff
// view never reaches the form the view covers.
type layer uint8

const (
	// paneLayer is the active pane: what has the keys when nothing else
	// is open.
	paneLayer layer = iota
	// diffLayer is the Diff view of a --watch reload.
	diffLayer
	// composerLayer is the raw-request composer.
	composerLayer
	// modalLayer is a server request (sampling, elicitation, an App's
	// question) waiting for the person's answer.
	modalLayer
	// helpLayer is the whole help.
	helpLayer
)

var layerNames = [...]string{"the pane", "the Diff view", "the composer", "the request", "the help"}

func (l layer) String() string { return layerNames[l] }

// focus is the one focus state of the root: the layers open, in the order
// they were opened. The last one is in front. A layer is open at most once.
type focus []layer

// front is the layer that receives the keys.
func (f focus) front() layer {
	if len(f) == 0 {
		return paneLayer
	}
	return f[len(f)-1]
}

// shown reports whether l is open (in front or under another layer).
func (f focus) shown(l layer) bool { return l == paneLayer || slices.Contains(f, l) }

// open puts l in front of the layers of its rank and under those of a
// higher one: a Diff view that opens while a request is asked goes under
// the request, and the help stays over both.
func (f *focus) open(l layer) {
	if l == paneLayer {
		return
	}
	f.close(l)
	i := len(*f)
	for i > 0 && (*f)[i-1].rank() > l.rank() {
		i--
	}
	*f = slices.Insert(*f, i, l)
}

// rank orders the layers: the help over a request over the rest.
func (l layer) rank() int {
	switch l {
	case helpLayer:
		return 3
	case modalLayer:
		return 2
	}
	return 1
}

// close takes l away, wherever it is; what was under it is in front again.
func (f *focus) close(l layer) {
	*f = slices.DeleteFunc(*f, func(x layer) bool { return x == l })
}

// closeAll shows the pane alone.
func (f *focus) closeAll() { *f = (*f)[:0] }

// onTop is the layer that draws the pane area: the help is drawn below the
// status line, so the pane area shows what is under it.
func (f focus) onTop() layer {
	for i := len(f) - 1; i >= 0; i-- {
		if f[i] != helpLayer {
			return f[i]
		}
	}
	return paneLayer
}

// routeKey gives a key to what is in front. ctrl+c is the one key the
// root keeps in every layer (it asks again before losing work).
func (m *Model) routeKey(msg tea.KeyPressMsg) tea.Cmd {
	switch m.focus.front() {
	case helpLayer:
		return m.helpKey(msg)
	case modalLayer:
		return m.modalKey(msg)
	case composerLayer:
		return m.composerKey(msg)
	case diffLayer:
		return m.diffKey(msg)
	}
	return m.paneKey(msg)
}

// helpKey: the help closes on esc or its own key, and pgup/pgdn scroll
// it when it is longer than the screen; every other key is swallowed, with
// a word on how to go back.
func (m *Model) helpKey(msg tea.KeyPressMsg) tea.Cmd {
	k := m.c.Keys
	switch {
	case key.Matches(msg, k.Back) || key.Matches(msg, k.Help):
		m.closeLayer(helpLayer)
		return nil
	case key.Matches(msg, k.PageDown):
		m.helpScroll.Offset += max(1, m.helpRoom()-1)
		return nil
	case key.Matches(msg, k.PageUp):
		m.helpScroll.Offset = max(0, m.helpScroll.Offset-max(1, m.helpRoom()-1))
		return nil
	}
	m.status.Set("the help is open: esc closes it")
	return nil
}

// modalKey: the request in front takes every key; esc sets it aside, f1
// opens the help over it.
func (m *Model) modalKey(msg tea.KeyPressMsg) tea.Cmd {
	k := m.c.Keys
	switch {
	case key.Matches(msg, k.Later):
		m.setAside()
		m.status.Set("set aside: ctrl+o brings it back, with what you typed")
		return nil
	case msg.String() == "f1":
		m.openLayer(helpLayer)
		return nil
	}
	return m.modal.Update(msg, m.opts.OpenURL)
}

// composerKey: the composer takes every key; ctrl+o opens a waiting
// request over it and f1 the help.
func (m *Model) composerKey(msg tea.KeyPressMsg) tea.Cmd {
	k := m.c.Keys
	switch {
	case key.Matches(msg, k.Requests):
		m.openRequests()
		return nil
	case msg.String() == "f1":
		m.openLayer(helpLayer)
		return nil
	}
	closed, cmd := m.composer.Update(msg, m.conn.client)
	if closed {
		m.closeLayer(composerLayer)
	}
	return cmd
}

// paneKey: with nothing in front, the root's keys (the composer, the
// global ones, the tabs) and then the active pane.
func (m *Model) paneKey(msg tea.KeyPressMsg) tea.Cmd {
	if key.Matches(msg, m.c.Keys.Composer) {
		m.openLayer(composerLayer)
		return nil
	}
	if cmd, ok := m.globalKey(msg); ok {
		return cmd
	}
	if m.tabKey(msg) {
		return nil
	}
	return m.activePane().Update(msg)
}

// openLayer puts l in front and sizes it for the space it gets.
func (m *Model) openLayer(l layer) {
	if l == diffLayer && m.diff == nil || l == modalLayer && m.modal == nil {
		return // nothing to show
	}
	m.focus.open(l)
	m.layersChanged(l)
}

// closeLayer takes l away.
func (m *Model) closeLayer(l layer) {
	if !m.focus.shown(l) {
		return
	}
	m.focus.close(l)
	m.layersChanged(l)
}

// layersChanged keeps what follows from the layers true: the help's
// height takes from the panes', so opening or closing it resizes them.
func (m *Model) layersChanged(l layer) {
	if l == helpLayer {
		m.help.ShowAll = m.focus.shown(helpLayer)
		m.helpScroll = common.Scroll{}
		m.resize()
	}
	if l == modalLayer && !m.focus.shown(modalLayer) {
		m.modal = nil
	}
}
