package resources

import (
	"net/url"
	"regexp"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/tui/argform"
	"github.com/mcpi-dev/mcpi/internal/tui/common"
)

// Templates is the resource templates pane.
type Templates struct {
	c      *common.Common
	client *session.Client
	gen    int

	listed common.Listing[mcp.ResourceTemplate]
	list   common.Cursor

	form     *argform.Model
	formFor  string // the template of the form
	forms    map[string]*argform.Model
	editing  bool
	read     *reading
	reading  bool
	notice   common.Notice
	complete bool // the server offers completions

	width, height int
}

// NewTemplates returns the templates pane.
func NewTemplates(c *common.Common) *Templates {
	return &Templates{c: c, forms: map[string]*argform.Model{}}
}

// Title names the pane in the tab bar.
func (p *Templates) Title() string { return "Templates" }

// ShortTitle is the title of the abbreviated tab labels.
func (p *Templates) ShortTitle() string { return "Tmpl" }

// ShowList shows the list of templates (the pane's tab was chosen).
func (p *Templates) ShowList() { p.editing = false }

// InputFocused reports whether the variables form has the keys.
func (p *Templates) InputFocused() bool { return p.editing }

// Items returns the templates listed.
func (p *Templates) Items() []mcp.ResourceTemplate { return p.listed.Items }

// SetSize sets the pane's size.
func (p *Templates) SetSize(w, h int) {
	p.width, p.height = w, h
	for _, f := range p.forms {
		f.SetWidth(w)
	}
	p.list.Clamp(len(p.listed.Items), p.rows())
}

func (p *Templates) rows() int { return max(1, p.height/2-1) }

// setClient takes a new session and lists its templates.
func (p *Templates) setClient(client *session.Client, gen int) tea.Cmd {
	p.client, p.gen = client, gen
	p.complete = false
	if ir := client.InitializeResult(); ir != nil {
		p.complete = len(ir.Capabilities.Completions) > 0
	}
	p.forms = map[string]*argform.Model{}
	p.form, p.editing = nil, false
	return p.Reload()
}

// Reload lists the templates again, every page.
func (p *Templates) Reload() tea.Cmd {
	if p.client == nil || !hasResources(p.client) {
		return nil
	}
	return p.listed.Fetch(p.c.Ctx, p.gen, p.client.AllResourceTemplates)
}

func (p *Templates) selected() *mcp.ResourceTemplate { return p.listed.At(p.list.Pos) }

// Update handles messages for the pane.
func (p *Templates) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case common.ConnectingMsg, common.DisconnectedMsg:
		p.client = nil
		return nil
	case common.ConnectedMsg:
		return p.setClient(msg.Client, msg.Gen)
	case common.NotificationsMsg:
		// Templates change with the resources.
		if msg.Has("notifications/resources/list_changed") {
			return p.Reload()
		}
		return nil
	case common.Loaded[mcp.ResourceTemplate]:
		if p.listed.Apply(msg, p.gen) {
			p.list.Clamp(len(p.listed.Items), p.rows())
		}
		return nil
	case readMsg:
		if msg.pane != "templates" || p.read == nil || p.read.uri != msg.uri {
			return nil
		}
		p.reading = false
		p.read = &reading{uri: msg.uri, result: msg.res, err: msg.err, lines: msg.lines}
		if msg.err != nil {
			p.read.result = nil
		}
		return nil
	case savedMsg:
		if msg.pane == "templates" && p.read != nil && p.read.uri == msg.uri {
			p.read.saved, p.read.saveE = append(p.read.saved, msg.paths...), msg.err
		}
		return nil
	case tea.KeyPressMsg:
		p.notice.Clear()
		if p.editing {
			return p.updateForm(msg)
		}
		return p.updateList(msg)
	}
	// Completion answers and debounce ticks go to the form they belong to.
	if p.form != nil {
		_, cmd := p.form.Update(msg)
		return cmd
	}
	return nil
}

