// Package logs holds the panes that show streams of text rows: the server's
// log messages (notifications/message, with a level filter and a key to set
// the server's level), every notification, and the server's stderr. Rows
// live in a bounded ring and only the rows on screen are formatted.
package logs

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/rows"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/tui/common"
	"github.com/mcpi-dev/mcpi/internal/tui/keymap"
)

// Bounds of a pane's memory.
const (
	MaxRows     = 20_000
	MaxRowBytes = 4 << 10
	// MaxBodyBytes bounds what a row keeps for the view of it in full.
	MaxBodyBytes = 16 << 10
)

// Row is one line of a pane.
type Row struct {
	Seq   int64
	Time  time.Time
	Level int    // index in mcp.LoggingLevels, -1 when none
	Tag   string // the level and logger, the method, "stderr"
	Text  string // safe, one line (clipped to MaxRowBytes)
	// Body is what the row stands for, for the view of it in full: the
	// notification's params or the log message's data (JSON, clipped to
	// MaxBodyBytes); nil for stderr, whose Text is the whole line.
	Body []byte
	// Clipped says Body was cut at MaxBodyBytes.
	Clipped bool
}

// Ring keeps the newest rows.
type Ring struct {
	buf         []Row
	max         int
	first, next int64
}

// NewRing returns a ring of at most n rows.
func NewRing(n int) *Ring {
	if n <= 0 {
		n = MaxRows
	}
	return &Ring{max: n}
}

// Append adds a row and returns its sequence number.
func (r *Ring) Append(row Row) int64 {
	row.Seq = r.next
	if len(r.buf) < r.max {
		r.buf = append(r.buf, row)
	} else {
		r.buf[int(r.next%int64(r.max))] = row
	}
	r.next++
	if r.next-r.first > int64(r.max) {
		r.first = r.next - int64(r.max)
	}
	return row.Seq
}

// Get returns row seq, or nil when it is no longer kept.
func (r *Ring) Get(seq int64) *Row {
	if seq < r.first || seq >= r.next {
		return nil
	}
	return &r.buf[int(seq%int64(r.max))]
}

// Len is the number of rows kept; Total is every row ever appended.
func (r *Ring) Len() int     { return int(r.next - r.first) }
func (r *Ring) Total() int64 { return r.next }

// Clear forgets every row (the total stays).
func (r *Ring) Clear() { r.first = r.next }

// Kind is what a pane shows.
type Kind int

// Kinds of panes.
const (
	KindLog Kind = iota
	KindNotifications
	KindStderr
)

// Pane shows one stream.
type Pane struct {
	c      *common.Common
	kind   Kind
	ring   *Ring
	client *session.Client

	minLevel int              // log pane: rows below it are hidden
	asked    mcp.LoggingLevel // log pane: the level the server was asked for (L)
	view     []int64          // seqs shown when filtering; nil shows all
	list     common.Cursor
	follow   bool
	notice   common.Notice

	// open is the row shown in full (enter), nil in the list.
	open   *Row
	scroll common.Scroll

	width, height int
}

// New returns a pane of kind.
func New(c *common.Common, kind Kind) *Pane {
	return &Pane{c: c, kind: kind, ring: NewRing(MaxRows), follow: true}
}

// Title names the pane in the tab bar.
func (p *Pane) Title() string {
	switch p.kind {
	case KindLog:
		return "Log"
	case KindNotifications:
		return fmt.Sprintf("Notifs (%d)", p.ring.Total())
	}
	return "Stderr"
}

// Kind is what the pane shows.
func (p *Pane) Kind() Kind { return p.kind }

// Hold says the level the server was asked for, for a new connection to
// be asked again.
func (p *Pane) Hold(h *session.Held) {
	if p.kind == KindLog && p.asked != "" {
		h.LogLevel = p.asked
	}
}

// ShowList shows the rows (the pane's tab was chosen).
func (p *Pane) ShowList() { p.open = nil }

// InputFocused is always false.
func (p *Pane) InputFocused() bool { return false }

// Ring returns the rows.
func (p *Pane) Ring() *Ring { return p.ring }

// SetSize sets the pane's size.
func (p *Pane) SetSize(w, h int) {
	p.width, p.height = w, h
	p.clamp()
}

func (p *Pane) rows() int { return max(1, p.height-2) }

func (p *Pane) filtering() bool { return p.kind == KindLog && p.minLevel > 0 }

func (p *Pane) count() int {
	if p.filtering() {
		return len(p.view)
	}
	return p.ring.Len()
}

