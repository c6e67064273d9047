// Package checkpane is the Check pane: `mcpi check` run on demand against
// the server the TUI is connected to, with its findings grouped by
// severity, each opened in full with the frame that shows it.
//
// It learns of the connection from the messages the root broadcasts
// (common.ConnectedMsg and the like), and runs the checks with the
// function the front end gave it, which opens connections of its own as
// `mcpi check` does. It imports check for the report's types, never the
// session's workings.
package checkpane

import (
	"context"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/mcpi-dev/mcpi/internal/check"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/tui/common"
)

// RunFunc runs the checks, telling progress what it is checking; it runs
// in a tea.Cmd. live is the TUI's own session (nil while it is not
// connected): a run may borrow it rather than start a second instance of
// a server that allows one.
type RunFunc func(ctx context.Context, live *session.Client, progress func(string)) (*check.Report, error)

// notHere is what the pane says where it cannot check: on a session
// (mcpi connect --session), whose server the daemon holds.
const notHere = "Checks are not available on a session: they need connections of their own to the server, " +
	"and the session's daemon holds its connection. mcpi check TARGET runs them against the server itself."

// Pane is the check pane.
type Pane struct {
	c   *common.Common
	run RunFunc

	connected bool
	live      *session.Client // the TUI's session, while connected
	server    string          // the server's name and version, as it gave them
	gen       int
	reportGen int // the connection the report was made on

	runs     int // numbers the runs, so that a late answer of an old one is dropped
	running  bool
	progress string
	started  time.Time
	steps    chan string
	cancel   context.CancelFunc

	report *check.Report
	err    error

	cursor common.Cursor
	open   int // the finding shown in full, or -1
	scroll common.Scroll

	width, height int
}

type (
	progressMsg struct {
		run  int
		what string
	}
	doneMsg struct {
		run    int
		report *check.Report
		err    error
	}
)

// New returns the check pane; run is nil where the front end cannot check
// (a session: the pane says why).
func New(c *common.Common, run RunFunc) *Pane {
	return &Pane{c: c, run: run, open: -1}
}

// Title names the pane, with the errors and warnings of the last run.
func (p *Pane) Title() string {
	if p.report == nil {
		return "Check"
	}
	return fmt.Sprintf("Check (%d)", p.report.Count(check.Error)+p.report.Count(check.Warning))
}

// ShowList shows the findings (the pane's tab was chosen).
func (p *Pane) ShowList() { p.open = -1 }

// InputFocused is always false.
func (p *Pane) InputFocused() bool { return false }

// SetSize sets the pane's size.
func (p *Pane) SetSize(w, h int) { p.width, p.height = w, h }

// Update handles the connection messages, the run's progress and answer,
// and the pane's keys.
func (p *Pane) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case common.ConnectedMsg:
		p.connected, p.gen, p.live = true, msg.Gen, msg.Client
		p.server = ""
		if msg.Client != nil {
			if init := msg.Client.InitializeResult(); init != nil {
				p.server = strings.TrimSpace(init.ServerInfo.Name + " " + init.ServerInfo.Version)
			}
		}
	case common.ConnectingMsg, common.DisconnectedMsg:
		p.connected, p.live = false, nil
	case progressMsg:
		if msg.run == p.runs && p.running {
			p.progress = msg.what
			return p.wait()
		}
	case doneMsg:
		if msg.run != p.runs {
			return nil
		}
		p.running, p.progress = false, ""
		p.report, p.err, p.reportGen = msg.report, msg.err, p.gen
		p.cursor, p.open, p.scroll = common.Cursor{}, -1, common.Scroll{}
		if p.cancel != nil {
			p.cancel()
		}
	case tea.KeyPressMsg:
		return p.key(msg)
	}
	return nil
}

func (p *Pane) key(msg tea.KeyPressMsg) tea.Cmd {
	k := p.c.Keys
	if p.open >= 0 {
		switch {
		case key.Matches(msg, k.Back):
			p.open = -1
		case key.Matches(msg, k.Copy):
			f := p.report.Findings[p.open]
			if len(f.Evidence) > 0 {
				return common.Copy("the finding's frame", f.Evidence)
			}
		default:
			p.scroll.Move(p.c, msg, len(p.detailLines()), p.height)
		}
		return nil
	}
	n := p.findings()
	switch {
	case key.Matches(msg, k.Reload), key.Matches(msg, k.Open) && n == 0:
		return p.start()
	case key.Matches(msg, k.Open):
		p.open, p.scroll = p.cursor.Pos, common.Scroll{}
	case key.Matches(msg, k.Back) && p.running:
		p.cancel()
	default:
		p.cursor.Move(p.c, msg, n, p.listRows())
	}
	return nil
}

