package wire

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/mcpi-dev/mcpi/internal/query"
	"github.com/mcpi-dev/mcpi/internal/record"
	"github.com/mcpi-dev/mcpi/internal/rows"
	"github.com/mcpi-dev/mcpi/internal/transport"
	"github.com/mcpi-dev/mcpi/internal/tui/common"
	"github.com/mcpi-dev/mcpi/internal/tui/keymap"
	"github.com/mcpi-dev/mcpi/internal/tui/styles"
)

// Pane is the wire pane.
type Pane struct {
	c     *common.Common
	store *rows.Store

	query query.Query
	// queryErr is why the filter typed does not parse (the last good
	// query stays applied).
	queryErr  error
	filter    textinput.Model
	filtering bool
	// latency shows the latencies by method instead of the frames;
	// latencyRows are they, summed up for latencyAt.
	latency     bool
	latencyRows []rows.LatencyRow
	latencyAt   latencyKey
	// filterHint is what is said beside the filter while it is typed: the
	// choices tab completes to, or why the query does not parse.
	filterHint string
	// view holds the sequence numbers that match the query, ascending;
	// unused (nil) when the query is empty and every entry shows.
	view []int64

	cursor int64 // the selected entry's seq, -1 before the first entry
	offset int   // index of the first visible row
	follow bool

	detail       bool
	detailSeq    int64
	detailLines  []string
	detailOffset int

	// Search in the detail view: find is the box ("/" opens it), finding
	// says it has the keys, term is what is searched (case-insensitive, on
	// the text without styles), matches the detail lines holding it and
	// match the current one (an index into matches).
	find    textinput.Model
	finding bool
	term    string
	matches []int
	match   int

	width, height int
}

// New returns the wire pane over a store.
func New(c *common.Common, store *rows.Store) *Pane {
	in := textinput.New()
	in.Prompt = "/"
	in.Placeholder = "method:tools/call status:error dur:>500ms -term … (tab completes)"
	in.SetStyles(c.Styles.TextInput)
	in.KeyMap.Paste.SetEnabled(false)
	find := textinput.New()
	find.Prompt = "find: "
	find.Placeholder = "text in this frame"
	find.SetStyles(c.Styles.TextInput)
	find.KeyMap.Paste.SetEnabled(false)
	return &Pane{c: c, store: store, filter: in, find: find, cursor: -1, follow: true}
}

// Title names the pane in the tab bar.
func (p *Pane) Title() string { return fmt.Sprintf("Wire (%d)", p.store.Len()) }

// QuietCount says the count in the title is a running total, no news.
func (p *Pane) QuietCount() bool { return true }

// Store returns the entries.
func (p *Pane) Store() *rows.Store { return p.store }

// ShowList shows the list of frames (the pane's tab was chosen).
func (p *Pane) ShowList() {
	if p.detail {
		p.detail, p.finding = false, false
		p.find.Blur()
	}
}

// InputFocused reports whether the filter or the search box has the keys.
func (p *Pane) InputFocused() bool { return p.filtering || p.finding }

// SetSize sets the pane's size.
func (p *Pane) SetSize(w, h int) {
	p.width, p.height = w, h
	p.sizeFilter()
	p.find.SetWidth(max(10, w-8))
	if p.detail {
		p.buildDetail()
	}
	p.clamp()
}

// Append adds entries, keeping the filtered view and the tail in step.
func (p *Pane) Append(entries []rows.Entry) {
	for i := range entries {
		seq := p.store.Append(entries[i])
		if !p.query.Empty() && p.filtered(p.store.Get(seq)) {
			p.view = append(p.view, seq)
		}
	}
	if !p.query.Empty() {
		// Forget rows that left the store.
		first := p.store.First()
		i := sort.Search(len(p.view), func(i int) bool { return p.view[i] >= first })
		if i > 0 {
			p.view = append(p.view[:0], p.view[i:]...)
		}
	}
	if p.follow {
		p.cursor = p.seqAt(p.count() - 1)
	}
	p.clamp()
}

