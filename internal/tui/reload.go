package tui

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/mcpi-dev/mcpi/internal/bounds"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/surface"
	"github.com/mcpi-dev/mcpi/internal/transport"
	"github.com/mcpi-dev/mcpi/internal/tui/common"
)

// surfaceClock bounds the listing of a server's surface for the Diff view.
var surfaceClock = bounds.Clock{Name: "surface", D: 30 * time.Second}

// buildLines bounds the lines of a build's output put in the Stderr pane.
const buildLines = 2000

type (
	// reloadMsg is a Reload from Options.Reloads.
	reloadMsg struct{ r Reload }
	// surfaceMsg is the surface of the connection of gen, listed after a
	// start or a list_changed (why says which).
	surfaceMsg struct {
		gen  int
		snap *surface.Snapshot
		err  error
		why  string
	}
)

// watching reports whether the TUI keeps the server's surface to diff it:
// with --watch.
func (m *Model) watching() bool { return m.opts.Reloads != nil }

// waitReload waits for the next Reload.
func (m *Model) waitReload() tea.Cmd {
	ch, done := m.opts.Reloads, m.done
	if ch == nil {
		return nil
	}
	return func() tea.Msg {
		select {
		case r, ok := <-ch:
			if !ok {
				return nil
			}
			return reloadMsg{r}
		case <-done:
			return nil
		}
	}
}

// reload takes a Reload: a warning or a failed build is said, and the old
// server keeps running; otherwise the server is restarted as with ctrl+r.
func (m *Model) reload(r Reload) tea.Cmd {
	next := m.waitReload()
	if r.Warning != "" {
		m.status.Failf("watch: %s", r.Warning)
		return next
	}
	m.buildOutput(r.Output)
	if r.Err != nil {
		first := whyLine(r.Output)
		if first == "" {
			first = r.Err.Error()
		}
		m.status.Failf("build failed: %s; the server keeps running (its output: alt+0)", first)
		return next
	}
	m.reloadWhy = changedWhat(r)
	// The diff is against the surface listed when the old server started
	// (and after each list_changed): a server that reads its tools from a
	// file at each request already serves the new ones. Only when that
	// listing is not in yet is the old server listed before it is stopped.
	var old tea.Cmd
	if c := m.conn.client; c != nil && (m.surface == nil || m.surfaceGen != m.conn.gen) {
		old = m.takeSurface(c, m.conn.gen, "")
	}
	return tea.Batch(next, tea.Sequence(old, m.connect(m.conn.client)))
}

// buildOutput puts the build's output in the Stderr pane, line by line,
// each prefixed "build:".
func (m *Model) buildOutput(out string) {
	out = strings.TrimRight(out, "\n")
	if out == "" {
		return
	}
	now := m.opts.Now()
	lines := strings.Split(out, "\n")
	if len(lines) > buildLines {
		n := len(lines) - buildLines
		lines = append(lines[:buildLines], fmt.Sprintf("… %d more lines", n))
	}
	for _, l := range lines {
		m.c.Inbox.Observe(transport.Event{Time: now, Kind: transport.KindStderr, Dir: transport.Incoming, Data: []byte("build: " + l)})
	}
}

// whyLine is the line of a failed build's output that says why: the last
// line of a Python traceback (NameError: …), else the first line that
// names an error (error[E0425], error TS2322, ReferenceError: …), else the
// first line with something in it that is not a heading ("# pkg").
func whyLine(s string) string {
	var lines []string
	for l := range strings.SplitSeq(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return ""
	}
	for _, l := range lines {
		if strings.HasPrefix(l, "Traceback (most recent call last)") {
			return lines[len(lines)-1]
		}
	}
	for _, l := range lines {
		if strings.Contains(strings.ToLower(l), "error") {
			return l
		}
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "# ") {
			return l
		}
	}
	return lines[0]
}

