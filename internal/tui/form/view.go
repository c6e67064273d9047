package form

import (
	"strconv"
	"strings"

	"github.com/mcpi-dev/mcpi/internal/tui/common"
)

// footerLines is the room under the fields: the focused field's
// description and the problems of the whole object.
const footerLines = 2

func (m *Model) fieldsHeight() int { return max(1, m.height-footerLines) }

// lineCount is how many lines a field takes: itself and its problems.
func (m *Model) lineCount(f *field) int {
	n := 1
	if f.kind == kindItems {
		n++ // the items' shape
	}
	if m.problemText(f) != "" {
		n++
	}
	return n
}

func (m *Model) problemText(f *field) string {
	if !f.touched && !m.showAll {
		return ""
	}
	if f.convErr != "" {
		return f.convErr
	}
	return strings.Join(f.problems, "; ")
}

// scrollToFocus keeps the focused field in view.
func (m *Model) scrollToFocus() {
	if len(m.flat) == 0 {
		return
	}
	top := 0
	for i := 0; i < m.focus; i++ {
		top += m.lineCount(m.flat[i])
	}
	// Show the object header above a first child.
	start := top
	if m.focus > 0 && m.flat[m.focus-1].kind == kindObject {
		start -= m.lineCount(m.flat[m.focus-1])
	}
	bottom := top + m.lineCount(m.flat[m.focus])
	h := m.fieldsHeight()
	if start < m.offset {
		m.offset = start
	}
	if bottom > m.offset+h {
		m.offset = bottom - h
	}
	m.offset = max(0, m.offset)
}

// View renders the form.
func (m *Model) View() string {
	st := m.c.Styles
	if m.sub != nil {
		return m.itemView()
	}
	if m.raw {
		var b strings.Builder
		title := "Raw JSON arguments"
		if m.schemaErr != nil {
			title += st.Warning.Render("  (the schema does not compile: " + common.Line(m.schemaErr.Error()) + ")")
		} else {
			title += st.Dim.Render("  (ctrl+t back to the form)")
		}
		b.WriteString(common.Truncate(title, m.width))
		b.WriteByte('\n')
		b.WriteString(m.editor.View())
		b.WriteByte('\n')
		if m.rawErr != "" {
			b.WriteString(st.FieldError.Render(common.Truncate("✗ "+common.Line(m.rawErr), m.width)))
		} else if ps := m.visibleRootProblems(); len(ps) > 0 {
			b.WriteString(st.FieldError.Render(common.Truncate("✗ "+common.Line(strings.Join(ps, "; ")), m.width)))
		}
		return b.String()
	}
	if len(m.flat) == 0 {
		return st.Dim.Render("This takes no arguments. Press enter or ctrl+s to send.")
	}
	m.scrollToFocus()
	lw, ww, hw := m.columns()
	h := m.fieldsHeight()
	lines := make([]string, 0, h+footerLines)
	y := 0
	for i, f := range m.flat {
		n := m.lineCount(f)
		if y+n <= m.offset {
			y += n
			continue
		}
		if y >= m.offset+h {
			break
		}
		fl := m.renderField(f, i == m.focus, lw, ww, hw)
		for j, l := range fl {
			if y+j >= m.offset && y+j < m.offset+h {
				lines = append(lines, l)
			}
		}
		y += n
	}
	for len(lines) < h {
		lines = append(lines, "")
	}
	// Footer: where we are, what the focused field is, what is wrong.
	f := m.flat[m.focus]
	desc := f.prop.Description
	if f.prop.Title != "" {
		desc = f.prop.Title + ". " + desc
	}
	pos := ""
	if total := m.totalLines(); total > h {
		pos = st.Dim.Render(" ↕ ") // more fields than fit
	}
	lines = append(lines, pos+st.Dim.Render(common.Truncate(common.Line(desc), m.width-common.Width(pos))))
	if ps := m.visibleRootProblems(); len(ps) > 0 {
		lines = append(lines, st.FieldError.Render(common.Truncate("✗ "+common.Line(strings.Join(ps, "; ")), m.width)))
	} else {
		lines = append(lines, "")
	}
	return strings.Join(lines, "\n")
}

func (m *Model) visibleRootProblems() []string {
	if !m.showAll {
		return nil
	}
	return m.problems
}

func (m *Model) totalLines() int {
	n := 0
	for _, f := range m.flat {
		n += m.lineCount(f)
	}
	return n
}

