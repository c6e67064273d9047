package timeline

import (
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/mcpi-dev/mcpi/internal/query"
	"github.com/mcpi-dev/mcpi/internal/rows"
	"github.com/mcpi-dev/mcpi/internal/tui/common"
	"github.com/mcpi-dev/mcpi/internal/tui/keymap"
)

// minWindow is the narrowest window zooming in reaches.
const minWindow = int64(time.Millisecond)

// Pane is the timeline pane.
type Pane struct {
	c     *common.Common
	store *Store
	// live says open spans run to now (a session), not to the last event
	// (a replayed trace).
	live bool

	// The window shown, in Unix nanoseconds; fit keeps it on the whole
	// session as it grows.
	t0, t1 int64
	fit    bool

	cursor    int64 // the selected span, -1 for none
	collapsed [numLanes]bool
	// matched counts by lane the spans the query matches, for the lanes'
	// headers under a filter.
	matched [numLanes]int64

	query     query.Query
	queryErr  error
	filter    textinput.Model
	filtering bool

	// ticking says the once-a-second redraw of a live session runs.
	ticking bool

	// lines and statusLine are what View draws, worked out by layout;
	// spansDrawn counts the spans the last layout drew.
	lines      []string
	statusLine string
	spansDrawn int

	width, height int
}

// New returns the timeline pane over a store; live says its open spans
// run to now.
func New(c *common.Common, store *Store, live bool) *Pane {
	in := textinput.New()
	in.Prompt = "/"
	in.Placeholder = "method:tools/call status:error dur:>500ms … (the wire's filter language)"
	in.SetStyles(c.Styles.TextInput)
	in.KeyMap.Paste.SetEnabled(false)
	return &Pane{c: c, store: store, live: live, filter: in, fit: true, cursor: -1}
}

// Title names the pane in the tab bar.
func (p *Pane) Title() string { return "Timeline" }

// Store returns the spans.
func (p *Pane) Store() *Store { return p.store }

// InputFocused reports whether the filter has the keys.
func (p *Pane) InputFocused() bool { return p.filtering }

// SetSize sets the pane's size.
func (p *Pane) SetSize(w, h int) {
	p.width, p.height = w, max(h, 6)
	p.filter.SetWidth(max(10, w-2))
	p.layout()
}

// Window is the time shown: its start and end.
func (p *Pane) Window() (time.Time, time.Time) { return time.Unix(0, p.t0), time.Unix(0, p.t1) }

// Selected returns the selected span, if any.
func (p *Pane) Selected() *Span { return p.store.Get(p.cursor) }

// Append reads a batch of the wire's entries.
func (p *Pane) Append(entries []rows.Entry) {
	from := p.store.Next()
	p.store.Add(entries)
	if !p.query.Empty() {
		if p.store.Overflowed() {
			p.store.Touched()
			p.rematch()
		} else {
			for _, i := range p.store.Touched() {
				p.matchOne(i)
			}
			p.match(from)
		}
	} else {
		p.store.Touched()
	}
	p.layout()
}

// match matches the spans from index from against the query.
func (p *Pane) match(from int64) {
	for i := max(from, p.store.First()); i < p.store.Next(); i++ {
		p.matchOne(i)
	}
}

func (p *Pane) matchOne(i int64) {
	if sp := p.store.Get(i); sp != nil {
		r := sp.Record()
		was := sp.match
		sp.match = p.query.Match(&r)
		switch {
		case sp.match && !was:
			p.matched[sp.Lane]++
		case was && !sp.match:
			p.matched[sp.Lane]--
		}
	}
}

// rematch matches every span kept against the query, counting anew.
func (p *Pane) rematch() {
	p.matched = [numLanes]int64{}
	for i := p.store.First(); i < p.store.Next(); i++ {
		if sp := p.store.Get(i); sp != nil {
			sp.match = false
		}
	}
	p.match(p.store.First())
}

// fixWindow sets the window: the whole session when fitted, and never
// empty.
func (p *Pane) fixWindow() {
	if p.fit {
		p.t0, p.t1 = p.store.Extent()
		p.t1 = max(p.t1, p.openEnd())
		if p.t0 == 0 {
			p.t0, p.t1 = 0, int64(time.Second)
		}
	}
	if p.t1-p.t0 < minWindow {
		p.t1 = p.t0 + minWindow
	}
}

