// Package form is a form generated from a JSON Schema object: tool
// arguments and elicitation requests alike. Each property becomes a field
// by its shape (text coerced by type, toggle, select, multi-select, list,
// nested object, or JSON text for what a form cannot express); values are
// coerced per field and the whole object is validated with internal/schema
// before it is sent. A raw JSON editor stands in for anything the fields
// cannot say.
package form

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/mcpi-dev/mcpi/internal/schema"
	"github.com/mcpi-dev/mcpi/internal/tui/common"
	"github.com/mcpi-dev/mcpi/internal/tui/keymap"
)

// maxDepth bounds nested objects rendered as fields; deeper ones are JSON.
const maxDepth = 4

// Model is a form over one object schema.
type Model struct {
	c      *common.Common
	schema *schema.Schema
	// schemaErr is set when the schema does not compile: only the raw JSON
	// editor is offered then, and nothing is validated.
	schemaErr error

	fields []*field // the top-level fields
	flat   []*field // every field in display order
	focus  int      // index into flat
	offset int      // first visible line of the field list

	width, height int

	raw      bool
	editor   textarea.Model
	rawErr   string
	problems []string // problems of the whole object not tied to a field
	// showAll shows every problem, touched or not, once a send was tried.
	showAll bool
	// refused is set when a send with problems was refused: the next send
	// goes anyway, unless the user changes something in between.
	refused bool

	// sub is the form of the item being added or edited in an array of
	// objects (subField); subIndex is the item's index, -1 for a new one.
	sub        *Model
	subField   *field
	subIndex   int
	itemNotice common.Notice
}

// New builds a form over the object schema raw (empty means {}). A schema
// that does not compile still gives a form: the raw JSON editor.
func New(c *common.Common, raw json.RawMessage) *Model {
	m := &Model{c: c, editor: newEditor(c)}
	s, err := schema.Compile(raw, schema.AssertFormats())
	if err != nil {
		m.schemaErr = err
		m.raw = true
		m.editor.SetValue("{}")
		m.editor.Focus()
		return m
	}
	m.schema = s
	m.fields = buildFields(c, s, objectProperties(raw), nil, 0)
	m.flatten()
	for _, f := range m.flat {
		if f.prop.HasDefault {
			f.setValue(f.prop.Default, true)
		}
	}
	m.flatten()
	m.focusField(m.firstFocusable())
	m.revalidate()
	return m
}

func newEditor(c *common.Common) textarea.Model {
	ed := textarea.New()
	ed.SetStyles(c.Styles.TextArea)
	ed.ShowLineNumbers = false
	ed.Prompt = ""
	ed.CharLimit = 0
	ed.MaxHeight = 0
	// These keys belong to the form and the TUI.
	ed.KeyMap.TransposeCharacterBackward.SetEnabled(false)
	ed.KeyMap.SelectAll.SetEnabled(false)
	ed.KeyMap.Paste.SetEnabled(false)
	ed.KeyMap.LineNext.SetKeys("down")
	ed.KeyMap.LinePrevious.SetKeys("up")
	return ed
}

// objectProperties returns the raw text of each property of an object
// schema, so that nested objects keep the order they are written in.
func objectProperties(raw json.RawMessage) map[string]json.RawMessage {
	var top struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	_ = json.Unmarshal(raw, &top)
	return top.Properties
}

