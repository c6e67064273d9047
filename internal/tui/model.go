package tui

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/mcpi-dev/mcpi/internal/record"
	"github.com/mcpi-dev/mcpi/internal/rows"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/surface"
	"github.com/mcpi-dev/mcpi/internal/transport"
	"github.com/mcpi-dev/mcpi/internal/tui/chatpane"
	"github.com/mcpi-dev/mcpi/internal/tui/checkpane"
	"github.com/mcpi-dev/mcpi/internal/tui/common"
	"github.com/mcpi-dev/mcpi/internal/tui/info"
	"github.com/mcpi-dev/mcpi/internal/tui/keymap"
	"github.com/mcpi-dev/mcpi/internal/tui/logs"
	"github.com/mcpi-dev/mcpi/internal/tui/prompts"
	"github.com/mcpi-dev/mcpi/internal/tui/requestspane"
	"github.com/mcpi-dev/mcpi/internal/tui/resources"
	"github.com/mcpi-dev/mcpi/internal/tui/rootspane"
	"github.com/mcpi-dev/mcpi/internal/tui/skillspane"
	"github.com/mcpi-dev/mcpi/internal/tui/styles"
	"github.com/mcpi-dev/mcpi/internal/tui/timeline"
	"github.com/mcpi-dev/mcpi/internal/tui/tools"
	"github.com/mcpi-dev/mcpi/internal/tui/wire"
)

// pane is a component shown under the tab bar.
type pane interface {
	help.KeyMap
	Title() string
	Update(tea.Msg) tea.Cmd
	View() string
	SetSize(w, h int)
	// InputFocused reports whether a text input has the keys, so that tab,
	// ? and the like go to it rather than to the root.
	InputFocused() bool
}

// Model is the root model: it owns the connection, broadcasts its
// life-cycle and what the session reports to the panes, which set
// themselves up from it, routes keys to the focused component and lays out
// the screen. It knows no pane's business (soft-serve's updateModels).
type Model struct {
	c    *common.Common
	opts Options

	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
	conns  *connSet
	hooks  Hooks

	conn link
	// held is what the panes asked of the server, collected when a new
	// connection starts, for Reapply once it is up.
	held   session.Held
	rec    *recorder // the start/stop recording key
	status common.Notice

	composer *composer
	panes    []pane
	// focus is what is in front of the panes: the one thing that gets
	// the keys.
	focus  focus
	active int

	queue []*common.Request
	modal *modal
	// drafts keeps the modal of each request the user set aside, so that
	// what was typed is there when it is opened again.
	drafts map[*common.Request]*modal
	// quitArmed is set by a ctrl+c that would lose work: the next one quits.
	quitArmed bool

	roots *rootStore
	help  help.Model
	// helpScroll scrolls the whole help when it needs more lines than the
	// screen has.
	helpScroll common.Scroll

	// surface is the server's surface at the last start or list_changed
	// (with --watch), what the next one is diffed against; diff is the
	// last diff, shown while its layer is open; reloadWhy says what restarted the
	// server, for the next diff's title.
	surface    *surface.Snapshot
	surfaceGen int
	diff       *diffView
	reloadWhy  string

	width, height int
}