// Update handles the wire's entries and keys.
func (p *Pane) Update(msg tea.Msg) tea.Cmd {
	if em, ok := msg.(common.EntriesMsg); ok {
		if len(em.Entries) > 0 {
			p.Append(em.Entries)
		}
		if p.live && !p.ticking {
			p.ticking = true
			return tick()
		}
		return nil
	}
	if _, ok := msg.(tickMsg); ok {
		// Open spans run to now, and a fitted window ends there.
		if p.fit || p.store.Open() > 0 {
			p.layout()
		}
		return tick()
	}
	kp, ok := msg.(tea.KeyPressMsg)
	if p.filtering {
		return p.updateFilter(msg)
	}
	if !ok {
		return nil
	}
	cmd := p.key(kp)
	p.layout()
	return cmd
}

func (p *Pane) updateFilter(msg tea.Msg) tea.Cmd {
	k := p.c.Keys
	if kp, ok := msg.(tea.KeyPressMsg); ok {
		switch {
		case key.Matches(kp, k.Back):
			p.filtering = false
			p.filter.Blur()
			p.filter.SetValue("")
			p.setQuery("")
			return nil
		case key.Matches(kp, k.Open) && p.queryErr != nil:
			return nil
		case key.Matches(kp, k.Open):
			p.filtering = false
			p.filter.Blur()
			p.layout()
			return nil
		}
	}
	before := p.filter.Value()
	var cmd tea.Cmd
	p.filter, cmd = p.filter.Update(msg)
	if p.filter.Value() != before {
		p.setQuery(p.filter.Value())
	}
	return cmd
}

// tickMsg redraws a live session's timeline: time passes with no event.
type tickMsg struct{}

func tick() tea.Cmd {
	return tea.Tick(time.Second, func(time.Time) tea.Msg { return tickMsg{} })
}

// SetFilter applies a query of the search language (internal/query).
func (p *Pane) SetFilter(s string) {
	p.filter.SetValue(s)
	p.setQuery(s)
}

func (p *Pane) setQuery(s string) {
	q, err := query.Parse(s)
	p.queryErr = err
	if err == nil {
		p.query = q
		if !q.Empty() {
			p.rematch()
			// A selected span the filter hides is no longer selected: the
			// first one it shows is (or none).
			if sp := p.store.Get(p.cursor); sp == nil || !sp.match {
				p.cursor = p.store.first - 1
				p.step(1)
			}
		}
	}
	p.layout()
}

func (p *Pane) key(kp tea.KeyPressMsg) tea.Cmd {
	k := p.c.Keys
	switch {
	case key.Matches(kp, k.Filter):
		p.filtering = true
		return p.filter.Focus()
	case key.Matches(kp, k.Back):
		if !p.query.Empty() {
			p.SetFilter("")
		}
	case key.Matches(kp, k.ZoomIn):
		p.zoom(0.5)
	case key.Matches(kp, k.ZoomOut):
		p.zoom(2)
	case key.Matches(kp, k.PanLeft):
		p.pan(-1)
	case key.Matches(kp, k.PanRight):
		p.pan(1)
	case key.Matches(kp, k.Fit):
		p.fit = true
	case key.Matches(kp, k.Up):
		p.step(-1)
	case key.Matches(kp, k.Down):
		p.step(1)
	case key.Matches(kp, k.Top):
		p.cursor = p.store.First() - 1
		p.step(1)
	case key.Matches(kp, k.Bottom):
		p.cursor = p.store.Next()
		p.step(-1)
	case key.Matches(kp, k.Collapse):
		if sp := p.Selected(); sp != nil {
			p.collapsed[sp.Lane] = !p.collapsed[sp.Lane]
		} else {
			p.collapsed[LaneRequests] = !p.collapsed[LaneRequests]
		}
	case key.Matches(kp, k.ExpandAll):
		p.collapsed = [numLanes]bool{}
	case key.Matches(kp, k.Open):
		if sp := p.Selected(); sp != nil {
			seq := sp.Seq
			return func() tea.Msg { return common.ShowFrameMsg{Seq: seq} }
		}
	case key.Matches(kp, k.CopyTrace):
		return p.copyTrace()
	}
	return nil
}

