package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/mcpi-dev/mcpi/internal/rows"
	"github.com/mcpi-dev/mcpi/internal/transport"
	"github.com/mcpi-dev/mcpi/internal/tui/common"
	"github.com/mcpi-dev/mcpi/internal/tui/keymap"
	"github.com/mcpi-dev/mcpi/internal/tui/styles"
	"github.com/mcpi-dev/mcpi/internal/tui/timeline"
	"github.com/mcpi-dev/mcpi/internal/tui/wire"
)

// ReplayOptions configure the read-only TUI of a recorded trace.
type ReplayOptions struct {
	// Title names the trace in the header.
	Title string
	// Filter is the Wire pane's filter to begin with (mcpi replay
	// --filter).
	Filter string
	// Feed reads the trace and hands each event to tap; it runs on a
	// goroutine of its own until it returns or ctx ends (a --follow feed
	// keeps waiting for more).
	Feed func(ctx context.Context, tap transport.Tap) error

	In      io.Reader
	Out     io.Writer
	NoColor bool
	Width   int
	Height  int
	// WireEntries bounds the rows kept (default rows.MaxEntries).
	WireEntries int
	// TimelineSpans bounds the timeline's spans (default
	// timeline.MaxSpans).
	TimelineSpans int
	// Mouse turns the mouse on: the wheel scrolls.
	Mouse bool
	// Name is the header's title ("mcpi replay" when empty); Live says
	// the feed is a conversation as it happens (mcpi proxy --ui), not a
	// trace read.
	Name string
	Live bool
}

// ReplayModel is the root model of `mcpi replay` on a terminal: the wire
// pane and the timeline (tab goes from one to the other), fed from the
// trace through the same inbox as a live session.
type ReplayModel struct {
	c      *common.Common
	opts   ReplayOptions
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
	wire   *wire.Pane
	// timeline is shown instead of the wire while onTimeline.
	timeline   *timeline.Pane
	onTimeline bool
	help       help.Model

	ended   bool
	feedErr error
	// notice is shown in the header until the next key.
	notice common.Notice

	width, height int
}

type feedDoneMsg struct{ err error }

// NewReplay returns the replay model; Close releases it.
func NewReplay(ctx context.Context, opts ReplayOptions) *ReplayModel {
	ctx, cancel := context.WithCancel(ctx)
	c := &common.Common{
		Styles: styles.DefaultStyles(!opts.NoColor),
		Keys:   keymap.Default(),
		Logger: slog.New(slog.DiscardHandler),
		Now:    time.Now,
		Inbox:  common.NewInbox(),
		Ctx:    ctx,
	}
	m := &ReplayModel{c: c, opts: opts, ctx: ctx, cancel: cancel, done: make(chan struct{}),
		width: opts.Width, height: opts.Height}
	m.wire = wire.New(c, rows.NewStore(opts.WireEntries, 0))
	m.timeline = timeline.New(c, timeline.NewStore(opts.TimelineSpans), false)
	if opts.Filter != "" {
		m.wire.SetFilter(opts.Filter)
	}
	m.help = help.New()
	m.help.Styles = c.Styles.Help
	return m
}

// Close stops the feed. It may be called more than once.
func (m *ReplayModel) Close() {
	m.once.Do(func() { close(m.done); m.cancel() })
}

// Wire returns the wire pane.
func (m *ReplayModel) Wire() *wire.Pane { return m.wire }

// Timeline returns the timeline pane.
func (m *ReplayModel) Timeline() *timeline.Pane { return m.timeline }

// active is the pane shown.
func (m *ReplayModel) active() pane {
	if m.onTimeline {
		return m.timeline
	}
	return m.wire
}

// Init starts the feed and the inbox.
func (m *ReplayModel) Init() tea.Cmd {
	feed, ctx, inbox := m.opts.Feed, m.ctx, m.c.Inbox
	return tea.Batch(func() tea.Msg {
		if feed == nil {
			return feedDoneMsg{}
		}
		return feedDoneMsg{err: feed(ctx, inbox)}
	}, m.next())
}

func (m *ReplayModel) next() tea.Cmd { return m.c.Inbox.Next(m.done) }