// New returns the root model. Close releases what it holds (the program's
// Run does so in tui.Run; tests call it).
func New(ctx context.Context, opts Options) *Model {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.OpenURL == nil {
		opts.OpenURL = openURL
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(ctx)
	c := &common.Common{
		Styles:  styles.DefaultStyles(!opts.NoColor),
		Keys:    keymap.Default(),
		Logger:  logger,
		Now:     opts.Now,
		Inbox:   common.NewInbox(),
		SaveDir: opts.SaveDir,
		Ctx:     ctx,
		Version: opts.Version,

		Collection:       opts.Collection,
		CollectionServer: opts.CollectionServer,
		Answers:          &common.AnswerLog{},
	}
	m := &Model{
		c: c, opts: opts, ctx: ctx, cancel: cancel,
		done:   make(chan struct{}),
		conns:  &connSet{m: map[*session.Client]bool{}},
		roots:  &rootStore{},
		drafts: map[*common.Request]*modal{},
		width:  opts.Width, height: opts.Height,
	}
	m.roots.Set(opts.Roots)
	m.rec = &recorder{target: opts.Target, header: opts.TraceHeader, opts: opts.TraceOptions, flag: opts.RecordPath}
	if len(opts.TraceOptions.SecretValues) > 0 && !opts.TraceOptions.NoRedact {
		c.Inbox.Redact(record.NewRedactor(opts.TraceOptions.SecretValues).Event)
	}
	c.Tap = transport.MultiTap(c.Inbox, m.rec, opts.Record)
	c.OpenURL = opts.OpenURL
	m.hooks = Hooks{
		Handler:        &handler{inbox: c.Inbox, roots: m.roots, now: opts.Now, session: opts.Session, answers: c.Answers, sampling: opts.Sampling},
		Tap:            transport.MultiTap(c.Inbox, m.rec),
		OnNotification: func(n session.Notification) { notified(c.Inbox, opts.Session, n) },
		OnWarning:      c.Inbox.Warn,
		OnHealth:       c.Inbox.Health,
		OnPast:         c.Inbox.Past,
		OnRoots:        c.Inbox.SetRoots,
		KeepAlive:      KeepAlive,
	}
	var client func() *session.Client = func() *session.Client { return m.conn.client }
	m.panes = []pane{
		tools.New(c), resources.New(c), resources.NewTemplates(c), prompts.New(c),
		requestspane.New(c, &m.queue), rootspane.New(c, m.roots, client, opts.SetRoots),
		wire.New(c, rows.NewStore(opts.WireEntries, 0)),
		logs.New(c, logs.KindLog), logs.New(c, logs.KindNotifications), logs.New(c, logs.KindStderr),
		info.New(c, opts.Target), checkpane.New(c, opts.Check), skillspane.New(c),
		timeline.New(c, timeline.NewStore(opts.TimelineSpans), true),
		chatpane.New(c, opts.Chat),
	}
	m.composer = newComposer(c)
	m.help = help.New()
	m.help.Styles = c.Styles.Help
	return m
}

// Close ends the connections and the goroutines the model started. It may
// be called more than once.
func (m *Model) Close() {
	m.once.Do(func() {
		close(m.done)
		m.cancel()
		m.conns.closeAll()
		m.rec.close()
	})
}

// connSet tracks every client the model dialled, so that Close closes even
// one whose dial finished after the program stopped.
type connSet struct {
	mu     sync.Mutex
	m      map[*session.Client]bool
	closed bool
}

func (s *connSet) add(c *session.Client) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.m[c] = true
	return true
}

func (s *connSet) remove(c *session.Client) {
	s.mu.Lock()
	delete(s.m, c)
	s.mu.Unlock()
}

func (s *connSet) closeAll() {
	s.mu.Lock()
	s.closed = true
	cs := s.m
	s.m = map[*session.Client]bool{}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for c := range cs {
		wg.Add(1)
		go func() { defer wg.Done(); c.Close() }()
	}
	wg.Wait()
}

// Messages of the connection.
type (
	dialedMsg struct {
		gen    int
		client *session.Client
		err    error
	}
	// endedMsg says the session of client ended (generations change when
	// the server forgets a session; the client stays).
	endedMsg struct {
		client *session.Client
		err    error
	}
)

// holder is a pane that asked the server for something a new connection
// must be told again (a subscription, a log level).
type holder interface{ Hold(*session.Held) }

// collectHeld asks every pane what it holds.
func (m *Model) collectHeld() session.Held {
	var h session.Held
	for _, p := range m.panes {
		if ho, ok := p.(holder); ok {
			ho.Hold(&h)
		}
	}
	return h
}

// reapply tells the connection of generation gen what h holds
// (session.Client.Reapply, the one way every restart does it).
func (m *Model) reapply(c *session.Client, gen int, h session.Held) tea.Cmd {
	if h.LogLevel == "" && len(h.Subscriptions) == 0 && !h.RootsChanged {
		return nil
	}
	ctx := m.ctx
	return func() tea.Msg {
		r, _ := c.Reapply(ctx, h)
		return common.ReappliedMsg{Gen: gen, Held: h, Reapplied: r}
	}
}

// connect closes old (if any) and dials, in a Cmd.
func (m *Model) connect(old *session.Client) tea.Cmd {
	if old != nil {
		m.dropSession("reconnecting")
	}
	m.held = m.collectHeld()
	gen := m.conn.connecting()
	dial, hooks, ctx, conns := m.opts.Dial, m.hooks, m.ctx, m.conns
	dialCmd := func() tea.Msg {
		if old != nil {
			old.Close()
			conns.remove(old)
		}
		if dial == nil {
			return dialedMsg{gen: gen, err: errors.New("nothing to connect to")}
		}
		c, err := dial(ctx, hooks)
		if err != nil {
			return dialedMsg{gen: gen, err: err}
		}
		if !conns.add(c) {
			c.Close()
			return nil
		}
		return dialedMsg{gen: gen, client: c}
	}
	return tea.Batch(m.broadcast(common.ConnectingMsg{Gen: gen}), dialCmd)
}

