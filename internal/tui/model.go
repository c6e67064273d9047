package tui

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/transport"
	"github.com/mcpi-dev/mcpi/internal/tui/common"
	"github.com/mcpi-dev/mcpi/internal/tui/keymap"
	"github.com/mcpi-dev/mcpi/internal/tui/logs"
	"github.com/mcpi-dev/mcpi/internal/tui/prompts"
	"github.com/mcpi-dev/mcpi/internal/tui/resources"
	"github.com/mcpi-dev/mcpi/internal/tui/styles"
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

// ConnState is the state of the connection.
type ConnState int

// Connection states.
const (
	Connecting ConnState = iota
	Connected
	Disconnected
)

// Model is the root model: it owns the connection, routes messages to the
// panes and the request modal, and lays out the screen.
type Model struct {
	c    *common.Common
	opts Options

	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
	conns  *connSet
	hooks  Hooks
	parser *wire.Parser // used by the inbox's prepare step only

	state   ConnState
	reason  error
	client  *session.Client
	gen     int
	init    *mcp.InitializeResult
	revName string
	era     string
	trans   string

	notifications int
	warnings      int
	lastNotice    string
	rec           *recorder // the start/stop recording key

	tools    *tools.Pane
	requests *requestsPane
	rootsP   *rootsPane
	wire     *wire.Pane
	res      *resources.Pane
	tmpl     *resources.Templates
	prompts  *prompts.Pane
	logP     *logs.Pane
	notifP   *logs.Pane
	stderrP  *logs.Pane
	composer *composer
	compose  bool // the composer is open
	panes    []pane
	active   int

	queue []*common.Request
	modal *modal

	roots *rootStore
	help  help.Model

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
	}
	m := &Model{
		c: c, opts: opts, ctx: ctx, cancel: cancel,
		done:   make(chan struct{}),
		conns:  &connSet{m: map[*session.Client]bool{}},
		parser: wire.NewParser(),
		roots:  &rootStore{},
		width:  opts.Width, height: opts.Height,
	}
	m.roots.set(opts.Roots)
	m.rec = &recorder{target: opts.Target}
	m.hooks = Hooks{
		Handler:        &handler{inbox: c.Inbox, roots: m.roots, now: opts.Now},
		Tap:            transport.MultiTap(c.Inbox, m.rec),
		OnNotification: c.Inbox.Notify,
		OnWarning:      c.Inbox.Warn,
	}
	m.tools = tools.New(c)
	m.requests = &requestsPane{c: c, queue: &m.queue}
	m.rootsP = newRootsPane(c, m.roots, func() *session.Client { return m.client })
	m.wire = wire.New(c, wire.NewStore(opts.WireEntries, 0))
	m.res = resources.New(c)
	m.tmpl = resources.NewTemplates(c)
	m.prompts = prompts.New(c)
	m.logP = logs.New(c, logs.KindLog)
	m.notifP = logs.New(c, logs.KindNotifications)
	m.stderrP = logs.New(c, logs.KindStderr)
	m.panes = []pane{m.tools, m.res, m.tmpl, m.prompts, m.requests, m.rootsP, m.wire, m.logP, m.notifP, m.stderrP}
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
	connectedMsg struct {
		gen    int
		client *session.Client
		err    error
	}
	disconnectedMsg struct {
		gen int
		err error
	}
)

// connect closes old (if any) and dials, in a Cmd.
func (m *Model) connect(old *session.Client) tea.Cmd {
	m.gen++
	gen := m.gen
	m.state, m.reason = Connecting, nil
	m.client, m.init = nil, nil
	m.tools.Connecting()
	dial, hooks, ctx, conns := m.opts.Dial, m.hooks, m.ctx, m.conns
	return func() tea.Msg {
		if old != nil {
			old.Close()
			conns.remove(old)
		}
		if dial == nil {
			return connectedMsg{gen: gen, err: errors.New("nothing to connect to")}
		}
		c, err := dial(ctx, hooks)
		if err != nil {
			return connectedMsg{gen: gen, err: err}
		}
		if !conns.add(c) {
			c.Close()
			return nil
		}
		return connectedMsg{gen: gen, client: c}
	}
}

func (m *Model) waitDisconnect(c *session.Client, gen int) tea.Cmd {
	done := m.done
	return func() tea.Msg {
		select {
		case <-c.Done():
			return disconnectedMsg{gen: gen, err: c.Err()}
		case <-done:
			return nil
		}
	}
}