func (p *Pane) findings() int {
	if p.report == nil {
		return 0
	}
	return len(p.report.Findings)
}

// start runs the checks in a Cmd; the progress comes back through a Cmd
// re-armed after each step.
func (p *Pane) start() tea.Cmd {
	if p.running {
		return nil
	}
	if p.run == nil {
		return common.Noticef("%s", notHere)
	}
	p.runs++
	p.running, p.progress, p.started, p.err = true, "starting", p.c.Now(), nil
	ctx, cancel := context.WithCancel(p.c.Ctx)
	p.cancel = cancel
	steps := make(chan string, 16)
	p.steps = steps
	run, fn, live := p.runs, p.run, p.live
	do := func() tea.Msg {
		rep, err := fn(ctx, live, func(what string) {
			select {
			case steps <- what:
			default: // the screen is behind: it shows a later step
			}
		})
		close(steps)
		return doneMsg{run: run, report: rep, err: err}
	}
	return tea.Batch(do, p.wait())
}

// wait returns the next step of the running check.
func (p *Pane) wait() tea.Cmd {
	steps, run := p.steps, p.runs
	return func() tea.Msg {
		what, ok := <-steps
		if !ok {
			return nil
		}
		return progressMsg{run: run, what: what}
	}
}

// ShortHelp is the pane's help line.
func (p *Pane) ShortHelp() []key.Binding {
	k := p.c.Keys
	if p.open >= 0 {
		copyKey := k.Copy
		copyKey.SetHelp("y", "copy frame")
		return []key.Binding{k.Back, k.Down, k.PageDown, copyKey}
	}
	if p.run == nil {
		return nil // no key runs checks where they cannot run
	}
	run := k.Reload
	run.SetHelp("ctrl+l", "run checks")
	open := k.Open
	open.SetHelp("enter", "open finding")
	if p.findings() == 0 {
		open.SetHelp("enter", "run checks")
		return []key.Binding{open, run}
	}
	return []key.Binding{k.Up, k.Down, open, run}
}

// FullHelp is every key of the pane.
func (p *Pane) FullHelp() [][]key.Binding {
	k := p.c.Keys
	if p.run == nil {
		return nil
	}
	return [][]key.Binding{{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom}, p.ShortHelp()}
}

// View renders the pane.
func (p *Pane) View() string {
	if p.open >= 0 && p.report != nil {
		return strings.Join(p.scroll.Window(p.detailLines(), p.height), "\n")
	}
	return strings.Join(p.listLines(), "\n")
}

// head is the lines above the findings.
func (p *Pane) head() []string {
	st := p.c.Styles
	w := max(20, p.width)
	var out []string
	switch {
	case p.running:
		out = append(out, st.Title.Render("Checking")+" "+common.Line(p.progress)+st.Dim.Render(" · "+common.Duration(p.c.Now().Sub(p.started))+" · esc stops"))
	case p.err != nil:
		out = append(out, st.Error.Render("✗ the check failed: ")+common.Line(p.err.Error()))
	case p.report == nil && p.run == nil:
		return common.Wrap(notHere, w)
	case p.report == nil:
		how := "They open connections of their own to the server, as mcpi check does."
		if check.Borrows(p.live) {
			how = "They run on this session, their requests on the Wire pane, rather than start a second " +
				"instance of a server that may allow one; what needs a connection of their own is said not checked."
		}
		out = append(out, common.Wrap("enter or ctrl+l runs the checks of `mcpi check` against this server: rules of the spec "+
			"and of what hosts accept, each with its source. "+how+" They call none of the server's tools: "+
			"only one that does not exist (mcpi-no-such-tool), to see how it is refused.", w)...)
		if !p.connected {
			out = append(out, st.Dim.Render("(the TUI is not connected now: the checks may not reach the server either)"))
		}
		return out
	}
	if r := p.report; r != nil {
		who := common.Line(strings.TrimSpace(r.Server.Name + " " + r.Server.Version))
		line := fmt.Sprintf("%s · %s (%s era)", who, common.Line(r.ProtocolVersion), common.Line(r.Era))
		if r.Transport != "" {
			line += " · " + common.Line(r.Transport)
		}
		line += fmt.Sprintf(" · %d rules · %s", len(r.Rules), common.Duration(time.Duration(r.Duration*float64(time.Millisecond))))
		out = append(out, common.Truncate(line, w))
		counts := fmt.Sprintf("%d error(s), %d warning(s), %d note(s)", r.Count(check.Error), r.Count(check.Warning), r.Count(check.Info))
		if p.reportGen != p.gen {
			counts += st.Dim.Render(" · made on an earlier connection: ctrl+l runs again")
		}
		out = append(out, counts)
		if hosts := hostsLine(r); hosts != "" {
			out = append(out, common.Truncate(hosts, w))
		}
		for _, s := range r.Skipped {
			for _, l := range common.Wrap(common.Line(s), w) {
				out = append(out, st.Dim.Render(l))
			}
		}
	}
	return out
}