// count is the number of rows that match the query.
func (p *Pane) count() int {
	if p.query.Empty() {
		return p.store.Len()
	}
	return len(p.view)
}

func (p *Pane) seqAt(i int) int64 {
	if i < 0 {
		return -1
	}
	if p.query.Empty() {
		return p.store.First() + int64(i)
	}
	if i >= len(p.view) {
		return -1
	}
	return p.view[i]
}

// index is the row of seq in the view (the nearest row at or after it).
func (p *Pane) index(seq int64) int {
	if seq < 0 {
		return -1
	}
	if p.query.Empty() {
		return int(max(seq-p.store.First(), 0))
	}
	return sort.Search(len(p.view), func(i int) bool { return p.view[i] >= seq })
}

func (p *Pane) rows() int { return max(1, p.height-2) }

// clamp keeps the cursor on a row and in view.
func (p *Pane) clamp() {
	n := p.count()
	if n == 0 {
		p.cursor, p.offset = -1, 0
		return
	}
	i := p.index(p.cursor)
	if i < 0 {
		i = 0
	}
	if i >= n {
		i = n - 1
	}
	p.cursor = p.seqAt(i)
	rows := p.rows()
	if i < p.offset {
		p.offset = i
	}
	if i >= p.offset+rows {
		p.offset = i - rows + 1
	}
	p.offset = max(0, min(p.offset, n-rows))
}

func (p *Pane) moveTo(i int) {
	n := p.count()
	if n == 0 {
		return
	}
	i = max(0, min(i, n-1))
	p.cursor = p.seqAt(i)
	p.follow = i == n-1 && p.follow
	p.clamp()
}

func (p *Pane) setQuery(s string) {
	q, err := query.Parse(s)
	p.queryErr = err
	p.setHint(s)
	if err != nil {
		return
	}
	p.query = q
	p.view = nil
	if !p.query.Empty() {
		p.view = make([]int64, 0, 256)
		for seq := p.store.First(); seq < p.store.Next(); seq++ {
			if p.filtered(p.store.Get(seq)) {
				p.view = append(p.view, seq)
			}
		}
	}
	if p.follow {
		p.cursor = p.seqAt(p.count() - 1)
	}
	p.clamp()
}

// Update handles keys.
func (p *Pane) Update(msg tea.Msg) tea.Cmd {
	k := p.c.Keys
	if sm, ok := msg.(common.ShowFrameMsg); ok {
		if q := p.query.String(); p.ShowSeq(sm.Seq) {
			return common.Noticef("the filter %s hid that frame: it is cleared", common.Line(q))
		}
		return nil
	}
	if em, ok := msg.(common.EntriesMsg); ok {
		p.store.Dropped += em.Dropped
		if len(em.Entries) > 0 {
			p.Append(em.Entries)
		}
		return nil
	}
	if p.filtering {
		if kp, ok := msg.(tea.KeyPressMsg); ok {
			switch {
			case key.Matches(kp, k.Back):
				p.filtering = false
				p.filter.Blur()
				p.filter.SetValue("")
				p.setQuery("")
				return nil
			case key.Matches(kp, k.Open) && p.queryErr != nil:
				// A query that does not parse is not applied: it stays
				// open, saying why, until it is fixed or cleared.
				return nil
			case key.Matches(kp, k.Open), key.Matches(kp, k.Up), key.Matches(kp, k.Down):
				p.filtering = false
				p.filter.Blur()
				if p.queryErr != nil {
					// Leaving with arrows: the text shown is the query
					// applied.
					p.filter.SetValue(p.query.String())
					p.queryErr = nil
				}
				return nil
			case kp.String() == "tab":
				p.completeFilter()
				return nil
			}
		}
		return updateInput(&p.filter, msg, p.setQuery)
	}
	kp, ok := msg.(tea.KeyPressMsg)
	if !ok {
		if p.finding {
			// Pastes and the cursor's blink reach the search box.
			return updateInput(&p.find, msg, p.setTerm)
		}
		return nil
	}
	if p.detail {
		return p.updateDetail(kp)
	}
	if p.latency {
		if key.Matches(kp, k.Latency) || key.Matches(kp, k.Back) {
			p.latency = false
		}
		return nil
	}
	i := p.index(p.cursor)
	switch {
	case key.Matches(kp, k.Latency):
		p.latency = true
	case key.Matches(kp, k.Filter):
		p.filtering = true
		return p.filter.Focus()
	case key.Matches(kp, k.Back):
		if !p.query.Empty() {
			p.filter.SetValue("")
			p.setQuery("")
		}
	case key.Matches(kp, k.Up):
		p.follow = false
		p.moveTo(i - 1)
	case key.Matches(kp, k.Down):
		p.moveTo(i + 1)
	case key.Matches(kp, k.PageUp):
		p.follow = false
		p.moveTo(i - p.rows())
	case key.Matches(kp, k.PageDown):
		p.moveTo(i + p.rows())
	case key.Matches(kp, k.Top):
		p.follow = false
		p.moveTo(0)
	case key.Matches(kp, k.Bottom):
		p.follow = true
		p.moveTo(p.count() - 1)
	case key.Matches(kp, k.Follow):
		p.follow = !p.follow
		if p.follow {
			p.moveTo(p.count() - 1)
		}
	case key.Matches(kp, k.Open):
		p.openDetail(i)
	}
	return nil
}

