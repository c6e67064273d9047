package resources

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/tui/common"
	"github.com/mcpi-dev/mcpi/internal/tui/keymap"
)

// maxUpdated bounds the URIs whose updates are counted.
const maxUpdated = 10_000

// Pane is the resources pane.
type Pane struct {
	c      *common.Common
	client *session.Client
	gen    int

	listed common.Listing[mcp.Resource]
	list   common.Cursor

	// subscribed holds the URIs subscribed to (legacy: acknowledged by
	// resources/subscribe; modern: in the filter of the open listen).
	subscribed map[string]bool
	updated    map[string]int // notifications/resources/updated per URI
	// wanted is the set asked for in the modern era, ahead of the listen
	// that acknowledges it, so that quick toggles build on each other.
	wanted map[string]bool
	sub    *session.Subscription
	subGen int
	again  bool // the listen being opened names the subscriptions again

	read    *reading
	reading bool
	notice  common.Notice

	mode    view
	dirs    []*dirLevel // the directories opened, the one shown last
	dirSeq  int         // numbers the directory listings, so that a late one is dropped
	subsCur common.Cursor
	history map[string]*history // the times of each resource's updates

	width, height int
}

// New returns the resources pane.
func New(c *common.Common) *Pane {
	return &Pane{c: c, subscribed: map[string]bool{}, updated: map[string]int{}, history: map[string]*history{}}
}

// Title names the pane in the tab bar.
func (p *Pane) Title() string { return "Resources" }

// ShortTitle is the title of the abbreviated tab labels.
func (p *Pane) ShortTitle() string { return "Res" }

// InputFocused is always false: the pane has no text input.
func (p *Pane) InputFocused() bool { return false }

// Items returns the resources listed.
func (p *Pane) Items() []mcp.Resource { return p.listed.Items }

// Hold says which resources are subscribed to (or asked for, in the
// modern era), for a new connection to be told again.
func (p *Pane) Hold(h *session.Held) {
	set := p.subscribed
	if p.wanted != nil && p.client != nil && p.client.Era() == session.EraModern {
		set = p.wanted
	}
	h.Subscriptions = append(h.Subscriptions, slices.Sorted(maps.Keys(set))...)
}

// reapplied takes what the new session was told again: the subscriptions
// it holds again, and those that ended.
func (p *Pane) reapplied(msg common.ReappliedMsg) tea.Cmd {
	if msg.Gen != p.gen || p.client == nil {
		return nil
	}
	r := msg.Reapplied
	again := map[string]bool{}
	for _, u := range r.Subscriptions {
		p.subscribed[u] = true
		again[u] = true
	}
	for _, u := range r.Listen {
		again[u] = true
	}
	var lost []string
	for _, u := range msg.Held.Subscriptions {
		if !again[u] {
			lost = append(lost, u)
		}
	}
	switch {
	case len(lost) > 0:
		p.notice.Failf("not subscribed again: %s (the subscription ended with the old session)", strings.Join(lost, ", "))
	case len(again) > 0:
		p.notice.Set("subscribed again to %s", common.Plural(len(again), "resource"))
	}
	if len(r.Listen) > 0 {
		// The modern era holds subscriptions in the pane's stream.
		p.wanted = map[string]bool{}
		for _, u := range r.Listen {
			p.wanted[u] = true
		}
		p.again = true
		return p.listen(slices.Sorted(maps.Keys(p.wanted)), false)
	}
	return nil
}

// Subscribed reports whether uri is subscribed to.
func (p *Pane) Subscribed(uri string) bool { return p.subscribed[uri] }

// Updates is how many updates of uri arrived.
func (p *Pane) Updates(uri string) int { return p.updated[uri] }

// SetSize sets the pane's size.
func (p *Pane) SetSize(w, h int) {
	p.width, p.height = w, h
	p.list.Clamp(len(p.listed.Items), p.rows())
}

func (p *Pane) rows() int { return max(1, p.height-1) }

type (
	subMsg struct {
		gen int
		uri string
		on  bool
		err error
	}
	listenMsg struct {
		gen, subGen int
		sub         *session.Subscription
		uris        []string
		err         error
		initial     bool // the listen opened with the session: no notice
	}
)

