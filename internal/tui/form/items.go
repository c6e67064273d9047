package form

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/mcpi-dev/mcpi/internal/schema"
	"github.com/mcpi-dev/mcpi/internal/tui/common"
	"github.com/mcpi-dev/mcpi/internal/tui/keymap"
)

// An array of objects is edited an item at a time: the field lists its
// items, one line each, and enter opens a sub-form of the item's fields
// (itself a Model, so nested objects, lists and arrays of objects work as
// they do at the top). Raw JSON (ctrl+t) stays available for the whole.

// itemHeaderLines is the room above an item's sub-form: its title and
// the item's shape (or why it was not saved).
const itemHeaderLines = 2

// objectItems returns the raw text of the items' schema of an array
// property when its items are objects with properties a form can show.
func objectItems(propRaw json.RawMessage, items map[string]any, depth int) (json.RawMessage, *schema.Schema, bool) {
	if items == nil || depth+1 >= maxDepth {
		return nil, nil, false
	}
	if _, ok := items["properties"].(map[string]any); !ok {
		return nil, nil, false
	}
	if t := typesOf(items); len(t) > 1 || len(t) == 1 && t[0] != "object" {
		return nil, nil, false
	}
	var p struct {
		Items json.RawMessage `json:"items"`
	}
	if json.Unmarshal(propRaw, &p) != nil || len(p.Items) == 0 {
		return nil, nil, false
	}
	s, err := schema.Compile(p.Items, schema.AssertFormats())
	if err != nil {
		return nil, nil, false
	}
	return p.Items, s, true
}

// itemFields are the lines of a kindItems field's items.
func (f *field) itemFields() []*field {
	out := make([]*field, len(f.items))
	for i := range f.items {
		out[i] = &field{
			name:    "#" + strconv.Itoa(i+1),
			path:    append(append([]string(nil), f.path...), strconv.Itoa(i)),
			kind:    kindItem,
			depth:   f.depth + 1,
			parent:  f,
			index:   i,
			choice:  -1,
			touched: f.touched,
			prop:    schema.Property{Description: f.prop.Description, Title: f.prop.Title},
		}
	}
	return out
}

// EditingItem reports whether an item's sub-form is open: it takes every
// key then, esc (discard the item) and the send key (save it) included.
func (m *Model) EditingItem() bool { return m.sub != nil }

func (m *Model) openItem(f *field, index int) {
	sub := New(m.c, f.itemRaw)
	if index >= 0 {
		if obj, ok := f.items[index].(map[string]any); ok {
			sub.SetValues(obj)
		}
	}
	sub.SetSize(m.width, max(3, m.height-itemHeaderLines))
	m.blurAll()
	m.sub, m.subField, m.subIndex = sub, f, index
	m.itemNotice.Clear()
}

func (m *Model) closeItem() {
	m.sub, m.subField = nil, nil
	m.itemNotice.Clear()
	m.focusField(m.focus)
}

func (m *Model) updateItem(msg tea.Msg) tea.Cmd {
	k := m.c.Keys
	if m.sub.EditingItem() {
		_, cmd := m.sub.Update(msg)
		return cmd
	}
	if kp, ok := msg.(tea.KeyPressMsg); ok {
		m.itemNotice.Clear()
		switch {
		case key.Matches(kp, k.Back):
			m.closeItem()
			return nil
		case key.Matches(kp, k.Submit):
			m.saveItem()
			return nil
		}
	}
	submit, cmd := m.sub.Update(msg)
	if submit {
		m.saveItem()
	}
	return cmd
}

// saveItem puts the sub-form's value in the list: an item with problems
// is refused once, as a send is, and saved as it is the second time.
func (m *Model) saveItem() {
	v, refused, err := m.sub.Send()
	switch {
	case err != nil:
		m.itemNotice.Fail(err)
		return
	case refused != nil:
		m.itemNotice = Refusal(refused, m.c.Keys.Submit.Help().Key, "save")
		return
	}
	f := m.subField
	var item any = v
	if m.subIndex >= 0 && m.subIndex < len(f.items) {
		f.items[m.subIndex] = item
	} else {
		f.items = append(f.items, item)
		m.subIndex = len(f.items) - 1
	}
	f.touched = true
	ptr := f.pointer() + "/" + strconv.Itoa(m.subIndex)
	m.sub, m.subField = nil, nil
	m.itemNotice.Clear()
	m.flatten()
	m.revalidate()
	m.focusPointer(ptr)
}