// changedWhat names what a Reload saw change.
func changedWhat(r Reload) string {
	if len(r.Changed) == 0 {
		return "restarted"
	}
	s := "restarted: " + filepath.Base(r.Changed[0])
	if len(r.Changed) > 1 {
		s += fmt.Sprintf(" and %d more", len(r.Changed)-1)
	}
	return s + " changed"
}

// takeSurface lists the surface of the connection of gen, for the Diff
// view.
func (m *Model) takeSurface(c *session.Client, gen int, why string) tea.Cmd {
	ctx := m.ctx
	return func() tea.Msg {
		ctx, cancel := surfaceClock.Context(ctx)
		defer cancel()
		snap, err := surface.Take(ctx, c, surface.Options{})
		if err != nil && errors.Is(err, context.Canceled) {
			// The TUI is closing, or the connection went: nothing to say.
			return nil
		}
		return surfaceMsg{gen: gen, snap: snap, err: err, why: why}
	}
}

// surfaced takes a new surface: one without a why (the old server's,
// listed before a restart) or the first is the baseline; each later one
// is diffed against the one before, shown and said in one notice. A
// surface of a connection older than the baseline's is dropped.
func (m *Model) surfaced(msg surfaceMsg) {
	if msg.gen < m.surfaceGen {
		return
	}
	if msg.err != nil {
		if msg.gen == m.conn.gen && msg.why != "" {
			m.status.Failf("diff: the surface could not be listed: %v", msg.err)
		}
		return
	}
	old := m.surface
	m.surface, m.surfaceGen = msg.snap, msg.gen
	if old == nil || msg.why == "" {
		return
	}
	changes := surface.Diff(old, msg.snap)
	sum := diffSummary(changes)
	m.diff = &diffView{c: m.c, title: msg.why + " · " + sum, changes: changes}
	m.diff.SetSize(m.width, m.paneHeight())
	if len(changes) > 0 {
		m.openLayer(diffLayer)
		m.status.Set("%s: %s (alt+d: the diff)", msg.why, sum)
	} else {
		m.status.Set("%s: %s", msg.why, sum)
	}
}

// diffSummary is "3 changes, 1 breaking", or "no change".
func diffSummary(cs []surface.Change) string {
	if len(cs) == 0 {
		return "no change"
	}
	n := map[surface.Class]int{}
	for _, c := range cs {
		n[c.Class]++
	}
	s := common.Plural(len(cs), "change")
	if b := n[surface.Breaking]; b > 0 {
		s += fmt.Sprintf(", %d breaking", b)
	}
	if p := n[surface.PossiblyBreaking]; p > 0 {
		s += fmt.Sprintf(", %d possibly breaking", p)
	}
	return s
}

// diffKey gives every key to the Diff view while it is in front; esc on
// its list (or alt+d) closes it, f1 or ? opens the help over it.
func (m *Model) diffKey(msg tea.KeyPressMsg) tea.Cmd {
	k := m.c.Keys
	switch {
	case key.Matches(msg, k.Diff), key.Matches(msg, k.Back) && !m.diff.detail:
		m.closeLayer(diffLayer)
	case key.Matches(msg, k.Help):
		m.openLayer(helpLayer)
	case !m.diff.key(msg):
		m.status.Set("the Diff view is in front: esc closes it")
	}
	return nil
}

// toggleDiff shows the Diff view (it closes itself on alt+d).
func (m *Model) toggleDiff() {
	switch {
	case m.diff == nil && m.watching():
		m.status.Set("no diff yet: it shows what moved when the server restarts or a list changes")
	case m.diff == nil:
		m.status.Set("the Diff view needs mcpi connect --watch PATH")
	default:
		m.diff.SetSize(m.width, m.paneHeight())
		m.openLayer(diffLayer)
	}
}

// listChanged reports whether a batch of notifications says a list of the
// surface changed.
func listChanged(nm common.NotificationsMsg) bool {
	for _, m := range []string{"notifications/tools/list_changed", "notifications/prompts/list_changed", "notifications/resources/list_changed"} {
		if nm.Has(m) {
			return true
		}
	}
	return false
}