func (p *Pane) seqAt(i int) int64 {
	if p.filtering() {
		return p.view[i]
	}
	return p.ring.first + int64(i)
}

func (p *Pane) clamp() {
	n := p.count()
	if p.follow {
		p.list.Pos = n - 1
	}
	p.list.Clamp(n, p.rows())
}

func clip(s string) string {
	if len(s) > MaxRowBytes {
		s = s[:MaxRowBytes]
	}
	return common.IndentedLine(s)
}

// Add appends rows, keeping the filtered view in step.
func (p *Pane) Add(rows []Row) {
	for _, r := range rows {
		r.Text = clip(r.Text)
		r.Tag = common.Line(r.Tag)
		seq := p.ring.Append(r)
		if p.filtering() && r.Level >= p.minLevel {
			p.view = append(p.view, seq)
		}
	}
	if p.filtering() {
		i := sort.Search(len(p.view), func(i int) bool { return p.view[i] >= p.ring.first })
		p.view = p.view[i:]
	}
	p.clamp()
}

func body(raw []byte) ([]byte, bool) {
	if len(raw) > MaxBodyBytes {
		return append([]byte(nil), raw[:MaxBodyBytes]...), true
	}
	return raw, false
}

// LogRow makes a row of a notifications/message.
func LogRow(n session.Notification) Row {
	var m mcp.LoggingMessageParams
	_ = json.Unmarshal(n.Params, &m)
	lvl := slices.Index(mcp.LoggingLevels, m.Level)
	// The level is padded to the longest ("emergency"), so that the loggers
	// start in one column.
	tag := string(m.Level)
	if m.Logger != "" {
		tag = fmt.Sprintf("%-9s %s", m.Level, m.Logger)
	}
	var text string
	if json.Unmarshal(m.Data, &text) != nil {
		text = common.CompactJSON(m.Data)
	}
	b, clipped := body(m.Data)
	return Row{Time: n.Time, Level: lvl, Tag: tag, Text: text, Body: b, Clipped: clipped}
}

// NotificationRow makes a row of any notification.
func NotificationRow(n session.Notification) Row {
	text := ""
	if len(n.Params) > 0 {
		p := n.Params
		if len(p) > MaxRowBytes {
			p = p[:MaxRowBytes]
			text = common.Line(string(p))
		} else {
			text = common.CompactJSON(p)
		}
	}
	b, clipped := body(n.Params)
	return Row{Time: n.Time, Level: -1, Tag: n.Method, Text: text, Body: b, Clipped: clipped}
}

func (p *Pane) setMinLevel(l int) {
	p.minLevel = max(0, min(l, len(mcp.LoggingLevels)-1))
	p.view = nil
	if p.filtering() {
		for seq := p.ring.first; seq < p.ring.next; seq++ {
			if p.ring.Get(seq).Level >= p.minLevel {
				p.view = append(p.view, seq)
			}
		}
	}
	p.clamp()
}

type levelSetMsg struct {
	level mcp.LoggingLevel
	err   error
}

// addNotes adds the rows the pane shows of notifications.
func (p *Pane) addNotes(notes []session.Notification) {
	var rows []Row
	for _, n := range notes {
		switch {
		case p.kind == KindNotifications:
			rows = append(rows, NotificationRow(n))
		case p.kind == KindLog && n.Method == "notifications/message":
			rows = append(rows, LogRow(n))
		}
	}
	if len(rows) > 0 {
		p.Add(rows)
	}
}

// Update handles keys and what arrives for the pane.
func (p *Pane) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case common.ConnectedMsg:
		p.client = msg.Client
	case common.ConnectingMsg, common.DisconnectedMsg:
		p.client = nil
	case common.NotificationsMsg:
		p.addNotes(msg.Notes)
	case common.PastNotificationsMsg:
		// Shown like any other, at their own times.
		p.addNotes(msg.Notes)
	case common.EntriesMsg:
		if p.kind == KindStderr {
			p.addStderr(msg.Entries)
		}
	case levelSetMsg:
		if p.kind != KindLog {
			return nil
		}
		if msg.err != nil {
			p.notice.Fail(msg.err)
		} else {
			p.notice.Set("asked the server for %s and above", msg.level)
			p.asked = msg.level
		}
	case common.ReappliedMsg:
		if p.kind == KindLog && msg.Reapplied.LogLevel {
			p.notice.Set("asked the new session for %s and above again", msg.Held.LogLevel)
		}
	case tea.KeyPressMsg:
		p.notice.Clear()
		if p.open != nil {
			return p.updateOpen(msg)
		}
		return p.updateList(msg)
	}
	return nil
}

