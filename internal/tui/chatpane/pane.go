// Package chatpane is the Chat pane: a person talks to a model that uses
// the server's tools (internal/chat), the model's answer streamed; each
// tool call the model makes waits in the pane, its arguments editable,
// for the person to allow (ctrl+s), with the edit, or refuse (ctrl+x);
// esc stops the model and the call in flight. ctrl+t shows the tools as
// the chosen host presents them. The model's turns are on the wire (kind
// model) through the Common tap, as the session's frames are.
package chatpane

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/mcpi-dev/mcpi/internal/chat"
	"github.com/mcpi-dev/mcpi/internal/llm"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/tui/common"
	"github.com/mcpi-dev/mcpi/internal/tui/keymap"
)

// Options say which model the pane talks to (nil Model: the pane says
// how to give one) and how.
type Options struct {
	Model   llm.Provider
	Host    string
	Approve chat.Approval
	System  string
	// MaxTurns, MaxTokens, MaxCost: the budgets (chat.Options).
	MaxTurns  int
	MaxTokens int64
	MaxCost   float64
	// Prices price the turns (llm.DefaultPrices when nil).
	Prices llm.Prices
}

// line is one line of the transcript.
type line struct {
	who  string // you, model, tool, note
	text string
	bad  bool
	// rows are the line drawn at width w when its text had n bytes: View
	// wraps a line again only when it grew (the model's streamed text) or
	// the width changed.
	rows []string
	w, n int
}

var prefixes = map[string]string{"you": "you> ", "model": "model> ", "tool": "  ", "note": "· "}

// drawn is l wrapped to width, from its cache when it still holds.
func (p *Pane) drawn(l *line, width int) []string {
	if l.rows != nil && l.w == width && l.n == len(l.text) {
		return l.rows
	}
	st := p.c.Styles
	l.rows = l.rows[:0]
	for _, w := range common.Wrap(prefixes[l.who]+common.Block(l.text), width) {
		if l.bad {
			w = st.Error.Render(w)
		} else if l.who != "model" && l.who != "you" {
			w = st.Dim.Render(w)
		}
		l.rows = append(l.rows, w)
	}
	l.w, l.n = width, len(l.text)
	return l.rows
}

// Pane is the chat pane.
type Pane struct {
	c    *common.Common
	o    Options
	conn *session.Client
	name string // the server's, for the host's prefixes

	runner    *chat.Runner
	presented *chat.Presented
	input     textinput.Model
	lines     []line
	scroll    common.Scroll
	follow    bool

	// running is the Send in flight: its events come on events, stop
	// cancels it.
	running bool
	events  chan tea.Msg
	stop    context.CancelFunc

	// asking is the tool call waiting for the person; args its editor.
	asking *asked
	args   textarea.Model

	// stale says the session changed under the model at work.
	stale bool

	showTools     bool
	notice        common.Notice
	width, height int
}

type asked struct {
	p     chat.Proposal
	reply chan chat.Decision
}

// Messages of a Send, from its goroutine.
type (
	eventMsg    struct{ e chat.Event }
	askMsg      struct{ a *asked }
	sendDoneMsg struct{ res *chat.Result }
	toolsMsg    struct {
		p   *chat.Presented
		err error
	}
)

// New returns the pane.
func New(c *common.Common, o Options) *Pane {
	in := textinput.New()
	in.Placeholder = "a message for the model, enter sends"
	in.Prompt = "you> "
	in.Focus()
	ta := textarea.New()
	ta.ShowLineNumbers = false
	return &Pane{c: c, o: o, input: in, args: ta, follow: true}
}

func (p *Pane) Title() string { return "Chat" }

// InputFocused: the message line or the arguments editor has the keys.
func (p *Pane) InputFocused() bool { return p.o.Model != nil && !p.showTools }

func (p *Pane) SetSize(w, h int) {
	p.width, p.height = w, h
	p.input.SetWidth(max(10, w-8))
	p.args.SetWidth(max(10, w-2))
	p.args.SetHeight(max(3, min(10, h/3)))
}

// CancelShown stops the model at work, if it is: ctrl+c stops it before
// it quits.
func (p *Pane) CancelShown() bool {
	if !p.running {
		return false
	}
	if p.asking != nil {
		p.decide(false)
	}
	p.halt()
	return true
}

// HasCalls reports whether the model is at work.
func (p *Pane) HasCalls() bool { return p.running }

func (p *Pane) ShortHelp() []key.Binding {
	k := p.c.Keys
	switch {
	case p.asking != nil:
		return []key.Binding{keymap.WithHelp(k.Approve, "ctrl+s", "run the call"), keymap.WithHelp(k.Reject, "ctrl+x", "refuse it"), keymap.WithHelp(k.Back, "esc", "stop")}
	case p.running:
		return []key.Binding{keymap.WithHelp(k.Back, "esc", "stop the model")}
	}
	return []key.Binding{keymap.WithHelp(k.Open, "enter", "send"), keymap.WithHelp(k.RawJSON, "ctrl+t", "what the model sees"), k.DetailsUp, k.DetailsDown}
}