func buildFields(c *common.Common, s *schema.Schema, raws map[string]json.RawMessage, path []string, depth int) []*field {
	var out []*field
	for _, p := range s.Properties() {
		f := &field{
			name:     p.Name,
			path:     append(append([]string(nil), path...), p.Name),
			prop:     p,
			depth:    depth,
			required: p.Required,
			choice:   -1,
		}
		base, nullable := baseTypes(p.Types)
		f.nullable = nullable
		opts := optionsOf(p.Raw)
		single := ""
		if len(base) == 1 {
			single = base[0]
		}
		switch {
		case len(opts) > 0 && (len(base) == 0 || isScalar(single)):
			f.kind = kindEnum
			f.options = opts
		case single == "boolean":
			f.kind = kindBool
		case single == "object":
			f.kind = kindJSON
			if _, ok := p.Raw["properties"]; ok && depth+1 < maxDepth {
				if sub, err := schema.Compile(raws[p.Name], schema.AssertFormats()); err == nil {
					f.kind = kindObject
					f.children = buildFields(c, sub, objectProperties(raws[p.Name]), f.path, depth+1)
				}
			}
		case single == "array":
			f.kind = kindJSON
			items, _ := p.Raw["items"].(map[string]any)
			if itemRaw, itemSchema, ok := objectItems(raws[p.Name], items, depth); ok {
				f.kind = kindItems
				f.itemRaw, f.itemSchema = itemRaw, itemSchema
			} else if io := optionsOf(items); len(io) > 0 {
				f.kind = kindMulti
				f.options = io
				f.chosen = make([]bool, len(io))
			} else if it := typesOf(items); len(it) == 1 && isScalar(it[0]) {
				f.kind = kindList
				f.item = schema.Property{Name: p.Name, Types: it, Raw: items}
			}
		case len(base) > 1 && !allScalar(base):
			f.kind = kindJSON
		default:
			f.kind = kindText
		}
		if f.kind == kindText || f.kind == kindList || f.kind == kindJSON {
			f.input = newInput(c, f)
		}
		out = append(out, f)
	}
	return out
}

func allScalar(types []string) bool {
	for _, t := range types {
		if !isScalar(t) {
			return false
		}
	}
	return true
}

func newInput(c *common.Common, f *field) textinput.Model {
	in := textinput.New()
	in.Prompt = ""
	in.SetStyles(c.Styles.TextInput)
	in.KeyMap.Paste.SetEnabled(false)
	in.KeyMap.AcceptSuggestion.SetEnabled(false)
	in.KeyMap.NextSuggestion.SetEnabled(false)
	in.KeyMap.PrevSuggestion.SetEnabled(false)
	switch f.kind {
	case kindList:
		in.Placeholder = "comma, separated"
	case kindJSON:
		in.Placeholder = "{…} or […]"
	}
	return in
}

func (m *Model) flatten() {
	m.flat = m.flat[:0]
	var walk func([]*field)
	walk = func(fs []*field) {
		for _, f := range fs {
			m.flat = append(m.flat, f)
			if f.kind == kindObject && !f.isNull {
				walk(f.children)
			}
			if f.kind == kindItems && !f.isNull {
				m.flat = append(m.flat, f.itemFields()...)
			}
		}
	}
	walk(m.fields)
}

func (m *Model) firstFocusable() int {
	for i, f := range m.flat {
		if f.focusable() {
			return i
		}
	}
	return 0
}

// Empty reports whether the schema has no properties.
func (m *Model) Empty() bool { return m.schemaErr == nil && len(m.fields) == 0 }

// Raw reports whether the raw JSON editor is showing.
func (m *Model) Raw() bool { return m.raw }

// SchemaError says why the schema did not compile, if it did not.
func (m *Model) SchemaError() error { return m.schemaErr }

// SetSize sets the size of the form.
func (m *Model) SetSize(w, h int) {
	m.width, m.height = w, h
	if m.sub != nil {
		m.sub.SetSize(w, max(3, h-itemHeaderLines))
	}
	m.editor.SetWidth(max(10, w))
	m.editor.SetHeight(max(3, h-2))
	m.layoutInputs()
	m.scrollToFocus()
}

func (m *Model) layoutInputs() {
	lw, ww, _ := m.columns()
	_ = lw
	for _, f := range m.flat {
		if f.kind == kindText || f.kind == kindList || f.kind == kindJSON {
			f.input.SetWidth(max(4, ww-1))
		}
	}
}

// columns returns the widths of the label, the widget and the type hint.
func (m *Model) columns() (label, widget, hint int) {
	label = 8
	for _, f := range m.flat {
		w := 2*f.depth + common.Width(f.name) + 1
		if w > label {
			label = w
		}
	}
	label = min(label, max(10, m.width/3))
	if m.width >= 64 {
		hint = min(20, m.width/5)
	}
	widget = max(8, m.width-2-label-1-hint)
	return label, widget, hint
}

