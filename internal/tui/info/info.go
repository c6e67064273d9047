// Package info is the Info pane: what the server said of itself (its
// info, capabilities and instructions), the revision and era spoken and how
// they were chosen, the transport and session, and the connection's health.
// It sets itself up from the connection messages the root broadcasts.
package info

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/transport"
	"github.com/mcpi-dev/mcpi/internal/tui/common"
	"github.com/mcpi-dev/mcpi/internal/tui/styles"
)

// Pane is the info pane.
type Pane struct {
	c      *common.Common
	target string

	client   *session.Client
	gen      int
	state    string // connecting, connected, disconnected
	err      error
	since    time.Time
	health   session.HealthEvent
	sessions int // how many sessions this connection has had (renewals)

	scroll common.Scroll
	width  int
	height int
	// ticks numbers the clock that keeps "for 10s" moving; a new one
	// (each connection message) retires the old.
	ticks int
}

// tickMsg redraws the pane's durations once a second.
type tickMsg struct{ seq int }

// tick starts the clock of the durations shown.
func (p *Pane) tick() tea.Cmd {
	seq := p.ticks
	return tea.Tick(time.Second, func(time.Time) tea.Msg { return tickMsg{seq: seq} })
}

// New returns the info pane; target names the server as the user gave it.
func New(c *common.Common, target string) *Pane {
	return &Pane{c: c, target: target, state: "connecting"}
}

// Title names the pane in the tab bar.
func (p *Pane) Title() string { return "Info" }

// InputFocused is always false.
func (p *Pane) InputFocused() bool { return false }

// SetSize sets the pane's size.
func (p *Pane) SetSize(w, h int) { p.width, p.height = w, h }

// Update handles the connection messages and the scroll keys.
func (p *Pane) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case common.ConnectingMsg:
		p.client, p.state, p.err, p.since = nil, "connecting", nil, p.c.Now()
		p.health = session.HealthEvent{}
		// The clock starts with each dial (never from a ConnectedMsg,
		// whose Cmds run in sequence).
		p.ticks++
		return p.tick()
	case common.ConnectedMsg:
		if p.client == msg.Client {
			p.sessions++
			if p.health.Health != session.HealthUp {
				p.since = p.c.Now() // connected again, in a new session
			}
		} else {
			p.sessions = 1
			p.since = p.c.Now()
		}
		p.client, p.gen, p.state = msg.Client, msg.Gen, "connected"
		p.health = session.HealthEvent{}
	case common.DisconnectedMsg:
		p.client, p.state, p.err, p.since = nil, "disconnected", msg.Err, p.c.Now()
	case common.HealthMsg:
		if msg.Event.Health != p.health.Health {
			// The state shown is the health: its time starts with it.
			p.since = p.c.Now()
		}
		p.health = msg.Event
	case tickMsg:
		if msg.seq != p.ticks {
			return nil
		}
		return p.tick()
	case tea.KeyPressMsg:
		k := p.c.Keys
		if key.Matches(msg, k.Copy) && p.client != nil {
			raw := p.client.InitializeResultRaw()
			if len(raw) > 0 {
				return common.Copy("the server's initialize result", raw)
			}
		}
		p.scroll.Move(p.c, msg, len(p.lines()), p.height)
	}
	return nil
}

// ShortHelp is the pane's help line.
func (p *Pane) ShortHelp() []key.Binding {
	k := p.c.Keys
	copyKey := k.Copy
	copyKey.SetHelp("y", "copy initialize result")
	return []key.Binding{k.Up, k.Down, k.PageDown, copyKey}
}

// FullHelp is every key of the pane.
func (p *Pane) FullHelp() [][]key.Binding {
	k := p.c.Keys
	return [][]key.Binding{{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom}, {p.ShortHelp()[3]}}
}

// View renders the pane.
func (p *Pane) View() string {
	return strings.Join(p.scroll.Window(p.lines(), p.height), "\n")
}