func (m *Model) deleteItem(f *field) {
	p := f.parent
	p.items = append(p.items[:f.index:f.index], p.items[f.index+1:]...)
	p.touched = true
	m.flatten()
	m.revalidate()
	if len(p.items) == 0 {
		m.focusPointer(p.pointer())
		return
	}
	m.focusPointer(p.pointer() + "/" + strconv.Itoa(min(f.index, len(p.items)-1)))
}

func (m *Model) focusPointer(ptr string) {
	for i, f := range m.flat {
		if f.pointer() == ptr {
			m.focusField(i)
			return
		}
	}
	m.focusField(m.focus)
}

func (m *Model) itemHelp() []key.Binding {
	k := m.c.Keys
	if m.sub.EditingItem() {
		return m.sub.ShortHelp()
	}
	out := []key.Binding{keymap.WithHelp(k.Submit, k.Submit.Help().Key, "save item"), k.NextField}
	if m.sub.raw {
		return append(out, k.RawJSON, keymap.WithHelp(k.Back, "esc", "discard item"))
	}
	if len(m.sub.flat) > 0 {
		switch m.sub.flat[m.sub.focus].kind {
		case kindItems:
			out = append(out, keymap.WithHelp(k.Open, "enter", "add item"))
		case kindItem:
			out = append(out, keymap.WithHelp(k.Open, "enter", "edit item"), k.DeleteItem)
		}
	}
	return append(out, k.RawJSON, keymap.WithHelp(k.Back, "esc", "discard item"))
}

// itemView is the sub-form under its title and the item's shape.
func (m *Model) itemView() string {
	st := m.c.Styles
	f := m.subField
	what := "new item"
	if m.subIndex >= 0 {
		what = "item #" + strconv.Itoa(m.subIndex+1)
	}
	title := st.LabelFocused.Render(common.Line(strings.Join(f.path, "."))+" › "+what) +
		st.Dim.Render("  ("+m.c.Keys.Submit.Help().Key+": save · esc: discard)")
	second := st.Dim.Render(common.Truncate(common.Line("each item: "+f.shape()), m.width))
	if !m.itemNotice.Empty() {
		second = m.itemNotice.View(st, m.width)
	}
	return common.Truncate(title, m.width) + "\n" + second + "\n" + m.sub.View()
}

// shape describes the fields of an item: {oldText: string*, newText:
// string*}, required ones starred.
func (f *field) shape() string {
	var parts []string
	for _, p := range f.itemSchema.Properties() {
		t := typeWords(p.Raw, 1)
		if p.Required {
			t += "*"
		}
		parts = append(parts, p.Name+": "+t)
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// typeWords is a short description of a schema's type: string, [string],
// {a: number*}, one of 3.
func typeWords(raw map[string]any, depth int) string {
	if opts := optionsOf(raw); len(opts) > 0 {
		return "one of " + strconv.Itoa(len(opts))
	}
	types, _ := baseTypes(typesOf(raw))
	switch {
	case len(types) == 1 && types[0] == "array":
		items, _ := raw["items"].(map[string]any)
		if items == nil {
			return "[…]"
		}
		return "[" + typeWords(items, depth) + "]"
	case len(types) <= 1 && raw["properties"] != nil:
		props, _ := raw["properties"].(map[string]any)
		if depth >= 3 || len(props) == 0 {
			return "{…}"
		}
		req := map[string]bool{}
		if r, ok := raw["required"].([]any); ok {
			for _, x := range r {
				if n, ok := x.(string); ok {
					req[n] = true
				}
			}
		}
		names := make([]string, 0, len(props))
		for n := range props {
			names = append(names, n)
		}
		sort.Strings(names)
		parts := make([]string, len(names))
		for i, n := range names {
			sub, _ := props[n].(map[string]any)
			parts[i] = n + ": " + typeWords(sub, depth+1)
			if req[n] {
				parts[i] += "*"
			}
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case len(types) == 0:
		return "any"
	}
	return strings.Join(types, "|")
}

// summary is an item on one line: {oldText: "a", newText: "b"}, its fields
// in the schema's order.
func (f *field) summary(item any) string {
	obj, ok := item.(map[string]any)
	if !ok {
		return valueText(item)
	}
	var order []string
	seen := map[string]bool{}
	for _, p := range f.itemSchema.Properties() {
		if _, ok := obj[p.Name]; ok {
			order = append(order, p.Name)
			seen[p.Name] = true
		}
	}
	var rest []string
	for n := range obj {
		if !seen[n] {
			rest = append(rest, n)
		}
	}
	sort.Strings(rest)
	order = append(order, rest...)
	parts := make([]string, len(order))
	for i, n := range order {
		b, err := json.Marshal(obj[n])
		if err != nil {
			b = []byte("?")
		}
		parts[i] = n + ": " + string(b)
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
