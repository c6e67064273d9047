package timeline

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"charm.land/lipgloss/v2"

	"github.com/mcpi-dev/mcpi/internal/rows"
	"github.com/mcpi-dev/mcpi/internal/tui/common"
)

// gutter is the width of the lane names on the left.
const gutter = 20

// cell is what one column of one row holds after a layout.
type cell struct {
	bar, open          int32 // spans covering the column (a diff while laying out)
	points, failPoints int32
	marks              int32
	failEnd, openEnd   bool
	cancelEnd          bool
	sel                bool
}

// rowKey names a drawn row: a lane and a track (every track of a folded
// lane is drawn on its first row).
type rowKey struct {
	lane  Lane
	track int
}

// rows are the rows drawn, top to bottom, and the row of each lane and
// track.
func (p *Pane) rows() ([]rowKey, [numLanes][4]int) {
	var keys []rowKey
	var at [numLanes][4]int
	room := p.height - 4 // the axis, the details and the status lines
	used := func(l Lane) int { return max(1, p.store.tracksUsed[l]) }
	many := 0
	for l := range numLanes {
		if !p.collapsed[l] {
			many += used(l)
		} else {
			many++
		}
	}
	for l := range numLanes {
		n := used(l)
		if p.collapsed[l] || many > room {
			n = 1
		}
		for t := range 4 {
			at[l][t] = len(keys) + min(t, n-1)
		}
		for t := range n {
			keys = append(keys, rowKey{Lane(l), t})
		}
	}
	return keys, at
}

// layout works out every line the pane draws, once per batch, key or
// resize: View only joins them. It looks at the spans in the window alone
// (and the open ones), found by a binary search on their start.
func (p *Pane) layout() {
	p.fixWindow()
	if p.width <= 0 || p.height <= 0 {
		return
	}
	keys, at := p.rows()
	cols := max(1, p.width-gutter)
	grid := make([][]cell, len(keys))
	for r := range grid {
		grid[r] = make([]cell, cols+1)
	}
	p.spansDrawn = 0
	p.eachInWindow(func(i int64, sp *Span) {
		if !p.query.Empty() && !sp.match {
			return
		}
		if sp.Flags&flagEcho == 0 {
			p.spansDrawn++
		}
		p.paint(grid[at[sp.Lane][min(int(sp.Track), 3)]], i, sp, cols)
	})
	lines := append(make([]string, 0, len(keys)+4), p.axis(cols)...)
	for r, k := range keys {
		lines = append(lines, p.rowLine(k, grid[r][:cols]))
	}
	for len(lines) < p.height-2 {
		lines = append(lines, "")
	}
	p.lines = append(lines[:p.height-2], p.details())
	p.statusLine = p.status()
}

// eachInWindow calls f with every span that may show in the window: from
// the first that starts after the window's start less the longest span,
// and every span still open.
func (p *Pane) eachInWindow(f func(int64, *Span)) {
	s := p.store
	from := p.t0 - s.maxDur
	lo := s.first + int64(sort.Search(s.Len(), func(k int) bool { return s.Get(s.first+int64(k)).Start >= from }))
	for i := lo; i < s.next; i++ {
		sp := s.Get(i)
		if sp.Start > p.t1 && sp.Lane != LaneTasks {
			break
		}
		if sp.Open() {
			continue // drawn below, once
		}
		f(i, sp)
	}
	for _, m := range []map[string]int64{s.open, s.tasks, s.subs, s.rounds} {
		for _, i := range m {
			if sp := s.Get(i); sp != nil && sp.Open() && sp.Start <= p.t1 {
				f(i, sp)
			}
		}
	}
	if sp := s.Get(s.listen); sp != nil && sp.Open() {
		f(s.listen, sp)
	}
}

// col is the column of time t, which may be off the window.
func (p *Pane) col(t int64, cols int) int {
	w := max(1, p.t1-p.t0)
	d := t - p.t0
	switch {
	case d < 0:
		return -1
	case d > w:
		return cols
	}
	// The window's end is in its last column.
	return min(cols-1, int(float64(d)/float64(w)*float64(cols)))
}

func (p *Pane) paint(row []cell, i int64, sp *Span, cols int) {
	end := sp.End
	if sp.Open() {
		end = p.openEnd()
	}
	c0, c1 := p.col(sp.Start, cols), p.col(end, cols)
	if c1 < 0 || c0 >= cols {
		return
	}
	c0, c1 = max(c0, 0), min(c1, cols-1)
	if i == p.cursor {
		for c := c0; c <= c1; c++ {
			row[c].sel = true
		}
	}
	switch {
	case sp.Mark():
		row[c0].marks++
	case sp.Point() && sp.Failed():
		row[c0].failPoints++
	case sp.Point():
		row[c0].points++
	case sp.Open():
		row[c0].open++
		row[c1+1].open--
		row[c1].openEnd = true
	default:
		row[c0].bar++
		row[c1+1].bar--
		switch {
		case sp.Failed():
			row[c1].failEnd = true
		case sp.Cancelled():
			row[c1].cancelEnd = true
		}
	}
}