// lines lays the pane out for its width.
func (p *Pane) lines() []string {
	sh := &sheet{st: p.c.Styles, w: max(20, p.width)}
	p.connection(sh)
	c := p.client
	if c == nil {
		return sh.out
	}
	p.session(sh, c)
	ir := c.InitializeResult()
	if ir == nil {
		return sh.out
	}
	server(sh, ir)
	capabilities(sh, c.InitializeResultRaw())
	sh.section("Instructions")
	if ir.Instructions == "" {
		sh.out = append(sh.out, sh.st.Dim.Render("(the server gave none)"))
	} else {
		sh.out = append(sh.out, common.Wrap(common.Block(ir.Instructions), sh.w)...)
	}
	return sh.out
}

// sheet is the pane's lines being laid out: sections of labelled fields.
type sheet struct {
	st  *styles.Styles
	w   int
	out []string
}

// labelW is the width of a field's label.
const labelW = 16

func (sh *sheet) section(title string) {
	if len(sh.out) > 0 {
		sh.out = append(sh.out, "")
	}
	sh.out = append(sh.out, sh.st.Title.Render(title))
}

// field is a label and a value, the value wrapped under itself; an empty
// value is left out.
func (sh *sheet) field(label, value string) {
	if value == "" {
		return
	}
	for i, l := range common.Wrap(value, max(10, sh.w-labelW)) {
		head := strings.Repeat(" ", labelW)
		if i == 0 {
			head = sh.st.Dim.Render(common.Pad(label, labelW))
		}
		sh.out = append(sh.out, head+l)
	}
}

// connection is the target and the state of the connection.
func (p *Pane) connection(sh *sheet) {
	st := sh.st
	sh.section("Connection")
	sh.field("target", common.Line(p.target))
	state := p.state
	if p.state == "connected" && p.health.Health != session.HealthUp {
		state = p.health.Health.String()
	}
	sh.field("state", state+st.Dim.Render(" for "+common.Duration(p.c.Now().Sub(p.since))))
	if p.err != nil {
		sh.field("why", common.Line(p.err.Error()))
	}
	if p.health.Err != nil {
		sh.field("last problem", common.Line(p.health.Err.Error())+st.Dim.Render(" at "+p.health.At.Format("15:04:05")))
	}
}

// session is how the session was made: the transport, its ids, the
// revision and the era and why.
func (p *Pane) session(sh *sheet, c *session.Client) {
	d := transport.Describe(c.Conn())
	if d.Transport != "" {
		sh.field("transport", common.Line(d.Transport))
	}
	if d.Sessions {
		id := d.SessionID
		if id == "" {
			id = sh.st.Dim.Render("(none: the server keeps no session)")
		} else {
			id = common.Line(id)
		}
		sh.field("session id", id)
	}
	if p.sessions > 1 {
		sh.field("sessions", fmt.Sprintf("%d (the server forgot the session %s; mcpi started a new one each time)", p.sessions, common.Plural(p.sessions-1, "time")))
	}
	if d.Pid != 0 {
		sh.field("process id", fmt.Sprint(d.Pid))
	}
	sh.field("revision", common.Line(c.ProtocolVersion()))
	sh.field("era", common.Line(c.Era()))
	sh.field("era chosen", common.Line(c.EraReason()))
}

// server is what the server said of itself.
func server(sh *sheet, ir *mcp.InitializeResult) {
	sh.section("Server")
	si := ir.ServerInfo
	sh.field("name", common.Line(si.Name))
	sh.field("title", common.Line(si.Title))
	sh.field("version", common.Line(si.Version))
	sh.field("description", common.Line(si.Description))
	sh.field("website", common.Line(si.WebsiteURL))
	if n := len(si.Icons); n > 0 {
		var srcs []string
		for _, ic := range si.Icons {
			s := ic.Src
			if strings.HasPrefix(s, "data:") {
				s = s[:min(len(s), 30)] + "…"
			}
			srcs = append(srcs, common.Line(s))
		}
		sh.field("icons", strings.Join(srcs, ", "))
	}
}

// capabilities are the capabilities declared, as the server sent them.
func capabilities(sh *sheet, raw json.RawMessage) {
	sh.section("Capabilities")
	var caps struct {
		Capabilities json.RawMessage `json:"capabilities"`
	}
	if json.Unmarshal(raw, &caps) == nil && len(caps.Capabilities) > 0 {
		sh.out = append(sh.out, common.Wrap(common.PrettyJSON(caps.Capabilities, sh.st), sh.w)...)
	} else {
		sh.out = append(sh.out, sh.st.Dim.Render("(none declared)"))
	}
}
