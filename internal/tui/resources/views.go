package resources

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/tui/common"
)

// The Resources pane shows one of three lists: the server's resources, a
// directory resource's children (resources/directory/read, SEP-2640), or
// the subscriptions with the times of their updates.
type view int

const (
	viewList view = iota
	viewDir
	viewSubs
)

// Bounds of the updates' history: the newest historyLen times of each
// resource, for at most maxHistory resources (a server naming endless
// distinct URIs must not grow it forever); the count of every update is
// kept apart (updated).
const (
	historyLen = 64
	maxHistory = 1_000
)

// history is a ring of the newest times a resource was updated.
type history struct {
	times [historyLen]time.Time
	n     int // every update since the session started
}

func (h *history) add(t time.Time) {
	h.times[h.n%historyLen] = t
	h.n++
}

// recent returns the times kept, newest first.
func (h *history) recent() []time.Time {
	k := min(h.n, historyLen)
	out := make([]time.Time, 0, k)
	for i := 1; i <= k; i++ {
		out = append(out, h.times[(h.n-i)%historyLen])
	}
	return out
}

// noteUpdate records an update of uri at t.
func (p *Pane) noteUpdate(uri string, t time.Time) {
	h := p.history[uri]
	if h == nil {
		if len(p.history) >= maxHistory {
			return
		}
		h = &history{}
		p.history[uri] = h
	}
	h.add(t)
}

// History returns the times uri was updated, newest first (at most
// historyLen), and how many updates arrived in all.
func (p *Pane) History(uri string) ([]time.Time, int) {
	h := p.history[uri]
	if h == nil {
		return nil, 0
	}
	return h.recent(), h.n
}

// subsURIs are the rows of the subscriptions view: every resource
// subscribed to (or asked for), and every one that was updated.
func (p *Pane) subsURIs() []string {
	set := map[string]bool{}
	for u := range p.subscribed {
		set[u] = true
	}
	for u := range p.wanted {
		set[u] = true
	}
	for u := range p.history {
		set[u] = true
	}
	uris := slices.Collect(maps.Keys(set))
	slices.SortFunc(uris, func(a, b string) int {
		switch {
		case common.NaturalLess(a, b):
			return -1
		case common.NaturalLess(b, a):
			return 1
		}
		return 0
	})
	return uris
}

// dirLevel is one directory opened: its children, every page.
type dirLevel struct {
	uri     string
	items   []mcp.Resource
	loading bool
	err     error
	cursor  common.Cursor
}

// dirMsg carries the children of a directory.
type dirMsg struct {
	gen, seq int
	uri      string
	items    []mcp.Resource
	err      error
}

// isDir reports whether r is a directory resource.
func isDir(r *mcp.Resource) bool { return r != nil && r.MimeType == mcp.DirectoryMimeType }

// canList reports whether r is a directory the server lists children of.
func (p *Pane) canList(r *mcp.Resource) bool {
	return isDir(r) && p.client != nil && p.client.DirectoryRead()
}

// openDir lists the directory uri (one level deeper than the one shown).
func (p *Pane) openDir(uri string) tea.Cmd {
	p.mode = viewDir
	p.dirs = append(p.dirs, &dirLevel{uri: uri, loading: true})
	return p.listDir()
}

// listDir lists the directory shown, every page.
func (p *Pane) listDir() tea.Cmd {
	d := p.dirs[len(p.dirs)-1]
	d.loading = d.items == nil
	p.dirSeq++
	client, ctx, gen, seq, uri := p.client, p.c.Ctx, p.gen, p.dirSeq, d.uri
	return func() tea.Msg {
		items, err := client.AllDirectory(ctx, uri)
		return dirMsg{gen: gen, seq: seq, uri: uri, items: items, err: err}
	}
}

func (p *Pane) dirLoaded(msg dirMsg) {
	if msg.gen != p.gen || msg.seq != p.dirSeq || len(p.dirs) == 0 || p.dirs[len(p.dirs)-1].uri != msg.uri {
		return
	}
	d := p.dirs[len(p.dirs)-1]
	d.loading, d.err = false, msg.err
	if msg.err == nil || len(msg.items) > 0 {
		d.items = msg.items
	}
	d.cursor.Clamp(len(d.items), p.rows())
}

// closeDir goes up one directory, or back to the list from the top one.
func (p *Pane) closeDir() {
	if len(p.dirs) > 0 {
		p.dirs = p.dirs[:len(p.dirs)-1]
	}
	p.dirSeq++
	if len(p.dirs) == 0 {
		p.mode = viewList
	}
}

// ShowList shows the list of resources (the pane's tab was chosen).
func (p *Pane) ShowList() {
	p.mode, p.dirs = viewList, nil
	p.dirSeq++
}

// dirName is a child's name as the directory view shows it: its URI
// relative to the directory, a directory ending in /.
func dirName(parent string, r *mcp.Resource) string {
	name := r.URI
	if rest, ok := strings.CutPrefix(r.URI, strings.TrimSuffix(parent, "/")+"/"); ok && rest != "" {
		name = rest
	}
	if isDir(r) && !strings.HasSuffix(name, "/") {
		name += "/"
	}
	return name
}