// updateInput hands msg to a text box and applies its value when it changed.
func updateInput(in *textinput.Model, msg tea.Msg, apply func(string)) tea.Cmd {
	before := in.Value()
	var cmd tea.Cmd
	*in, cmd = in.Update(msg)
	if in.Value() != before {
		apply(in.Value())
	}
	return cmd
}

func (p *Pane) updateDetail(kp tea.KeyPressMsg) tea.Cmd {
	k := p.c.Keys
	h := p.height - 1
	if p.finding {
		switch {
		case key.Matches(kp, k.Back):
			p.finding = false
			p.find.Blur()
			p.find.SetValue("")
			p.setTerm("")
		case key.Matches(kp, k.Open):
			p.finding = false
			p.find.Blur()
		default:
			return updateInput(&p.find, kp, p.setTerm)
		}
		return nil
	}
	n := len(p.detailLines)
	switch {
	case key.Matches(kp, k.Filter):
		p.finding = true
		return p.find.Focus()
	case key.Matches(kp, k.Back) && p.term != "":
		p.find.SetValue("")
		p.setTerm("")
	case key.Matches(kp, k.Back), key.Matches(kp, k.Open):
		p.detail = false
	case key.Matches(kp, k.Copy):
		e := p.store.Get(p.detailSeq)
		switch {
		case e == nil || e.Released:
			return common.Noticef("nothing copied: the data of this old row was released")
		case len(e.Data) > 0:
			what := "the frame"
			if e.Truncated {
				what = "the start of the frame"
			}
			return common.Copy(what, e.Data)
		}
	case key.Matches(kp, k.CopyTrace):
		return CopyTraceID(p.store.Get(p.detailSeq))
	case key.Matches(kp, k.FindNext):
		p.jump(p.match + 1)
	case key.Matches(kp, k.FindPrev):
		p.jump(p.match - 1)
	case key.Matches(kp, k.Up):
		p.detailOffset--
	case key.Matches(kp, k.Down):
		p.detailOffset++
	case key.Matches(kp, k.PageUp):
		p.detailOffset -= h
	case key.Matches(kp, k.PageDown):
		p.detailOffset += h
	case key.Matches(kp, k.Top):
		p.detailOffset = 0
	case key.Matches(kp, k.Bottom):
		p.detailOffset = n
	case key.Matches(kp, k.PrevCall):
		p.openDetail(p.index(p.detailSeq) - 1)
	case key.Matches(kp, k.NextCall):
		p.openDetail(p.index(p.detailSeq) + 1)
	}
	p.detailOffset = max(0, min(p.detailOffset, len(p.detailLines)-h))
	return nil
}