// setClient takes a new session and lists its resources. Subscriptions do
// not outlive their session.
//
// In the modern era the pane keeps the session's one subscriptions/listen,
// open from the start: it asks for every list's changes (tools, prompts,
// resources; the server's acknowledgement says which it honours) and for the
// updates of the resources subscribed to.
func (p *Pane) setClient(client *session.Client, gen int) tea.Cmd {
	p.closeSub()
	p.client, p.gen = client, gen
	// Until the new session is told them again (common.ReappliedMsg),
	// the subscriptions of the old one are over.
	p.notice.Clear()
	p.again = false
	if n := len(p.subscribed); n > 0 {
		p.notice.Set("%s ended with the old session", common.Plural(n, "subscription"))
	}
	p.subscribed, p.updated, p.wanted = map[string]bool{}, map[string]int{}, map[string]bool{}
	p.history = map[string]*history{}
	if p.mode == viewDir {
		// The directories were the old session's.
		p.ShowList()
	}
	if client.Era() == session.EraModern {
		// One Cmd for both, so that the root's ordered start waits for the
		// listen too: the wire shows the same order every time.
		list, listen := p.Reload(), p.listen(nil, true)
		return func() tea.Msg {
			var out bothMsg
			if list != nil {
				out = append(out, list())
			}
			return append(out, listen())
		}
	}
	return p.Reload()
}

// bothMsg carries the answers of a Cmd that made two calls in turn.
type bothMsg []tea.Msg

func (p *Pane) closeSub() {
	if p.sub != nil {
		s := p.sub
		p.sub = nil
		go s.Close()
	}
	p.subGen++
}

// Reload lists the resources again, every page.
func (p *Pane) Reload() tea.Cmd {
	if p.client == nil || !hasResources(p.client) {
		return nil
	}
	return p.listed.Fetch(p.c.Ctx, p.gen, p.client.AllResources)
}

func hasResources(c *session.Client) bool {
	ir := c.InitializeResult()
	return ir == nil || ir.Capabilities.Resources != nil
}

// notify handles a server notification.
func (p *Pane) notify(n session.Notification) tea.Cmd {
	switch n.Method {
	case "notifications/resources/updated":
		var u mcp.ResourceUpdatedParams
		// A server naming endless distinct URIs must not grow the map forever.
		if json.Unmarshal(n.Params, &u) == nil && u.URI != "" && (p.updated[u.URI] > 0 || len(p.updated) < maxUpdated) {
			p.updated[u.URI]++
			p.noteUpdate(u.URI, p.c.Now())
		}
	case "notifications/resources/list_changed":
		return p.Reload()
	}
	return nil
}

// selected is the resource under the cursor: of the list, or of the
// directory shown.
func (p *Pane) selected() *mcp.Resource {
	if p.mode == viewDir && len(p.dirs) > 0 {
		d := p.dirs[len(p.dirs)-1]
		if d.cursor.Pos < 0 || d.cursor.Pos >= len(d.items) {
			return nil
		}
		return &d.items[d.cursor.Pos]
	}
	return p.listed.At(p.list.Pos)
}

// Update handles messages for the pane.
func (p *Pane) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case common.ConnectingMsg, common.DisconnectedMsg:
		p.closeSub()
		p.client = nil
	case common.ConnectedMsg:
		return p.setClient(msg.Client, msg.Gen)
	case common.ReappliedMsg:
		return p.reapplied(msg)
	case bothMsg:
		var cmds []tea.Cmd
		for _, m := range msg {
			cmds = append(cmds, p.Update(m))
		}
		return tea.Batch(cmds...)
	case common.NotificationsMsg:
		var cmds []tea.Cmd
		for _, n := range msg.Notes {
			cmds = append(cmds, p.notify(n))
		}
		return tea.Batch(cmds...)
	case common.Loaded[mcp.Resource]:
		p.loaded(msg)
	case dirMsg:
		p.dirLoaded(msg)
	case readMsg:
		p.readDone(msg)
	case savedMsg:
		if msg.pane == "resources" && p.read != nil && p.read.uri == msg.uri {
			p.read.saved, p.read.saveE = append(p.read.saved, msg.paths...), msg.err
		}
	case subMsg:
		p.subscribedTo(msg)
	case listenMsg:
		p.listening(msg)
	case tea.KeyPressMsg:
		p.notice.Clear()
		return p.updateKey(msg)
	}
	return nil
}