// addStderr adds the server's standard error lines among the wire's
// entries.
func (p *Pane) addStderr(entries []rows.Entry) {
	var lines []Row
	for i := range entries {
		if e := &entries[i]; e.Kind == rows.KindStderr {
			lines = append(lines, Row{Time: e.Time, Level: -1, Tag: "stderr", Text: string(e.Data)})
		}
	}
	if len(lines) > 0 {
		p.Add(lines)
	}
}

// updateList handles the keys of the list: moving, opening a row,
// following, clearing, and the log pane's level.
func (p *Pane) updateList(msg tea.KeyPressMsg) tea.Cmd {
	k := p.c.Keys
	n := p.count()
	if p.list.Move(p.c, msg, n, p.rows()) {
		p.follow = p.list.Pos >= n-1
		return nil
	}
	switch {
	case key.Matches(msg, k.Open):
		if n > 0 {
			if r := p.ring.Get(p.seqAt(p.list.Pos)); r != nil {
				row := *r
				p.open, p.scroll = &row, common.Scroll{}
			}
		}
	case key.Matches(msg, k.Follow):
		p.follow = !p.follow
		p.clamp()
	case key.Matches(msg, k.ClearBuffer):
		p.ring.Clear()
		p.view = nil
		p.clamp()
	case p.kind == KindLog && key.Matches(msg, k.LevelUp):
		p.setMinLevel(p.minLevel + 1)
	case p.kind == KindLog && key.Matches(msg, k.LevelDown):
		p.setMinLevel(p.minLevel - 1)
	case p.kind == KindLog && key.Matches(msg, k.SetLevel):
		if p.client == nil {
			p.notice.Failf("not connected")
			return nil
		}
		client, ctx, level := p.client, p.c.Ctx, mcp.LoggingLevels[p.minLevel]
		return func() tea.Msg { return levelSetMsg{level: level, err: client.SetLogLevel(ctx, level)} }
	}
	return nil
}

func (p *Pane) updateOpen(msg tea.KeyPressMsg) tea.Cmd {
	k := p.c.Keys
	lines := p.openLines()
	switch {
	case key.Matches(msg, k.Back), key.Matches(msg, k.Open):
		p.open = nil
	case key.Matches(msg, k.Copy):
		data := p.open.Body
		if len(data) == 0 {
			data = []byte(p.open.Text)
		}
		return common.Copy("the row", data)
	default:
		p.scroll.Move(p.c, msg, len(lines), p.rows())
	}
	return nil
}

// openLines lays out the row shown in full: its time and tag, then its
// body, pretty-printed when it is JSON and wrapped to the width.
func (p *Pane) openLines() []string {
	st := p.c.Styles
	r := p.open
	w := max(10, p.width)
	var lines []string
	head := r.Time.Format("2006-01-02 15:04:05.000") + "  " + st.Title.Render(common.Line(r.Tag))
	lines = append(lines, common.Wrap(head, w)...)
	switch {
	case len(r.Body) == 0:
		lines = append(lines, common.Wrap(r.Text, w)...)
	case r.Clipped:
		lines = append(lines, common.Wrap(common.Block(string(r.Body)), w)...)
		lines = append(lines, st.Dim.Render(common.Truncate(fmt.Sprintf("(clipped at %s: the wire pane has the whole frame)", common.ByteSize(MaxBodyBytes)), w)))
	default:
		var s string
		if json.Unmarshal(r.Body, &s) == nil {
			// A log message whose data is a string: the text itself.
			lines = append(lines, common.Wrap(common.Block(s), w)...)
		} else {
			lines = append(lines, common.Wrap(common.PrettyJSON(r.Body, st), w)...)
		}
	}
	return lines
}

// ShortHelp is the pane's help line.
func (p *Pane) ShortHelp() []key.Binding {
	k := p.c.Keys
	if p.open != nil {
		return []key.Binding{keymap.WithHelp(k.Back, "esc", "back"), keymap.WithHelp(k.Copy, "y", "copy"), k.Up, k.Down}
	}
	if p.kind == KindLog {
		return []key.Binding{keymap.WithHelp(k.Open, "enter", "open"), k.LevelUp, k.SetLevel, k.Follow, k.ClearBuffer, k.Up, k.Down}
	}
	return []key.Binding{keymap.WithHelp(k.Open, "enter", "open"), k.Follow, k.ClearBuffer, k.Up, k.Down}
}

