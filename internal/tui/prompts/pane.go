// Package prompts is the prompts pane: the server's prompts, a form of each
// prompt's arguments with completions as you type, and the messages of
// prompts/get with their roles and every content type.
package prompts

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/tui/argform"
	"github.com/mcpi-dev/mcpi/internal/tui/common"
	"github.com/mcpi-dev/mcpi/internal/tui/styles"
	"github.com/mcpi-dev/mcpi/internal/tui/tools"
)

// Pane is the prompts pane.
type Pane struct {
	c      *common.Common
	client *session.Client
	gen    int

	listed common.Listing[mcp.Prompt]
	list   common.Cursor

	forms    map[string]*argform.Model
	form     *argform.Model
	formFor  mcp.Prompt
	editing  bool
	complete bool

	got     *got
	running bool
	notice  common.Notice

	width, height int
}

// got is one prompts/get and its messages, laid out once.
type got struct {
	name   string
	args   map[string]string
	result *mcp.GetPromptResult
	err    error
	lines  []string
	offset int
}

// New returns the prompts pane.
func New(c *common.Common) *Pane { return &Pane{c: c, forms: map[string]*argform.Model{}} }

// Title names the pane in the tab bar.
func (p *Pane) Title() string { return "Prompts" }

// ShowList shows the list of prompts (the pane's tab was chosen).
func (p *Pane) ShowList() { p.editing = false }

// InputFocused reports whether the arguments form has the keys.
func (p *Pane) InputFocused() bool { return p.editing }

// Items returns the prompts listed.
func (p *Pane) Items() []mcp.Prompt { return p.listed.Items }

// SetSize sets the pane's size.
func (p *Pane) SetSize(w, h int) {
	p.width, p.height = w, h
	for _, f := range p.forms {
		f.SetWidth(w)
	}
	p.list.Clamp(len(p.listed.Items), p.rows())
}

func (p *Pane) rows() int { return max(1, p.height/2-1) }

type (
	gotMsg struct {
		gen   int
		name  string
		args  map[string]string
		res   *mcp.GetPromptResult
		err   error
		lines []string
	}
)

func hasPrompts(c *session.Client) bool {
	ir := c.InitializeResult()
	return ir == nil || ir.Capabilities.Prompts != nil
}

// setClient takes a new session and lists its prompts.
func (p *Pane) setClient(client *session.Client, gen int) tea.Cmd {
	p.client, p.gen = client, gen
	p.complete = false
	if ir := client.InitializeResult(); ir != nil {
		p.complete = len(ir.Capabilities.Completions) > 0
	}
	p.forms, p.form, p.editing = map[string]*argform.Model{}, nil, false
	return p.Reload()
}

// Reload lists the prompts again, every page.
func (p *Pane) Reload() tea.Cmd {
	if p.client == nil || !hasPrompts(p.client) {
		return nil
	}
	return p.listed.Fetch(p.c.Ctx, p.gen, p.client.AllPrompts)
}

func (p *Pane) selected() *mcp.Prompt { return p.listed.At(p.list.Pos) }

// Update handles messages for the pane.
func (p *Pane) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case common.ConnectingMsg, common.DisconnectedMsg:
		p.client = nil
		return nil
	case common.ConnectedMsg:
		return p.setClient(msg.Client, msg.Gen)
	case common.NotificationsMsg:
		if msg.Has("notifications/prompts/list_changed") {
			return p.Reload()
		}
		return nil
	case common.Loaded[mcp.Prompt]:
		if p.listed.Apply(msg, p.gen) {
			p.list.Clamp(len(p.listed.Items), p.rows())
		}
		return nil
	case gotMsg:
		p.running = false
		p.got = &got{name: msg.name, args: msg.args, result: msg.res, err: msg.err, lines: msg.lines}
		if msg.err != nil {
			p.got.result = nil
		}
		return nil
	case tea.KeyPressMsg:
		p.notice.Clear()
		if p.editing {
			return p.updateForm(msg)
		}
		return p.updateList(msg)
	}
	if p.form != nil {
		_, cmd := p.form.Update(msg)
		return cmd
	}
	return nil
}