func (p *Templates) updateList(msg tea.KeyPressMsg) tea.Cmd {
	k := p.c.Keys
	if p.list.Move(p.c, msg, len(p.listed.Items), p.rows()) {
		return nil
	}
	switch {
	case key.Matches(msg, k.Open):
		t := p.selected()
		if t == nil {
			return nil
		}
		f, ok := p.forms[t.URITemplate]
		if !ok {
			var fields []argform.Field
			for _, v := range TemplateVars(t.URITemplate) {
				fields = append(fields, argform.Field{Name: v, Required: true})
			}
			var complete argform.CompleteFunc
			if p.complete {
				complete = p.completer(t.URITemplate)
			}
			f = argform.New(p.c, fields, complete)
			f.SetWidth(p.width)
			p.forms[t.URITemplate] = f
		}
		p.form, p.formFor, p.editing = f, t.URITemplate, true
		return f.Focus()
	case key.Matches(msg, k.Save):
		if p.read != nil && p.read.result != nil {
			return saveCmd(p.c.SaveDir, "templates", p.read)
		}
	case key.Matches(msg, k.Reload):
		return p.Reload()
	case key.Matches(msg, k.DetailsUp):
		if p.read != nil {
			p.read.offset = max(0, p.read.offset-3)
		}
	case key.Matches(msg, k.DetailsDown):
		if p.read != nil {
			p.read.offset += 3
		}
	}
	return nil
}

func (p *Templates) completer(uriTemplate string) argform.CompleteFunc {
	return argform.Completer(p.client, mcp.CompleteReference{Type: "ref/resource", URI: uriTemplate})
}

func (p *Templates) updateForm(msg tea.KeyPressMsg) tea.Cmd {
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
	if p.client == nil {
		p.notice.Failf("not connected (ctrl+r reconnects)")
		return cmd
	}
	uri := Expand(p.formFor, values)
	p.editing = false
	p.reading = true
	p.read = &reading{uri: uri}
	return tea.Batch(cmd, readCmd(p.c.Ctx, p.client, "templates", uri, p.c.Styles, p.width))
}

// ShortHelp is the pane's help line.
func (p *Templates) ShortHelp() []key.Binding {
	if p.editing {
		return p.form.ShortHelp()
	}
	k := p.c.Keys
	return []key.Binding{withHelp(k.Open, "enter", "fill in"), withHelp(k.Save, "s", "save blob"), k.DetailsDown, k.Up, k.Down}
}

// FullHelp is every key of the pane.
func (p *Templates) FullHelp() [][]key.Binding {
	if p.editing {
		return p.form.FullHelp()
	}
	k := p.c.Keys
	return [][]key.Binding{
		{withHelp(k.Open, "enter", "fill in"), withHelp(k.Save, "s", "save blob"), k.Reload},
		{k.Up, k.Down, k.PageUp, k.PageDown, k.DetailsUp, k.DetailsDown},
	}
}

