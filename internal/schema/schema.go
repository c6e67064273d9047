package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// Schema is a compiled JSON Schema together with its decoded form.
type Schema struct {
	raw   map[string]any
	order []string // property names in the order of the schema text
	root  *node
}

// decode reads one JSON value, numbers as json.Number, and refuses
// trailing data.
func decode(raw []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, fmt.Errorf("extra data after the JSON value")
	}
	return v, nil
}

// Compile compiles raw. A schema without $schema (or with one mcpi does
// not know) is read as JSON Schema 2020-12, MCP's default dialect since
// 2025-11-25; draft-07, 2019-09 and (leniently) draft-06 and draft-04 are
// understood by their $schema. No $ref outside the document is followed.
func Compile(raw json.RawMessage, opts ...Option) (*Schema, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage(`{}`)
	}
	doc, err := decode(raw)
	if err != nil {
		return nil, fmt.Errorf("schema is not JSON: %w", err)
	}
	root, err := compileDoc(doc, o)
	if err != nil {
		if strings.HasPrefix(err.Error(), "invalid schema") {
			return nil, err
		}
		return nil, fmt.Errorf("invalid schema: %w", err)
	}
	m, _ := doc.(map[string]any)
	return &Schema{raw: m, order: propertyOrder(raw), root: root}, nil
}

// Option changes how a schema is compiled.
type Option func(*options)

type options struct {
	assertFormats bool
}

// AssertFormats makes the formats mcpi knows (see FormatProblem) assertions
// in every dialect, not only in draft-07 and older. 2019-09 and 2020-12 make
// format an annotation, but what a person types into a form or a flag is
// checked against it: MCP elicitation names email, uri, date and date-time
// as formats a client validates, and a tool's declared format is what its
// server expects. The tool forms and the CLI send anyway on request.
func AssertFormats() Option { return func(o *options) { o.assertFormats = true } }

// CompileInput compiles a tool's inputSchema as mcpi checks the arguments
// of a call against it before sending them (mcpi call, bench and test):
// formats asserted.
func CompileInput(inputSchema json.RawMessage) (*Schema, error) {
	return Compile(inputSchema, AssertFormats())
}

// propertyOrder returns the keys of the top-level "properties" object in
// the order they are written, which is the order a person expects a form in.
func propertyOrder(raw []byte) []string {
	var top map[string]json.RawMessage
	if json.Unmarshal(raw, &top) != nil {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(top["properties"]))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var names []string
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return names
		}
		if name, ok := t.(string); ok {
			names = append(names, name)
		}
		var skip json.RawMessage
		if d.Decode(&skip) != nil {
			return names
		}
	}
	return names
}

// Problem is one way a value fails its schema.
type Problem struct {
	// Path is the JSON pointer of the failing value ("" for the root).
	Path    string
	Message string
}

func (p Problem) String() string {
	if p.Path == "" {
		return p.Message
	}
	return p.Path + ": " + p.Message
}

// Problems is a list of Problem that is also an error.
type Problems []Problem

func (ps Problems) Error() string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, "; ")
}

// Fields says the problems of a form's values, naming the field of each
// that is about one top-level field: "field email: 'bob' is not an email".
func (ps Problems) Fields() string {
	out := make([]string, len(ps))
	for i, p := range ps {
		if name, ok := strings.CutPrefix(p.Path, "/"); ok && !strings.Contains(name, "/") {
			out[i] = "field " + strings.NewReplacer("~1", "/", "~0", "~").Replace(name) + ": " + p.Message
		} else {
			out[i] = p.String()
		}
	}
	return strings.Join(out, "; ")
}

// Validate checks v (as decoded by encoding/json, or raw JSON) against the
// schema and returns what is wrong, most specific first; nil when valid.
func (s *Schema) Validate(v any) Problems {
	if raw, ok := v.(json.RawMessage); ok {
		inst, err := decode(raw)
		if err != nil {
			return Problems{{Message: "not JSON: " + err.Error()}}
		}
		v = inst
	} else if !plain(v, 0) {
		// Re-decode values of other Go types (structs, typed maps and
		// slices) into what encoding/json gives.
		b, err := json.Marshal(v)
		if err != nil {
			return Problems{{Message: err.Error()}}
		}
		inst, err := decode(b)
		if err != nil {
			return Problems{{Message: err.Error()}}
		}
		v = inst
	}
	val := &validator{}
	if val.validate(s.root, v, nil, nil) && val.aborted == "" {
		return nil
	}
	out := val.probs
	if val.aborted != "" {
		out = append(out, Problem{Path: val.abortAt.pointer(), Message: val.aborted})
	}
	seen := make(map[Problem]bool, len(out))
	dedup := out[:0]
	for _, p := range out {
		if !seen[p] {
			seen[p] = true
			dedup = append(dedup, p)
		}
	}
	out = dedup
	sort.SliceStable(out, func(i, j int) bool { return morePrecise(out[i].Path, out[j].Path) })
	if len(out) == 0 {
		// Cannot happen: every failure reports; but never call invalid valid.
		out = Problems{{Message: "value does not match the schema"}}
	}
	if len(out) > MaxProblems {
		n := len(out) - MaxProblems
		out = append(out[:MaxProblems:MaxProblems], Problem{Message: fmt.Sprintf("and %d more %s", n, plural(n, "problem", "problems"))})
	}
	return out
}