// FullHelp is every key of the pane.
func (p *Pane) FullHelp() [][]key.Binding {
	k := p.c.Keys
	if p.open != nil {
		return [][]key.Binding{{keymap.WithHelp(k.Back, "esc", "back"), keymap.WithHelp(k.Copy, "y", "copy")}, {k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom}}
	}
	out := [][]key.Binding{{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom}, {keymap.WithHelp(k.Open, "enter", "open"), k.Follow, k.ClearBuffer}}
	if p.kind == KindLog {
		out[1] = append(out[1], k.LevelUp, k.SetLevel)
	}
	return out
}

// View renders the pane: only the rows on screen are formatted.
func (p *Pane) View() string {
	st := p.c.Styles
	var b strings.Builder
	head := ""
	switch p.kind {
	case KindLog:
		head = fmt.Sprintf("showing %s and above (+/- change, L asks the server)", mcp.LoggingLevels[p.minLevel])
	case KindNotifications:
		head = common.Plural(int(p.ring.Total()), "notification") + ", newest last"
	case KindStderr:
		head = "the server's standard error"
	}
	if p.open != nil {
		return p.openView()
	}
	b.WriteString(p.notice.Over(st, head, p.width))
	b.WriteByte('\n')
	n := p.count()
	rows := p.rows()
	// The tag column is as wide as the widest tag on screen, up to a third
	// of the width: a long logger name is cut only when room is short.
	tagW := 0
	for r := 0; r < rows && p.list.Offset+r < n; r++ {
		if row := p.ring.Get(p.seqAt(p.list.Offset + r)); row != nil {
			tagW = max(tagW, common.Width(row.Tag))
		}
	}
	tagW = min(tagW, max(12, p.width/3))
	for r := 0; r < rows; r++ {
		i := p.list.Offset + r
		if i < n {
			if row := p.ring.Get(p.seqAt(i)); row != nil {
				b.WriteString(p.row(row, i == p.list.Pos, tagW))
			}
		} else if n == 0 && r == 0 {
			b.WriteString(st.Dim.Render(common.Truncate("  "+p.empty(), p.width)))
		}
		b.WriteByte('\n')
	}
	status := fmt.Sprintf("%d/%d", min(p.list.Pos+1, n), n)
	if hidden := p.ring.Len() - n; hidden > 0 {
		status += fmt.Sprintf(" · %d hidden below %s", hidden, mcp.LoggingLevels[p.minLevel])
	}
	if p.follow {
		status += " · following"
	}
	if dropped := p.ring.first; dropped > 0 {
		status += fmt.Sprintf(" · %d older rows dropped or cleared", dropped)
	}
	b.WriteString(st.Dim.Render(common.Truncate(status, p.width)))
	return b.String()
}

// empty says what the pane will show, while it has nothing.
func (p *Pane) empty() string {
	switch p.kind {
	case KindLog:
		if n := p.ring.Len(); n > 0 {
			return fmt.Sprintf("%s below %s: - shows lower levels.", common.Plural(n, "log message"), mcp.LoggingLevels[p.minLevel])
		}
		return "No log message yet (the server sends them as notifications/message)."
	case KindNotifications:
		return "No notification yet."
	}
	return "Nothing on the server's standard error yet."
}

func (p *Pane) openView() string {
	st := p.c.Styles
	lines := p.openLines()
	rows := p.rows()
	body := p.scroll.Window(lines, rows)
	out := []string{st.Dim.Render(common.Truncate("row in full · esc back · y copies", p.width))}
	out = append(out, body...)
	for len(out) < rows+1 {
		out = append(out, "")
	}
	pos := fmt.Sprintf("lines %d-%d of %d", p.scroll.Offset+1, p.scroll.Offset+len(body), len(lines))
	out = append(out, st.Dim.Render(common.Truncate(pos, p.width)))
	return strings.Join(out, "\n")
}

func (p *Pane) row(r *Row, selected bool, tagW int) string {
	st := p.c.Styles
	style := st.Dim
	switch {
	case p.kind == KindStderr:
		style = st.WireStderr
	case r.Level >= 4: // error and worse
		style = st.Error
	case r.Level == 3:
		style = st.Warning
	case p.kind == KindNotifications:
		style = st.WireIn
	case r.Level >= 0:
		style = st.App
	}
	var line string
	if p.kind == KindStderr {
		line = fmt.Sprintf("%s %s", r.Time.Format("15:04:05.000"), r.Text)
	} else {
		line = fmt.Sprintf("%s %s %s", r.Time.Format("15:04:05.000"), common.Pad(r.Tag, tagW), r.Text)
	}
	gutter := "  "
	if selected {
		gutter = st.Cursor.Render("›") + " "
	}
	return gutter + style.Render(common.Truncate(line, p.width-2))
}