// View renders the pane: the list (or the form) on top, the reading below.
func (p *Templates) View() string {
	st := p.c.Styles
	w := p.width
	var top []string
	topH := p.height / 2
	if p.editing {
		top = append(top, st.Title.Render(common.Truncate("Read "+common.Line(p.formFor), w)))
		top = append(top, st.Dim.Render(common.Truncate("→ "+common.Line(Expand(p.formFor, p.form.Values())), w)))
		top = append(top, p.form.View())
		if !p.notice.Empty() {
			top = append(top, p.notice.View(st, w))
		}
	} else {
		head := common.Plural(len(p.listed.Items), "template") + common.Incomplete(p.listed.LoadErr)
		top = append(top, p.notice.Over(st, head, w))
		switch {
		case p.client == nil && len(p.listed.Items) == 0:
			top = append(top, st.Dim.Render("  Not connected."))
		case p.client != nil && !hasResources(p.client):
			top = append(top, st.Dim.Render("  The server offers no resources."))
		case p.listed.Loading:
			top = append(top, st.Dim.Render("  Loading templates…"))
		case p.listed.LoadErr != nil && len(p.listed.Items) == 0:
			top = append(top, common.Wrap(st.Error.Render("✗ ")+common.Line(p.listed.LoadErr.Error()), w)...)
		case len(p.listed.Items) == 0:
			top = append(top, st.Dim.Render("  The server lists no resource templates."))
		}
		rows := p.rows()
		// The URI template column is as wide as the longest one on screen,
		// up to two thirds of the width: the template is what is filled in.
		nameW := 10
		for r := 0; r < rows && p.list.Offset+r < len(p.listed.Items); r++ {
			nameW = max(nameW, common.Width(common.Line(p.listed.Items[p.list.Offset+r].URITemplate)))
		}
		nameW = min(nameW, max(10, w*2/3))
		for r := 0; r < rows && p.list.Offset+r < len(p.listed.Items); r++ {
			i := p.list.Offset + r
			t := &p.listed.Items[i]
			desc := common.Line(t.Name)
			if t.Description != "" {
				desc += " — " + common.Line(t.Description)
			}
			line := common.Pad(common.Line(t.URITemplate), nameW) + " " + st.Dim.Render(desc)
			if i == p.list.Pos {
				top = append(top, st.Cursor.Render("›")+" "+st.Selected.Render(common.Pad(common.Line(t.URITemplate), nameW))+" "+st.Dim.Render(desc))
			} else {
				top = append(top, "  "+line)
			}
		}
	}
	topView := common.Fit(strings.Join(top, "\n"), w, topH)
	rule := st.Rule.Render(strings.Repeat("─", max(0, w)))
	bottom := common.Fit(strings.Join(viewReading(st, p.read, w, p.height-topH-1, p.reading), "\n"), w, p.height-topH-1)
	return lipgloss.JoinVertical(lipgloss.Left, topView, rule, bottom)
}

var varExpr = regexp.MustCompile(`\{([+#./;?&]?)([^}]*)\}`)

// TemplateVars lists the variables of an RFC 6570 URI template, in order.
func TemplateVars(t string) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range varExpr.FindAllStringSubmatch(t, -1) {
		for _, v := range strings.Split(m[2], ",") {
			v = strings.TrimSuffix(strings.TrimSpace(v), "*")
			if i := strings.IndexByte(v, ':'); i >= 0 {
				v = v[:i]
			}
			if v != "" && !seen[v] {
				seen[v] = true
				out = append(out, v)
			}
		}
	}
	return out
}

// Expand fills an RFC 6570 URI template (levels 1 to 3; prefixes and
// explode modifiers are taken as plain variables).
func Expand(t string, vals map[string]string) string {
	return varExpr.ReplaceAllStringFunc(t, func(expr string) string {
		m := varExpr.FindStringSubmatch(expr)
		op := m[1]
		first, sep, named, ifEmpty, reserved := "", ",", false, "", false
		switch op {
		case "+":
			reserved = true
		case "#":
			first, reserved = "#", true
		case ".":
			first, sep = ".", "."
		case "/":
			first, sep = "/", "/"
		case ";":
			first, sep, named = ";", ";", true
		case "?":
			first, sep, named, ifEmpty = "?", "&", true, "="
		case "&":
			first, sep, named, ifEmpty = "&", "&", true, "="
		}
		var parts []string
		for _, name := range strings.Split(m[2], ",") {
			name = strings.TrimSuffix(strings.TrimSpace(name), "*")
			if i := strings.IndexByte(name, ':'); i >= 0 {
				name = name[:i]
			}
			v, ok := vals[name]
			if !ok {
				continue
			}
			enc := url.PathEscape(v)
			if reserved {
				enc = (&url.URL{Path: v}).EscapedPath()
			}
			switch {
			case named && v == "":
				parts = append(parts, name+ifEmpty)
			case named:
				parts = append(parts, name+"="+enc)
			default:
				parts = append(parts, enc)
			}
		}
		if len(parts) == 0 {
			return ""
		}
		return first + strings.Join(parts, sep)
	})
}
