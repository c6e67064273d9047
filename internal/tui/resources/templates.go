package resources

import (
	"context"
	"net/url"
	"regexp"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/tui/argform"
	"github.com/mcpi-dev/mcpi/internal/tui/argpane"
	"github.com/mcpi-dev/mcpi/internal/tui/common"
	"github.com/mcpi-dev/mcpi/internal/tui/keymap"
)

// Templates is the resource templates pane.
type Templates = argpane.Pane[mcp.ResourceTemplate]

// NewTemplates returns the templates pane.
func NewTemplates(c *common.Common) *Templates {
	return argpane.New[mcp.ResourceTemplate](c, &templates{c: c})
}

// templates is the resource templates: resources/templates/list, each
// template's variables, and the last read of a filled-in template.
type templates struct {
	c       *common.Common
	read    *reading
	reading bool
}

func (s *templates) Words() argpane.Words {
	return argpane.Words{Title: "Templates", ShortTitle: "Tmpl", Noun: "template",
		NoneOffered: "The server offers no resources.", NoneListed: "The server lists no resource templates."}
}

func (s *templates) Offered(c *session.Client) bool { return hasResources(c) }

func (s *templates) List(ctx context.Context, c *session.Client) ([]mcp.ResourceTemplate, error) {
	return c.AllResourceTemplates(ctx)
}

// ListChanged: templates change with the resources.
func (s *templates) ListChanged() string { return "notifications/resources/list_changed" }

func (s *templates) Key(t mcp.ResourceTemplate) string { return t.URITemplate }

func (s *templates) Row(t mcp.ResourceTemplate) (name, desc string) {
	desc = common.Line(t.Name)
	if t.Description != "" {
		desc += " — " + common.Line(t.Description)
	}
	return common.Line(t.URITemplate), desc
}

// NameWidth: the URI template column is as wide as the longest one on
// screen, up to two thirds of the width: the template is what is filled in.
func (s *templates) NameWidth(names []string, w int) int {
	nameW := 10
	for _, n := range names {
		nameW = max(nameW, common.Width(n))
	}
	return min(nameW, max(10, w*2/3))
}

// Fields are the template's variables, each required.
func (s *templates) Fields(t mcp.ResourceTemplate) ([]argform.Field, bool) {
	var fields []argform.Field
	for _, v := range TemplateVars(t.URITemplate) {
		fields = append(fields, argform.Field{Name: v, Required: true})
	}
	return fields, true
}

func (s *templates) Ref(t mcp.ResourceTemplate) mcp.CompleteReference {
	return mcp.CompleteReference{Type: "ref/resource", URI: t.URITemplate}
}

// FormHead names the template and shows the URI it expands to so far.
func (s *templates) FormHead(t mcp.ResourceTemplate, values map[string]string, w int) []string {
	st := s.c.Styles
	return []string{
		st.Title.Render(common.Truncate("Read "+common.Line(t.URITemplate), w)),
		st.Dim.Render(common.Truncate("→ "+common.Line(Expand(t.URITemplate, values)), w)),
	}
}

func (s *templates) Invoke(client *session.Client, _ int, t mcp.ResourceTemplate, values map[string]string, w int) tea.Cmd {
	uri := Expand(t.URITemplate, values)
	s.reading = true
	s.read = &reading{uri: uri}
	return readCmd(s.c.Ctx, client, "templates", uri, s.c.Styles, w)
}

func (s *templates) Result(msg tea.Msg) bool {
	switch msg := msg.(type) {
	case readMsg:
		if msg.pane != "templates" || s.read == nil || s.read.uri != msg.uri {
			return true
		}
		s.reading = false
		s.read = &reading{uri: msg.uri, result: msg.res, err: msg.err, lines: msg.lines}
		if msg.err != nil {
			s.read.result = nil
		}
		return true
	case savedMsg:
		if msg.pane == "templates" && s.read != nil && s.read.uri == msg.uri {
			s.read.saved, s.read.saveE = append(s.read.saved, msg.paths...), msg.err
		}
		return true
	}
	return false
}

func (s *templates) ResultKey(msg tea.KeyPressMsg) tea.Cmd {
	k := s.c.Keys
	switch {
	case s.read == nil:
	case key.Matches(msg, k.Save):
		if s.read.result != nil {
			return saveCmd(s.c.SaveDir, "templates", s.read)
		}
	case key.Matches(msg, k.DetailsUp):
		s.read.offset = max(0, s.read.offset-3)
	case key.Matches(msg, k.DetailsDown):
		s.read.offset += 3
	}
	return nil
}

func (s *templates) ResultView(w, h int) []string {
	return viewReading(s.c.Styles, s.read, w, h, s.reading)
}

func (s *templates) Help() ([]key.Binding, [][]key.Binding) {
	k := s.c.Keys
	fill, save := keymap.WithHelp(k.Open, "enter", "fill in"), keymap.WithHelp(k.Save, "s", "save blob")
	return []key.Binding{fill, save, k.DetailsDown, k.Up, k.Down},
		[][]key.Binding{{fill, save, k.Reload}, {k.Up, k.Down, k.PageUp, k.PageDown, k.DetailsUp, k.DetailsDown}}
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