// SetValues sets the fields from an object, as from a previous call.
func (m *Model) SetValues(v map[string]any) {
	if m.schema == nil {
		b, _ := json.MarshalIndent(v, "", "  ")
		m.editor.SetValue(string(b))
		return
	}
	for _, f := range m.fields {
		x, ok := v[f.name]
		f.setValue(x, ok)
	}
	m.flatten()
	m.revalidate()
}

// setText puts text in the field's input with the cursor at its end:
// textinput keeps the cursor where the text before it left it, which
// would put what is typed next in the middle of a value set here.
func (f *field) setText(text string) {
	f.input.SetValue(text)
	f.input.CursorEnd()
}

func (f *field) setValue(v any, present bool) {
	f.isNull = false
	f.convErr = ""
	if present && v == nil && f.nullable {
		f.isNull = true
		return
	}
	switch f.kind {
	case kindText, kindList, kindJSON:
		text := ""
		if present {
			switch f.kind {
			case kindText:
				text = valueText(v)
			case kindList:
				text = listText(v)
			default:
				b, _ := json.Marshal(v)
				text = string(b)
			}
		}
		f.setText(text)
	case kindBool:
		f.boolState = boolUnset
		if b, ok := v.(bool); ok && present {
			f.boolState = boolFalse
			if b {
				f.boolState = boolTrue
			}
		}
	case kindEnum:
		f.choice = -1
		if present {
			for i, o := range f.options {
				if equalValues(o.value, v) {
					f.choice = i
				}
			}
		}
	case kindMulti:
		for i := range f.chosen {
			f.chosen[i] = false
		}
		if items, ok := v.([]any); ok && present {
			for _, it := range items {
				for i, o := range f.options {
					if equalValues(o.value, it) {
						f.chosen[i] = true
					}
				}
			}
		}
	case kindItems:
		f.items, f.other, f.hasOther = nil, nil, false
		if present {
			if arr, ok := v.([]any); ok {
				f.items = append([]any{}, arr...)
			} else {
				f.other, f.hasOther = v, true
			}
		}
	case kindObject:
		obj, _ := v.(map[string]any)
		for _, c := range f.children {
			x, ok := obj[c.name]
			if !ok && !present && c.prop.HasDefault {
				c.setValue(c.prop.Default, true)
				continue
			}
			c.setValue(x, ok)
		}
	}
}

// value returns what the field holds: present is false when the field is
// left out of the object.
func (f *field) value() (v any, present bool, err error) {
	if f.isNull {
		return nil, true, nil
	}
	switch f.kind {
	case kindText:
		return f.textValue()
	case kindList:
		return f.listValue()
	case kindJSON:
		t := strings.TrimSpace(f.input.Value())
		if t == "" {
			return nil, false, nil
		}
		v, err := parseJSON(t)
		if err != nil {
			return nil, false, fmt.Errorf("not JSON: %v", err)
		}
		return v, true, nil
	case kindBool:
		switch f.boolState {
		case boolTrue:
			return true, true, nil
		case boolFalse:
			return false, true, nil
		}
		return nil, false, nil
	case kindEnum:
		if f.choice < 0 {
			return nil, false, nil
		}
		return f.options[f.choice].value, true, nil
	case kindMulti:
		return f.multiValue()
	case kindItems:
		if f.hasOther {
			return f.other, true, nil
		}
		if len(f.items) == 0 && !f.touched && !f.required && !f.prop.HasDefault {
			return nil, false, nil
		}
		return append([]any{}, f.items...), true, nil
	case kindObject:
		return f.objectValue()
	}
	return nil, false, nil
}

// textValue is a text field's value, converted to the property's type.
func (f *field) textValue() (any, bool, error) {
	t := f.input.Value()
	if t == "" {
		return nil, false, nil
	}
	v, err := f.prop.Coerce(t)
	if err != nil {
		// What does not convert goes as the text typed: the send is
		// refused once for it, and a send anyway sends what was typed.
		return t, true, err
	}
	return v, true, nil
}