// dirLines is the left side of the directory view.
func (p *Pane) dirLines(lw int) []string {
	st := p.c.Styles
	d := p.dirs[len(p.dirs)-1]
	head := entries(len(d.items)) + " in " + common.Line(d.uri) + common.Incomplete(d.err)
	out := []string{p.notice.Over(st, head, lw)}
	switch {
	case d.loading:
		return append(out, st.Dim.Render("  resources/directory/read…"))
	case d.err != nil && len(d.items) == 0:
		return append(out, common.Wrap(st.Error.Render("✗ ")+common.Line(d.err.Error()), lw)...)
	case len(d.items) == 0:
		return append(out, st.Dim.Render("  The directory is empty."))
	}
	rows := p.rows()
	d.cursor.Clamp(len(d.items), rows)
	for r := 0; r < rows && d.cursor.Offset+r < len(d.items); r++ {
		i := d.cursor.Offset + r
		it := &d.items[i]
		out = append(out, p.row(it, common.Line(dirName(d.uri, it)), i == d.cursor.Pos, lw))
	}
	return out
}

// row is one resource of a list: the cursor, the subscription mark, the
// name and the updates.
func (p *Pane) row(it *mcp.Resource, name string, selected bool, lw int) string {
	st := p.c.Styles
	mark := " "
	if p.subscribed[it.URI] {
		mark = st.OK.Render("●")
	}
	upd := ""
	if n := p.updated[it.URI]; n > 0 {
		upd = " " + st.Warning.Render(fmt.Sprintf("✱%d", n))
	}
	nameW := max(4, lw-3-common.Width(upd))
	name = common.Pad(common.TruncateMiddle(name, nameW), nameW)
	if selected {
		return st.Cursor.Render("›") + mark + " " + st.Selected.Render(name) + upd
	}
	return " " + mark + " " + name + upd
}

// subsLines is the left side of the subscriptions view.
func (p *Pane) subsLines(lw int) []string {
	st := p.c.Styles
	uris := p.subsURIs()
	total := 0
	for _, n := range p.updated {
		total += n
	}
	head := fmt.Sprintf("Subscriptions (%d) · ", len(p.subscribed)) + common.Plural(total, "update")
	out := []string{p.notice.Over(st, head, lw)}
	if len(uris) == 0 {
		return append(out, common.Wrap(st.Dim.Render("No subscriptions: u on a resource subscribes to its updates."), lw)...)
	}
	rows := p.rows()
	p.subsCur.Clamp(len(uris), rows)
	for r := 0; r < rows && p.subsCur.Offset+r < len(uris); r++ {
		i := p.subsCur.Offset + r
		u := uris[i]
		last := ""
		if h := p.history[u]; h != nil {
			last = " " + st.Dim.Render(h.recent()[0].Format("15:04:05"))
		}
		mark := " "
		if p.subscribed[u] {
			mark = st.OK.Render("●")
		}
		upd := ""
		if n := p.updated[u]; n > 0 {
			upd = " " + st.Warning.Render(fmt.Sprintf("✱%d", n))
		}
		nameW := max(4, lw-3-common.Width(upd)-common.Width(last))
		name := common.Pad(common.TruncateMiddle(common.Line(u), nameW), nameW)
		if i == p.subsCur.Pos {
			out = append(out, st.Cursor.Render("›")+mark+" "+st.Selected.Render(name)+upd+last)
		} else {
			out = append(out, " "+mark+" "+name+upd+last)
		}
	}
	return out
}

// subsSelected is the URI under the cursor of the subscriptions view.
func (p *Pane) subsSelected() string {
	uris := p.subsURIs()
	if p.subsCur.Pos < 0 || p.subsCur.Pos >= len(uris) {
		return ""
	}
	return uris[p.subsCur.Pos]
}

// subsDetail is the right side of the subscriptions view: the resource's
// state, the times of its updates, newest first, then what was read.
func (p *Pane) subsDetail(w int) string {
	st := p.c.Styles
	u := p.subsSelected()
	if u == "" {
		return st.Dim.Render(common.Truncate("Updates of the resources subscribed to show here, with their times.", w))
	}
	lines := []string{st.Title.Render(common.Truncate(common.Line(u), w))}
	state := st.Dim.Render("not subscribed")
	switch {
	case p.subscribed[u]:
		state = st.OK.Render("subscribed")
	case p.wanted[u]:
		state = st.Dim.Render("subscribing…")
	}
	times, n := p.History(u)
	meta := state + " · " + common.Plural(n, "update")
	if n > len(times) {
		meta += fmt.Sprintf(" (the newest %d kept)", len(times))
	}
	lines = append(lines, common.Truncate(meta, w))
	lines = append(lines, st.Rule.Render(strings.Repeat("─", w)))
	if len(times) == 0 {
		lines = append(lines, st.Dim.Render(common.Truncate("No notifications/resources/updated yet.", w)))
	}
	room := len(times)
	if p.read != nil {
		room = min(room, max(1, p.height/3))
	}
	for i, t := range times[:min(room, len(times))] {
		lines = append(lines, common.Truncate(fmt.Sprintf("#%-4d %s", n-i, t.Format("2006-01-02 15:04:05.000")), w))
	}
	if room < len(times) {
		lines = append(lines, st.Dim.Render(common.Truncate(fmt.Sprintf("… %d earlier", len(times)-room), w)))
	}
	lines = append(lines, st.Rule.Render(strings.Repeat("─", w)))
	if p.read != nil && p.read.uri != u {
		return strings.Join(append(lines, st.Dim.Render(common.Truncate("enter reads this resource", w))), "\n")
	}
	lines = append(lines, viewReading(st, p.read, w, p.height-len(lines), p.reading)...)
	return strings.Join(lines, "\n")
}

func entries(n int) string {
	if n == 1 {
		return "1 entry"
	}
	return fmt.Sprintf("%d entries", n)
}