func (m *Model) nextBatch() tea.Cmd {
	return m.c.Inbox.Next(m.done, m.prepare)
}

// prepare parses a batch's wire events off the UI goroutine.
func (m *Model) prepare(b *common.Batch) {
	entries := make([]wire.Entry, 0, len(b.Wire)+len(b.Warnings))
	for _, e := range b.Wire {
		entries = append(entries, m.parser.Event(e))
	}
	for _, w := range b.Warnings {
		entries = append(entries, m.parser.Warning(w))
	}
	b.Wire = nil
	b.Prepared = entries
}

// Init starts the connection and the inbox.
func (m *Model) Init() tea.Cmd {
	return tea.Batch(m.connect(nil), m.nextBatch())
}

// State returns the connection state and why it is down.
func (m *Model) State() (ConnState, error) { return m.state, m.reason }

// Tools returns the tools pane.
func (m *Model) Tools() *tools.Pane { return m.tools }

// Wire returns the wire pane.
func (m *Model) Wire() *wire.Pane { return m.wire }

// Resources returns the resources pane.
func (m *Model) Resources() *resources.Pane { return m.res }

// Prompts returns the prompts pane.
func (m *Model) Prompts() *prompts.Pane { return m.prompts }

// Log, NotificationsPane and Stderr return the stream panes.
func (m *Model) Log() *logs.Pane               { return m.logP }
func (m *Model) NotificationsPane() *logs.Pane { return m.notifP }
func (m *Model) Stderr() *logs.Pane            { return m.stderrP }

// Queue returns the server requests waiting for the user.
func (m *Model) Queue() []*common.Request { return m.queue }

// Notifications is the number of notifications received.
func (m *Model) Notifications() int { return m.notifications }

func (m *Model) activePane() pane { return m.panes[m.active] }

func (m *Model) paneHeight() int {
	return max(1, m.height-3-m.helpHeight())
}

func (m *Model) helpHeight() int {
	if !m.help.ShowAll {
		return 1
	}
	n := 1
	for _, col := range m.keys().FullHelp() {
		n = max(n, len(col))
	}
	return n
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
	m.composer.SetSize(m.width, h)
}

// Update routes a message.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.resize()
		return m, nil
	case connectedMsg:
		if msg.gen != m.gen {
			if msg.client != nil {
				c, conns := msg.client, m.conns
				return m, func() tea.Msg { c.Close(); conns.remove(c); return nil }
			}
			return m, nil
		}
		if msg.err != nil {
			m.state, m.reason = Disconnected, msg.err
			m.tools.Disconnected()
			return m, nil
		}
		m.state, m.client = Connected, msg.client
		m.init = msg.client.InitializeResult()
		m.revName = msg.client.ProtocolVersion()
		m.era = msg.client.Era()
		m.trans = ""
		if t, ok := msg.client.Conn().(interface{ Name() string }); ok {
			m.trans = t.Name()
		}
		m.notifications, m.warnings = 0, 0
		m.logP.SetClient(msg.client)
		// The lists load one after the other, tools first: the wire shows
		// them in a stable order and the first pane fills soonest.
		return m, tea.Batch(
			tea.Sequence(m.tools.SetClient(msg.client, msg.gen), m.res.SetClient(msg.client, msg.gen),
				m.tmpl.SetClient(msg.client, msg.gen), m.prompts.SetClient(msg.client, msg.gen)),
			m.waitDisconnect(msg.client, msg.gen))
	case disconnectedMsg:
		if msg.gen != m.gen {
			return m, nil
		}
		m.state, m.reason = Disconnected, msg.err
		m.client = nil
		m.tools.Disconnected()
		m.res.Disconnected()
		m.tmpl.Disconnected()
		m.prompts.Disconnected()
		m.logP.SetClient(nil)
		return m, nil
	case *common.Batch:
		return m, tea.Batch(m.handleBatch(msg), m.nextBatch())
	case openMsg:
		m.openModal(msg.req)
		return m, nil
	case common.Notice:
		m.lastNotice = string(msg)
		return m, nil
	case answeredMsg:
		m.dropRequest(msg.req)
		m.lastNotice = msg.notice
		m.requests.answered++
		if m.modal != nil && m.modal.req == msg.req {
			m.modal = nil
			m.openNext()
		}
		return m, nil
	case openedMsg:
		if m.modal != nil {
			if msg.err != nil {
				m.modal.notice = "✗ " + msg.err.Error()
			} else {
				m.modal.notice = "opened in the browser"
			}
		}
		return m, nil
	case composedMsg:
		_, cmd := m.composer.Update(msg, m.client)
		return m, cmd
	case tea.KeyPressMsg:
		return m, m.handleKey(msg)
	case tea.MouseMsg:
		if m.opts.Mouse {
			return m, m.mouse(msg)
		}
		return m, nil
	}
	// Everything else belongs to a pane (results of its own Cmds).
	return m, m.routeToPanes(msg)
}