// loaded takes a page of resources/list: sorted in the order people
// count (items/2 before items/10), the cursor on the resource it was on.
func (p *Pane) loaded(msg common.Loaded[mcp.Resource]) {
	var sel string
	if r := p.selected(); r != nil {
		sel = r.URI
	}
	if !p.listed.Apply(msg, p.gen) {
		return
	}
	slices.SortStableFunc(p.listed.Items, func(a, b mcp.Resource) int {
		switch {
		case common.NaturalLess(a.URI, b.URI):
			return -1
		case common.NaturalLess(b.URI, a.URI):
			return 1
		}
		return 0
	})
	for i := range p.listed.Items {
		if p.listed.Items[i].URI == sel {
			p.list.Pos = i
		}
	}
	p.list.Clamp(len(p.listed.Items), p.rows())
}

// readDone shows what a read returned. A read that was overtaken by
// another is dropped: its content must never show under another resource.
func (p *Pane) readDone(msg readMsg) {
	if msg.pane != "resources" || p.read == nil || p.read.uri != msg.uri {
		return
	}
	p.reading = false
	p.read = &reading{uri: msg.uri, result: msg.res, err: msg.err, lines: msg.lines}
	if msg.err != nil {
		p.read.result = nil
	}
}

// subscribedTo takes the answer of resources/subscribe or unsubscribe.
func (p *Pane) subscribedTo(msg subMsg) {
	if msg.gen != p.gen {
		return
	}
	if msg.err != nil {
		p.notice.Fail(msg.err)
		return
	}
	if msg.on {
		p.subscribed[msg.uri] = true
		p.notice.Set("subscribed to %s", msg.uri)
	} else {
		delete(p.subscribed, msg.uri)
		p.notice.Set("unsubscribed from %s", msg.uri)
	}
}

// listening takes the opening of subscriptions/listen (the modern era's
// one subscription): the resources it covers are the ones subscribed.
func (p *Pane) listening(msg listenMsg) {
	if msg.gen != p.gen || msg.subGen != p.subGen {
		if msg.sub != nil {
			go msg.sub.Close()
		}
		return
	}
	again := p.again
	p.again = false
	if msg.err != nil {
		p.notice.Failf("subscriptions/listen: %v", msg.err)
		p.wanted = maps.Clone(p.subscribed)
		return
	}
	p.sub = msg.sub
	p.subscribed = map[string]bool{}
	for _, u := range msg.uris {
		p.subscribed[u] = true
	}
	switch {
	case msg.initial:
	case again:
		p.notice.Set("subscribed again to %s (subscriptions/listen)", common.Plural(len(msg.uris), "resource"))
	case len(msg.uris) == 0:
		p.notice.Set("no resource subscriptions left")
	default:
		p.notice.Set("listening to %s", common.Plural(len(msg.uris), "resource"))
	}
}

func (p *Pane) updateKey(msg tea.KeyPressMsg) tea.Cmd {
	k := p.c.Keys
	switch p.mode {
	case viewSubs:
		return p.subsKey(msg)
	case viewDir:
		d := p.dirs[len(p.dirs)-1]
		if d.cursor.Move(p.c, msg, len(d.items), p.rows()) {
			return nil
		}
		switch {
		case key.Matches(msg, k.Back):
			p.closeDir()
			return nil
		case key.Matches(msg, k.Reload):
			return p.listDir()
		}
	default:
		if p.list.Move(p.c, msg, len(p.listed.Items), p.rows()) {
			return nil
		}
	}
	switch {
	case key.Matches(msg, k.Subscriptions):
		p.mode = viewSubs
		return nil
	case key.Matches(msg, k.Open):
		r := p.selected()
		if r == nil || p.client == nil {
			return nil
		}
		if p.canList(r) {
			return p.openDir(r.URI)
		}
		return p.readURI(r.URI)
	case key.Matches(msg, k.Subscribe):
		r := p.selected()
		if r == nil || p.client == nil {
			return nil
		}
		return p.toggle(r.URI)
	case key.Matches(msg, k.Reload):
		return p.Reload()
	}
	return p.readingKey(msg)
}

// readingKey handles the keys that act on what was read, in every view:
// save it, scroll it.
func (p *Pane) readingKey(msg tea.KeyPressMsg) tea.Cmd {
	k := p.c.Keys
	switch {
	case key.Matches(msg, k.Save):
		if p.read != nil && p.read.result != nil {
			return saveCmd(p.c.SaveDir, "resources", p.read)
		}
	case key.Matches(msg, k.DetailsUp):
		if p.read != nil {
			p.read.offset = max(0, p.read.offset-3)
		}
	case key.Matches(msg, k.DetailsDown):
		if p.read != nil {
			p.read.offset += 3
		}
	}
	return nil
}