// setTerm searches the detail lines for term and shows the first match at
// or below the top of the view.
func (p *Pane) setTerm(term string) {
	p.term = term
	p.findMatches()
	first := 0
	for i, l := range p.matches {
		if l >= p.detailOffset {
			first = i
			break
		}
	}
	p.jump(first)
}

func (p *Pane) findMatches() {
	p.matches = p.matches[:0]
	if p.term == "" {
		return
	}
	lower := strings.ToLower(p.term)
	for i, l := range p.detailLines {
		if strings.Contains(strings.ToLower(ansi.Strip(l)), lower) {
			p.matches = append(p.matches, i)
		}
	}
}

// jump makes match i (wrapping around) the current one and scrolls to it.
func (p *Pane) jump(i int) {
	if len(p.matches) == 0 {
		p.match = 0
		return
	}
	p.match = (i%len(p.matches) + len(p.matches)) % len(p.matches)
	h := p.height - 1
	if l := p.matches[p.match]; l < p.detailOffset || l >= p.detailOffset+h {
		p.detailOffset = max(0, min(l-h/3, len(p.detailLines)-h))
	}
}

// highlight shows a detail line holding the search term: its text without
// styles, every occurrence marked, the current match's line with a gutter.
func (p *Pane) highlight(line string, current bool) string {
	st := p.c.Styles
	found := st.Match.Reverse(true)
	plain := ansi.Strip(line)
	gutter := ""
	if current {
		// The current match's line gets a marker, in place of its first
		// column when that is blank.
		gutter = st.Cursor.Render("▶")
		if strings.HasPrefix(plain, " ") && !strings.HasPrefix(strings.ToLower(p.term), " ") {
			plain = plain[1:]
		}
	}
	lowerLine, lowerTerm := strings.ToLower(plain), strings.ToLower(p.term)
	var b strings.Builder
	if !sameFoldedLengths(plain) || lowerTerm == "" {
		// Case folding changes the length of some rune, so offsets in the
		// folded text are not offsets in the line: mark the whole line.
		b.WriteString(found.Render(plain))
	} else {
		for rest, off := lowerLine, 0; ; {
			j := strings.Index(rest, lowerTerm)
			if j < 0 {
				b.WriteString(plain[off:])
				break
			}
			b.WriteString(plain[off : off+j])
			b.WriteString(found.Render(plain[off+j : off+j+len(lowerTerm)]))
			off += j + len(lowerTerm)
			rest = lowerLine[off:]
		}
	}
	if current {
		return common.Truncate(gutter+b.String(), max(10, p.width))
	}
	return b.String()
}

// sameFoldedLengths reports whether every rune of s keeps its encoded
// length in lower case (and s is valid UTF-8), so that byte offsets in
// strings.ToLower(s) are offsets in s.
func sameFoldedLengths(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError || utf8.RuneLen(r) != utf8.RuneLen(unicode.ToLower(r)) {
			return false
		}
	}
	return true
}

func (p *Pane) openDetail(i int) {
	if i < 0 || i >= p.count() {
		return
	}
	seq := p.seqAt(i)
	if p.store.Get(seq) == nil {
		return
	}
	p.follow = false
	p.cursor = seq
	p.clamp()
	p.detail = true
	p.detailSeq = seq
	p.detailOffset = 0
	p.buildDetail()
	if p.term != "" {
		p.setTerm(p.term)
	}
}

// ShowSeq selects the row of sequence number seq, on the list: the filter
// is cleared when it hides the row. A row no longer kept selects the
// oldest one. It reports whether the filter was cleared.
func (p *Pane) ShowSeq(seq int64) (cleared bool) {
	p.ShowList()
	p.latency = false
	if !p.query.Empty() && !p.filtered(p.store.Get(seq)) {
		p.SetFilter("")
		cleared = true
	}
	p.follow = false
	p.cursor = max(seq, p.store.First())
	p.clamp()
	if i := p.index(p.cursor); i >= 0 {
		// The row shows a third of the way down, with what led to it.
		p.offset = max(0, min(i-p.rows()/3, p.count()-p.rows()))
	}
	return cleared
}

