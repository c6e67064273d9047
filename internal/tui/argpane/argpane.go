// Package argpane is the shape the prompts pane and the templates pane
// share: the server's list of items, a form of named strings for each item
// (with completions as you type, kept per item), and the answer of the
// item's call below. A Source says what the items are, how one is called
// and how its answer is shown; the Pane does the rest.
package argpane

import (
	"context"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/tui/argform"
	"github.com/mcpi-dev/mcpi/internal/tui/common"
)

// Words are what a pane calls its items and says of an empty list.
type Words struct {
	Title, ShortTitle string // the tab's title, whole and abbreviated
	Noun              string // one item ("prompt"): the count, "Loading prompts…"
	NoneOffered       string // the server declares no such capability
	NoneListed        string // the server lists none
}

// Source is one kind of item. Its methods other than Invoke and the
// result's run on the UI goroutine; it keeps the answer it shows.
type Source[T any] interface {
	Words() Words
	// Offered reports whether the server declares the capability.
	Offered(c *session.Client) bool
	// List lists every item, every page.
	List(ctx context.Context, c *session.Client) ([]T, error)
	// ListChanged is the notification that reloads the list.
	ListChanged() string
	// Key names an item's form: each item keeps what was typed in it.
	Key(item T) string
	// Row is an item's line in the list, sanitised: its name and the
	// dim description after it.
	Row(item T) (name, desc string)
	// NameWidth is the width of the name column, given the names on screen.
	NameWidth(names []string, width int) int
	// Fields are an item's arguments; form false calls it at once.
	Fields(item T) (fields []argform.Field, form bool)
	// Ref is what completions of an item's arguments refer to.
	Ref(item T) mcp.CompleteReference
	// FormHead is what is shown above the form of item.
	FormHead(item T, values map[string]string, width int) []string
	// Invoke calls item with args; its answer comes back as a message
	// Result takes.
	Invoke(c *session.Client, gen int, item T, args map[string]string, width int) tea.Cmd
	// Result takes the messages of an answer; it reports whether msg was one.
	Result(msg tea.Msg) bool
	// ResultKey handles the list's keys that act on the answer (scrolling
	// it, saving it).
	ResultKey(msg tea.KeyPressMsg) tea.Cmd
	// ResultView is the answer in h rows.
	ResultView(width, height int) []string
	// Help is the list's help: the short line and every key.
	Help() (short []key.Binding, full [][]key.Binding)
}

// Pane is a list of items, a form of each one's arguments, and the answer.
type Pane[T any] struct {
	c      *common.Common
	src    Source[T]
	client *session.Client
	gen    int

	listed common.Listing[T]
	list   common.Cursor

	forms    map[string]*argform.Model
	form     *argform.Model
	formFor  T
	editing  bool
	complete bool // the server offers completions

	notice common.Notice

	width, height int
}

// New returns the pane of src's items.
func New[T any](c *common.Common, src Source[T]) *Pane[T] {
	return &Pane[T]{c: c, src: src, forms: map[string]*argform.Model{}}
}

// Title names the pane in the tab bar.
func (p *Pane[T]) Title() string { return p.src.Words().Title }

// ShortTitle is the title of the abbreviated tab labels.
func (p *Pane[T]) ShortTitle() string {
	if w := p.src.Words(); w.ShortTitle != "" {
		return w.ShortTitle
	}
	return p.Title()
}

// ShowList shows the list (the pane's tab was chosen).
func (p *Pane[T]) ShowList() { p.editing = false }

// InputFocused reports whether the arguments form has the keys.
func (p *Pane[T]) InputFocused() bool { return p.editing }

// Items returns the items listed.
func (p *Pane[T]) Items() []T { return p.listed.Items }

// SetSize sets the pane's size.
func (p *Pane[T]) SetSize(w, h int) {
	p.width, p.height = w, h
	for _, f := range p.forms {
		f.SetWidth(w)
	}
	p.list.Clamp(len(p.listed.Items), p.rows())
}

func (p *Pane[T]) rows() int { return max(1, p.height/2-1) }

// setClient takes a new session and lists its items.
func (p *Pane[T]) setClient(client *session.Client, gen int) tea.Cmd {
	p.client, p.gen = client, gen
	p.complete = false
	if ir := client.InitializeResult(); ir != nil {
		p.complete = len(ir.Capabilities.Completions) > 0
	}
	p.forms, p.form, p.editing = map[string]*argform.Model{}, nil, false
	return p.Reload()
}

// Reload lists the items again, every page.
func (p *Pane[T]) Reload() tea.Cmd {
	if p.client == nil || !p.src.Offered(p.client) {
		return nil
	}
	client := p.client
	return p.listed.Fetch(p.c.Ctx, p.gen, func(ctx context.Context) ([]T, error) { return p.src.List(ctx, client) })
}