// readURI reads uri with resources/read, its contents shown beside.
func (p *Pane) readURI(uri string) tea.Cmd {
	p.reading = true
	p.read = &reading{uri: uri}
	return readCmd(p.c.Ctx, p.client, "resources", uri, p.c.Styles, p.detailWidth())
}

// subsKey handles the keys of the subscriptions view.
func (p *Pane) subsKey(msg tea.KeyPressMsg) tea.Cmd {
	k := p.c.Keys
	if p.subsCur.Move(p.c, msg, len(p.subsURIs()), p.rows()) {
		return nil
	}
	u := p.subsSelected()
	switch {
	case key.Matches(msg, k.Back), key.Matches(msg, k.Subscriptions):
		p.mode = viewList
		if len(p.dirs) > 0 {
			p.mode = viewDir
		}
	case key.Matches(msg, k.Open) && u != "" && p.client != nil:
		return p.readURI(u)
	case key.Matches(msg, k.Subscribe) && u != "" && p.client != nil:
		return p.toggle(u)
	}
	return p.readingKey(msg)
}

// toggle subscribes to uri or unsubscribes from it: with
// resources/subscribe in the legacy era, and in the modern era by reopening
// the one subscriptions/listen with the new set of URIs.
func (p *Pane) toggle(uri string) tea.Cmd {
	on := !p.subscribed[uri]
	client, gen, ctx := p.client, p.gen, p.c.Ctx
	if client.Era() != session.EraModern {
		return func() tea.Msg {
			var err error
			if on {
				err = client.Subscribe(ctx, uri)
			} else {
				err = client.Unsubscribe(ctx, uri)
			}
			return subMsg{gen: gen, uri: uri, on: on, err: err}
		}
	}
	if p.wanted == nil {
		p.wanted = maps.Clone(p.subscribed)
	}
	on = !p.wanted[uri]
	if on {
		p.wanted[uri] = true
	} else {
		delete(p.wanted, uri)
	}
	return p.listen(slices.Sorted(maps.Keys(p.wanted)), false)
}

// listen replaces the session's subscriptions/listen by one for every
// list's changes and the updates of uris.
func (p *Pane) listen(uris []string, initial bool) tea.Cmd {
	client, gen, ctx := p.client, p.gen, p.c.Ctx
	old := p.sub
	p.sub = nil
	p.subGen++
	subGen := p.subGen
	filter := mcp.SubscriptionFilter{
		ToolsListChanged: true, PromptsListChanged: true, ResourcesListChanged: true,
		ResourceSubscriptions: uris,
	}
	return func() tea.Msg {
		if old != nil {
			old.Close()
		}
		lctx, cancel := context.WithCancel(ctx)
		defer cancel()
		sub, err := client.Listen(lctx, filter)
		return listenMsg{gen: gen, subGen: subGen, sub: sub, uris: uris, err: err, initial: initial}
	}
}

// ShortHelp is the pane's help line.
func (p *Pane) ShortHelp() []key.Binding {
	k := p.c.Keys
	switch p.mode {
	case viewSubs:
		return []key.Binding{keymap.WithHelp(k.Open, "enter", "read"), keymap.WithHelp(k.Subscribe, "u", "unsubscribe"), keymap.WithHelp(k.Back, "esc", "resources"), k.DetailsDown, k.Up, k.Down}
	case viewDir:
		return []key.Binding{keymap.WithHelp(k.Open, "enter", "open/read"), keymap.WithHelp(k.Back, "esc", "up"), k.Subscribe, k.Subscriptions, k.DetailsDown, k.Up, k.Down}
	}
	return []key.Binding{keymap.WithHelp(k.Open, "enter", "read"), k.Subscribe, k.Subscriptions, keymap.WithHelp(k.Save, "s", "save blob"), k.DetailsDown, k.Up, k.Down}
}

// FullHelp is every key of the pane.
func (p *Pane) FullHelp() [][]key.Binding {
	k := p.c.Keys
	return [][]key.Binding{
		p.ShortHelp(),
		{keymap.WithHelp(k.Save, "s", "save blob"), k.Reload, k.Up, k.Down, k.PageUp, k.PageDown, k.DetailsUp, k.DetailsDown},
	}
}