// CopyTraceID copies the trace id of e's request, or says there is none.
func CopyTraceID(e *rows.Entry) tea.Cmd {
	if e == nil || e.TraceID == "" {
		return common.Noticef("no trace id: the request carried no _meta.traceparent")
	}
	return common.Copy("the trace id "+e.TraceID, []byte(e.TraceID))
}

// Detail reports whether the detail view is showing.
func (p *Pane) Detail() bool { return p.detail }

// Follow reports whether the pane follows the tail.
func (p *Pane) Follow() bool { return p.follow }

// Selected returns the selected entry, if any.
func (p *Pane) Selected() *rows.Entry { return p.store.Get(p.cursor) }

// ShortHelp is the pane's help line.
func (p *Pane) ShortHelp() []key.Binding {
	k := p.c.Keys
	switch {
	case p.filtering:
		return []key.Binding{keymap.WithHelp(k.Open, "enter", "apply"), keymap.WithHelp(k.Back, "esc", "clear")}
	case p.finding:
		return []key.Binding{keymap.WithHelp(k.Open, "enter", "keep"), keymap.WithHelp(k.Back, "esc", "clear")}
	case p.detail && p.term != "":
		return []key.Binding{k.FindNext, keymap.WithHelp(k.Filter, "/", "find"), keymap.WithHelp(k.Copy, "y", "copy frame"), k.Up, k.Down, keymap.WithHelp(k.PrevCall, "[/]", "prev/next frame"), keymap.WithHelp(k.Back, "esc", "clear search")}
	case p.detail:
		keys := []key.Binding{keymap.WithHelp(k.Filter, "/", "find"), keymap.WithHelp(k.Copy, "y", "copy frame")}
		if e := p.store.Get(p.detailSeq); e != nil && e.TraceID != "" {
			keys = append(keys, k.CopyTrace)
		}
		return append(keys, k.Up, k.Down, keymap.WithHelp(k.PrevCall, "[/]", "prev/next frame"), k.Back)
	}
	if p.latency {
		return []key.Binding{keymap.WithHelp(k.Latency, "L", "frames"), keymap.WithHelp(k.Back, "esc", "frames")}
	}
	return []key.Binding{keymap.WithHelp(k.Open, "enter", "details"), k.Filter, k.Latency, k.Follow, k.Up, k.Down}
}

// FullHelp is every key of the pane.
func (p *Pane) FullHelp() [][]key.Binding {
	k := p.c.Keys
	return [][]key.Binding{
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom},
		{keymap.WithHelp(k.Open, "enter", "details"), k.Filter, k.Latency, k.Follow, k.Back},
	}
}

// columns of a row.
const (
	colTime    = 12
	colDir     = 1
	colKind    = 9
	colID      = 6
	colSize    = 9
	colLatency = 8
)

// View renders the pane: only the rows on screen are formatted.
func (p *Pane) View() string {
	if p.detail {
		return p.detailView()
	}
	if p.latency {
		return p.latencyView()
	}
	st := p.c.Styles
	var b strings.Builder
	methodW := max(8, p.width-(colTime+colDir+colKind+colID+colSize+colLatency+8))
	head := fmt.Sprintf("  %-*s %s %-*s %-*s %*s %*s %*s", colTime, "TIME", " ", colKind, "KIND", methodW, "METHOD", colID, "ID", colSize, "SIZE", colLatency, "LATENCY")
	b.WriteString(st.Title.Render(common.Truncate(head, p.width)))
	b.WriteByte('\n')
	rows := p.rows()
	n := p.count()
	for r := 0; r < rows; r++ {
		i := p.offset + r
		if i < n {
			e := p.store.Get(p.seqAt(i))
			if e != nil {
				b.WriteString(p.row(e, e.Seq == p.cursor, methodW))
			}
		} else if n == 0 && r == 0 {
			if p.query.Empty() {
				b.WriteString(st.Dim.Render("  Nothing on the wire yet."))
			} else {
				b.WriteString(st.Dim.Render("  No frame matches the filter."))
			}
		}
		b.WriteByte('\n')
	}
	b.WriteString(p.status())
	return b.String()
}