// Update routes a message.
func (m *ReplayModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.help.SetWidth(m.width)
		m.wire.SetSize(m.width, max(1, m.height-2))
		m.timeline.SetSize(m.width, max(1, m.height-2))
	case *common.Batch:
		if len(msg.Entries) > 0 {
			m.wire.Append(msg.Entries)
			m.timeline.Append(msg.Entries)
		}
		m.wire.Store().Dropped += msg.WireDropped
		return m, m.next()
	case feedDoneMsg:
		m.ended = true
		if msg.err != nil && !errors.Is(msg.err, context.Canceled) {
			m.feedErr = msg.err
		}
	case common.Notice:
		m.notice = msg
	case common.ShowFrameMsg:
		m.onTimeline = false
		return m, m.wire.Update(msg)
	case tea.KeyPressMsg:
		m.notice.Clear()
		k := m.c.Keys
		if key.Matches(msg, k.Quit) || (!m.active().InputFocused() && msg.Text == "q") {
			return m, tea.Quit
		}
		if !m.active().InputFocused() && (key.Matches(msg, k.NextTab) || key.Matches(msg, k.PrevTab) || key.Matches(msg, k.TimelineTab)) {
			m.onTimeline = !m.onTimeline || key.Matches(msg, k.TimelineTab)
			return m, nil
		}
		return m, m.active().Update(msg)
	case tea.MouseWheelMsg:
		if kp, ok := wheelKey(msg); ok && m.opts.Mouse {
			for range wheelLines {
				m.active().Update(kp)
			}
		}
	}
	return m, nil
}

// View lays out the screen: a header, the wire pane, the help line.
func (m *ReplayModel) View() tea.View {
	v := tea.NewView("")
	v.AltScreen = true
	v.WindowTitle = "mcpi replay"
	if m.opts.Name != "" {
		v.WindowTitle = m.opts.Name
	}
	if m.opts.Mouse {
		v.MouseMode = tea.MouseModeCellMotion
	}
	if m.width <= 0 || m.height <= 0 {
		return v
	}
	st := m.c.Styles
	name, running, ended, tag := "mcpi replay", "reading…", "complete", "read-only"
	if m.opts.Name != "" {
		name = m.opts.Name
	}
	if m.opts.Live {
		running, ended, tag = "live", "ended", ""
	}
	state := st.Running.Render(running)
	switch {
	case m.feedErr != nil:
		state = st.Error.Render("✗ " + common.Line(m.feedErr.Error()))
	case m.ended:
		state = st.OK.Render(ended)
	}
	head := []string{st.HeaderTitle.Render(name), m.viewName(), st.HeaderServer.Render(common.Line(m.opts.Title)),
		fmt.Sprintf("%d events", m.wire.Store().Len()), state}
	if tag != "" {
		head = append(head, st.HeaderDim.Render(tag))
	}
	if !m.notice.Empty() {
		head = append(head, m.notice.View(st, m.width))
	}
	var b strings.Builder
	b.WriteString(common.Truncate(strings.Join(head, st.HeaderDim.Render(" · ")), m.width))
	b.WriteByte('\n')
	b.WriteString(common.Fit(m.active().View(), m.width, max(1, m.height-2)))
	b.WriteByte('\n')
	quit := m.c.Keys.Quit
	quit.SetHelp("q", "quit")
	other := keymap.WithHelp(m.c.Keys.NextTab, "tab", "timeline")
	if m.onTimeline {
		other.SetHelp("tab", "wire")
	}
	b.WriteString(common.Fit(m.help.View(helpKeys{short: append(m.active().ShortHelp(), other, quit)}), m.width, 1))
	v.SetContent(b.String())
	return v
}

// viewName says which view is shown, the other one dim.
func (m *ReplayModel) viewName() string {
	st := m.c.Styles
	if m.onTimeline {
		return st.HeaderDim.Render("wire") + " " + st.HeaderTitle.Render("[timeline]")
	}
	return st.HeaderTitle.Render("[wire]") + " " + st.HeaderDim.Render("timeline")
}

// RunReplay runs the replay TUI until the user quits or ctx ends.
func RunReplay(ctx context.Context, opts ReplayOptions) error {
	m := NewReplay(ctx, opts)
	defer m.Close()
	_, err := runProgram(ctx, m, programIO{In: opts.In, Out: opts.Out, NoColor: opts.NoColor, Width: opts.Width, Height: opts.Height})
	return err
}