func (p *Pane) listWidth() int { return min(max(30, p.width*2/5), p.width) }

func (p *Pane) detailWidth() int { return max(10, p.width-p.listWidth()-1) }

// View renders the pane.
func (p *Pane) View() string {
	st := p.c.Styles
	lw := p.listWidth()
	var left []string
	switch p.mode {
	case viewDir:
		left = p.dirLines(lw)
	case viewSubs:
		left = p.subsLines(lw)
	default:
		left = p.listLines(lw)
	}
	leftView := common.Fit(strings.Join(left, "\n"), lw, p.height)
	dw := p.width - lw - 1
	if dw < 10 {
		return leftView
	}
	sep := strings.TrimSuffix(strings.Repeat(st.Rule.Render("│")+"\n", p.height), "\n")
	detail := p.detailView
	if p.mode == viewSubs {
		detail = p.subsDetail
	}
	return lipgloss.JoinHorizontal(lipgloss.Top, leftView, sep, common.Fit(detail(dw), dw, p.height))
}

// listLines is the left side of the list of resources.
func (p *Pane) listLines(lw int) []string {
	st := p.c.Styles
	var left []string
	head := common.Plural(len(p.listed.Items), "resource")
	if n := len(p.subscribed); n > 0 {
		head += fmt.Sprintf(" · %d subscribed", n)
	}
	head += common.Incomplete(p.listed.LoadErr)
	left = append(left, p.notice.Over(st, head, lw))
	switch {
	case p.client == nil && len(p.listed.Items) == 0:
		left = append(left, st.Dim.Render("  Not connected."))
	case p.client != nil && !hasResources(p.client):
		left = append(left, st.Dim.Render("  The server offers no resources."))
	case p.listed.Loading:
		left = append(left, st.Dim.Render("  Loading resources…"))
	case p.listed.LoadErr != nil && len(p.listed.Items) == 0:
		left = append(left, common.Wrap(st.Error.Render("✗ ")+common.Line(p.listed.LoadErr.Error()), lw)...)
	case len(p.listed.Items) == 0:
		left = append(left, st.Dim.Render("  The server lists no resources."))
	}
	rows := p.rows()
	for r := 0; r < rows && p.list.Offset+r < len(p.listed.Items); r++ {
		i := p.list.Offset + r
		it := &p.listed.Items[i]
		left = append(left, p.row(it, common.Line(it.URI), i == p.list.Pos, lw))
	}
	return left
}

func (p *Pane) detailView(w int) string {
	st := p.c.Styles
	var lines []string
	if r := p.selected(); r != nil {
		t := st.Title.Render(common.Line(r.Name))
		if r.Title != "" {
			t += " — " + common.Line(r.Title)
		}
		lines = append(lines, common.Truncate(t, w))
		meta := []string{common.Line(r.URI)}
		if r.MimeType != "" {
			meta = append(meta, common.Line(r.MimeType))
		}
		if r.Size != nil {
			meta = append(meta, common.ByteSize(int(*r.Size)))
		}
		if p.subscribed[r.URI] {
			meta = append(meta, st.OK.Render("subscribed"))
		}
		if n := p.updated[r.URI]; n > 0 {
			meta = append(meta, st.Warning.Render(fmt.Sprintf("updated %d×", n)))
		}
		lines = append(lines, common.Truncate(strings.Join(meta, " · "), w))
		if a := common.Annotations(r.Annotations); a != "" {
			lines = append(lines, common.Truncate(st.Dim.Render(a), w))
		}
		if r.Description != "" {
			d := common.Wrap(common.Line(r.Description), w)
			lines = append(lines, d[:min(len(d), 3)]...)
		}
		if isDir(r) {
			what := "a directory: enter lists its entries (resources/directory/read)"
			if !p.canList(r) {
				what = "a directory, but the server does not declare directoryRead: enter reads it with resources/read"
			}
			lines = append(lines, common.Truncate(st.Dim.Render(what), w))
		}
		lines = append(lines, st.Rule.Render(strings.Repeat("─", w)))
		if p.read != nil && p.read.uri != r.URI {
			// What was read belongs to another resource.
			lines = append(lines, st.Dim.Render(common.Truncate("enter reads this resource", w)))
			return strings.Join(lines, "\n")
		}
	}
	lines = append(lines, viewReading(st, p.read, w, p.height-len(lines), p.reading)...)
	return strings.Join(lines, "\n")
}