func (p *Pane) FullHelp() [][]key.Binding { return [][]key.Binding{p.ShortHelp()} }

// Update handles the pane's messages.
func (p *Pane) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case common.ConnectedMsg:
		// A new session gets a new conversation; the model at work ends its
		// turn on the old one first.
		p.conn, p.stale = msg.Client, true
		if !p.running {
			p.forget()
		}
		if init := msg.Client.InitializeResult(); init != nil {
			p.name = init.ServerInfo.Name
		}
		return nil
	case common.DisconnectedMsg:
		p.conn = nil
		return nil
	case toolsMsg:
		return p.toolsListed(msg)
	case runnerMsg:
		p.runner, p.presented = msg.r, msg.p
		return p.next()
	case eventMsg:
		p.event(msg.e)
		return p.next()
	case askMsg:
		p.asking = msg.a
		b, _ := json.MarshalIndent(json.RawMessage(msg.a.p.Call.Arguments), "", "  ")
		p.args.SetValue(string(b))
		p.args.Focus()
		p.input.Blur()
		what := "the model asks to run"
		if msg.a.p.Destructive {
			what = "the model asks to run a tool that may destroy:"
		}
		p.add("note", fmt.Sprintf("%s %s — ctrl+s runs it (with your edit), ctrl+x refuses it", what, common.Line(msg.a.p.Call.Name)), false)
		return tea.Batch(p.next(), common.Noticef("the model asks to run %s: the Chat pane (alt+c) waits for you", common.Line(msg.a.p.Call.Name)))
	case sendDoneMsg:
		p.finished(msg.res)
		return nil
	case tea.KeyPressMsg:
		return p.key(msg)
	case tea.PasteMsg:
		if p.asking != nil {
			var cmd tea.Cmd
			p.args, cmd = p.args.Update(msg)
			return cmd
		}
		var cmd tea.Cmd
		p.input, cmd = p.input.Update(msg)
		return cmd
	}
	return nil
}

func (p *Pane) key(msg tea.KeyPressMsg) tea.Cmd {
	k := p.c.Keys
	p.notice.Clear()
	if p.o.Model == nil {
		return nil
	}
	switch {
	case p.showTools:
		if key.Matches(msg, k.Back) || key.Matches(msg, k.RawJSON) {
			p.showTools = false
		} else {
			p.scroll.Move(p.c, msg, len(p.toolLines()), p.bodyRows())
		}
		return nil
	case p.asking != nil:
		switch {
		case key.Matches(msg, k.Approve):
			return p.decide(true)
		case key.Matches(msg, k.Reject):
			return p.decide(false)
		case key.Matches(msg, k.Back):
			p.decide(false)
			return p.halt()
		}
		var cmd tea.Cmd
		p.args, cmd = p.args.Update(msg)
		return cmd
	case p.running && key.Matches(msg, k.Back):
		return p.halt()
	case key.Matches(msg, k.RawJSON):
		if p.presented == nil {
			return p.listTools()
		}
		p.showTools, p.scroll = true, common.Scroll{}
		return nil
	case key.Matches(msg, k.DetailsUp):
		p.follow = false
		p.scroll.Offset = max(0, p.scroll.Offset-3)
		return nil
	case key.Matches(msg, k.DetailsDown):
		p.scroll.Offset += 3
		return nil
	case key.Matches(msg, k.Open) && !p.running:
		text := strings.TrimSpace(p.input.Value())
		if text == "" {
			return nil
		}
		p.input.SetValue("")
		return p.send(text)
	}
	var cmd tea.Cmd
	p.input, cmd = p.input.Update(msg)
	return cmd
}

// decide answers the call waiting: allowed with the editor's arguments
// when they changed, refused otherwise.
func (p *Pane) decide(allow bool) tea.Cmd {
	a := p.asking
	if a == nil {
		return nil
	}
	d := chat.Decision{Verdict: chat.Deny, Why: "refused in the Chat pane"}
	if allow {
		edited := strings.TrimSpace(p.args.Value())
		var v map[string]any
		if json.Unmarshal([]byte(edited), &v) != nil {
			p.notice.Failf("the arguments are not a JSON object: fix them, or ctrl+x refuses the call")
			return nil
		}
		d = chat.Decision{Verdict: chat.Allow}
		var was any
		if json.Unmarshal(a.p.Call.Arguments, &was) != nil || !sameJSON(was, v) {
			d.Arguments = json.RawMessage(edited)
		}
	}
	a.reply <- d
	p.asking = nil
	p.args.Blur()
	return p.input.Focus()
}

func sameJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// halt stops the model and the call in flight.
func (p *Pane) halt() tea.Cmd {
	if p.stop != nil {
		p.stop()
	}
	p.add("note", "stopped", false)
	return nil
}

// listTools lists the server's tools and presents them as the host would.
func (p *Pane) listTools() tea.Cmd {
	if p.conn == nil {
		return common.Failuref("not connected (ctrl+r reconnects)")
	}
	c, ctx, host, name := p.conn, p.c.Ctx, p.o.Host, p.name
	return func() tea.Msg {
		tools, err := c.AllTools(ctx)
		if err != nil {
			return toolsMsg{err: err}
		}
		pr, err := chat.Present(host, name, tools)
		return toolsMsg{p: pr, err: err}
	}
}

func (p *Pane) toolsListed(msg toolsMsg) tea.Cmd {
	if msg.err != nil {
		return common.Failuref("listing the tools for the model: %v", msg.err)
	}
	p.presented = msg.p
	p.showTools, p.scroll = true, common.Scroll{}
	return nil
}

// send starts a Send: the runner (made on the first message of a
// session) runs in a goroutine, its events coming back as messages.
func (p *Pane) send(text string) tea.Cmd {
	if p.conn == nil {
		return common.Failuref("not connected (ctrl+r reconnects)")
	}
	p.add("you", text, false)
	p.add("model", "", false)
	p.running, p.follow = true, true
	ctx, cancel := context.WithCancel(p.c.Ctx)
	p.stop = cancel
	// One channel for the runner's life: its callbacks send on it.
	if p.events == nil || p.runner == nil {
		p.events = make(chan tea.Msg, 64)
	}
	events := p.events
	c, cc, o, runner, name := p.conn, p.c, p.o, p.runner, p.name
	go func() {
		defer cancel()
		if runner == nil {
			tools, err := c.AllTools(ctx)
			if err != nil {
				events <- sendDoneMsg{res: &chat.Result{Stop: chat.StopError, Err: err}}
				return
			}
			pr, err := chat.Present(o.Host, name, tools)
			if err != nil {
				events <- sendDoneMsg{res: &chat.Result{Stop: chat.StopError, Err: err}}
				return
			}
			runner = chat.New(chat.Options{Model: o.Model, Prices: o.Prices, Server: chat.SessionServer(c), Tools: tools, Presented: pr, System: o.System,
				Approve: o.Approve, MaxTurns: o.MaxTurns, MaxTokens: o.MaxTokens, MaxCost: o.MaxCost, Tap: cc.Tap, Now: cc.Now,
				OnEvent: func(e chat.Event) { events <- eventMsg{e: e} },
				Ask: func(ctx context.Context, pr chat.Proposal) chat.Decision {
					a := &asked{p: pr, reply: make(chan chat.Decision, 1)}
					select {
					case events <- askMsg{a: a}:
					case <-ctx.Done():
						return chat.Decision{Verdict: chat.Deny, Why: "stopped"}
					}
					select {
					case d := <-a.reply:
						return d
					case <-ctx.Done():
						return chat.Decision{Verdict: chat.Deny, Why: "stopped"}
					}
				}})
			events <- runnerMsg{r: runner, p: pr}
		}
		events <- sendDoneMsg{res: runner.Send(ctx, text)}
	}()
	return p.next()
}

// runnerMsg hands the pane the runner made for the session.
type runnerMsg struct {
	r *chat.Runner
	p *chat.Presented
}

// next waits for the Send's next message.
func (p *Pane) next() tea.Cmd {
	ch := p.events
	if ch == nil {
		return nil
	}
	return func() tea.Msg { return <-ch }
}

func (p *Pane) event(e chat.Event) {
	switch e.Kind {
	case chat.EventText:
		if n := len(p.lines); n > 0 && p.lines[n-1].who == "model" {
			p.lines[n-1].text += e.Text
		} else {
			p.add("model", e.Text, false)
		}
	case chat.EventToolCall:
		// A turn that begins with a call has no text: no empty line for it.
		if n := len(p.lines); n > 0 && p.lines[n-1].who == "model" && p.lines[n-1].text == "" {
			p.lines = p.lines[:n-1]
		}
		p.add("tool", fmt.Sprintf("→ %s %s", e.Call.Name, string(e.Call.Arguments)), false)
	case chat.EventToolResult:
		r := e.Result
		mark := "←"
		if r.Denied {
			mark = "✗ refused"
		} else if r.IsError {
			mark = "← error"
		}
		p.add("tool", fmt.Sprintf("%s %s: %s", mark, r.Tool, r.Text), r.Denied || r.IsError)
	case chat.EventTurn:
		t := e.Turn
		cost := "unpriced"
		if t.Priced {
			cost = fmt.Sprintf("$%.4f", t.Cost)
		}
		p.notice.Set("turn %d · %d in / %d out tokens · first token %s · %s · %s", t.N, t.Usage.InputTokens, t.Usage.OutputTokens,
			t.TimeToFirstToken.Round(time.Millisecond), t.Duration.Round(time.Millisecond), cost)
	}
}

