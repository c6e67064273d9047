// Package argform is a small form of named string fields (prompt arguments,
// URI template variables) that asks the server for completions of the
// focused field as the user types: a debounced Cmd calls the Complete
// function given by the pane, and the newest answer wins.
package argform

import (
	"context"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/tui/common"
)

// Debounce is how long typing must pause before completions are asked for.
const Debounce = 250 * time.Millisecond

// maxShown bounds the suggestions shown under a field.
const maxShown = 8

// Field describes one field.
type Field struct {
	Name        string
	Description string
	Required    bool
}

// CompleteFunc asks for completions of arg with value, given the values of
// the other fields. It runs in a Cmd.
type CompleteFunc func(ctx context.Context, arg, value string, others map[string]string) (values []string, total int, hasMore bool, err error)

type field struct {
	Field
	in textinput.Model
}

// set puts text in the field with the cursor at its end: textinput keeps
// the cursor where the text before it left it, which would put what is
// typed next in the middle of a value set here.
func (f *field) set(text string) {
	f.in.SetValue(text)
	f.in.CursorEnd()
}

// Model is the form.
type Model struct {
	c        *common.Common
	id       int // tells the messages of two forms apart
	fields   []*field
	focus    int
	complete CompleteFunc

	seq     int // bumped at each edit; only the newest answer is shown
	sugg    []string
	suggFor int
	suggSel int // -1: none highlighted
	suggMsg string

	width int
}

var nextID int

// New returns a form of fields; complete may be nil.
func New(c *common.Common, fields []Field, complete CompleteFunc) *Model {
	nextID++
	m := &Model{c: c, id: nextID, complete: complete, suggSel: -1, suggFor: -1}
	for _, f := range fields {
		in := textinput.New()
		in.Prompt = ""
		in.SetStyles(c.Styles.TextInput)
		in.KeyMap.Paste.SetEnabled(false)
		in.KeyMap.AcceptSuggestion.SetEnabled(false)
		in.KeyMap.NextSuggestion.SetEnabled(false)
		in.KeyMap.PrevSuggestion.SetEnabled(false)
		if f.Description != "" {
			in.Placeholder = common.Line(f.Description)
		}
		m.fields = append(m.fields, &field{Field: f, in: in})
	}
	if len(m.fields) > 0 {
		m.fields[0].in.Focus()
	}
	return m
}

// Len is the number of fields.
func (m *Model) Len() int { return len(m.fields) }

// Values returns the values typed, by field name; empty optional fields
// are left out.
func (m *Model) Values() map[string]string {
	out := map[string]string{}
	for _, f := range m.fields {
		if v := f.in.Value(); v != "" || f.Required {
			out[f.Name] = v
		}
	}
	return out
}

// missing names the required fields left empty.
func (m *Model) missing() []string {
	var out []string
	for _, f := range m.fields {
		if f.Required && f.in.Value() == "" {
			out = append(out, f.Name)
		}
	}
	return out
}

// Submit hands msg to the form. When the user asked to send and every
// required field is filled in, values holds what to send; when a required
// field is empty, problem says which.
func (m *Model) Submit(msg tea.Msg) (values map[string]string, problem common.Notice, cmd tea.Cmd) {
	submit, cmd := m.Update(msg)
	if !submit {
		return nil, problem, cmd
	}
	if missing := m.missing(); len(missing) > 0 {
		problem.Failf("fill in %s", strings.Join(missing, ", "))
		return nil, problem, cmd
	}
	return m.Values(), problem, cmd
}

// SetValue sets a field's value.
func (m *Model) SetValue(name, v string) {
	for _, f := range m.fields {
		if f.Name == name {
			f.set(v)
		}
	}
}

// Suggestions returns the suggestions shown for the focused field.
func (m *Model) Suggestions() []string { return m.sugg }

// SetWidth sets the width.
func (m *Model) SetWidth(w int) {
	m.width = w
	for _, f := range m.fields {
		f.in.SetWidth(max(10, w-m.labelWidth()-4))
	}
}

func (m *Model) labelWidth() int {
	n := 8
	for _, f := range m.fields {
		n = max(n, common.Width(common.Line(f.Name))+1)
	}
	return min(n, 24)
}

type (
	debounceMsg struct{ form, seq int }
	suggestMsg  struct {
		form, seq, field int
		values           []string
		total            int
		hasMore          bool
		err              error
	}
)

func (m *Model) focusField(i int) tea.Cmd {
	if len(m.fields) == 0 {
		return nil
	}
	i = (i + len(m.fields)) % len(m.fields)
	m.fields[m.focus].in.Blur()
	m.focus = i
	m.sugg, m.suggSel, m.suggFor, m.suggMsg = nil, -1, -1, ""
	m.seq++
	return tea.Batch(m.fields[i].in.Focus(), m.ask(0))
}

// Focus focuses the first field and asks for its completions.
func (m *Model) Focus() tea.Cmd { return m.focusField(0) }

// ask asks for completions of the focused field after delay.
func (m *Model) ask(delay time.Duration) tea.Cmd {
	if m.complete == nil || len(m.fields) == 0 {
		return nil
	}
	id, seq := m.id, m.seq
	if delay == 0 {
		return m.fetch()
	}
	return tea.Tick(delay, func(time.Time) tea.Msg { return debounceMsg{form: id, seq: seq} })
}

func (m *Model) fetch() tea.Cmd {
	f := m.fields[m.focus]
	others := map[string]string{}
	for _, o := range m.fields {
		if o != f && o.in.Value() != "" {
			others[o.Name] = o.in.Value()
		}
	}
	id, seq, idx, name, value, complete, ctx := m.id, m.seq, m.focus, f.Name, f.in.Value(), m.complete, m.c.Ctx
	return func() tea.Msg {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		vals, total, more, err := complete(cctx, name, value, others)
		return suggestMsg{form: id, seq: seq, field: idx, values: vals, total: total, hasMore: more, err: err}
	}
}