func (p *Pane) status() string {
	st := p.c.Styles
	if p.filtering {
		if p.filterHint == "" {
			return p.filter.View()
		}
		return common.Truncate(p.filter.View()+"  "+p.filterHint, p.width)
	}
	var parts []string
	n := p.count()
	pos := 0
	if i := p.index(p.cursor); i >= 0 && n > 0 {
		pos = i + 1
	}
	if p.query.Empty() {
		parts = append(parts, fmt.Sprintf("%d/%d", pos, n))
	} else {
		parts = append(parts, fmt.Sprintf("%d/%d of %d", pos, n, p.store.Len()), "filter: "+common.Line(p.query.String()))
	}
	if p.follow {
		parts = append(parts, "following")
	}
	if dropped := p.store.First() + int64(p.store.Dropped); dropped > 0 {
		parts = append(parts, fmt.Sprintf("%d older rows dropped", dropped))
	}
	return st.Dim.Render(common.Truncate(strings.Join(parts, " · "), p.width))
}

func arrow(d transport.Direction) string {
	switch d {
	case transport.Outgoing:
		return "→"
	case transport.Incoming:
		return "←"
	}
	return "·"
}

func (p *Pane) row(e *rows.Entry, selected bool, methodW int) string {
	st := p.c.Styles
	what := e.Method
	switch e.Kind {
	case rows.KindFrame, rows.KindApp:
		what = e.Label()
	case rows.KindStderr, rows.KindBadFrame:
		what = string(e.Data[:min(len(e.Data), 512)])
	case rows.KindLifecycle:
		what = e.Text
		if e.Err != "" {
			what += ": " + e.Err
		}
	case rows.KindHTTP:
		what = e.Text
		if e.HTTP != nil && !strings.HasPrefix(e.Text, e.HTTP.Method+" ") {
			what = e.HTTP.Method + " " + e.Text
		}
		if e.Err != "" {
			what += " " + e.Err
		}
	case rows.KindWarning:
		what = e.Method + ": " + e.Text
	case rows.KindModel:
		// A model's turn: what it is about, then what it says.
		what = e.Label()
		if e.Text != "" {
			what += " · " + e.Text
		}
	}
	what = common.Line(what)
	latency := ""
	if e.HasLatency {
		latency = rows.FormatLatency(e.Latency)
	}
	size := ""
	if e.Size > 0 {
		size = common.ByteSize(e.Size)
	}
	id := common.Line(e.ID)
	line := fmt.Sprintf("%-*s %s %-*s %s %*s %*s %*s",
		colTime, e.Time.Format("15:04:05.000"),
		arrow(e.Dir),
		colKind, e.Kind.String(),
		common.Pad(what, methodW),
		colID, common.Truncate(id, colID),
		colSize, size,
		colLatency, latency)
	var style = st.WireLifecycle
	switch {
	case e.Kind == rows.KindBadFrame || e.Kind == rows.KindWarning || e.RPCError:
		style = st.WireBad
	case e.Kind == rows.KindStderr:
		style = st.WireStderr
	case e.Kind == rows.KindHTTP:
		style = st.WireHTTP
	case e.Dir == transport.Outgoing:
		style = st.WireOut
	case e.Dir == transport.Incoming:
		style = st.WireIn
	}
	gutter := "  "
	if selected {
		gutter = st.Cursor.Render("›") + " "
		style = style.Inherit(st.Selected)
	}
	return gutter + style.Render(common.Truncate(line, p.width-2))
}