// morePrecise orders problems deepest first, then as a person reads the
// value: array indexes as numbers (/2 before /10), names alphabetically.
func morePrecise(a, b string) bool {
	as, bs := strings.Split(a, "/"), strings.Split(b, "/")
	if len(as) != len(bs) {
		return len(as) > len(bs)
	}
	for k := range as {
		if as[k] == bs[k] {
			continue
		}
		x, errX := strconv.ParseUint(as[k], 10, 64)
		y, errY := strconv.ParseUint(bs[k], 10, 64)
		if errX == nil && errY == nil {
			return x < y
		}
		return as[k] < bs[k]
	}
	return false
}

// MaxProblems is how many problems Validate lists, the most specific
// first; the rest are counted in one more. A hundred thousand items that
// fail the same way make a message nobody reads.
const MaxProblems = 20

// Property is what a form or a KEY=VALUE argument needs to know of one
// property of an object schema.
type Property struct {
	Name        string
	Title       string
	Description string
	Types       []string // JSON types allowed; empty when the schema does not say
	Enum        []any
	Default     any
	HasDefault  bool
	Required    bool
	Raw         map[string]any
}

// Properties returns the top-level properties of an object schema, in the
// order they appear in the schema text.
func (s *Schema) Properties() []Property {
	return properties(s.raw, s.order)
}

func properties(raw map[string]any, order []string) []Property {
	props, _ := raw["properties"].(map[string]any)
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
	pos := make(map[string]int, len(order))
	for i, n := range order {
		pos[n] = i
	}
	sort.Slice(names, func(i, j int) bool {
		pi, iok := pos[names[i]]
		pj, jok := pos[names[j]]
		if iok && jok {
			return pi < pj
		}
		if iok != jok {
			return iok
		}
		return names[i] < names[j]
	})
	out := make([]Property, 0, len(names))
	for _, n := range names {
		p, _ := props[n].(map[string]any)
		prop := Property{Name: n, Required: req[n], Raw: p, Types: typesOf(p)}
		prop.Title, _ = p["title"].(string)
		prop.Description, _ = p["description"].(string)
		prop.Enum = enumOf(p)
		if d, ok := p["default"]; ok {
			prop.Default, prop.HasDefault = d, true
		}
		out = append(out, prop)
	}
	return out
}

// enumOf returns the values a property may take: its enum, the consts of
// its oneOf/anyOf (titled enums, SEP-1330), or those of its items for a
// multi-select array.
func enumOf(p map[string]any) []any {
	if e, ok := p["enum"].([]any); ok {
		return e
	}
	for _, k := range []string{"oneOf", "anyOf"} {
		if bs, ok := p[k].([]any); ok {
			var out []any
			for _, b := range bs {
				if bm, ok := b.(map[string]any); ok {
					if c, ok := bm["const"]; ok {
						out = append(out, c)
					}
				}
			}
			if len(out) > 0 {
				return out
			}
		}
	}
	if items, ok := p["items"].(map[string]any); ok {
		return enumOf(items)
	}
	return nil
}

// Property returns the named top-level property.
func (s *Schema) Property(name string) (Property, bool) {
	for _, p := range s.Properties() {
		if p.Name == name {
			return p, true
		}
	}
	return Property{}, false
}

func typesOf(p map[string]any) []string {
	switch p["type"].(type) {
	case string, []any:
		return DeclaredTypes(p)
	}
	// A schema without a type may still say it in anyOf/oneOf branches.
	var out []string
	for _, k := range []string{"anyOf", "oneOf"} {
		if bs, ok := p[k].([]any); ok {
			for _, b := range bs {
				if bm, ok := b.(map[string]any); ok {
					out = append(out, typesOf(bm)...)
				}
			}
		}
	}
	if len(out) == 0 {
		if _, ok := p["const"].(string); ok {
			return []string{"string"}
		}
		// enum is not always checked to be an array: beside a draft-07
		// $ref no keyword is compiled.
		if enum, ok := p["enum"].([]any); ok {
			for _, e := range enum {
				if _, ok := e.(string); !ok {
					return nil
				}
			}
			return []string{"string"}
		}
	}
	return out
}