// routeToPanes hands a message every pane may be waiting for.
func (m *Model) routeToPanes(msg tea.Msg) tea.Cmd {
	if _, ok := msg.(tea.PasteMsg); ok {
		if m.modal != nil {
			return m.modal.Update(msg, m.opts.OpenURL)
		}
		if m.compose {
			_, cmd := m.composer.Update(msg, m.client)
			return cmd
		}
		return m.activePane().Update(msg)
	}
	var cmds []tea.Cmd
	for _, p := range m.panes {
		cmds = append(cmds, p.Update(msg))
	}
	return tea.Batch(cmds...)
}

func (m *Model) handleBatch(b *common.Batch) tea.Cmd {
	var cmds []tea.Cmd
	if entries, ok := b.Prepared.([]wire.Entry); ok && len(entries) > 0 {
		var stderr []logs.Row
		for i := range entries {
			if e := &entries[i]; e.Kind == wire.KindStderr {
				stderr = append(stderr, logs.Row{Time: e.Time, Level: -1, Tag: "stderr", Text: string(e.Data)})
			}
		}
		if len(stderr) > 0 {
			m.stderrP.Add(stderr)
		}
		m.wire.Append(entries)
	}
	m.wire.Store().Dropped += b.WireDropped
	m.notifications += b.NotificationCount
	m.warnings += b.WarningCount
	reload := false
	var notes, logRows []logs.Row
	for _, n := range b.Notifications {
		notes = append(notes, logs.NotificationRow(n))
		switch n.Method {
		case "notifications/tools/list_changed":
			reload = true
		case "notifications/message":
			logRows = append(logRows, logs.LogRow(n))
		case "notifications/prompts/list_changed":
			cmds = append(cmds, m.prompts.Reload())
		case "notifications/resources/list_changed":
			cmds = append(cmds, m.tmpl.Reload())
		}
		cmds = append(cmds, m.res.Notify(n))
	}
	if len(notes) > 0 {
		m.notifP.Add(notes)
	}
	if len(logRows) > 0 {
		m.logP.Add(logRows)
	}
	if reload {
		cmds = append(cmds, m.tools.Reload())
	}
	if len(b.Progress) > 0 {
		m.tools.Progress(b.Progress)
	}
	for _, r := range b.Requests {
		if !r.Ended() {
			m.queue = append(m.queue, r)
		}
	}
	for _, r := range b.Gone {
		if m.dropRequest(r) {
			m.lastNotice = fmt.Sprintf("request #%d was withdrawn by the server", r.ID)
		}
		if m.modal != nil && m.modal.req == r {
			m.modal = nil
		}
	}
	if m.modal == nil {
		m.openNext()
	}
	return tea.Batch(cmds...)
}