// listValue is a list field's value: a JSON array as typed, or items
// separated by commas or lines, each converted to the items' type.
func (f *field) listValue() (any, bool, error) {
	t := strings.TrimSpace(f.input.Value())
	if t == "" {
		return nil, false, nil
	}
	if strings.HasPrefix(t, "[") {
		v, err := parseJSON(t)
		if err != nil {
			return nil, false, fmt.Errorf("not a JSON array: %v", err)
		}
		return v, true, nil
	}
	items := []any{}
	for _, part := range strings.FieldsFunc(t, func(r rune) bool { return r == ',' || r == '\n' }) {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		x, err := f.item.Coerce(part)
		if err != nil {
			return nil, false, err
		}
		items = append(items, x)
	}
	return items, true, nil
}

// multiValue is the options chosen; left out when nothing was ever chosen
// in an optional field without a default.
func (f *field) multiValue() (any, bool, error) {
	out := []any{}
	for i, c := range f.chosen {
		if c {
			out = append(out, f.options[i].value)
		}
	}
	if len(out) == 0 && !f.touched && !f.required && !f.prop.HasDefault {
		return nil, false, nil
	}
	return out, true, nil
}

// objectValue is the object of the children's values, with the first
// child's error; an optional object with nothing in it is left out.
func (f *field) objectValue() (any, bool, error) {
	obj := map[string]any{}
	var firstErr error
	for _, c := range f.children {
		v, ok, err := c.value()
		if err != nil && firstErr == nil {
			firstErr = err
		}
		if ok {
			obj[c.name] = v
		}
	}
	if len(obj) == 0 && !f.required {
		return nil, false, firstErr
	}
	return obj, true, firstErr
}