func (m *Model) renderField(f *field, focused bool, lw, ww, hw int) []string {
	st := m.c.Styles
	marker := "  "
	if focused {
		marker = st.Cursor.Render("›") + " "
	}
	label := m.fieldLabel(f, focused, lw)
	widget := m.widget(f, focused)
	if f.kind == kindItem {
		// An item takes the type hint's room too.
		return m.withProblem(f, []string{marker + label + " " + common.Truncate(widget, ww+hw)}, lw)
	}
	line := marker + label + " " + common.Pad(widget, ww)
	if hw > 0 {
		line += st.TypeHint.Render(common.Truncate(f.hint(), hw))
	}
	out := []string{line}
	if f.kind == kindItems {
		indent := strings.Repeat(" ", 2+2*f.depth+2)
		out = append(out, indent+st.Dim.Render(common.Truncate(common.Line("each item: "+f.shape()), max(4, m.width-len(indent)))))
	}
	return m.withProblem(f, out, lw)
}

// fieldLabel is the field's name, indented by its depth, starred when
// required, padded to lw.
func (m *Model) fieldLabel(f *field, focused bool, lw int) string {
	st := m.c.Styles
	labelStyle := st.Label
	if focused {
		labelStyle = st.LabelFocused
	}
	label := strings.Repeat("  ", f.depth) + labelStyle.Render(common.Line(f.name))
	if f.required {
		label += st.Required.Render("*")
	}
	return common.Pad(label, lw)
}

// widget is what the field holds, drawn by its kind.
func (m *Model) widget(f *field, focused bool) string {
	st := m.c.Styles
	switch {
	case f.isNull:
		return st.Dim.Render("∅ null")
	case f.kind == kindObject:
		widget := st.Dim.Render("{")
		if f.nullable {
			widget += st.Dim.Render("  (ctrl+n: null)")
		}
		return widget
	case f.kind == kindText, f.kind == kindList, f.kind == kindJSON:
		return f.input.View()
	case f.kind == kindItems && f.hasOther:
		return common.Line(valueText(f.other))
	case f.kind == kindItems:
		return m.itemsWidget(f, focused)
	case f.kind == kindItem:
		return common.Line(f.parent.summary(f.parent.items[f.index]))
	case f.kind == kindBool:
		return m.boolWidget(f, focused)
	case f.kind == kindEnum:
		label := st.Dim.Render("(unset)")
		if f.choice >= 0 {
			label = common.Line(f.options[f.choice].label)
		}
		if focused {
			return st.ToggleFocused.Render("‹") + " " + label + " " + st.ToggleFocused.Render("›")
		}
		return "‹ " + label + " ›"
	case f.kind == kindMulti:
		return m.multiWidget(f, focused)
	}
	return ""
}

// itemsWidget counts a list's items.
func (m *Model) itemsWidget(f *field, focused bool) string {
	st := m.c.Styles
	var widget string
	switch n := len(f.items); {
	case n == 0:
		widget = st.Dim.Render("no items")
	case n == 1:
		widget = "1 item"
	default:
		widget = strconv.Itoa(n) + " items"
	}
	if focused {
		widget += st.Dim.Render(" · enter: add one")
	}
	return widget
}

// boolWidget is a check box of three states.
func (m *Model) boolWidget(f *field, focused bool) string {
	st := m.c.Styles
	var widget string
	switch f.boolState {
	case boolTrue:
		widget = "[x] true"
	case boolFalse:
		widget = "[ ] false"
	default:
		widget = st.Dim.Render("[-] unset")
	}
	if focused {
		widget = st.ToggleFocused.Render(widget)
	}
	return widget
}

// multiWidget is a check box per option, the one under the cursor marked.
func (m *Model) multiWidget(f *field, focused bool) string {
	st := m.c.Styles
	var parts []string
	for i, o := range f.options {
		box := "[ ]"
		if f.chosen[i] {
			box = "[x]"
		}
		p := box + " " + common.Line(o.label)
		if focused && i == f.cursor {
			p = st.ToggleFocused.Render(p)
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, " ")
}

// withProblem adds the field's problem line, if it shows one.
func (m *Model) withProblem(f *field, out []string, lw int) []string {
	if p := m.problemText(f); p != "" {
		indent := strings.Repeat(" ", 2+lw+1)
		out = append(out, indent+m.c.Styles.FieldError.Render(common.Truncate("↳ "+common.Line(p), max(4, m.width-len(indent)))))
	}
	return out
}