func (m *Model) waitEnd(c *session.Client) tea.Cmd {
	done := m.done
	return func() tea.Msg {
		select {
		case <-c.Done():
			return endedMsg{client: c, err: c.Err()}
		case <-done:
			return nil
		}
	}
}

func (m *Model) nextBatch() tea.Cmd { return m.c.Inbox.Next(m.done) }

// Init starts the connection and the inbox.
func (m *Model) Init() tea.Cmd {
	return tea.Batch(m.connect(nil), m.nextBatch(), m.waitReload())
}

// State returns the connection state and why it is down.
func (m *Model) State() (ConnState, error) { return m.conn.state, m.conn.reason }

// The optional interfaces a pane answers the root through, so that the
// root names no pane.
type (
	// busyPane has calls under way: quitting would lose them.
	busyPane interface{ Running() int }
	// cancelPane cancels what it shows with ctrl+c (CancelShown), and has
	// calls ctrl+c may cancel (HasCalls), for the help's word.
	cancelPane interface {
		CancelShown() bool
		HasCalls() bool
	}
	// quietCountPane has a count in its title that is no news (a running
	// total): short tab labels leave it out.
	quietCountPane interface{ QuietCount() bool }
	// shortTitlePane has a shorter title for the abbreviated tab labels.
	shortTitlePane interface{ ShortTitle() string }
)

// running counts the calls under way in every pane.
func (m *Model) running() int {
	n := 0
	for _, p := range m.panes {
		if b, ok := p.(busyPane); ok {
			n += b.Running()
		}
	}
	return n
}

// Queue returns the server requests waiting for the user.
func (m *Model) Queue() []*common.Request { return m.queue }

// Notifications is the number of notifications received.
func (m *Model) Notifications() int { return m.conn.notifications }

func (m *Model) activePane() pane { return m.panes[m.active] }

// chromeHeight is what the header, tabs, status line and help take.
func (m *Model) chromeHeight() int { return 4 + m.helpHeight() }

func (m *Model) paneHeight() int {
	return max(1, m.height-m.chromeHeight())
}

func (m *Model) helpHeight() int {
	if !m.help.ShowAll {
		return 1
	}
	return max(1, min(len(m.layoutHelp().lines), m.helpRoom()))
}

func (m *Model) resize() {
	m.help.SetWidth(m.width)
	h := m.paneHeight()
	for _, p := range m.panes {
		p.SetSize(m.width, h)
	}
	if m.modal != nil {
		m.modal.SetSize(m.width, h)
	}
	for _, d := range m.drafts {
		d.SetSize(m.width, h)
	}
	m.composer.SetSize(m.width, h)
	if m.diff != nil {
		m.diff.SetSize(m.width, h)
	}
}

// broadcast hands msg to every pane, their Cmds run together.
func (m *Model) broadcast(msg tea.Msg) tea.Cmd {
	var cmds []tea.Cmd
	for _, p := range m.panes {
		cmds = append(cmds, p.Update(msg))
	}
	return tea.Batch(cmds...)
}

// broadcastInOrder hands msg to every pane and runs their Cmds one after the
// other: the lists load tools first, so the wire shows them in a stable
// order and the first pane fills soonest.
func (m *Model) broadcastInOrder(msg tea.Msg) tea.Cmd {
	var cmds []tea.Cmd
	for _, p := range m.panes {
		if cmd := p.Update(msg); cmd != nil {
			cmds = append(cmds, cmd)
		}
	}
	return tea.Sequence(cmds...)
}

// Update routes a message.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.resize()
		// The renderer's idea of the cells beyond the old size can be
		// wrong after a resize (what a later frame leaves blank there stays
		// on the terminal): once the resize has settled, the next frame is
		// drawn on a clean screen.
		return m, tea.Tick(100*time.Millisecond, func(time.Time) tea.Msg { return tea.ClearScreen() })
	case dialedMsg:
		return m, m.dialed(msg)
	case endedMsg:
		if msg.client != m.conn.client {
			return m, nil
		}
		m.conn.ended(msg.err)
		m.dropSession("the connection ended")
		return m, m.broadcast(common.DisconnectedMsg{Gen: m.conn.gen, Err: msg.err})
	case *common.Batch:
		return m, tea.Batch(m.handleBatch(msg), m.nextBatch())
	case common.OpenRequestMsg:
		m.openModal(msg.Req)
		return m, nil
	case common.ShowFrameMsg:
		return m, m.showFrame(msg)
	case common.Notice:
		m.status = msg
		return m, nil
	case answeredMsg:
		m.answered(msg)
		return m, nil
	case openedMsg:
		if m.modal != nil {
			m.modal.opened(msg.err)
		}
		return m, nil
	case common.ReappliedMsg:
		if msg.Gen != m.conn.gen {
			return m, nil
		}
		m.status = reappliedNotice(msg.Reapplied)
		return m, m.broadcast(msg)
	case reloadMsg:
		return m, m.reload(msg.r)
	case surfaceMsg:
		m.surfaced(msg)
		return m, nil
	case composedMsg:
		_, cmd := m.composer.Update(msg, m.conn.client)
		return m, cmd
	case tea.KeyPressMsg:
		return m, m.handleKey(msg)
	case tea.MouseMsg:
		if m.opts.Mouse {
			return m, m.mouse(msg)
		}
		return m, nil
	case tea.PasteMsg:
		return m, m.paste(msg)
	}
	// Everything else belongs to a pane (results of its own Cmds); panes
	// drop what is not theirs.
	return m, m.broadcast(msg)
}