// openEnd is where an open span ends on screen: now in a live session,
// the last event of a replayed trace.
func (p *Pane) openEnd() int64 {
	_, end := p.store.Extent()
	if p.live && p.c.Now != nil {
		end = max(end, p.c.Now().UnixNano())
	}
	return end
}

// Glyphs: they tell spans apart without colour (and in goldens).
const (
	glyphBar     = "━"
	glyphOpen    = "┄"
	glyphOpenEnd = "»"
	glyphFail    = "✗"
	glyphCancel  = "⊘"
	glyphPoint   = "•"
	glyphMany    = "+"
)

// class is how a cell is styled.
type class uint8

const (
	classNone class = iota
	classBar
	classOpen
	classFail
	classMark
	classPoint
)

// glyph is what a cell shows, by priority: a failure, the end of a span
// never answered, a mark, a cancel, events, an open span, a span.
func glyph(c *cell, bar, open int32, markGlyph string) (string, class) {
	switch {
	case c.failEnd || c.failPoints > 0:
		return glyphFail, classFail
	case c.openEnd:
		return glyphOpenEnd, classOpen
	case c.marks > 0:
		return markGlyph, classMark
	case c.cancelEnd:
		return glyphCancel, classOpen
	case c.points > 9:
		return glyphMany, classPoint
	case c.points > 1:
		return string(rune('0' + c.points)), classPoint
	case c.points == 1:
		return glyphPoint, classPoint
	case open > 0:
		return glyphOpen, classOpen
	case bar > 0:
		return glyphBar, classBar
	}
	return " ", classNone
}

// markGlyphs are the marks inside a bar: a subscription's updates, a
// task's polls, an input request's rounds.
var markGlyphs = [numLanes]string{LaneRequests: "╋", LaneTasks: "╋", LaneSubscriptions: "◆", LaneServer: "╋", LaneNotifications: "•", LaneHTTP: "•", LaneApp: "•", LaneErrors: "✗"}

func (p *Pane) rowLine(k rowKey, row []cell) string {
	st := p.c.Styles
	styles := [...]lipgloss.Style{classNone: st.Dim, classBar: st.WireOut, classOpen: st.Warning, classFail: st.Error, classMark: st.OK, classPoint: st.WireIn}
	var b strings.Builder
	b.WriteString(p.laneLabel(k))
	var bar, open int32
	var run strings.Builder
	runClass, runSel := classNone, false
	flush := func() {
		if run.Len() == 0 {
			return
		}
		s := styles[runClass]
		if runSel {
			s = s.Inherit(st.Selected)
		}
		b.WriteString(s.Render(run.String()))
		run.Reset()
	}
	for c := range row {
		bar += row[c].bar
		open += row[c].open
		g, cl := glyph(&row[c], bar, open, markGlyphs[k.lane])
		if cl != runClass || row[c].sel != runSel {
			flush()
			runClass, runSel = cl, row[c].sel
		}
		run.WriteString(g)
	}
	flush()
	return b.String()
}

func (p *Pane) laneLabel(k rowKey) string {
	st := p.c.Styles
	if k.track > 0 {
		return strings.Repeat(" ", gutter)
	}
	fold := "▾ "
	if p.collapsed[k.lane] {
		fold = "▸ "
	}
	label := fold + k.lane.String()
	n := p.store.LaneCount(k.lane)
	if !p.query.Empty() {
		// Under a filter, the spans it shows.
		n = p.matched[k.lane]
	}
	if n > 0 {
		label += " " + compact(n)
	}
	return st.Title.Render(common.Pad(label, gutter-1)) + " "
}

// compact writes a count in at most four characters: 999, 12k, 3M.
func compact(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprint(n)
	case n < 1_000_000:
		return fmt.Sprintf("%dk", n/1000)
	}
	return fmt.Sprintf("%dM", n/1_000_000)
}

// steps are the axis's tick intervals.
var steps = func() []time.Duration {
	var out []time.Duration
	for d := time.Microsecond; d <= time.Hour; d *= 10 {
		out = append(out, d, 2*d, 5*d)
	}
	return append(out, 2*time.Hour, 6*time.Hour, 24*time.Hour)
}()

