package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/mcpi-dev/mcpi/internal/tui/common"
	"github.com/mcpi-dev/mcpi/internal/tui/keymap"
	"github.com/mcpi-dev/mcpi/internal/tui/styles"
)

// PickItem is one choice of the picker.
type PickItem struct {
	Title     string // the server's name
	Transport string // stdio, http, sse, auto
	Detail    string // what it runs or where it is
	Source    string // the file it comes from
	Note      string // "disabled", "unusable: ...", ...
}

// PickProblem is a configuration file that could not be read: it is shown
// under the list, for no server of it is.
type PickProblem struct {
	Path string
	Err  string
}

// ErrNoChoice is returned by Pick when the user leaves without choosing.
var ErrNoChoice = errors.New("no server chosen")

// Pick shows a filterable list of items, and the files that could not be
// read, and returns the index of the item chosen. It uses the In, Out,
// NoColor, Width and Height of opts.
func Pick(ctx context.Context, title string, items []PickItem, problems []PickProblem, opts Options) (int, error) {
	m := newPicker(title, items, !opts.NoColor)
	m.problems = problems
	m.width, m.height = opts.Width, opts.Height
	final, err := runProgram(ctx, m, programIO{In: opts.In, Out: opts.Out, NoColor: opts.NoColor, Width: opts.Width, Height: opts.Height})
	if err != nil {
		return -1, err
	}
	if c := final.(*picker).chosen; c >= 0 {
		return c, nil
	}
	return -1, ErrNoChoice
}

// picker is the model of Pick.
type picker struct {
	c        *common.Common
	title    string
	items    []PickItem
	problems []PickProblem
	filter   string
	filtered []int
	cursor   int
	offset   int
	chosen   int
	help     help.Model

	width, height int
}

func newPicker(title string, items []PickItem, color bool) *picker {
	c := &common.Common{Styles: styles.DefaultStyles(color), Keys: keymap.Default()}
	p := &picker{c: c, title: title, items: items, chosen: -1, help: help.New()}
	p.help.Styles = c.Styles.Help
	p.apply()
	return p
}

func (p *picker) apply() {
	p.filtered = p.filtered[:0]
	f := strings.ToLower(p.filter)
	for i, it := range p.items {
		if f == "" || strings.Contains(strings.ToLower(it.Title+" "+it.Detail+" "+it.Source), f) {
			p.filtered = append(p.filtered, i)
		}
	}
	p.cursor = max(0, min(p.cursor, len(p.filtered)-1))
}

func (p *picker) Init() tea.Cmd { return nil }

func (p *picker) rows() int { return max(1, p.height-3-len(p.problemLines())) }

// maxProblemLines bounds the room the unreadable files take.
const maxProblemLines = 5

// problemLines are the unreadable files under the list, one line each.
func (p *picker) problemLines() []string {
	if len(p.problems) == 0 {
		return nil
	}
	st := p.c.Styles
	lines := []string{st.Warning.Render(common.Truncate(common.Plural(len(p.problems), "configuration file")+" could not be read:", p.width))}
	for i, pr := range p.problems {
		if i == maxProblemLines-2 && len(p.problems) > maxProblemLines-1 {
			lines = append(lines, st.Dim.Render(fmt.Sprintf("  … and %d more (mcpi servers lists them)", len(p.problems)-i)))
			break
		}
		text := pr.Err
		if !strings.Contains(text, pr.Path) {
			text = pr.Path + ": " + text
		}
		lines = append(lines, st.FieldError.Render(common.Truncate("✗ "+common.Line(text), p.width)))
	}
	return lines
}

// columns are the widths of the name, transport and target columns: each
// its widest entry, the target truncated to what the width leaves after
// the source.
func (p *picker) columns() (name, transport, target int) {
	var source int
	for _, it := range p.items {
		name = max(name, common.Width(common.Line(it.Title)))
		transport = max(transport, common.Width(common.Line(it.Transport)))
		target = max(target, common.Width(common.Line(it.Detail)))
		source = max(source, common.Width(common.Line(it.Source)))
	}
	name = min(name, max(8, p.width/4))
	source = min(source, max(10, p.width/3))
	target = max(8, min(target, p.width-2-name-2-transport-2-2-source))
	return name, transport, target
}