func (p *Pane) copyTrace() tea.Cmd {
	sp := p.Selected()
	if sp == nil || sp.TraceID == "" {
		return common.Noticef("no trace id: the request carried no _meta.traceparent")
	}
	return common.Copy("the trace id "+sp.TraceID, []byte(sp.TraceID))
}

// zoom scales the window by f around the selected span (when it is in
// the window) or the window's middle.
func (p *Pane) zoom(f float64) {
	p.fixWindow()
	begin, end := p.store.Extent()
	end = max(end, p.openEnd())
	w := p.t1 - p.t0
	nw := max(minWindow, int64(float64(w)*f))
	if f > 1 && nw >= end-begin {
		p.fit = true
		return
	}
	center := p.t0 + w/2
	if sp := p.Selected(); sp != nil && sp.Start >= p.t0 && sp.Start <= p.t1 {
		center = sp.Start
	}
	// The center keeps its place on screen.
	p.t0 = center - int64(float64(center-p.t0)*float64(nw)/float64(w))
	p.t1 = p.t0 + nw
	p.fit = false
}

// pan moves the window a quarter of its width, within the session.
func (p *Pane) pan(dir int64) {
	p.fixWindow()
	begin, end := p.store.Extent()
	end = max(end, p.openEnd())
	w := p.t1 - p.t0
	if p.fit && w >= end-begin {
		return
	}
	d := dir * max(1, w/4)
	p.t0 = max(begin-w/2, min(p.t0+d, end-w/2))
	p.t1 = p.t0 + w
	p.fit = false
}

// step selects the next (or previous) span a key can reach: not folded
// away, matching the query, not a mark inside another; the window follows.
func (p *Pane) step(dir int64) {
	s := p.store
	i := p.cursor
	if i < s.first-1 {
		i = s.first - 1
	}
	for i += dir; i >= s.first && i < s.next; i += dir {
		sp := s.Get(i)
		// A failed request's echo in the errors lane is reached when its
		// lane is folded or filtered away, not a second time.
		echo := sp.Flags&flagEcho != 0 && !p.collapsed[LaneRequests] && !p.collapsed[LaneServer]
		if sp.Mark() || echo || p.collapsed[sp.Lane] || (!p.query.Empty() && !sp.match) {
			continue
		}
		p.cursor = i
		p.reveal(sp)
		return
	}
}

// reveal moves the window onto sp when it is off it.
func (p *Pane) reveal(sp *Span) {
	if p.fit || (sp.Start >= p.t0 && sp.Start <= p.t1) {
		return
	}
	w := p.t1 - p.t0
	p.t0 = sp.Start - w/3
	p.t1 = p.t0 + w
}

// ShortHelp is the pane's help line.
func (p *Pane) ShortHelp() []key.Binding {
	k := p.c.Keys
	if p.filtering {
		return []key.Binding{keymap.WithHelp(k.Open, "enter", "apply"), keymap.WithHelp(k.Back, "esc", "clear")}
	}
	return []key.Binding{keymap.WithHelp(k.Up, "↑/↓", "span"), k.ZoomIn, k.PanLeft, k.Fit, keymap.WithHelp(k.Open, "enter", "wire"), k.Collapse, k.Filter}
}

// FullHelp is every key of the pane.
func (p *Pane) FullHelp() [][]key.Binding {
	k := p.c.Keys
	return [][]key.Binding{
		{k.Up, k.Down, k.Top, k.Bottom, keymap.WithHelp(k.Open, "enter", "frames in the wire")},
		{k.ZoomIn, k.ZoomOut, k.PanLeft, k.PanRight, k.Fit},
		{k.Collapse, k.ExpandAll, k.Filter, k.CopyTrace, k.Back},
	}
}

// View draws the lines the last layout worked out.
func (p *Pane) View() string {
	if p.width <= 0 || p.height <= 0 {
		return ""
	}
	var b strings.Builder
	for _, l := range p.lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	if p.filtering {
		b.WriteString(p.filter.View())
		if p.queryErr != nil {
			b.WriteString("  " + p.c.Styles.Error.Render("✗ "+common.Line(p.queryErr.Error())))
		}
		return b.String()
	}
	b.WriteString(p.statusLine)
	return b.String()
}