// forget drops the conversation of a session that is gone.
func (p *Pane) forget() {
	p.runner, p.presented, p.events, p.stale = nil, nil, nil, false
}

func (p *Pane) finished(res *chat.Result) {
	p.running, p.stop = false, nil
	if p.stale {
		defer p.forget()
	}
	if p.asking != nil {
		p.asking.reply <- chat.Decision{Verdict: chat.Deny, Why: "stopped"}
		p.asking = nil
	}
	// Drop an empty model line left by a turn that said nothing.
	if n := len(p.lines); n > 0 && p.lines[n-1].who == "model" && p.lines[n-1].text == "" {
		p.lines = p.lines[:n-1]
	}
	switch res.Stop {
	case chat.StopDone:
	case chat.StopError:
		p.add("note", "the model failed: "+res.Err.Error(), true)
	case chat.StopCancelled:
		p.add("note", "stopped", false)
	default:
		p.add("note", "stopped: "+string(res.Stop)+" (a budget)", true)
	}
	if p.runner != nil {
		cost := "unpriced"
		if p.runner.Priced() {
			cost = fmt.Sprintf("$%.4f", p.runner.Cost)
		}
		p.notice.Set("%s · %d in / %d out tokens in all · %s", res.Stop, p.runner.Usage.InputTokens, p.runner.Usage.OutputTokens, cost)
	}
	p.input.Focus()
}

// maxLines bounds the transcript kept.
const maxLines = 5000

func (p *Pane) add(who, text string, bad bool) {
	p.lines = append(p.lines, line{who: who, text: text, bad: bad})
	if len(p.lines) > maxLines {
		p.lines = p.lines[len(p.lines)-maxLines:]
	}
}

// bodyRows is the transcript's height: the pane less its title, the
// status line, the message line and the arguments' editor when shown.
func (p *Pane) bodyRows() int {
	rows := p.height - 3
	if p.asking != nil {
		rows -= p.args.Height() + 1
	}
	return max(1, rows)
}

func (p *Pane) toolLines() []string {
	if p.presented == nil {
		return nil
	}
	host := p.presented.Host
	if host == "" {
		host = "as listed"
	}
	out := []string{fmt.Sprintf("What the model sees (host %s): %d tools · esc closes", host, len(p.presented.Tools))}
	for _, t := range p.presented.Tools {
		out = append(out, "  "+common.Line(t.Name)+"  "+common.Line(t.Description))
	}
	for _, n := range p.presented.Notes {
		out = append(out, "  ! "+common.Line(n))
	}
	return out
}

// View draws the transcript, the call waiting and the message line.
func (p *Pane) View() string {
	st := p.c.Styles
	if p.o.Model == nil {
		// The one thing the pane has to say, wrapped whole to the width.
		text := "No model: start mcpi connect with --model PROVIDER:MODEL (anthropic:, openai:, ollama:, compat: with --model-url; docs/models.md) to talk to one here."
		lines := common.Wrap(text, max(10, p.width))
		for i, l := range lines {
			lines[i] = st.Dim.Render(l)
		}
		return strings.Join(lines, "\n")
	}
	if p.showTools {
		return strings.Join(p.scroll.Window(p.toolLines(), p.height), "\n")
	}
	var rows []string
	for i := range p.lines {
		rows = append(rows, p.drawn(&p.lines[i], max(10, p.width))...)
	}
	n := p.bodyRows()
	if p.follow {
		p.scroll.Offset = max(0, len(rows)-n)
	}
	title := "Chat · " + common.Line(p.o.Model.Name()+":"+p.o.Model.Model())
	if p.o.Host != "" {
		title += " · as " + p.o.Host
	}
	out := []string{st.Title.Render(common.Truncate(title, p.width))}
	win := p.scroll.Window(rows, n)
	out = append(out, win...)
	for i := len(win); i < n; i++ {
		out = append(out, "")
	}
	if p.asking != nil {
		out = append(out, st.Warning.Render(common.Truncate("arguments of "+common.Line(p.asking.p.Call.Name)+" (edit, then ctrl+s; ctrl+x refuses):", p.width)))
		out = append(out, p.args.View())
	}
	switch {
	case !p.notice.Empty():
		out = append(out, p.notice.View(st, p.width))
	case p.running:
		out = append(out, st.Dim.Render("the model is at work · esc stops it"))
	default:
		out = append(out, "")
	}
	return strings.Join(append(out, p.input.View()), "\n")
}
