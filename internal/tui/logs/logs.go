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
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/tui/common"
)

// Bounds of a pane's memory.
const (
	MaxRows     = 20_000
	MaxRowBytes = 4 << 10
)

// Row is one line of a pane.
type Row struct {
	Seq   int64
	Time  time.Time
	Level int    // index in mcp.LoggingLevels, -1 when none
	Tag   string // the level and logger, the method, "stderr"
	Text  string // safe, one line (clipped to MaxRowBytes)
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

	minLevel int     // log pane: rows below it are hidden
	view     []int64 // seqs shown when filtering; nil shows all
	list     common.Cursor
	follow   bool
	notice   string

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

// InputFocused is always false.
func (p *Pane) InputFocused() bool { return false }

// Ring returns the rows.
func (p *Pane) Ring() *Ring { return p.ring }

// SetClient hands the log pane the session whose level it sets.
func (p *Pane) SetClient(c *session.Client) { p.client = c }

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
	return common.Line(s)
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

// LogRow makes a row of a notifications/message.
func LogRow(n session.Notification) Row {
	var m mcp.LoggingMessageParams
	_ = json.Unmarshal(n.Params, &m)
	lvl := slices.Index(mcp.LoggingLevels, m.Level)
	tag := string(m.Level)
	if m.Logger != "" {
		tag += " " + m.Logger
	}
	var text string
	if json.Unmarshal(m.Data, &text) != nil {
		text = common.CompactJSON(m.Data)
	}
	return Row{Time: n.Time, Level: lvl, Tag: tag, Text: text}
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
	return Row{Time: n.Time, Level: -1, Tag: n.Method, Text: text}
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

// Update handles keys.
func (p *Pane) Update(msg tea.Msg) tea.Cmd {
	k := p.c.Keys
	switch msg := msg.(type) {
	case levelSetMsg:
		if p.kind != KindLog {
			return nil
		}
		if msg.err != nil {
			p.notice = "✗ " + common.Line(msg.err.Error())
		} else {
			p.notice = "asked the server for " + string(msg.level) + " and above"
		}
		return nil
	case tea.KeyPressMsg:
		p.notice = ""
		n := p.count()
		if p.list.Move(p.c, msg, n, p.rows()) {
			p.follow = p.list.Pos >= n-1
			return nil
		}
		switch {
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
				p.notice = "✗ not connected"
				return nil
			}
			client, ctx, level := p.client, p.c.Ctx, mcp.LoggingLevels[p.minLevel]
			return func() tea.Msg { return levelSetMsg{level: level, err: client.SetLogLevel(ctx, level)} }
		}
	}
	return nil
}

// ShortHelp is the pane's help line.
func (p *Pane) ShortHelp() []key.Binding {
	k := p.c.Keys
	if p.kind == KindLog {
		return []key.Binding{k.LevelUp, k.SetLevel, k.Follow, k.ClearBuffer, k.Up, k.Down}
	}
	return []key.Binding{k.Follow, k.ClearBuffer, k.Up, k.Down}
}

// FullHelp is every key of the pane.
func (p *Pane) FullHelp() [][]key.Binding {
	k := p.c.Keys
	out := [][]key.Binding{{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom}, {k.Follow, k.ClearBuffer}}
	if p.kind == KindLog {
		out[1] = append(out[1], k.LevelUp, k.LevelDown, k.SetLevel)
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
		head = fmt.Sprintf("%d notifications, newest last", p.ring.Total())
	case KindStderr:
		head = "the server's standard error"
	}
	if p.notice != "" {
		head = p.notice
	}
	b.WriteString(st.Dim.Render(common.Truncate(head, p.width)))
	b.WriteByte('\n')
	n := p.count()
	rows := p.rows()
	tagW := 18
	if p.kind == KindNotifications {
		tagW = 36
	}
	for r := 0; r < rows; r++ {
		i := p.list.Offset + r
		if i < n {
			if row := p.ring.Get(p.seqAt(i)); row != nil {
				b.WriteString(p.row(row, i == p.list.Pos, tagW))
			}
		} else if n == 0 && r == 0 {
			b.WriteString(st.Dim.Render("  Nothing yet."))
		}
		b.WriteByte('\n')
	}
	status := fmt.Sprintf("%d/%d", min(p.list.Pos+1, n), n)
	if p.follow {
		status += " · following"
	}
	if dropped := p.ring.first; dropped > 0 {
		status += fmt.Sprintf(" · %d older rows dropped or cleared", dropped)
	}
	b.WriteString(st.Dim.Render(common.Truncate(status, p.width)))
	return b.String()
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