func (p *picker) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	k := p.c.Keys
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		p.width, p.height = msg.Width, msg.Height
		p.help.SetWidth(msg.Width)
	case tea.KeyPressMsg:
		switch {
		case key.Matches(msg, k.Quit):
			return p, tea.Quit
		case key.Matches(msg, k.Back):
			if p.filter == "" {
				return p, tea.Quit
			}
			p.filter = ""
		case key.Matches(msg, k.Open):
			if len(p.filtered) > 0 {
				p.chosen = p.filtered[p.cursor]
				return p, tea.Quit
			}
		case key.Matches(msg, k.Up):
			p.cursor--
		case key.Matches(msg, k.Down):
			p.cursor++
		case key.Matches(msg, k.PageUp):
			p.cursor -= p.rows()
		case key.Matches(msg, k.PageDown):
			p.cursor += p.rows()
		case msg.Code == tea.KeyBackspace:
			if r := []rune(p.filter); len(r) > 0 {
				p.filter = string(r[:len(r)-1])
			}
		case msg.Text != "" && msg.Mod&^tea.ModShift == 0:
			p.filter += msg.Text
			p.cursor = 0
		}
		p.apply()
		rows := p.rows()
		if p.cursor < p.offset {
			p.offset = p.cursor
		}
		if p.cursor >= p.offset+rows {
			p.offset = p.cursor - rows + 1
		}
	}
	return p, nil
}

func (p *picker) ShortHelp() []key.Binding {
	k := p.c.Keys
	return []key.Binding{keymap.WithHelp(k.Open, "enter", "connect"), keymap.WithHelp(k.Up, "type", "filter"), k.Up, k.Down, keymap.WithHelp(k.Back, "esc", "leave")}
}

func (p *picker) FullHelp() [][]key.Binding { return [][]key.Binding{p.ShortHelp()} }

func (p *picker) View() tea.View {
	v := tea.NewView("")
	v.AltScreen = true
	if p.width <= 0 || p.height <= 0 {
		return v
	}
	st := p.c.Styles
	lines := []string{st.HeaderTitle.Render("mcpi") + " " + st.Title.Render(p.title)}
	filter := st.Dim.Render("type to filter")
	if p.filter != "" {
		filter = "filter: " + common.Line(p.filter)
	}
	lines = append(lines, fmt.Sprintf("%s %s", filter, st.Dim.Render(fmt.Sprintf("(%d/%d)", len(p.filtered), len(p.items)))))
	nameW, transW, targetW := p.columns()
	for r := 0; r < p.rows() && p.offset+r < len(p.filtered); r++ {
		i := p.offset + r
		it := p.items[p.filtered[i]]
		name := common.Pad(common.Truncate(common.Line(it.Title), nameW), nameW)
		rest := common.Pad(common.Line(it.Transport), transW) + "  " +
			common.Pad(common.Truncate(common.Line(it.Detail), targetW), targetW) +
			st.Dim.Render("  "+common.Line(it.Source))
		if it.Note != "" {
			rest += " " + st.Warning.Render(common.Line(it.Note))
		}
		if i == p.cursor {
			lines = append(lines, common.Truncate(st.Cursor.Render("›")+" "+st.Selected.Render(name)+"  "+rest, p.width))
		} else {
			lines = append(lines, common.Truncate("  "+name+"  "+rest, p.width))
		}
	}
	body := common.Fit(strings.Join(lines, "\n"), p.width, p.height-1-len(p.problemLines()))
	if pl := p.problemLines(); len(pl) > 0 {
		body += "\n" + strings.Join(pl, "\n")
	}
	v.SetContent(body + "\n" + p.help.View(p))
	return v
}
