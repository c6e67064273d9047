package form

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/textinput"

	"github.com/mcpi-dev/mcpi/internal/schema"
)

// kind is how a field is edited.
type kind int

const (
	kindText   kind = iota // a scalar typed as text and coerced by its schema
	kindList               // an array of scalars, comma separated (or a JSON array)
	kindJSON               // anything a form cannot express: JSON text
	kindBool               // a toggle
	kindEnum               // one of a list of options
	kindMulti              // a subset of a list of options (array of enum)
	kindObject             // a nested object: a header over its own fields
	kindItems              // an array of objects: its items, each edited in a sub-form
	kindItem               // one item of a kindItems field, a line of its own
)

// option is one choice of an enum.
type option struct {
	value any
	label string
}

// boolean states of a toggle; an optional toggle starts unset.
const (
	boolUnset = iota
	boolTrue
	boolFalse
)

// field is one property of the schema, at any depth.
type field struct {
	name     string
	path     []string // property names from the root
	prop     schema.Property
	kind     kind
	depth    int
	required bool
	nullable bool
	isNull   bool

	input textinput.Model // kindText, kindList, kindJSON
	item  schema.Property // kindList: the items' schema

	boolState int // kindBool

	options []option // kindEnum, kindMulti
	choice  int      // kindEnum: index into options, -1 when unset
	chosen  []bool   // kindMulti
	cursor  int      // kindMulti: the option under the cursor

	children []*field // kindObject

	// kindItems: the items' schema, the items, and a value that is not an
	// array (from raw JSON), kept as it is.
	itemRaw    json.RawMessage
	itemSchema *schema.Schema
	items      []any
	other      any
	hasOther   bool
	// kindItem: the field it is an item of, and its index there.
	parent *field
	index  int

	// touched is set once the user edited the field; its problems show from
	// then on (or once a send was attempted).
	touched bool
	// convErr is why the text does not convert to a value of the field's type.
	convErr string
	// problems are what validation of the whole value found in this field.
	problems []string
}

func (f *field) pointer() string {
	var b strings.Builder
	for _, p := range f.path {
		b.WriteByte('/')
		b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(p))
	}
	return b.String()
}

func (f *field) focusable() bool { return f.kind != kindObject }

// baseTypes are the field's JSON types without null.
func baseTypes(types []string) (base []string, nullable bool) {
	for _, t := range types {
		if t == "null" {
			nullable = true
			continue
		}
		base = append(base, t)
	}
	return base, nullable
}

func isScalar(t string) bool {
	return t == "string" || t == "number" || t == "integer" || t == "boolean"
}

// optionsOf reads the choices a schema offers: enum (with the legacy
// enumNames as labels) or oneOf/anyOf branches that are consts (with their
// titles as labels).
func optionsOf(raw map[string]any) []option {
	if raw == nil {
		return nil
	}
	if e, ok := raw["enum"].([]any); ok {
		names, _ := raw["enumNames"].([]any)
		out := make([]option, 0, len(e))
		for i, v := range e {
			label := valueText(v)
			if i < len(names) {
				if n, ok := names[i].(string); ok && n != "" {
					label = n + " (" + label + ")"
				}
			}
			out = append(out, option{value: v, label: label})
		}
		return out
	}
	for _, k := range []string{"oneOf", "anyOf"} {
		bs, ok := raw[k].([]any)
		if !ok || len(bs) == 0 {
			continue
		}
		var out []option
		for _, b := range bs {
			bm, ok := b.(map[string]any)
			if !ok {
				return nil
			}
			c, ok := bm["const"]
			if !ok {
				return nil
			}
			label := valueText(c)
			if t, ok := bm["title"].(string); ok && t != "" {
				label = t + " (" + label + ")"
			}
			out = append(out, option{value: c, label: label})
		}
		return out
	}
	return nil
}

// typesOf reads the "type" keyword of a schema.
func typesOf(raw map[string]any) []string { return schema.DeclaredTypes(raw) }

// valueText is how a value reads in a form: strings as they are, anything
// else as JSON.
func valueText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case nil:
		return "null"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// listText is how an array of scalars reads in a list field.
func listText(v any) string {
	items, ok := v.([]any)
	if !ok {
		return valueText(v)
	}
	parts := make([]string, len(items))
	for i, it := range items {
		s := valueText(it)
		if str, ok := it.(string); ok && (strings.ContainsAny(str, ",\n") || strings.TrimSpace(str) != str) {
			// Not expressible as a comma list: fall back to JSON.
			b, _ := json.Marshal(items)
			return string(b)
		}
		parts[i] = s
	}
	return strings.Join(parts, ", ")
}

// equalValues compares two JSON values by their encoding.
func equalValues(a, b any) bool {
	ab, err1 := json.Marshal(a)
	bb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(ab, bb)
}

// parseJSON decodes JSON text keeping integers exact.
func parseJSON(text string) (any, error) { return schema.ParseJSON(text) }

// hint is the short description of what a field takes.
func (f *field) hint() string {
	raw := f.prop.Raw
	var s string
	switch f.kind {
	case kindList:
		s = "list of " + strings.Join(f.item.Types, "|")
		if len(f.item.Types) == 0 {
			s = "list"
		}
	case kindJSON:
		s = "JSON"
		if t := strings.Join(f.prop.Types, "|"); t != "" {
			s += " " + t
		}
	case kindObject:
		s = "object"
	case kindItems:
		s = "list of objects"
	case kindMulti:
		s = "choose any"
	case kindEnum:
		s = fmt.Sprintf("one of %d", len(f.options))
	default:
		s = strings.Join(f.prop.Types, "|")
		if s == "" {
			s = "any"
		}
	}
	if raw != nil {
		lo, hasLo := numberKeyword(raw, "minimum")
		hi, hasHi := numberKeyword(raw, "maximum")
		switch {
		case hasLo && hasHi:
			s += " " + lo + ".." + hi
		case hasLo:
			s += " ≥" + lo
		case hasHi:
			s += " ≤" + hi
		}
		if format, ok := raw["format"].(string); ok {
			s += " " + format
		}
	}
	return s
}

func numberKeyword(raw map[string]any, k string) (string, bool) {
	switch v := raw[k].(type) {
	case json.Number:
		return v.String(), true
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64), true
	}
	return "", false
}