// axis is the time axis: labels (the time since the session's first
// event) over ticks at a readable interval.
func (p *Pane) axis(cols int) []string {
	st := p.c.Styles
	w := max(1, p.t1-p.t0)
	step := steps[len(steps)-1]
	for _, s := range steps {
		if float64(s)/float64(w)*float64(cols) >= 12 {
			step = s
			break
		}
	}
	labels := []rune(strings.Repeat(" ", cols+gutter))
	ticks := []rune(strings.Repeat("─", cols))
	origin, _ := p.store.Extent()
	first := origin + (p.t0-origin+int64(step)-1)/int64(step)*int64(step)
	if p.t0 < origin {
		first = origin - (origin-p.t0)/int64(step)*int64(step)
	}
	next := 0
	for t := first; t <= p.t1; t += int64(step) {
		c := p.col(t, cols)
		if c < 0 || c >= cols {
			continue
		}
		ticks[c] = '┬'
		l := []rune(offset(time.Duration(t - origin)))
		if at := gutter + c; at >= next && at+len(l) <= len(labels) {
			copy(labels[at:], l)
			next = at + len(l) + 1
		}
	}
	head := common.Pad(fmt.Sprintf("%s/col", offset(time.Duration(w/int64(cols)))), gutter-1) + " "
	return []string{st.Dim.Render(string(labels)), st.Dim.Render(head + string(ticks))}
}

// offset writes a time since the session's start in its largest readable
// unit: 0, 250µs, 12ms, 1.5s, 2m05s.
func offset(d time.Duration) string {
	switch {
	case d == 0:
		return "0"
	case d < 0:
		return "-" + offset(-d)
	case d < time.Millisecond:
		return trimZeros(fmt.Sprintf("%.1f", float64(d)/float64(time.Microsecond))) + "µs"
	case d < time.Second:
		return trimZeros(fmt.Sprintf("%.1f", float64(d)/float64(time.Millisecond))) + "ms"
	case d < time.Minute:
		return trimZeros(fmt.Sprintf("%.3f", d.Seconds())) + "s"
	}
	return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
}

func trimZeros(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// details is the line about the selected span.
func (p *Pane) details() string {
	st := p.c.Styles
	sp := p.store.Get(p.cursor)
	if sp == nil {
		return st.Dim.Render(common.Truncate("  ↑/↓ select a span", p.width))
	}
	origin, _ := p.store.Extent()
	parts := []string{common.Line(sp.Label())}
	if sp.ID != "" {
		parts = append(parts, "id "+common.Line(sp.ID))
	}
	parts = append(parts, "at +"+offset(time.Duration(sp.Start-origin)))
	switch {
	case sp.Point():
	case sp.Open() && p.live:
		parts = append(parts, glyphOpenEnd+" open for "+common.Duration(time.Duration(p.openEnd()-sp.Start)))
	case sp.Open():
		parts = append(parts, glyphOpenEnd+" never ended ("+common.Duration(time.Duration(p.openEnd()-sp.Start))+" to the trace's end)")
	case sp.Cancelled():
		parts = append(parts, glyphCancel+" cancelled after "+common.Duration(time.Duration(sp.End-sp.Start)))
	case sp.Flags&flagUntracked != 0:
		parts = append(parts, "end not followed (over the open bound)")
	default:
		parts = append(parts, rows.FormatLatency(time.Duration(sp.End-sp.Start)))
	}
	if sp.Rounds > 0 {
		parts = append(parts, fmt.Sprintf("%d input rounds", sp.Rounds+1))
	}
	if sp.Marks > 0 {
		parts = append(parts, fmt.Sprintf("%d inside", sp.Marks))
	}
	if sp.Failed() {
		parts = append(parts, glyphFail+" "+common.Line(sp.Err))
	} else if !sp.Open() && !sp.Point() && !sp.Cancelled() {
		parts = append(parts, "ok")
	}
	if sp.TraceID != "" {
		parts = append(parts, "trace "+sp.TraceID)
	}
	style := st.Title
	if sp.Failed() {
		style = st.Error
	}
	return style.Render(common.Truncate("› "+strings.Join(parts, " · "), p.width))
}

func (p *Pane) status() string {
	st := p.c.Styles
	s := p.store
	parts := []string{fmt.Sprintf("%d spans", s.Len())}
	if !p.query.Empty() {
		parts[0] = fmt.Sprintf("%d in view of %d spans", p.spansDrawn, s.Len())
	}
	origin, _ := s.Extent()
	win := fmt.Sprintf("+%s…+%s", offset(time.Duration(p.t0-origin)), offset(time.Duration(p.t1-origin)))
	if p.fit {
		win += " (whole session)"
	}
	parts = append(parts, win)
	if n := s.Open(); n > 0 {
		parts = append(parts, fmt.Sprintf("%d open", n))
	}
	if s.Evicted > 0 {
		parts = append(parts, fmt.Sprintf("%d older spans dropped", s.Evicted))
	}
	if s.Untracked > 0 {
		parts = append(parts, fmt.Sprintf("%d not followed (over %d open)", s.Untracked, MaxOpen))
	}
	if !p.query.Empty() {
		parts = append(parts, "filter: "+common.Line(p.query.String()))
	}
	return st.Dim.Render(common.Truncate(strings.Join(parts, " · "), p.width))
}