func (p *Pane) updateList(msg tea.KeyPressMsg) tea.Cmd {
	k := p.c.Keys
	if p.list.Move(p.c, msg, len(p.listed.Items), p.rows()) {
		return nil
	}
	switch {
	case key.Matches(msg, k.Open):
		pr := p.selected()
		if pr == nil {
			return nil
		}
		if len(pr.Arguments) == 0 {
			return p.get(*pr, nil)
		}
		f, ok := p.forms[pr.Name]
		if !ok {
			var fields []argform.Field
			for _, a := range pr.Arguments {
				d := a.Description
				if a.Title != "" && d == "" {
					d = a.Title
				}
				fields = append(fields, argform.Field{Name: a.Name, Description: d, Required: a.Required})
			}
			var complete argform.CompleteFunc
			if p.complete {
				complete = p.completer(pr.Name)
			}
			f = argform.New(p.c, fields, complete)
			f.SetWidth(p.width)
			p.forms[pr.Name] = f
		}
		p.form, p.formFor, p.editing = f, *pr, true
		return f.Focus()
	case key.Matches(msg, k.Reload):
		return p.Reload()
	case key.Matches(msg, k.DetailsUp):
		if p.got != nil {
			p.got.offset = max(0, p.got.offset-3)
		}
	case key.Matches(msg, k.DetailsDown):
		if p.got != nil {
			p.got.offset += 3
		}
	}
	return nil
}

func (p *Pane) completer(name string) argform.CompleteFunc {
	return argform.Completer(p.client, mcp.CompleteReference{Type: "ref/prompt", Name: name})
}

func (p *Pane) updateForm(msg tea.KeyPressMsg) tea.Cmd {
	if key.Matches(msg, p.c.Keys.Back) {
		p.editing = false
		return nil
	}
	values, problem, cmd := p.form.Submit(msg)
	if !problem.Empty() {
		p.notice = problem
		return cmd
	}
	if values == nil {
		return cmd
	}
	p.editing = false
	return tea.Batch(cmd, p.get(p.formFor, values))
}

func (p *Pane) get(pr mcp.Prompt, args map[string]string) tea.Cmd {
	if p.client == nil {
		p.notice.Failf("not connected (ctrl+r reconnects)")
		return nil
	}
	p.running = true
	p.got = &got{name: pr.Name, args: args}
	client, gen, ctx, st, w := p.client, p.gen, p.c.Ctx, p.c.Styles, p.width
	return func() tea.Msg {
		res, err := client.GetPrompt(ctx, pr.Name, args, nil)
		msg := gotMsg{gen: gen, name: pr.Name, args: args, res: res, err: err}
		if err == nil {
			msg.lines = layoutMessages(res, st, w)
		}
		return msg
	}
}

// layoutMessages formats the messages of a prompt with their roles.
func layoutMessages(res *mcp.GetPromptResult, st *styles.Styles, width int) []string {
	w := max(10, width)
	var lines []string
	add := func(s string) { lines = append(lines, common.Wrap(s, w)...) }
	if res.Description != "" {
		add(st.Dim.Render(common.Line(res.Description)))
	}
	if len(res.Messages) == 0 {
		add(st.Dim.Render("(no messages)"))
	}
	for i, m := range res.Messages {
		role := st.Title.Render(fmt.Sprintf("%d %s", i+1, common.Line(m.Role)))
		head, body, binary := tools.RenderContent(m.Content, st)
		if binary {
			head += st.Dim.Render(" (binary)")
		}
		add(role + " " + st.Rule.Render("·") + " " + head)
		for _, l := range common.Wrap(body, w-2) {
			if body != "" {
				lines = append(lines, "  "+l)
			}
		}
	}
	return lines
}

// ShortHelp is the pane's help line.
func (p *Pane) ShortHelp() []key.Binding {
	if p.editing {
		return p.form.ShortHelp()
	}
	k := p.c.Keys
	return []key.Binding{withHelp(k.Open, "enter", "get"), k.DetailsDown, k.Up, k.Down, k.Reload}
}

// FullHelp is every key of the pane.
func (p *Pane) FullHelp() [][]key.Binding {
	if p.editing {
		return p.form.FullHelp()
	}
	k := p.c.Keys
	return [][]key.Binding{
		{withHelp(k.Open, "enter", "get"), k.Reload},
		{k.Up, k.Down, k.PageUp, k.PageDown, k.DetailsUp, k.DetailsDown},
	}
}

