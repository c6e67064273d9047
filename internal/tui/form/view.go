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
	name := common.Line(f.name)
	labelStyle := st.Label
	if focused {
		labelStyle = st.LabelFocused
	}
	label := strings.Repeat("  ", f.depth) + labelStyle.Render(name)
	if f.required {
		label += st.Required.Render("*")
	}
	label = common.Pad(label, lw)

	var widget string
	switch {
	case f.isNull:
		widget = st.Dim.Render("∅ null")
	case f.kind == kindObject:
		widget = st.Dim.Render("{")
		if f.nullable {
			widget += st.Dim.Render("  (ctrl+n: null)")
		}
	case f.kind == kindText, f.kind == kindList, f.kind == kindJSON:
		widget = f.input.View()
	case f.kind == kindItems && f.hasOther:
		widget = common.Line(valueText(f.other))
	case f.kind == kindItems:
		n := len(f.items)
		switch {
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
	case f.kind == kindItem:
		widget = common.Line(f.parent.summary(f.parent.items[f.index]))
	case f.kind == kindBool:
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
	case f.kind == kindEnum:
		label := st.Dim.Render("(unset)")
		if f.choice >= 0 {
			label = common.Line(f.options[f.choice].label)
		}
		widget = "‹ " + label + " ›"
		if focused {
			widget = st.ToggleFocused.Render("‹") + " " + label + " " + st.ToggleFocused.Render("›")
		}
	case f.kind == kindMulti:
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
		widget = strings.Join(parts, " ")
	}
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

// withProblem adds the field's problem line, if it shows one.
func (m *Model) withProblem(f *field, out []string, lw int) []string {
	if p := m.problemText(f); p != "" {
		indent := strings.Repeat(" ", 2+lw+1)
		out = append(out, indent+m.c.Styles.FieldError.Render(common.Truncate("↳ "+common.Line(p), max(4, m.width-len(indent)))))
	}
	return out
}