// dialed takes the outcome of a dial: a late one is closed, a failed one
// ends the connection, a new session is broadcast and told again what
// the panes asked of the old one.
func (m *Model) dialed(msg dialedMsg) tea.Cmd {
	if msg.gen != m.conn.gen {
		if msg.client != nil {
			c, conns := msg.client, m.conns
			return func() tea.Msg { c.Close(); conns.remove(c); return nil }
		}
		return nil
	}
	if msg.err != nil {
		m.conn.ended(msg.err)
		m.dropSession("the connection ended")
		return m.broadcast(common.DisconnectedMsg{Gen: msg.gen, Err: msg.err})
	}
	m.conn.up(msg.client)
	if m.conn.dials > 1 {
		m.status.Set("reconnected: a new session, lists reloaded")
	}
	held := m.held
	m.held = session.Held{}
	var snap tea.Cmd
	if m.watching() {
		why := m.reloadWhy
		if why == "" {
			why = "reconnected"
		}
		m.reloadWhy = ""
		snap = m.takeSurface(msg.client, msg.gen, why)
	}
	return tea.Batch(m.broadcastInOrder(common.ConnectedMsg{Client: msg.client, Gen: msg.gen}), m.waitEnd(msg.client),
		m.reapply(msg.client, msg.gen, held), snap)
}

// answered forgets a request the user answered and opens the next one.
func (m *Model) answered(msg answeredMsg) {
	m.dropRequest(msg.req)
	m.status = msg.notice
	if m.modal != nil && m.modal.req == msg.req {
		m.closeLayer(modalLayer)
		m.openNext()
	}
}

// paste goes to what is in front: the modal, the composer or the pane; the
// help and the Diff view take no text.
func (m *Model) paste(msg tea.PasteMsg) tea.Cmd {
	switch m.focus.front() {
	case modalLayer:
		return m.modal.Update(msg, m.opts.OpenURL)
	case composerLayer:
		_, cmd := m.composer.Update(msg, m.conn.client)
		return cmd
	case paneLayer:
		return m.activePane().Update(msg)
	}
	return nil
}

func (m *Model) handleBatch(b *common.Batch) tea.Cmd {
	var cmds []tea.Cmd
	if len(b.Entries) > 0 || b.WireDropped > 0 {
		cmds = append(cmds, m.broadcast(common.EntriesMsg{Entries: b.Entries, Dropped: b.WireDropped}))
	}
	m.conn.notifications += b.NotificationCount + len(b.Past)
	m.conn.warnings += b.WarningCount
	if len(b.Past) > 0 {
		cmds = append(cmds, m.broadcast(common.PastNotificationsMsg{Notes: b.Past}))
	}
	if b.RootsChanged {
		cmds = append(cmds, m.broadcast(common.RootsMsg{Roots: b.Roots}))
	}
	if len(b.Notifications) > 0 {
		nm := common.NotificationsMsg{Notes: b.Notifications}
		if m.watching() && m.conn.client != nil && m.surface != nil && listChanged(nm) {
			cmds = append(cmds, m.takeSurface(m.conn.client, m.conn.gen, "the server's lists changed"))
		}
		cmds = append(cmds, m.broadcast(nm))
	}
	if len(b.Progress) > 0 {
		cmds = append(cmds, m.broadcast(common.ProgressMsg{ByCall: b.Progress}))
	}
	for _, h := range b.Health {
		if cmd := m.health(h); cmd != nil {
			cmds = append(cmds, cmd)
		}
	}
	arrived := false
	for _, r := range b.Requests {
		if !r.Ended() {
			m.queue = append(m.queue, r)
			arrived = true
		}
	}
	for _, r := range b.Gone {
		if m.dropRequest(r) {
			m.status.Set("request #%d was withdrawn %s", r.ID, r.Why)
		}
		delete(m.drafts, r)
		if m.modal != nil && m.modal.req == r {
			m.closeLayer(modalLayer)
		}
	}
	// A new request opens itself; one the user set aside waits for ctrl+o.
	if m.modal == nil && arrived {
		m.openNext()
	}
	return tea.Batch(cmds...)
}