// dropRequest removes r from the queue; it reports whether it was there.
func (m *Model) dropRequest(r *common.Request) bool {
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

func (m *Model) openModal(r *common.Request) {
	m.modal = newModal(m.c, r)
	m.modal.SetSize(m.width, m.paneHeight())
}

func (m *Model) handleKey(msg tea.KeyPressMsg) tea.Cmd {
	k := m.c.Keys
	m.lastNotice = ""
	if m.compose && m.modal == nil && !key.Matches(msg, k.Quit) && !key.Matches(msg, k.Requests) && !key.Matches(msg, k.Reconnect) && !(key.Matches(msg, k.Help) && msg.String() != "?") {
		closed, cmd := m.composer.Update(msg, m.client)
		if closed {
			m.compose = false
		}
		return cmd
	}
	if m.modal == nil && key.Matches(msg, k.Composer) {
		m.compose = true
		return nil
	}
	inputFocused := m.modal != nil || m.activePane().InputFocused()
	switch {
	case key.Matches(msg, k.Quit):
		if m.modal == nil && m.active == 0 && m.tools.CancelShown() {
			return nil
		}
		return tea.Quit
	case key.Matches(msg, k.Reconnect):
		return m.connect(m.client)
	case key.Matches(msg, k.Record):
		now := time.Now
		if m.opts.Now != nil {
			now = m.opts.Now
		}
		if notice, err := m.rec.toggle(m.c.SaveDir, now()); err != nil {
			m.lastNotice = "✗ recording: " + err.Error()
		} else {
			m.lastNotice = notice
		}
		return nil
	case key.Matches(msg, k.Requests):
		if m.modal == nil {
			m.openNext()
		}
		return nil
	case key.Matches(msg, k.Help) && (!inputFocused || msg.String() != "?"):
		// In a text field "?" is typed; f1 still toggles the help.
		m.help.ShowAll = !m.help.ShowAll
		m.resize()
		return nil
	case m.modal == nil && !m.activePane().InputFocused() && key.Matches(msg, k.NextTab):
		m.active = (m.active + 1) % len(m.panes)
		return nil
	case m.modal == nil && !m.activePane().InputFocused() && key.Matches(msg, k.PrevTab):
		m.active = (m.active + len(m.panes) - 1) % len(m.panes)
		return nil
	}
	for i, b := range k.Tabs {
		if i < len(m.panes) && key.Matches(msg, b) {
			m.active = i
			if m.modal != nil {
				// The request waits in the queue; ctrl+o brings it back.
				m.modal = nil
			}
			return nil
		}
	}
	if m.modal != nil {
		if key.Matches(msg, k.Later) {
			m.modal = nil
			return nil
		}
		return m.modal.Update(msg, m.opts.OpenURL)
	}
	return m.activePane().Update(msg)
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
	if m.compose {
		local = m.composer
	}
	if m.modal != nil {
		local = m.modal
	}
	quit := k.Quit
	if m.modal == nil && m.active == 0 && len(m.tools.Calls()) > 0 {
		quit.SetHelp("ctrl+c", "cancel/quit")
	}
	helpKey := k.Help
	if m.modal != nil || m.compose || m.activePane().InputFocused() {
		helpKey.SetHelp("f1", "help")
	}
	global := []key.Binding{k.NextTab, withHelp(k.Tabs[0], "alt+1…0", "pane"), k.Composer, k.Record, k.Reconnect, k.Requests, helpKey, quit}
	short := append(append([]key.Binding{}, local.ShortHelp()...), helpKey, quit)
	full := append(append([][]key.Binding{}, local.FullHelp()...), global)
	return helpKeys{short: short, full: full}
}

// tabParts renders the tabs and says what joins them. When there are too
// many panes for the width, inactive tabs lose their padding, then show a
// short title, then their number only.
func (m *Model) tabParts() (parts []string, sep string) {
	st := m.c.Styles
	var labels []string
	for i, p := range m.panes {
		label := fmt.Sprintf("%d %s", (i+1)%10, p.Title())
		if p == pane(m.wire) {
			label = fmt.Sprintf("%d Wire (%d)", i+1, m.wire.Store().Len())
		}
		labels = append(labels, label)
		if i == m.active {
			parts = append(parts, st.ActiveTab.Render("["+label+"]"))
		} else {
			parts = append(parts, st.Tab.Render(" "+label+" "))
		}
	}
	sep = " "
	for _, short := range []int{-1, 3, 0} {
		if common.Width(strings.Join(parts, sep)) <= m.width {
			break
		}
		for i, p := range m.panes {
			if i == m.active {
				continue
			}
			t := []rune(p.Title())
			label := fmt.Sprintf("%d", (i+1)%10)
			switch {
			case short < 0:
				label = labels[i]
			case short > 0:
				label += " " + string(t[:min(short, len(t))])
			}
			parts[i] = st.Tab.Render(label)
		}
		sep = " "
		if short < 0 {
			sep = "  "
		}
	}
	return parts, sep
}

// tabAt returns the pane whose tab is at column x of the tab line, or -1.
func (m *Model) tabAt(x int) int {
	parts, sep := m.tabParts()
	start := 0
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
		if i := m.tabAt(ms.X); i >= 0 {
			m.active = i
			m.modal = nil // a waiting request stays in the queue
			m.compose = false
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

// View lays out the screen: header, tabs, pane (or request modal), help.
func (m *Model) View() tea.View {
	v := tea.NewView("")
	v.AltScreen = true
	if m.opts.Mouse {
		v.MouseMode = tea.MouseModeCellMotion
	}
	title := "mcpi"
	if m.init != nil {
		title += " · " + common.Line(m.init.ServerInfo.Name)
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
	if m.modal != nil {
		b.WriteString(common.Fit(m.modal.View(), m.width, h))
	} else if m.compose {
		b.WriteString(common.Fit(m.composer.View(), m.width, h))
	} else {
		b.WriteString(common.Fit(m.activePane().View(), m.width, h))
	}
	b.WriteByte('\n')
	b.WriteString(common.Fit(m.help.View(m.keys()), m.width, m.helpHeight()))
	v.SetContent(b.String())
	return v
}

func (m *Model) headerView() string {
	st := m.c.Styles
	w := m.width
	var l1 []string
	l1 = append(l1, st.HeaderTitle.Render("mcpi"))
	if m.init != nil {
		si := m.init.ServerInfo
		l1 = append(l1, st.HeaderServer.Render(common.Line(si.Name)+" "+common.Line(si.Version)))
		if m.trans != "" {
			l1 = append(l1, common.Line(m.trans))
		}
		l1 = append(l1, common.Line(m.revName)+" "+st.HeaderDim.Render(m.era))
	} else if m.opts.Target != "" {
		l1 = append(l1, common.Line(m.opts.Target))
	}
	switch m.state {
	case Connecting:
		l1 = append(l1, st.Connecting.Render("◌ connecting…"))
	case Connected:
		l1 = append(l1, st.Connected.Render("● connected"))
	case Disconnected:
		l1 = append(l1, st.Disconnected.Render("✗ disconnected")+st.HeaderDim.Render(" (ctrl+r reconnects)"))
	}
	line1 := common.Truncate(strings.Join(l1, st.HeaderDim.Render(" · ")), w)

	var badges []string
	if m.init != nil {
		caps := m.init.Capabilities
		add := func(ok bool, name string) {
			if ok {
				badges = append(badges, st.Badge.Render(name))
			}
		}
		add(caps.Tools != nil, "tools")
		res := "resources"
		if caps.Resources != nil && caps.Resources.Subscribe {
			res += "+sub"
		}
		add(caps.Resources != nil, res)
		add(caps.Prompts != nil, "prompts")
		add(len(caps.Logging) > 0, "logging")
		add(len(caps.Completions) > 0, "completions")
		add(caps.Tasks != nil, "tasks")
		add(len(caps.Experimental) > 0, "experimental")
		if len(badges) == 0 {
			badges = append(badges, st.HeaderDim.Render("no capabilities"))
		}
	}
	right := []string{}
	if n := len(m.queue); n > 0 {
		word := "requests"
		if n == 1 {
			word = "request"
		}
		right = append(right, st.BadgeAlert.Render(fmt.Sprintf(" %d %s waiting ", n, word)))
	}
	right = append(right, st.HeaderDim.Render(fmt.Sprintf("notifications %d", m.notifications)))
	if m.warnings > 0 {
		right = append(right, st.Warning.Render(fmt.Sprintf("warnings %d", m.warnings)))
	}
	left := strings.Join(badges, " ")
	if m.state == Disconnected && m.reason != nil && !errors.Is(m.reason, transport.ErrClosed) {
		// Why the connection ended matters more than what it offered.
		left = st.Disconnected.Render(common.Line(m.reason.Error()))
	}
	r := strings.Join(right, " ")
	gap := w - common.Width(left) - common.Width(r)
	var line2 string
	if gap >= 1 {
		line2 = left + strings.Repeat(" ", gap) + r
	} else {
		line2 = common.Truncate(left, max(10, w-common.Width(r)-1)) + " " + r
	}
	return line1 + "\n" + line2
}

func (m *Model) tabsView() string {
	st := m.c.Styles
	parts, sep := m.tabParts()
	line := strings.Join(parts, sep)
	if p := m.rec.active(); p != "" {
		line += "  " + st.Error.Render("● rec")
	}
	if m.lastNotice != "" {
		line += "  " + st.Dim.Render(common.Line(m.lastNotice))
	}
	return common.Truncate(line, m.width)
}
