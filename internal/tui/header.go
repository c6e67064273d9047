package tui

import (
	"errors"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/transport"
	"github.com/mcpi-dev/mcpi/internal/tui/common"
)

// ConnState is the state of the connection.
type ConnState int

// Connection states.
const (
	Connecting ConnState = iota
	Connected
	Disconnected
)

// link is what the root knows of the connection, for the header: the
// state of the dial, and once up, the session's health as the session
// reports it.
type link struct {
	state  ConnState
	reason error
	client *session.Client
	gen    int
	dials  int // a second dial is a reconnection

	init       *mcp.InitializeResult
	rev, era   string
	trans      string
	health     session.Health
	healthErr  error
	healthNote string

	notifications, warnings int
}

// connecting starts a new dial and returns its generation.
func (l *link) connecting() int {
	l.gen++
	l.dials++
	l.state, l.reason = Connecting, nil
	l.client, l.init = nil, nil
	l.health, l.healthErr = session.HealthUp, nil
	return l.gen
}

// up takes the session a dial brought.
func (l *link) up(c *session.Client) {
	l.state, l.client = Connected, c
	l.init = c.InitializeResult()
	l.rev = c.ProtocolVersion()
	l.era = c.Era()
	l.trans = transport.Describe(c.Conn()).Transport
	l.health, l.healthErr = session.HealthUp, nil
}

// ended records why the connection (or the dial) ended.
func (l *link) ended(err error) {
	l.state, l.reason = Disconnected, err
	l.client = nil
}

// health takes a change of the session's health. A session the server
// forgot and the core renewed is a new session: the panes hear it as a new
// connection and list again.
func (m *Model) health(ev session.HealthEvent) tea.Cmd {
	l := &m.conn
	if l.state != Connected {
		return nil
	}
	was := l.health
	l.health, l.healthErr = ev.Health, ev.Err
	switch {
	case ev.Health == session.HealthUp && was == session.HealthRenewing:
		l.healthNote = ev.Note
		l.gen++
		l.init = l.client.InitializeResult()
		l.rev = l.client.ProtocolVersion()
		note := "the server forgot the session: a new one started, lists reloaded"
		if ev.Note != "" {
			note += " (" + ev.Note + ")"
		}
		m.dropSession("the server forgot the session that asked")
		m.status.Set("%s", note)
		held := m.collectHeld()
		return tea.Batch(m.broadcastInOrder(common.ConnectedMsg{Client: l.client, Gen: l.gen}), m.reapply(l.client, l.gen, held))
	case ev.Health == session.HealthUp && was == session.HealthUnreachable:
		m.status.Set("the server answers again")
	}
	return m.broadcast(common.HealthMsg{Event: ev})
}

// stateView is the header's word on the connection: what it is, why, and
// the way out.
func (m *Model) stateView() (state, why string) {
	st := m.c.Styles
	l := &m.conn
	reconnect := st.HeaderDim.Render(" · ctrl+r reconnects")
	switch l.state {
	case Connecting:
		if l.dials > 1 {
			return st.Connecting.Render("◌ reconnecting…"), ""
		}
		return st.Connecting.Render("◌ connecting…"), ""
	case Disconnected:
		why = ""
		if l.reason != nil && !errors.Is(l.reason, transport.ErrClosed) {
			why = l.reason.Error()
		}
		verb := " · ctrl+r reconnects"
		if l.trans == "stdio" || l.trans == "" && strings.HasPrefix(m.opts.Target, "stdio") {
			verb = " · ctrl+r starts it again"
		}
		return st.Disconnected.Render("✗ disconnected") + st.HeaderDim.Render(verb), why
	}
	why = ""
	if l.healthErr != nil {
		why = l.healthErr.Error()
	}
	switch l.health {
	case session.HealthRenewing:
		return st.Connecting.Render("◌ session lost, starting a new one…"), why
	case session.HealthSessionLost:
		return st.Disconnected.Render("✗ session lost") + st.HeaderDim.Render(" · ctrl+r starts a new session"), why
	case session.HealthUnreachable:
		return st.Disconnected.Render("✗ unreachable") + st.HeaderDim.Render(" · retrying") + reconnect, why
	}
	return st.Connected.Render("● connected"), ""
}

func (m *Model) headerView() string {
	st := m.c.Styles
	w := m.width
	l := &m.conn
	dot := st.HeaderDim.Render(" · ")
	// The state must be seen, then the revision and era, then the
	// transport: the server's name and version give way first.
	state, why := m.stateView()
	right := []string{}
	name := ""
	if l.init != nil {
		si := l.init.ServerInfo
		name = st.HeaderServer.Render(common.Line(si.Name) + " " + common.Line(si.Version))
		if l.trans != "" {
			right = append(right, common.Line(l.trans))
		}
		right = append(right, common.Line(l.rev)+" "+st.HeaderDim.Render(l.era))
	} else if m.opts.Target != "" {
		name = common.Line(m.opts.Target)
	}
	right = append(right, state)
	tail := strings.Join(right, dot)
	head := st.HeaderTitle.Render("mcpi")
	if name != "" {
		if room := w - common.Width(head) - common.Width(tail) - 2*common.Width(dot); room >= 4 {
			head += dot + common.Truncate(name, room)
		}
	}
	line1 := common.Truncate(head+dot+tail, w)

	var badges []string
	if l.init != nil {
		caps := l.init.Capabilities
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
	counts := []string{}
	if n := len(m.queue); n > 0 {
		word := "requests"
		if n == 1 {
			word = "request"
		}
		counts = append(counts, st.BadgeAlert.Render(fmt.Sprintf(" %d %s waiting ", n, word)))
	}
	counts = append(counts, st.HeaderDim.Render(fmt.Sprintf("notifications %d", l.notifications)))
	if l.warnings > 0 {
		counts = append(counts, st.Warning.Render(fmt.Sprintf("warnings %d", l.warnings)))
	}
	left2 := strings.Join(badges, " ")
	if why != "" {
		// Why the connection is down matters more than what it offered.
		left2 = st.Disconnected.Render(common.Line(why))
	}
	r := strings.Join(counts, " ")
	gap := w - common.Width(left2) - common.Width(r)
	var line2 string
	if gap >= 1 {
		line2 = left2 + strings.Repeat(" ", gap) + r
	} else {
		line2 = common.Truncate(left2, max(10, w-common.Width(r)-1)) + " " + r
	}
	return line1 + "\n" + line2
}