// reappliedNotice says what a new connection was told again, and what
// could not be.
func reappliedNotice(r session.Reapplied) (n common.Notice) {
	failed := r.Failed
	r.Failed = nil
	ok := r.Summary()
	if len(failed) == 0 {
		n.Set("applied again to the new session: %s", ok)
		return n
	}
	whats := slices.Sorted(maps.Keys(failed))
	s := "not applied again to the new session: " + whats[0] + " (" + failed[whats[0]].Error() + ")"
	if len(whats) > 1 {
		s += fmt.Sprintf(" and %d more", len(whats)-1)
	}
	if ok != "" {
		s += "; applied again: " + ok
	}
	n.Failf("%s", s)
	return n
}

// dropSession ends the requests of a session that is gone (the server
// exited, or forgot the session): their answers could only reach a
// session that never asked. Their handlers get an error, the queue and the
// drafts forget them.
func (m *Model) dropSession(why string) {
	if len(m.queue) == 0 {
		return
	}
	n := len(m.queue)
	for _, r := range m.queue {
		r.Answer(common.Reply{Err: errors.New(why)})
	}
	m.queue = nil
	clear(m.drafts)
	m.closeLayer(modalLayer)
	m.status.Set("%s dropped: %s", common.Plural(n, "server request"), why)
}

// dropRequest removes r from the queue; it reports whether it was there.
func (m *Model) dropRequest(r *common.Request) bool {
	delete(m.drafts, r)
	for i, q := range m.queue {
		if q == r {
			m.queue = append(m.queue[:i:i], m.queue[i+1:]...)
			return true
		}
	}
	return false
}

func (m *Model) openNext() {
	if len(m.queue) > 0 {
		m.openModal(m.queue[0])
	}
}

// openModal shows the request r, with what was typed for it before.
func (m *Model) openModal(r *common.Request) {
	if d, ok := m.drafts[r]; ok {
		m.modal = d
	} else {
		m.modal = newModal(m.c, r)
		m.drafts[r] = m.modal
	}
	m.modal.SetSize(m.width, m.paneHeight())
	m.openLayer(modalLayer)
}

// openRequests opens the first waiting request, or says there is none.
func (m *Model) openRequests() {
	if m.modal == nil {
		m.openNext()
	}
	if m.modal == nil {
		m.status.Set("no server request is waiting")
	}
}

// setAside hides the modal; its request and what was typed wait for ctrl+o.
func (m *Model) setAside() { m.closeLayer(modalLayer) }

// losesWork says what quitting now would lose, or "", and the way to keep
// a request's answer, if one applies. It fits 80 columns.
func (m *Model) losesWork() (loses, keep string) {
	var parts []string
	if n := len(m.queue); n > 0 {
		parts = append(parts, common.Plural(n, "server request")+" waiting")
		if m.modal != nil {
			keep = "esc sets it aside"
		} else {
			keep = "ctrl+o answers it"
		}
	}
	if n := m.running(); n > 0 {
		parts = append(parts, common.Plural(n, "call")+" running")
	}
	return strings.Join(parts, ", "), keep
}

func (m *Model) handleKey(msg tea.KeyPressMsg) tea.Cmd {
	m.status.Clear()
	armed := m.quitArmed
	m.quitArmed = false
	if key.Matches(msg, m.c.Keys.Quit) {
		return m.quit(armed)
	}
	return m.routeKey(msg)
}

// globalKey handles the root's keys over the panes: reconnect, record, the
// diff, the requests, the help, the next and previous tab. ok reports the
// key was one.
func (m *Model) globalKey(msg tea.KeyPressMsg) (cmd tea.Cmd, ok bool) {
	k := m.c.Keys
	inputFocused := m.activePane().InputFocused()
	switch {
	case key.Matches(msg, k.Reconnect):
		return m.connect(m.conn.client), true
	case key.Matches(msg, k.Record):
		return m.toggleRecording(), true
	case key.Matches(msg, k.Diff):
		m.toggleDiff()
		return nil, true
	case key.Matches(msg, k.Requests):
		m.openRequests()
		return nil, true
	case key.Matches(msg, k.Help) && (!inputFocused || msg.String() != "?"):
		// In a text field "?" is typed; f1 still opens the help.
		m.openLayer(helpLayer)
		return nil, true
	case !inputFocused && key.Matches(msg, k.NextTab):
		m.show((m.active + 1) % len(m.panes))
		return nil, true
	case !inputFocused && key.Matches(msg, k.PrevTab):
		m.show((m.active + len(m.panes) - 1) % len(m.panes))
		return nil, true
	}
	return nil, false
}