func withHelp(b key.Binding, keys, desc string) key.Binding {
	b.SetHelp(keys, desc)
	return b
}

// View renders the pane: the list (or the form) on top, the messages below.
func (p *Pane) View() string {
	st := p.c.Styles
	w := p.width
	topH := p.height / 2
	var top []string
	if p.editing {
		t := "Get " + common.Line(p.formFor.Name)
		if p.formFor.Description != "" {
			t += st.Dim.Render(" — " + common.Line(p.formFor.Description))
		}
		top = append(top, st.Title.Render(common.Truncate(t, w)))
		top = append(top, p.form.View())
		if !p.notice.Empty() {
			top = append(top, p.notice.View(st, w))
		}
	} else {
		head := common.Plural(len(p.listed.Items), "prompt") + common.Incomplete(p.listed.LoadErr)
		top = append(top, p.notice.Over(st, head, w))
		switch {
		case p.client == nil && len(p.listed.Items) == 0:
			top = append(top, st.Dim.Render("  Not connected."))
		case p.client != nil && !hasPrompts(p.client):
			top = append(top, st.Dim.Render("  The server offers no prompts."))
		case p.listed.Loading:
			top = append(top, st.Dim.Render("  Loading prompts…"))
		case p.listed.LoadErr != nil && len(p.listed.Items) == 0:
			top = append(top, common.Wrap(st.Error.Render("✗ ")+common.Line(p.listed.LoadErr.Error()), w)...)
		case len(p.listed.Items) == 0:
			top = append(top, st.Dim.Render("  The server lists no prompts."))
		}
		nameW := min(28, max(10, w/3))
		for r := 0; r < p.rows() && p.list.Offset+r < len(p.listed.Items); r++ {
			i := p.list.Offset + r
			pr := &p.listed.Items[i]
			var args []string
			for _, a := range pr.Arguments {
				n := common.Line(a.Name)
				if a.Required {
					n += "*"
				}
				args = append(args, n)
			}
			desc := "(" + strings.Join(args, ", ") + ")"
			if pr.Description != "" {
				desc += " " + common.Line(pr.Description)
			}
			name := common.Pad(common.Line(pr.Name), nameW)
			if i == p.list.Pos {
				top = append(top, st.Cursor.Render("›")+" "+st.Selected.Render(name)+" "+st.Dim.Render(desc))
			} else {
				top = append(top, "  "+name+" "+st.Dim.Render(desc))
			}
		}
	}
	topView := common.Fit(strings.Join(top, "\n"), w, topH)
	rule := st.Rule.Render(strings.Repeat("─", max(0, w)))
	bh := p.height - topH - 1
	return lipgloss.JoinVertical(lipgloss.Left, topView, rule, common.Fit(strings.Join(p.gotView(w, bh), "\n"), w, bh))
}

func (p *Pane) gotView(w, h int) []string {
	st := p.c.Styles
	g := p.got
	if g == nil {
		return []string{st.Dim.Render("No prompt fetched yet: enter gets the selected one.")}
	}
	head := st.Title.Render("prompts/get ") + common.Line(g.name)
	if len(g.args) > 0 {
		var kv []string
		for _, a := range sortedKeys(g.args) {
			kv = append(kv, common.Line(a)+"="+common.Line(g.args[a]))
		}
		head += st.Dim.Render(" " + strings.Join(kv, " "))
	}
	switch {
	case p.running:
		head += " " + st.Running.Render("⟳ getting…")
	case g.err != nil:
		head += " " + st.Error.Render("✗")
	case g.result != nil:
		head += " " + st.OK.Render(fmt.Sprintf("✓ %d message(s)", len(g.result.Messages)))
	}
	out := []string{common.Truncate(head, w)}
	if g.err != nil {
		out = append(out, common.Wrap(st.Error.Render("✗ ")+common.Line(g.err.Error()), w)...)
	}
	body := max(1, h-len(out))
	g.offset = max(0, min(g.offset, len(g.lines)-body))
	end := min(len(g.lines), g.offset+body)
	return append(out, g.lines[g.offset:end]...)
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}