// Value returns the object the form holds. The error says which field does
// not convert; validation against the schema is Validate's.
func (m *Model) Value() (map[string]any, error) {
	if m.raw {
		return m.rawValue()
	}
	out := map[string]any{}
	var errs []string
	for _, f := range m.flat {
		if f.kind == kindObject {
			continue
		}
		if _, _, err := f.value(); err != nil {
			errs = append(errs, f.pointer()[1:]+": "+err.Error())
		}
	}
	for _, f := range m.fields {
		if v, ok, _ := f.value(); ok {
			out[f.name] = v
		}
	}
	if len(errs) > 0 {
		return out, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return out, nil
}

func (m *Model) rawValue() (map[string]any, error) {
	t := strings.TrimSpace(m.editor.Value())
	if t == "" {
		return map[string]any{}, nil
	}
	v, err := parseJSON(t)
	if err != nil {
		return nil, fmt.Errorf("not JSON: %v", err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the arguments must be a JSON object")
	}
	return obj, nil
}

// Validate checks the value against the schema, shows every problem (also
// in fields not edited yet) and returns them; nil when the value is valid.
func (m *Model) Validate() []string {
	m.showAll = true
	return m.revalidate()
}

// Send decides what a send does, for every front end of the form alike.
// err says the raw JSON text is not an object: nothing can be sent. A value
// with problems is refused once (refused holds them; they show on their
// fields); asking again with nothing changed in between sends it anyway,
// since a debugger must be able to send what a server should reject.
func (m *Model) Send() (v map[string]any, refused []string, err error) {
	if m.sub != nil {
		// An item being edited goes into its list first.
		m.saveItem()
		if m.sub != nil {
			return nil, []string{"the item being edited: " + m.itemNotice.Text()}, nil
		}
	}
	v, err = m.Value()
	problems := m.Validate()
	if err != nil && m.raw {
		return nil, nil, err
	}
	if len(problems) > 0 && !m.refused {
		m.refused = true
		return nil, problems, nil
	}
	m.refused = false
	return v, nil, nil
}

// Refusal is the notice of a refused send: how many problems, the key that
// sends anyway (again, doing verb) and the first problem.
func Refusal(problems []string, again, verb string) common.Notice {
	s := fmt.Sprintf("%s: press %s again to %s anyway", common.Plural(len(problems), "problem"), again, verb)
	if len(problems) > 0 {
		s += " · " + problems[0]
	}
	if n := len(problems) - 1; n == 1 {
		s += " (1 more on the form)"
	} else if n > 1 {
		s += fmt.Sprintf(" (%d more on the form)", n)
	}
	var notice common.Notice
	notice.Failf("%s", s)
	return notice
}

// revalidate converts and validates the current value and attaches each
// problem to its field.
func (m *Model) revalidate() []string {
	m.problems = nil
	m.rawErr = ""
	for _, f := range m.flat {
		f.problems = nil
		f.convErr = ""
		if f.kind == kindObject {
			continue
		}
		if _, _, err := f.value(); err != nil {
			f.convErr = err.Error()
		}
	}
	v, err := m.Value()
	var all []string
	if err != nil {
		if m.raw {
			m.rawErr = err.Error()
		}
		all = append(all, err.Error())
		if m.raw {
			return all
		}
	}
	if m.schema == nil {
		return all
	}
	for _, p := range m.schema.Validate(v) {
		if m.attach(p) {
			// The field's text could not be converted, so it was left
			// out: the schema's complaint is that same problem, counted
			// once, as the field shows it.
			continue
		}
		all = append(all, p.String())
	}
	return all
}

var quoted = regexp.MustCompile(`'([^']*)'`)

// attach puts a problem on the field it is about: "missing property 'x'" on
// field x, others on the deepest field whose path starts the problem's. It
// reports whether every field it is about has a conversion error already
// (the value left out for it is what the schema complains of).
func (m *Model) attach(p schema.Problem) (converted bool) {
	if strings.HasPrefix(p.Message, "missing propert") {
		placed, allConv := false, true
		for _, q := range quoted.FindAllStringSubmatch(p.Message, -1) {
			ptr := p.Path + "/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(q[1])
			if f := m.byPointer(ptr); f != nil {
				f.problems = append(f.problems, "required")
				placed = true
				allConv = allConv && f.convErr != ""
			} else {
				allConv = false
			}
		}
		if placed {
			return allConv
		}
	}
	var best *field
	for _, f := range m.flat {
		ptr := f.pointer()
		if p.Path == ptr || strings.HasPrefix(p.Path, ptr+"/") {
			if best == nil || len(ptr) > len(best.pointer()) {
				best = f
			}
		}
	}
	if best == nil {
		m.problems = append(m.problems, p.String())
		return false
	}
	msg := p.Message
	if rest := strings.TrimPrefix(p.Path, best.pointer()); rest != "" {
		msg = rest[1:] + ": " + msg
	}
	best.problems = append(best.problems, msg)
	return best.convErr != ""
}

func (m *Model) byPointer(ptr string) *field {
	for _, f := range m.flat {
		if f.pointer() == ptr {
			return f
		}
	}
	return nil
}

// ToggleRaw switches between the fields and the raw JSON editor, carrying
// the value across. Leaving the editor with text that is not an object of
// the schema's shape keeps the editor open with the error.
func (m *Model) ToggleRaw() {
	if m.schemaErr != nil {
		return
	}
	if !m.raw {
		v, _ := m.Value()
		b, _ := json.MarshalIndent(v, "", "  ")
		m.editor.SetValue(string(b))
		m.raw = true
		m.blurAll()
		m.editor.Focus()
		m.revalidate()
		return
	}
	v, err := m.rawValue()
	if err != nil {
		m.rawErr = err.Error()
		return
	}
	m.raw = false
	m.editor.Blur()
	m.SetValues(v)
	m.focusField(m.focus)
}

func (m *Model) blurAll() {
	for _, f := range m.flat {
		if f.kind == kindText || f.kind == kindList || f.kind == kindJSON {
			f.input.Blur()
		}
	}
}

func (m *Model) focusField(i int) {
	if len(m.flat) == 0 {
		return
	}
	i = max(0, min(i, len(m.flat)-1))
	m.blurAll()
	m.focus = i
	f := m.flat[i]
	if f.kind == kindText || f.kind == kindList || f.kind == kindJSON {
		f.input.Focus()
		f.input.CursorEnd()
	}
	m.scrollToFocus()
}

func (m *Model) move(delta int) {
	for i := m.focus + delta; i >= 0 && i < len(m.flat); i += delta {
		if m.flat[i].focusable() {
			m.focusField(i)
			return
		}
	}
}

func (m *Model) atLast() bool {
	for i := m.focus + 1; i < len(m.flat); i++ {
		if m.flat[i].focusable() {
			return false
		}
	}
	return true
}

// Update handles a message. submit is true when the user asked to send
// (enter on the last field; the parent handles the Submit key itself).
func (m *Model) Update(msg tea.Msg) (submit bool, cmd tea.Cmd) {
	refused := m.refused
	submit, cmd = m.update(msg)
	if _, ok := msg.(tea.KeyPressMsg); ok && !submit {
		// Any other key re-arms the refusal.
		m.refused = false
	} else {
		m.refused = refused
	}
	return submit, cmd
}

func (m *Model) update(msg tea.Msg) (submit bool, cmd tea.Cmd) {
	k := m.c.Keys
	if m.sub != nil {
		return false, m.updateItem(msg)
	}
	if m.raw {
		if kp, ok := msg.(tea.KeyPressMsg); ok && key.Matches(kp, k.RawJSON) {
			m.ToggleRaw()
			return false, nil
		}
		m.editor, cmd = m.editor.Update(msg)
		m.revalidate()
		return false, cmd
	}
	if len(m.flat) == 0 {
		if kp, ok := msg.(tea.KeyPressMsg); ok && key.Matches(kp, k.Open) {
			return true, nil
		}
		if kp, ok := msg.(tea.KeyPressMsg); ok && key.Matches(kp, k.RawJSON) {
			m.ToggleRaw()
		}
		return false, nil
	}
	f := m.flat[m.focus]
	kp, isKey := msg.(tea.KeyPressMsg)
	if isKey {
		if handled, submit := m.formKey(f, kp); handled {
			return submit, nil
		}
	}
	if f.isNull {
		// Typing into a null field starts a value.
		if isKey && kp.Text != "" && (f.kind == kindText || f.kind == kindList || f.kind == kindJSON) {
			f.isNull = false
		} else {
			return false, nil
		}
	}
	cmd = m.editField(f, msg)
	m.revalidate()
	return false, cmd
}

// formKey handles the keys of the whole form on field f: items, the raw
// editor, moving between fields, null. handled reports that the key was
// one of them; submit that the form is to be sent.
func (m *Model) formKey(f *field, kp tea.KeyPressMsg) (handled, submit bool) {
	k := m.c.Keys
	switch {
	case f.kind == kindItems && !f.isNull && !f.hasOther && key.Matches(kp, k.Open):
		m.openItem(f, -1)
	case f.kind == kindItem && key.Matches(kp, k.Open):
		m.openItem(f.parent, f.index)
	case f.kind == kindItem && key.Matches(kp, k.DeleteItem):
		m.deleteItem(f)
	case key.Matches(kp, k.RawJSON):
		m.ToggleRaw()
	case key.Matches(kp, k.NextField):
		m.move(1)
	case key.Matches(kp, k.PrevField):
		m.move(-1)
	case key.Matches(kp, k.Open):
		if m.atLast() {
			return true, true
		}
		m.move(1)
	case key.Matches(kp, k.Null):
		if f.nullable {
			f.isNull = !f.isNull
			f.touched = true
			m.flatten()
			m.revalidate()
		}
	default:
		return false, false
	}
	return true, false
}

// editField hands msg to the focused field f, by its kind.
func (m *Model) editField(f *field, msg tea.Msg) (cmd tea.Cmd) {
	kp, isKey := msg.(tea.KeyPressMsg)
	switch f.kind {
	case kindText, kindList, kindJSON:
		before := f.input.Value()
		f.input, cmd = f.input.Update(msg)
		if f.input.Value() != before {
			f.touched = true
		}
	case kindBool:
		if isKey {
			m.toggleBool(f, kp)
		}
	case kindEnum:
		if isKey {
			m.stepEnum(f, kp)
		}
	case kindMulti:
		if isKey {
			m.stepMulti(f, kp)
		}
	}
	return cmd
}

// toggleBool goes unset → true → false → true…; an optional field without
// a default comes back to unset after false.
func (m *Model) toggleBool(f *field, kp tea.KeyPressMsg) {
	k := m.c.Keys
	if !key.Matches(kp, k.Toggle) && !key.Matches(kp, k.OptNext) && !key.Matches(kp, k.OptPrev) {
		return
	}
	f.touched = true
	switch f.boolState {
	case boolUnset:
		f.boolState = boolTrue
	case boolTrue:
		f.boolState = boolFalse
	default:
		f.boolState = boolTrue
		if !f.required && !f.prop.HasDefault {
			f.boolState = boolUnset
		}
	}
}

// stepEnum moves the choice round the options; an optional choice can be
// unset.
func (m *Model) stepEnum(f *field, kp tea.KeyPressMsg) {
	k := m.c.Keys
	n := len(f.options)
	lo := 0
	if !f.required {
		lo = -1
	}
	switch {
	case key.Matches(kp, k.OptNext), key.Matches(kp, k.Toggle):
		f.choice++
		if f.choice >= n {
			f.choice = lo
		}
		f.touched = true
	case key.Matches(kp, k.OptPrev):
		f.choice--
		if f.choice < lo {
			f.choice = n - 1
		}
		f.touched = true
	}
}

// stepMulti moves among the options of a multiple choice and toggles one.
func (m *Model) stepMulti(f *field, kp tea.KeyPressMsg) {
	k := m.c.Keys
	switch {
	case key.Matches(kp, k.OptNext):
		f.cursor = min(f.cursor+1, len(f.options)-1)
	case key.Matches(kp, k.OptPrev):
		f.cursor = max(f.cursor-1, 0)
	case key.Matches(kp, k.Toggle):
		f.chosen[f.cursor] = !f.chosen[f.cursor]
		f.touched = true
	}
}

// Touched reports whether the user changed anything.
func (m *Model) Touched() bool {
	for _, f := range m.flat {
		if f.touched {
			return true
		}
	}
	return false
}

// ShortHelp is the help of the focused field.
func (m *Model) ShortHelp() []key.Binding {
	k := m.c.Keys
	if m.sub != nil {
		return m.itemHelp()
	}
	if m.raw {
		return []key.Binding{k.Submit, k.RawJSON, k.Back}
	}
	out := []key.Binding{k.Submit, k.NextField}
	if len(m.flat) > 0 {
		f := m.flat[m.focus]
		switch f.kind {
		case kindBool:
			out = append(out, k.Toggle)
		case kindEnum:
			out = append(out, keymap.WithHelp(k.OptNext, "←/→", "choose"))
		case kindMulti:
			out = append(out, keymap.WithHelp(k.OptNext, "←/→", "move"), keymap.WithHelp(k.Toggle, "space", "select"))
		case kindItems:
			out = append(out, keymap.WithHelp(k.Open, "enter", "add item"))
		case kindItem:
			out = append(out, keymap.WithHelp(k.Open, "enter", "edit item"), k.DeleteItem)
		}
		if f.nullable {
			out = append(out, k.Null)
		}
	}
	return append(out, k.RawJSON, k.Back)
}

// FullHelp is every key of the form.
func (m *Model) FullHelp() [][]key.Binding {
	k := m.c.Keys
	if m.sub != nil {
		return [][]key.Binding{m.itemHelp()}
	}
	return [][]key.Binding{
		{k.Submit, k.NextField, k.PrevField, k.Back},
		{k.Toggle, keymap.WithHelp(k.OptNext, "←/→", "choose option"), k.Null, k.RawJSON},
		{keymap.WithHelp(k.Open, "enter", "add/edit item"), k.DeleteItem},
	}
}

var _ help.KeyMap = (*Model)(nil)