// tabKey goes to the pane of a tab's key (alt+1…0, then the extra tabs).
func (m *Model) tabKey(msg tea.KeyPressMsg) bool {
	k := m.c.Keys
	for i, b := range k.Tabs {
		if i < len(m.panes) && key.Matches(msg, b) {
			m.goTo(i)
			return true
		}
	}
	for i, b := range k.ExtraTabs() {
		if len(k.Tabs)+i < len(m.panes) && key.Matches(msg, b) {
			m.goTo(len(k.Tabs) + i)
			return true
		}
	}
	return false
}

// toggleRecording starts or stops the recording. The trace's file is
// created or closed off the UI goroutine; the notice says what came of it.
func (m *Model) toggleRecording() tea.Cmd {
	now := time.Now
	if m.opts.Now != nil {
		now = m.opts.Now
	}
	rec, dir, t := m.rec, m.c.SaveDir, now()
	return func() tea.Msg {
		var n common.Notice
		if said, err := rec.toggle(dir, t); err != nil {
			n.Failf("recording: %v", err)
		} else {
			n.Set("%s", said)
		}
		return n
	}
}

// frameShower is the pane that shows the wire's rows.
type frameShower interface{ ShowSeq(int64) bool }

// showFrame goes to the pane that shows the wire's rows, on the row asked
// for.
func (m *Model) showFrame(msg common.ShowFrameMsg) tea.Cmd {
	for i, p := range m.panes {
		if _, ok := p.(frameShower); ok {
			m.goTo(i)
			return p.Update(msg)
		}
	}
	return nil
}

// goTo shows pane i; a request on screen waits in the queue (ctrl+o brings
// it back).
func (m *Model) goTo(i int) {
	m.show(i)
	m.closeLayer(diffLayer)
	m.setAside()
	m.closeLayer(composerLayer)
}

// lister is a pane with views besides its list (a form, a result, a row
// opened): going to its tab shows the list, so that what is typed next
// filters it and never reaches a key of another view (e, enter: a call
// sent again).
type lister interface{ ShowList() }

// show makes pane i the active one, on its list.
func (m *Model) show(i int) {
	m.active = i
	if l, ok := m.panes[i].(lister); ok {
		l.ShowList()
	}
}

// quit handles ctrl+c: it cancels the call on screen first; where quitting
// would lose an answer being written, a waiting request or a running call,
// it asks for a second ctrl+c.
func (m *Model) quit(armed bool) tea.Cmd {
	if c, ok := m.activePane().(cancelPane); ok && m.focus.onTop() == paneLayer && c.CancelShown() {
		return nil
	}
	if armed {
		return tea.Quit
	}
	if loses, keep := m.losesWork(); loses != "" {
		m.quitArmed = true
		n := "ctrl+c again quits: " + loses
		if keep != "" {
			n += "; " + keep
		}
		m.status.Set("%s", n)
		return nil
	}
	return tea.Quit
}

// helpKeys is the help of the current context: the focused component's
// keys, then the global ones.
type helpKeys struct {
	short []key.Binding
	full  [][]key.Binding
}

func (h helpKeys) ShortHelp() []key.Binding  { return h.short }
func (h helpKeys) FullHelp() [][]key.Binding { return h.full }

func (m *Model) keys() help.KeyMap {
	k := m.c.Keys
	var local help.KeyMap = m.activePane()
	top := m.focus.onTop()
	switch top {
	case composerLayer:
		local = m.composer
	case diffLayer:
		local = m.diff
	case modalLayer:
		local = m.modal
	}
	quit := k.Quit
	if c, ok := m.activePane().(cancelPane); ok && top == paneLayer && c.HasCalls() {
		quit.SetHelp("ctrl+c", "cancel/quit")
	}
	helpKey := k.Help
	if top == modalLayer || top == composerLayer || (top == paneLayer && m.activePane().InputFocused()) {
		helpKey.SetHelp("f1", "help")
	}
	if m.help.ShowAll {
		helpKey.SetHelp(helpKey.Help().Key+"/esc", "close help")
	}
	// The root's keys are listed where they work: over the panes all of
	// them; in front of a pane only the help and quit (and a request over
	// the composer).
	global := []key.Binding{helpKey, quit}
	switch top {
	case paneLayer:
		global = []key.Binding{k.NextTab, keymap.WithHelp(k.Tabs[0], "alt+1…0", "pane"), keymap.WithHelp(k.InfoTab, "alt+i", "info"), k.CheckTab, k.SkillsTab, k.TimelineTab, k.ChatTab, k.Composer, k.Record, k.Reconnect, k.Requests, k.Diff, helpKey, quit}
	case composerLayer:
		global = []key.Binding{k.Requests, helpKey, quit}
	}
	short := dedupe(nil, append(append([]key.Binding{}, local.ShortHelp()...), helpKey, quit))
	var full [][]key.Binding
	var seen []key.Binding
	for _, col := range local.FullHelp() {
		col = dedupe(seen, col)
		seen = append(seen, col...)
		if len(col) > 0 {
			full = append(full, col)
		}
	}
	// A global key the focused component takes for itself (tab in a form,
	// esc in a list) is listed once, with the component's meaning.
	if g := dedupe(seen, global); len(g) > 0 {
		full = append(full, g)
	}
	return helpKeys{short: short, full: full}
}