// buildDetail formats the selected entry once, when it is opened (and on
// resize): the view then only slices the lines.
func (p *Pane) buildDetail() {
	st := p.c.Styles
	e := p.store.Get(p.detailSeq)
	if e == nil {
		p.detailLines = []string{st.Dim.Render("This frame is no longer kept.")}
		p.findMatches()
		p.match, p.detailOffset = 0, 0
		return
	}
	w := max(10, p.width)
	var lines []string
	add := func(s string) { lines = append(lines, common.Wrap(s, w)...) }
	title := fmt.Sprintf("%s %s %s", arrow(e.Dir), e.Dir, e.Kind)
	if e.Kind == rows.KindApp {
		// An App's message: "send" goes to the App, "recv" comes from it.
		title = map[transport.Direction]string{transport.Outgoing: "→ host to App", transport.Incoming: "← App to host"}[e.Dir] + " · app"
	}
	if e.Kind == rows.KindFrame || e.Kind == rows.KindApp {
		title += " · " + common.Line(e.Label())
	} else if e.Method != "" {
		title += " · " + common.Line(e.Method)
	}
	if e.ID != "" {
		title += " · id " + common.Line(e.ID)
	}
	title += " · " + common.ByteSize(e.Size) + " · " + e.Time.Format("15:04:05.000000")
	lines = append(lines, st.Title.Render(common.Truncate(title, w)))
	if e.HasLatency {
		add("latency " + rows.FormatLatency(e.Latency) + " since the request")
	}
	if e.TraceID != "" {
		add("trace id " + e.TraceID + " (Y copies it)")
	}
	if e.Err != "" {
		lines = append(lines, common.Wrap(st.Error.Render("error: ")+common.Line(e.Err), w)...)
	}
	if e.Text != "" && e.Kind != rows.KindFrame {
		add(common.Line(e.Text))
	}
	if e.HTTP != nil {
		lines = append(lines, httpLines(st, e.HTTP, w)...)
	}
	switch {
	case e.Released:
		lines = append(lines, st.Dim.Render("(the data of this old row was released to bound memory)"))
	case e.Truncated:
		lines = append(lines, st.Warning.Render(fmt.Sprintf("(showing the first %s of %s)", common.ByteSize(len(e.Data)), common.ByteSize(e.Size))))
	}
	if len(e.Data) > 0 {
		lines = append(lines, st.Rule.Render(strings.Repeat("─", w)))
		var body string
		if (e.Kind == rows.KindFrame || e.Kind == rows.KindApp) && !e.Truncated {
			body = common.PrettyJSON(e.Data, st)
		} else {
			body = common.Block(string(e.Data))
		}
		lines = append(lines, common.Wrap(body, w)...)
	}
	p.detailLines = lines
	p.findMatches()
	p.match = min(p.match, max(0, len(p.matches)-1))
}

// httpLines are an HTTP exchange's request line, status, SSE event and
// headers, credentials redacted.
func httpLines(st *styles.Styles, h *transport.HTTPMeta, w int) []string {
	var lines []string
	add := func(s string) { lines = append(lines, common.Wrap(s, w)...) }
	s := "HTTP " + common.Line(h.Method) + " " + common.Line(screenRedactor.URL(h.URL))
	if h.StatusCode != 0 {
		s += fmt.Sprintf(" → %d", h.StatusCode)
	}
	add(s)
	if h.SSEEventID != "" || h.SSEEvent != "" {
		add(fmt.Sprintf("SSE event %q id %q", common.Line(h.SSEEvent), common.Line(h.SSEEventID)))
	}
	for _, hd := range []struct {
		name string
		h    http.Header
	}{{"request headers", h.RequestHeader}, {"response headers", h.ResponseHeader}} {
		if len(hd.h) == 0 {
			continue
		}
		lines = append(lines, st.Dim.Render(hd.name+":"))
		names := make([]string, 0, len(hd.h))
		for n := range hd.h {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			for _, v := range hd.h[n] {
				add("  " + common.Line(n) + ": " + common.Line(screenRedactor.HeaderValue(n, v)))
			}
		}
	}
	return lines
}