func has(types []string, t string) bool {
	for _, x := range types {
		if x == t {
			return true
		}
	}
	return false
}

// Coerce turns the text a person typed for a property into a JSON value as
// the property's schema asks: a string property keeps the text as it is,
// even if it looks like a number; numbers, booleans, arrays, objects and
// null parse as JSON. Without a type the text is parsed as JSON when it is
// JSON, else kept as a string.
func (p Property) Coerce(text string) (any, error) {
	types := p.Types
	if len(types) == 0 {
		var v any
		if json.Unmarshal([]byte(text), &v) == nil {
			return v, nil
		}
		return text, nil
	}
	if has(types, "null") && text == "null" {
		return nil, nil
	}
	if has(types, "string") && len(types) == 1 {
		return text, nil
	}
	var v any
	d := json.NewDecoder(strings.NewReader(text))
	d.UseNumber()
	if err := d.Decode(&v); err == nil && !d.More() {
		if ok := matchesType(v, types); ok {
			if err := finite(v); err != nil {
				return nil, fmt.Errorf("%q: %v", text, err)
			}
			v = normalize(v)
			if f, ok := v.(float64); ok && has(types, "integer") && !has(types, "number") {
				return int64(f), nil
			}
			return v, nil
		}
	}
	if has(types, "string") {
		return text, nil
	}
	if has(types, "boolean") {
		if b, ok := ParseBool(text); ok {
			return b, nil
		}
		return nil, fmt.Errorf("%q is not %s (a boolean is one of %s, in any case)", text, strings.Join(article(types), " or "), BoolWords)
	}
	return nil, fmt.Errorf("%q is not %s", text, strings.Join(article(types), " or "))
}

// BoolWords are the words a boolean may be typed as, everywhere mcpi
// coerces typed text (call arguments, forms, --elicit-field).
const BoolWords = "true/false, yes/no, y/n, on/off, 1/0"

// ParseBool reads a boolean typed as one of BoolWords, in any case.
func ParseBool(text string) (value, ok bool) {
	switch strings.ToLower(strings.TrimSpace(text)) {
	case "true", "yes", "y", "on", "1":
		return true, true
	case "false", "no", "n", "off", "0":
		return false, true
	}
	return false, false
}

func article(types []string) []string {
	out := make([]string, len(types))
	for i, t := range types {
		switch t {
		case "integer", "array", "object":
			out[i] = "an " + t
		case "null":
			out[i] = "null"
		default:
			out[i] = "a " + t
		}
	}
	return out
}

func matchesType(v any, types []string) bool {
	for _, t := range types {
		switch x := v.(type) {
		case json.Number:
			if t == "number" {
				return true
			}
			if t == "integer" {
				if _, err := x.Int64(); err == nil {
					return true
				}
				if f, err := x.Float64(); err == nil && f == float64(int64(f)) {
					return true
				}
			}
		case bool:
			if t == "boolean" {
				return true
			}
		case []any:
			if t == "array" {
				return true
			}
		case map[string]any:
			if t == "object" {
				return true
			}
		case nil:
			if t == "null" {
				return true
			}
		case string:
			if t == "string" {
				return true
			}
		}
	}
	return false
}

// ParseJSON decodes one JSON value from text, keeping integers exact
// (int64) and refusing trailing data and numbers out of range.
func ParseJSON(text string) (any, error) {
	d := json.NewDecoder(strings.NewReader(text))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, fmt.Errorf("extra data after the JSON value")
	}
	if err := finite(v); err != nil {
		return nil, err
	}
	return normalize(v), nil
}

// finite refuses numbers that do not fit a float64 (1e700): JSON cannot
// carry the infinity they would become.
func finite(v any) error {
	switch x := v.(type) {
	case json.Number:
		if _, err := x.Float64(); err != nil {
			return fmt.Errorf("the number %s is out of range", x)
		}
	case []any:
		for _, e := range x {
			if err := finite(e); err != nil {
				return err
			}
		}
	case map[string]any:
		for _, e := range x {
			if err := finite(e); err != nil {
				return err
			}
		}
	}
	return nil
}

// normalize turns json.Number into int64 or float64 so values marshal
// naturally.
func normalize(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case []any:
		for i := range x {
			x[i] = normalize(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = normalize(x[k])
		}
	}
	return v
}

// ApplyDefaults fills in the defaults of the top-level properties missing
// from values (SEP-1034 for elicitation; also what a form pre-fills).
func (s *Schema) ApplyDefaults(values map[string]any) map[string]any {
	if values == nil {
		values = map[string]any{}
	}
	for _, p := range s.Properties() {
		if _, ok := values[p.Name]; !ok && p.HasDefault {
			values[p.Name] = p.Default
		}
	}
	return values
}