// dedupe returns the bindings of bs whose first key is in neither seen nor
// an earlier binding of bs.
func dedupe(seen, bs []key.Binding) []key.Binding {
	has := map[string]bool{}
	for _, b := range seen {
		has[b.Help().Key] = true
	}
	var out []key.Binding
	for _, b := range bs {
		if !b.Enabled() {
			continue
		}
		if hk := b.Help().Key; !has[hk] {
			has[hk] = true
			out = append(out, b)
		}
	}
	return out
}

// tabLabel is the label of pane i: its key, title and count, or shorter.
// short < 0 is the whole title, short > 0 its first letters; a count
// ("(3)") that is news stays in every form.
func (m *Model) tabLabel(i int, f tabForm) string {
	short := f.letters
	p := m.panes[i]
	num := fmt.Sprintf("%d", (i+1)%10)
	if extra := m.c.Keys.ExtraTabs(); i >= 10 && i-10 < len(extra) {
		num = strings.TrimPrefix(extra[i-10].Help().Key, "alt+")
	}
	title, count := splitCount(p.Title())
	if st, ok := p.(shortTitlePane); ok && f.abbrev {
		title = st.ShortTitle()
	}
	if q, ok := p.(quietCountPane); (ok && q.QuietCount() || count == " (0)") && (short >= 0 || f.abbrev) {
		// Short labels keep the counts that are news: not the wire's
		// running total, not a zero.
		count = ""
	}
	switch {
	case short < 0:
		return num + " " + title + count
	case short > 0:
		t := []rune(title)
		sp := " "
		if f.tight {
			sp = ""
		}
		return num + sp + string(t[:min(short, len(t))]) + strings.TrimPrefix(count, " ")
	}
	return num + strings.TrimPrefix(count, " ")
}

// tabForm is how much of a title a tab label shows: the whole of it
// (letters < 0), its first letters (after the key, or tight against it), or
// none.
type tabForm struct {
	letters int
	tight   bool
	// abbrev (with letters < 0): the long titles abbreviated, and only
	// the counts that are news.
	abbrev bool
}

// splitCount splits "Requests (2)" into "Requests" and " (2)".
func splitCount(title string) (string, string) {
	if i := strings.LastIndex(title, " ("); i > 0 && strings.HasSuffix(title, ")") {
		return title[:i], title[i:]
	}
	return title, ""
}

// tabParts renders the tabs and says what joins them. When there are too
// many panes for the width, inactive tabs lose their padding, then show a
// short title, then their number only; counts stay.
func (m *Model) tabParts() (parts []string, sep string) {
	st := m.c.Styles
	for i := range m.panes {
		label := m.tabLabel(i, tabForm{letters: -1})
		if i == m.active {
			parts = append(parts, st.ActiveTab.Render("["+label+"]"))
		} else {
			parts = append(parts, st.Tab.Render(" "+label+" "))
		}
	}
	sep = " "
	room := m.width - common.Width(tabPrefix)
	for _, f := range []tabForm{{letters: -1}, {letters: -1, abbrev: true}, {letters: 3}, {letters: 3, tight: true}, {letters: 2, tight: true}, {letters: 1}, {}} {
		if common.Width(strings.Join(parts, sep)) <= room {
			break
		}
		for i := range m.panes {
			if i != m.active {
				parts[i] = st.Tab.Render(m.tabLabel(i, f))
			}
		}
		sep = " "
		if f.letters < 0 && !f.abbrev {
			sep = "  "
		}
	}
	return parts, sep
}

// tabPrefix stands before the tabs: their keys are alt+ the key shown (a
// bare digit or letter is the pane's, or text in a field).
const tabPrefix = "alt+ "