// Update handles a message. submit is true when the user asked to send.
func (m *Model) Update(msg tea.Msg) (submit bool, cmd tea.Cmd) {
	k := m.c.Keys
	switch msg := msg.(type) {
	case debounceMsg:
		if msg.form == m.id && msg.seq == m.seq {
			return false, m.fetch()
		}
		return false, nil
	case suggestMsg:
		if msg.form != m.id || msg.seq != m.seq {
			return false, nil
		}
		m.suggFor, m.suggSel = msg.field, -1
		m.sugg = msg.values
		switch {
		case msg.err != nil:
			m.suggMsg = "completion: " + common.Line(msg.err.Error())
		case msg.hasMore || msg.total > len(msg.values):
			m.suggMsg = fmt.Sprintf("%d of %d", len(msg.values), max(msg.total, len(msg.values)))
			if msg.hasMore {
				m.suggMsg += ", more exist"
			}
		default:
			m.suggMsg = ""
		}
		return false, nil
	case tea.PasteMsg:
		if len(m.fields) == 0 {
			return false, nil
		}
		f := m.fields[m.focus]
		f.set(f.in.Value() + common.Line(msg.Content))
		m.seq++
		return false, m.ask(Debounce)
	case tea.KeyPressMsg:
		switch {
		case key.Matches(msg, k.SuggNext) && len(m.sugg) > 0:
			m.suggSel = (m.suggSel + 1) % min(len(m.sugg), maxShown)
			return false, nil
		case key.Matches(msg, k.SuggPrev) && len(m.sugg) > 0:
			n := min(len(m.sugg), maxShown)
			m.suggSel = (m.suggSel - 1 + n) % n
			return false, nil
		case key.Matches(msg, k.SuggAccept) && m.suggSel >= 0 && m.suggSel < len(m.sugg):
			f := m.fields[m.focus]
			f.set(m.sugg[m.suggSel])
			m.seq++
			m.suggSel = -1
			return false, m.ask(0)
		case key.Matches(msg, k.Submit), key.Matches(msg, k.Open):
			return true, nil
		case key.Matches(msg, k.NextField):
			return false, m.focusField(m.focus + 1)
		case key.Matches(msg, k.PrevField):
			return false, m.focusField(m.focus - 1)
		}
		if len(m.fields) == 0 {
			return false, nil
		}
		f := m.fields[m.focus]
		before := f.in.Value()
		var c tea.Cmd
		f.in, c = f.in.Update(msg)
		if f.in.Value() != before {
			m.seq++
			m.suggSel = -1
			return false, tea.Batch(c, m.ask(Debounce))
		}
		return false, c
	}
	return false, nil
}

// View renders the fields, with the suggestions under the focused one.
func (m *Model) View() string {
	st := m.c.Styles
	lw := m.labelWidth()
	var lines []string
	if len(m.fields) == 0 {
		lines = append(lines, st.Dim.Render("No arguments."))
	}
	for i, f := range m.fields {
		label := common.Line(f.Name)
		if f.Required {
			label += "*"
		}
		ls := st.Label
		gutter := "  "
		if i == m.focus {
			ls = st.LabelFocused
			gutter = st.Cursor.Render("›") + " "
		}
		lines = append(lines, gutter+ls.Render(common.Pad(label, lw))+" "+f.in.View())
		if i != m.focus {
			continue
		}
		if f.Description != "" {
			lines = append(lines, "    "+st.Dim.Render(common.Truncate(common.Line(f.Description), max(10, m.width-4))))
		}
		if m.suggFor == i {
			for j, s := range m.sugg[:min(len(m.sugg), maxShown)] {
				row := "    " + common.Truncate(common.Line(s), max(10, m.width-6))
				if j == m.suggSel {
					row = "  " + st.Cursor.Render("»") + " " + st.Selected.Render(common.Truncate(common.Line(s), max(10, m.width-6)))
				} else {
					row = st.Match.Render(row)
				}
				lines = append(lines, row)
			}
			if m.suggMsg != "" {
				lines = append(lines, "    "+st.Dim.Render(m.suggMsg))
			}
		}
	}
	return strings.Join(lines, "\n")
}

// ShortHelp is the form's help line.
func (m *Model) ShortHelp() []key.Binding {
	k := m.c.Keys
	submit := k.Open
	submit.SetHelp("enter", "send")
	return []key.Binding{submit, k.NextField, k.SuggNext, k.Back}
}

// FullHelp is every key of the form.
func (m *Model) FullHelp() [][]key.Binding {
	k := m.c.Keys
	return [][]key.Binding{{k.Submit, k.NextField, k.PrevField}, {k.SuggNext, k.SuggPrev, k.SuggAccept, k.Back}}
}

// Completer returns a CompleteFunc that asks the server with
// completion/complete about the arguments of ref (a prompt or a resource
// template), passing the other fields as context.
func Completer(client *session.Client, ref mcp.CompleteReference) CompleteFunc {
	return func(ctx context.Context, arg, value string, others map[string]string) ([]string, int, bool, error) {
		if client == nil {
			return nil, 0, false, fmt.Errorf("not connected")
		}
		params := mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteArgument{Name: arg, Value: value}}
		if len(others) > 0 {
			params.Context = &mcp.CompleteContext{Arguments: others}
		}
		r, err := client.Complete(ctx, params)
		if err != nil {
			return nil, 0, false, err
		}
		total := 0
		if r.Completion.Total != nil {
			total = *r.Completion.Total
		}
		return r.Completion.Values, total, r.Completion.HasMore, nil
	}
}