// hostsLine sums up the report's host matrix on one line: which hosts
// reject the server, how many take it, whether a strict mode needs a
// rewrite (mcpi check prints the matrix in full).
func hostsLine(r *check.Report) string {
	if len(r.Hosts) == 0 {
		return ""
	}
	var rejected []string
	accepted, rewrite, unknown := 0, 0, 0
	for _, h := range r.Hosts {
		switch h.Verdict {
		case "rejected":
			rejected = append(rejected, h.Host)
		case "accepted":
			accepted++
		case "needs rewrite":
			rewrite++
		default:
			unknown++
		}
	}
	if unknown == len(r.Hosts) {
		return "hosts: unknown (the tools could not be listed)"
	}
	line := "hosts: none rejects"
	if len(rejected) > 0 {
		line = "hosts: rejected by " + strings.Join(rejected, ", ")
	}
	line += fmt.Sprintf(" · %d accept", accepted)
	if rewrite > 0 {
		line += fmt.Sprintf(" · %d strict mode(s) need a rewrite", rewrite)
	}
	return line
}

// listRows is how many rows the findings have.
func (p *Pane) listRows() int { return max(1, p.height-len(p.head())-1) }

// listLines renders the head and the findings around the cursor, each
// group under its severity; only the visible rows are formatted.
func (p *Pane) listLines() []string {
	st := p.c.Styles
	out := p.head()
	if p.report == nil {
		return out
	}
	fs := p.report.Findings
	if len(fs) == 0 {
		return append(out, "", st.Title.Render("No finding: every rule checked holds."))
	}
	out = append(out, "")
	rows := p.listRows()
	// A header takes a row before the first finding of each severity: the
	// window is found over findings, then filled with rows.
	p.cursor.Clamp(len(fs), max(1, rows-3))
	var body []string
	for i := p.cursor.Offset; i < len(fs) && len(body) < rows; i++ {
		if i == p.cursor.Offset || fs[i].Severity != fs[i-1].Severity {
			body = append(body, st.Title.Render(groupTitle(p.report, fs[i].Severity)))
		}
		body = append(body, p.row(i))
	}
	if len(body) > rows {
		body = body[:rows]
	}
	return append(out, body...)
}

func groupTitle(r *check.Report, s check.Severity) string {
	name := map[check.Severity]string{check.Error: "ERRORS", check.Warning: "WARNINGS", check.Info: "NOTES"}[s]
	return fmt.Sprintf("%s (%d)", name, r.Count(s))
}

// row is finding i on one line.
func (p *Pane) row(i int) string {
	st := p.c.Styles
	f := p.report.Findings[i]
	text := common.Line(f.Rule) + "  " + common.Line(f.Subject) + ": " + common.Line(f.Message)
	prefix := "  "
	if i == p.cursor.Pos {
		prefix = "> "
		return st.Selected.Render(common.Pad(prefix+text, max(1, p.width)))
	}
	return common.Truncate(prefix+text, max(1, p.width))
}

// detailLines is the open finding in full.
func (p *Pane) detailLines() []string {
	st := p.c.Styles
	f := p.report.Findings[p.open]
	w := max(20, p.width)
	out := []string{st.Title.Render(common.Line(f.Rule)) + "  " + severity(p, f.Severity)}
	const labelW = 10
	field := func(label, value string) {
		for i, l := range common.Wrap(value, max(10, w-labelW)) {
			head := strings.Repeat(" ", labelW)
			if i == 0 {
				head = st.Dim.Render(common.Pad(label, labelW))
			}
			out = append(out, head+l)
		}
	}
	field("source", common.Line(f.Source))
	field("subject", common.Line(f.Subject))
	out = append(out, "")
	out = append(out, common.Wrap(common.Block(f.Message), w)...)
	if len(f.Evidence) > 0 {
		out = append(out, "", st.Dim.Render("frame"))
		for _, l := range strings.Split(common.PrettyJSON(f.Evidence, st), "\n") {
			out = append(out, common.Wrap(l, w)...)
		}
	}
	return out
}

func severity(p *Pane, s check.Severity) string {
	st := p.c.Styles
	switch s {
	case check.Error:
		return st.Error.Render("error")
	case check.Warning:
		return st.Warning.Render("warning")
	}
	return st.Dim.Render("info")
}