// tabAt returns the pane whose tab is at column x of the tab line, or -1.
func (m *Model) tabAt(x int) int {
	parts, sep := m.tabParts()
	start := common.Width(tabPrefix)
	for i, p := range parts {
		end := start + common.Width(p)
		if x >= start && x < end {
			return i
		}
		start = end + common.Width(sep)
	}
	return -1
}

// mouse handles the mouse (Options.Mouse): the wheel moves like the arrow
// keys in whatever has the focus, a click on a tab opens its pane.
func (m *Model) mouse(msg tea.MouseMsg) tea.Cmd {
	ms := msg.Mouse()
	switch msg.(type) {
	case tea.MouseWheelMsg:
		kp, ok := wheelKey(msg)
		if !ok {
			return nil
		}
		var cmds []tea.Cmd
		for range wheelLines {
			cmds = append(cmds, m.handleKey(kp))
		}
		return tea.Batch(cmds...)
	case tea.MouseClickMsg:
		if ms.Button != tea.MouseLeft || ms.Y != strings.Count(m.headerView(), "\n")+1 {
			return nil
		}
		if i := m.tabAt(ms.X); i >= 0 && m.focus.front() == paneLayer {
			m.goTo(i)
		}
	}
	return nil
}

// wheelLines is how many rows one notch of the wheel moves.
const wheelLines = 3

// wheelKey is the arrow key a wheel notch stands for.
func wheelKey(msg tea.MouseMsg) (tea.KeyPressMsg, bool) {
	switch msg.Mouse().Button {
	case tea.MouseWheelUp:
		return tea.KeyPressMsg{Code: tea.KeyUp}, true
	case tea.MouseWheelDown:
		return tea.KeyPressMsg{Code: tea.KeyDown}, true
	}
	return tea.KeyPressMsg{}, false
}

// View lays out the screen: header, tabs, pane (or request modal), status
// line, help.
func (m *Model) View() tea.View {
	v := tea.NewView("")
	v.AltScreen = true
	if m.opts.Mouse {
		v.MouseMode = tea.MouseModeCellMotion
	}
	title := "mcpi"
	if m.conn.init != nil {
		title += " · " + common.Line(m.conn.init.ServerInfo.Name)
	}
	v.WindowTitle = title
	if m.width <= 0 || m.height <= 0 {
		return v
	}
	if m.width < 40 || m.height < 10 {
		v.SetContent(common.Fit("mcpi needs a terminal of at least 40x10 (80x24 is comfortable).", m.width, m.height))
		return v
	}
	var b strings.Builder
	b.WriteString(m.headerView())
	b.WriteByte('\n')
	b.WriteString(m.tabsView())
	b.WriteByte('\n')
	h := m.paneHeight()
	switch m.focus.onTop() {
	case modalLayer:
		b.WriteString(common.Fit(m.modal.View(), m.width, h))
	case composerLayer:
		b.WriteString(common.Fit(m.composer.View(), m.width, h))
	case diffLayer:
		b.WriteString(common.Fit(m.diff.View(), m.width, h))
	default:
		b.WriteString(common.Fit(m.activePane().View(), m.width, h))
	}
	b.WriteByte('\n')
	b.WriteString(m.statusView())
	b.WriteByte('\n')
	if m.help.ShowAll {
		b.WriteString(common.Fit(m.fullHelpView(), m.width, m.helpHeight()))
	} else {
		b.WriteString(common.Fit(m.help.View(m.keys()), m.width, 1))
	}
	v.SetContent(b.String())
	return v
}

func (m *Model) tabsView() string {
	parts, sep := m.tabParts()
	return common.Truncate(m.c.Styles.Tab.Render(tabPrefix)+strings.Join(parts, sep), m.width)
}

// statusView is the status line: the recording and its file, then the
// newest notice; the notice is what gets cut when the line is short.
func (m *Model) statusView() string {
	st := m.c.Styles
	var left string
	if p := m.rec.active(); p != "" {
		// The whole path when it fits; else the file's name and as much
		// of its directory as fits, cut from the start (half the line
		// when a notice is next to it).
		room := m.width - common.Width("● rec ")
		if !m.status.Empty() {
			room = m.width/2 - common.Width("● rec ")
		}
		path := common.Line(p)
		if common.Width(path) > room {
			path = "…" + ansi.TruncateLeft(path, common.Width(path)-max(common.Width(filepath.Base(p)), room-1), "")
		}
		left = st.Error.Render("● rec") + " " + path
	}
	line := left
	if !m.status.Empty() {
		if line != "" {
			line += "  "
		}
		line += m.status.View(st, m.width)
	}
	return common.Truncate(line, m.width)
}
