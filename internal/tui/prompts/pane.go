// Package prompts is the prompts pane: the server's prompts, a form of each
// prompt's arguments with completions as you type, and the messages of
// prompts/get with their roles and every content type.
package prompts

import (
	"context"
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/tui/argform"
	"github.com/mcpi-dev/mcpi/internal/tui/argpane"
	"github.com/mcpi-dev/mcpi/internal/tui/common"
	"github.com/mcpi-dev/mcpi/internal/tui/keymap"
	"github.com/mcpi-dev/mcpi/internal/tui/styles"
	"github.com/mcpi-dev/mcpi/internal/tui/tools"
)

// Pane is the prompts pane.
type Pane = argpane.Pane[mcp.Prompt]

// New returns the prompts pane.
func New(c *common.Common) *Pane { return argpane.New[mcp.Prompt](c, &source{c: c}) }

// source is the prompts: prompts/list, each prompt's arguments, and the
// messages of the last prompts/get.
type source struct {
	c       *common.Common
	got     *got
	running bool
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

type gotMsg struct {
	gen   int
	name  string
	args  map[string]string
	res   *mcp.GetPromptResult
	err   error
	lines []string
}

func (s *source) Words() argpane.Words {
	return argpane.Words{Title: "Prompts", Noun: "prompt",
		NoneOffered: "The server offers no prompts.", NoneListed: "The server lists no prompts."}
}

func (s *source) Offered(c *session.Client) bool {
	ir := c.InitializeResult()
	return ir == nil || ir.Capabilities.Prompts != nil
}

func (s *source) List(ctx context.Context, c *session.Client) ([]mcp.Prompt, error) {
	return c.AllPrompts(ctx)
}

func (s *source) ListChanged() string { return "notifications/prompts/list_changed" }

func (s *source) Key(pr mcp.Prompt) string { return pr.Name }

func (s *source) Row(pr mcp.Prompt) (name, desc string) {
	var args []string
	for _, a := range pr.Arguments {
		n := common.Line(a.Name)
		if a.Required {
			n += "*"
		}
		args = append(args, n)
	}
	desc = "(" + strings.Join(args, ", ") + ")"
	if pr.Description != "" {
		desc += " " + common.Line(pr.Description)
	}
	return common.Line(pr.Name), desc
}

func (s *source) NameWidth(_ []string, w int) int { return min(28, max(10, w/3)) }

// Fields are the prompt's arguments; a prompt without any is got at once.
func (s *source) Fields(pr mcp.Prompt) ([]argform.Field, bool) {
	var fields []argform.Field
	for _, a := range pr.Arguments {
		d := a.Description
		if a.Title != "" && d == "" {
			d = a.Title
		}
		fields = append(fields, argform.Field{Name: a.Name, Description: d, Required: a.Required})
	}
	return fields, len(fields) > 0
}

func (s *source) Ref(pr mcp.Prompt) mcp.CompleteReference {
	return mcp.CompleteReference{Type: "ref/prompt", Name: pr.Name}
}

func (s *source) FormHead(pr mcp.Prompt, _ map[string]string, w int) []string {
	st := s.c.Styles
	t := "Get " + common.Line(pr.Name)
	if pr.Description != "" {
		t += st.Dim.Render(" — " + common.Line(pr.Description))
	}
	return []string{st.Title.Render(common.Truncate(t, w))}
}

func (s *source) Invoke(client *session.Client, gen int, pr mcp.Prompt, args map[string]string, w int) tea.Cmd {
	s.running = true
	s.got = &got{name: pr.Name, args: args}
	ctx, st := s.c.Ctx, s.c.Styles
	return func() tea.Msg {
		res, err := client.GetPrompt(ctx, pr.Name, args, nil)
		msg := gotMsg{gen: gen, name: pr.Name, args: args, res: res, err: err}
		if err == nil {
			msg.lines = layoutMessages(res, st, w)
		}
		return msg
	}
}

func (s *source) Result(msg tea.Msg) bool {
	m, ok := msg.(gotMsg)
	if !ok {
		return false
	}
	s.running = false
	s.got = &got{name: m.name, args: m.args, result: m.res, err: m.err, lines: m.lines}
	if m.err != nil {
		s.got.result = nil
	}
	return true
}

func (s *source) ResultKey(msg tea.KeyPressMsg) tea.Cmd {
	k := s.c.Keys
	switch {
	case s.got == nil:
	case key.Matches(msg, k.DetailsUp):
		s.got.offset = max(0, s.got.offset-3)
	case key.Matches(msg, k.DetailsDown):
		s.got.offset += 3
	}
	return nil
}

func (s *source) Help() ([]key.Binding, [][]key.Binding) {
	k := s.c.Keys
	get := keymap.WithHelp(k.Open, "enter", "get")
	return []key.Binding{get, k.DetailsDown, k.Up, k.Down, k.Reload},
		[][]key.Binding{{get, k.Reload}, {k.Up, k.Down, k.PageUp, k.PageDown, k.DetailsUp, k.DetailsDown}}
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

// ResultView is the last prompts/get in h rows.
func (s *source) ResultView(w, h int) []string {
	st := s.c.Styles
	g := s.got
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
	case s.running:
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