// screenRedactor hides credentials shown on screen (screenshots and screen
// sharing are common while debugging) by the rule traces follow: secret
// headers keep their scheme, URLs lose their credential parameters and
// passwords.
var screenRedactor = record.NewRedactor(nil)

func (p *Pane) detailView() string {
	h := p.height - 1
	var b strings.Builder
	end := min(len(p.detailLines), p.detailOffset+h)
	m := sort.SearchInts(p.matches, p.detailOffset)
	for i := p.detailOffset; i < end; i++ {
		if m < len(p.matches) && p.matches[m] == i {
			b.WriteString(p.highlight(p.detailLines[i], m == p.match))
			m++
		} else {
			b.WriteString(p.detailLines[i])
		}
		b.WriteByte('\n')
	}
	for i := end - p.detailOffset; i < h; i++ {
		b.WriteByte('\n')
	}
	if p.finding {
		b.WriteString(p.find.View())
		return b.String()
	}
	pos := fmt.Sprintf("lines %d-%d of %d", p.detailOffset+1, end, len(p.detailLines))
	switch {
	case p.term != "" && len(p.matches) == 0:
		pos += " · " + common.Line(p.term) + ": on no line (a match split by a line wrap is not found)"
	case p.term != "":
		pos += fmt.Sprintf(" · %s: line %d of %d with a match (n/N)", common.Line(p.term), p.match+1, len(p.matches))
	}
	if p.term != "" {
		pos += " · esc clears the search"
	} else {
		pos += " · / find · esc back"
	}
	b.WriteString(p.c.Styles.Dim.Render(common.Truncate(pos, p.width)))
	return b.String()
}

// filtered reports whether e matches the filter.
func (p *Pane) filtered(e *rows.Entry) bool {
	if e == nil {
		return false
	}
	r := e.Record()
	return p.query.Match(&r)
}

// completeFilter completes the filter's last word: a field name, or a
// value of status:, dir: or kind:, as far as the choices agree.
func (p *Pane) completeFilter() {
	c := query.Complete(p.filter.Value())
	if len(c) == 0 {
		return
	}
	prefix := c[0]
	for _, x := range c[1:] {
		for !strings.HasPrefix(x, prefix) {
			prefix = prefix[:len(prefix)-1]
		}
	}
	if len(prefix) > len(p.filter.Value()) {
		p.filter.SetValue(prefix)
		p.filter.CursorEnd()
		p.setQuery(prefix)
	}
}

// completedWords are the last words of completions, to show as choices.
func completedWords(c []string) []string {
	out := make([]string, len(c))
	for i, x := range c {
		out[i] = x[strings.LastIndexAny(x, " ")+1:]
	}
	return out
}

// SetFilter applies a filter as if it had been typed after /.
func (p *Pane) SetFilter(s string) {
	p.filter.SetValue(s)
	p.setQuery(s)
}

// setHint works out what is said beside the filter as s is typed, and
// gives the input the room left: the choices tab would complete to first
// (status: wants a value, and shows them), else why s does not parse.
func (p *Pane) setHint(s string) {
	st := p.c.Styles
	p.filterHint = ""
	if c := query.Complete(s); len(c) > 1 {
		// The choices, and why the query is not applied yet (status:
		// has no value) after them.
		p.filterHint = st.Dim.Render("tab: " + common.Line(strings.Join(completedWords(c), " ")))
		if p.queryErr != nil {
			p.filterHint += " " + st.Error.Render("✗ "+common.Line(p.queryErr.Error()))
		}
	} else if p.queryErr != nil {
		p.filterHint = st.Error.Render("✗ " + common.Line(p.queryErr.Error()))
	}
	p.sizeFilter()
}

// sizeFilter gives the filter input the width its hint leaves.
func (p *Pane) sizeFilter() {
	if p.filterHint == "" {
		p.filter.SetWidth(max(10, p.width-2))
		return
	}
	room := max(10, p.width-2-ansi.StringWidth(p.filterHint)-2)
	p.filter.SetWidth(max(room, min(p.width-2, ansi.StringWidth(p.filter.Value())+2)))
}