// Update handles messages for the pane.
func (p *Pane[T]) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case common.ConnectingMsg, common.DisconnectedMsg:
		p.client = nil
		return nil
	case common.ConnectedMsg:
		return p.setClient(msg.Client, msg.Gen)
	case common.NotificationsMsg:
		if msg.Has(p.src.ListChanged()) {
			return p.Reload()
		}
		return nil
	case common.Loaded[T]:
		if p.listed.Apply(msg, p.gen) {
			p.list.Clamp(len(p.listed.Items), p.rows())
		}
		return nil
	case tea.KeyPressMsg:
		p.notice.Clear()
		if p.editing {
			return p.updateForm(msg)
		}
		return p.updateList(msg)
	}
	if p.src.Result(msg) {
		return nil
	}
	// Completion answers and debounce ticks go to the form they belong to.
	if p.form != nil {
		_, cmd := p.form.Update(msg)
		return cmd
	}
	return nil
}

func (p *Pane[T]) updateList(msg tea.KeyPressMsg) tea.Cmd {
	k := p.c.Keys
	if p.list.Move(p.c, msg, len(p.listed.Items), p.rows()) {
		return nil
	}
	switch {
	case key.Matches(msg, k.Open):
		if item := p.listed.At(p.list.Pos); item != nil {
			return p.open(*item)
		}
		return nil
	case key.Matches(msg, k.Reload):
		return p.Reload()
	}
	return p.src.ResultKey(msg)
}

// open shows item's form, made the first time, or calls an item without
// arguments at once.
func (p *Pane[T]) open(item T) tea.Cmd {
	fields, withForm := p.src.Fields(item)
	if !withForm {
		return p.invoke(item, nil)
	}
	f, ok := p.forms[p.src.Key(item)]
	if !ok {
		var complete argform.CompleteFunc
		if p.complete {
			complete = argform.Completer(p.client, p.src.Ref(item))
		}
		f = argform.New(p.c, fields, complete)
		f.SetWidth(p.width)
		p.forms[p.src.Key(item)] = f
	}
	p.form, p.formFor, p.editing = f, item, true
	return f.Focus()
}

func (p *Pane[T]) updateForm(msg tea.KeyPressMsg) tea.Cmd {
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
	if p.client != nil {
		p.editing = false
	} // else the form stays, with what was typed, for after ctrl+r
	return tea.Batch(cmd, p.invoke(p.formFor, values))
}

func (p *Pane[T]) invoke(item T, args map[string]string) tea.Cmd {
	if p.client == nil {
		p.notice.Failf("not connected (ctrl+r reconnects)")
		return nil
	}
	return p.src.Invoke(p.client, p.gen, item, args, p.width)
}

// ShortHelp is the pane's help line.
func (p *Pane[T]) ShortHelp() []key.Binding {
	if p.editing {
		return p.form.ShortHelp()
	}
	short, _ := p.src.Help()
	return short
}

// FullHelp is every key of the pane.
func (p *Pane[T]) FullHelp() [][]key.Binding {
	if p.editing {
		return p.form.FullHelp()
	}
	_, full := p.src.Help()
	return full
}

// View renders the pane: the list (or the form) on top, the answer below.
func (p *Pane[T]) View() string {
	st := p.c.Styles
	w := p.width
	topH := p.height / 2
	var top []string
	if p.editing {
		top = append(p.src.FormHead(p.formFor, p.form.Values(), w), p.form.View())
		if !p.notice.Empty() {
			top = append(top, p.notice.View(st, w))
		}
	} else {
		top = p.listLines(w)
	}
	topView := common.Fit(strings.Join(top, "\n"), w, topH)
	rule := st.Rule.Render(strings.Repeat("─", max(0, w)))
	bh := p.height - topH - 1
	return lipgloss.JoinVertical(lipgloss.Left, topView, rule, common.Fit(strings.Join(p.src.ResultView(w, bh), "\n"), w, bh))
}

// listLines is the list: a count (or the notice), why it is empty, the rows.
func (p *Pane[T]) listLines(w int) []string {
	st := p.c.Styles
	words := p.src.Words()
	items := p.listed.Items
	head := common.Plural(len(items), words.Noun) + common.Incomplete(p.listed.LoadErr)
	top := []string{p.notice.Over(st, head, w)}
	switch {
	case p.client == nil && len(items) == 0:
		top = append(top, st.Dim.Render("  Not connected."))
	case p.client != nil && !p.src.Offered(p.client):
		top = append(top, st.Dim.Render("  "+words.NoneOffered))
	case p.listed.Loading:
		top = append(top, st.Dim.Render("  Loading "+words.Noun+"s…"))
	case p.listed.LoadErr != nil && len(items) == 0:
		top = append(top, common.Wrap(st.Error.Render("✗ ")+common.Line(p.listed.LoadErr.Error()), w)...)
	case len(items) == 0:
		top = append(top, st.Dim.Render("  "+words.NoneListed))
	}
	var names, descs []string
	for r := 0; r < p.rows() && p.list.Offset+r < len(items); r++ {
		name, desc := p.src.Row(items[p.list.Offset+r])
		names, descs = append(names, name), append(descs, desc)
	}
	nameW := p.src.NameWidth(names, w)
	for r := range names {
		name := common.Pad(names[r], nameW)
		if p.list.Offset+r == p.list.Pos {
			top = append(top, st.Cursor.Render("›")+" "+st.Selected.Render(name)+" "+st.Dim.Render(descs[r]))
		} else {
			top = append(top, "  "+name+" "+st.Dim.Render(descs[r]))
		}
	}
	return top
}
