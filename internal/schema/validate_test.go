package schema

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func mustCompile(t testing.TB, raw string) *Schema {
	t.Helper()
	s, err := Compile(json.RawMessage(raw))
	if err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return s
}

func TestValidateCases(t *testing.T) {
	for _, tc := range []struct {
		schema, inst string
		valid        bool
	}{
		{`{"multipleOf": 0.0001}`, `0.0075`, true},
		{`{"multipleOf": 0.0001}`, `0.00751`, false},
		{`{"multipleOf": 0.01}`, `19.99`, true},
		{`{"type": "integer"}`, `1.0`, true},
		{`{"type": "integer"}`, `1e2`, true},
		{`{"type": "integer"}`, `1.5`, false},
		{`{"const": 1}`, `1.0`, true},
		{`{"const": {"a": 1, "b": [1, 2]}}`, `{"b": [1.0, 2], "a": 1}`, true},
		{`{"enum": [[1], {"x": null}]}`, `{"x": null}`, true},
		{`{"maxLength": 2}`, `"éé"`, true},
		{`{"minLength": 3}`, `"éé"`, false},
		{`{"uniqueItems": true}`, `[1, 1.0]`, false},
		{`{"uniqueItems": true}`, `[{"a":1,"b":2}, {"b":2,"a":1}]`, false},
		{`{"uniqueItems": true}`, `[1, "1", true, null, [1], {"1":1}]`, true},
		{`{"$defs": {"a~b/c%d": {"type": "string"}}, "$ref": "#/$defs/a~0b~1c%25d"}`, `"x"`, true},
		{`{"$defs": {"a~b/c%d": {"type": "string"}}, "$ref": "#/$defs/a~0b~1c%25d"}`, `1`, false},
		{`{"$defs": {"s": {"$anchor": "str", "type": "string"}}, "$ref": "#str"}`, `1`, false},
		{`{"$id": "http://x.test/root.json", "$defs": {"s": {"$id": "s.json", "type": "string"}}, "$ref": "s.json"}`, `1`, false},
		{`{"$schema": "http://json-schema.org/draft-04/schema#", "maximum": 5, "exclusiveMaximum": true}`, `5`, false},
		{`{"$schema": "http://json-schema.org/draft-07/schema#", "items": [{"type": "string"}], "additionalItems": false}`, `["a", 1]`, false},
		{`{"$schema": "http://json-schema.org/draft-07/schema#", "dependencies": {"a": ["b"], "c": {"required": ["d"]}}}`, `{"a": 1}`, false},
		{`{"$schema": "http://json-schema.org/draft-07/schema#", "dependencies": {"a": ["b"], "c": {"required": ["d"]}}}`, `{"c": 1}`, false},
		{`{"$schema": "http://json-schema.org/draft-07/schema#", "format": "email"}`, `"nope"`, false},
		{`{"format": "email"}`, `"nope"`, true}, // 2020-12: format is an annotation
		{`{"$schema": "https://example.com/unknown", "prefixItems": [{"type": "string"}], "items": false}`, `["a", 1]`, false},
		{`{"pattern": "^\\u00e9$"}`, `"é"`, true},
		{`{"type": "object", "properties": {"a": true}, "unevaluatedProperties": false}`, `{"a": 1, "b": 2}`, false},
		{`{"allOf": [{"properties": {"a": true}}], "unevaluatedProperties": false}`, `{"a": 1}`, true},

		// What MCP servers write. zod-to-json-schema (draft-07):
		{`{"$schema": "http://json-schema.org/draft-07/schema#", "$ref": "#/definitions/A", "definitions": {"A": {"type": "object", "properties": {"a": {"type": "string"}, "b": {"$ref": "#/definitions/A/properties/a"}}, "required": ["a"], "additionalProperties": false}}}`, `{"a": "x", "b": 1}`, false},
		{`{"$schema": "http://json-schema.org/draft-07/schema#", "$ref": "#/definitions/A", "definitions": {"A": {"type": "object", "properties": {"a": {"type": "string"}, "b": {"$ref": "#/definitions/A/properties/a"}}, "required": ["a"], "additionalProperties": false}}}`, `{"a": "x", "c": 1}`, false},
		{`{"$schema": "http://json-schema.org/draft-07/schema#", "properties": {"a": {"type": "object", "properties": {"x": {"type": "number"}}}, "b": {"$ref": "#/properties/a"}}}`, `{"b": {"x": "1"}}`, false},
		{`{"$schema": "http://json-schema.org/draft-07/schema#", "properties": {"a": {"$ref": "#/definitions/b", "type": "string"}}, "definitions": {"b": {"minLength": 2}}}`, `{"a": 1}`, true}, // siblings of $ref ignored
		{`{"$schema": "http://json-schema.org/draft-07/schema#", "properties": {"n": {"anyOf": [{"type": "string"}, {"type": "null"}]}}}`, `{"n": null}`, true},
		{`{"$schema": "http://json-schema.org/draft-07/schema#", "type": "integer", "exclusiveMinimum": 0}`, `0`, false},
		// zod 4 writes a pattern with lookahead beside format email; Go's
		// regexp cannot run it, so it is not checked (format is, in draft-07).
		{`{"type": "string", "format": "email", "pattern": "^(?!\\.)(?!.*\\.\\.)([A-Za-z0-9_'+\\-\\.]*)[A-Za-z0-9_+-]@([A-Za-z0-9][A-Za-z0-9\\-]*\\.)+[A-Za-z]{2,}$"}`, `"..@x"`, true},
		{`{"$schema": "http://json-schema.org/draft-07/schema#", "type": "string", "format": "email", "pattern": "^(?!\\.)x@y\\.z$"}`, `"nope"`, false},
		{`{"pattern": "(?=x)", "minLength": 2}`, `"y"`, false},
		{`{"pattern": "^.{0,5000}$"}`, `"x"`, true},
		{`{"pattern": "^\\u{1F600}$"}`, `"😀"`, true},
		{`{"pattern": "^\\u{1F600}$"}`, `"x"`, false},
		// pydantic v2:
		{`{"$defs": {"C": {"enum": ["red", "green"], "type": "string"}}, "properties": {"c": {"$ref": "#/$defs/C", "default": "red", "description": "d"}}}`, `{"c": "blue"}`, false},
		{`{"properties": {"p": {"anyOf": [{"type": "number"}, {"type": "null"}], "default": null}}}`, `{"p": null}`, true},
		{`{"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}], "minItems": 2, "maxItems": 2}`, `[1, "a"]`, true},
		{`{"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}], "minItems": 2, "maxItems": 2}`, `["a", 1]`, false},
		{`{"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}], "minItems": 2, "maxItems": 2}`, `[1, "a", 3]`, false},
		{`{"$defs": {"Cat": {"properties": {"kind": {"const": "cat"}}, "required": ["kind"]}, "Dog": {"properties": {"kind": {"const": "dog"}}, "required": ["kind"]}}, "discriminator": {"propertyName": "kind", "mapping": {"cat": "#/$defs/Cat"}}, "oneOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}]}`, `{"kind": "cow"}`, false},
		{`{"$defs": {"Cat": {"properties": {"kind": {"const": "cat"}}, "required": ["kind"]}, "Dog": {"properties": {"kind": {"const": "dog"}}, "required": ["kind"]}}, "discriminator": {"propertyName": "kind", "mapping": {"cat": "#/$defs/Cat"}}, "oneOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}]}`, `{"kind": "dog"}`, true},
		// Go SDK:
		{`{"type": ["null", "array"], "items": {"type": "string"}}`, `null`, true},
		{`{"type": ["null", "array"], "items": {"type": "string"}}`, `[1]`, false},
		{`{"type": ["null", "integer"]}`, `2.0`, true},
		// Numbers.
		{`{"multipleOf": 0.01}`, `0.07`, true},
		{`{"multipleOf": 0.01}`, `0.001`, false},
		{`{"multipleOf": 0.01}`, `123456789.12`, true},
		{`{"type": "integer"}`, `12345678901234567890123`, true},
		{`{"type": "integer"}`, `1.0e30`, true},
		{`{"type": "integer"}`, `12345678901234567890.5`, false},
		{`{"type": "integer", "maximum": 9223372036854775807}`, `9223372036854775808`, false},
		{`{"const": 0}`, `-0.0`, true},
		{`{"maximum": 0.3}`, `0.30000000000000004`, false},
		{`{"maxLength": 3}`, `"😀😀😀"`, true},
		{`{"maxLength": 3}`, `"e\u0301e\u0301"`, false}, // code points, not graphemes
		// $schema spellings: format asserts in draft-07 and older only.
		{`{"$schema": "https://json-schema.org/draft-07/schema", "format": "email"}`, `"x"`, false},
		{`{"$schema": "http://json-schema.org/draft-04/schema#", "format": "email"}`, `"x"`, false},
		{`{"$schema": "https://json-schema.org/draft/2019-09/schema", "format": "email"}`, `"x"`, true},
		{`{"$schema": "https://json-schema.org/draft/2020-12/schema#", "format": "email"}`, `"x"`, true},
		// Unknown keywords and wrongly typed annotations are ignored.
		{`{"type": "string", "x-foo": {"$ref": "#/nowhere"}, "nullable": true, "examples": 5, "$comment": 1}`, `null`, false},
		{`{"$id": 5, "$anchor": 5, "$schema": 5, "format": 5, "$defs": 5, "dependentRequired": 5, "then": 5}`, `1`, true},
		{`{"minimum": 5, "exclusiveMinimum": true}`, `5`, false}, // OpenAPI 3.0 style
		// References spelled with escapes.
		{`{"properties": {"x": {"$ref": "#/properties/a~1b"}, "a/b": {"type": "string"}}}`, `{"x": 1}`, false},
		{`{"properties": {"x": {"$ref": "#/properties/a%20b"}, "a b": {"type": "string"}}}`, `{"x": 1}`, false},
		{`{"$id": "urn:example:tool", "$defs": {"a": {"type": "string"}}, "properties": {"y": {"$ref": "urn:example:tool#/$defs/a"}}}`, `{"y": 1}`, false},
	} {
		s := mustCompile(t, tc.schema)
		ps := s.Validate(json.RawMessage(tc.inst))
		if (ps == nil) != tc.valid {
			t.Errorf("%s against %s: valid=%v, want %v (%v)", tc.inst, tc.schema, ps == nil, tc.valid, ps)
		}
	}
}

func TestCompileErrors(t *testing.T) {
	for _, tc := range []struct{ schema, want string }{
		{`{"$ref": "other.json"}`, "not followed"},
		{`{"$ref": "#/$defs/missing"}`, "no such location"},
		{`{"$ref": "#nowhere"}`, "no anchor"},
		{`{"patternProperties": {"(": {}}}`, "regular expression"},
		{`{"$ref": "#"}`, "cycle"},
		{`{"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"allOf": [{"$ref": "#/$defs/a"}]}}, "$ref": "#/$defs/a"}`, "cycle"},
		{`{"type": "float"}`, "unknown type"},
		{`{"minimum": "1"}`, "must be a number"},
		{`{"multipleOf": 0}`, "greater than 0"},
		{`{"properties": {"a": 3}}`, "not an object or a boolean"},
		{`[1]`, "not an object or a boolean"},
		{`{} x`, "not JSON"},
	} {
		_, err := Compile(json.RawMessage(tc.schema))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.schema, err, tc.want)
		}
	}
}

func TestMessages(t *testing.T) {
	s := mustCompile(t, `{
		"type": "object",
		"properties": {
			"name": {"type": "string", "pattern": "^[a-z]+$"},
			"count": {"type": "integer", "minimum": 1, "exclusiveMaximum": 10},
			"id": {},
			"mode": {"enum": ["a", "b"]},
			"tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true, "maxItems": 3}
		},
		"required": ["name", "id"],
		"additionalProperties": false
	}`)
	got := s.Validate(json.RawMessage(`{"count": 0, "mode": "c", "tags": ["x", 1, "x", "y"], "extra": 1, "more": 2}`))
	want := Problems{
		{"/tags/1", "got number, want string"},
		{"/count", "must be >= 1"},
		{"/mode", `value must be one of "a", "b"`},
		{"/tags", "must have at most 3 items"},
		{"/tags", "items at 0 and 2 are equal"},
		{"", "missing properties 'name', 'id'"},
		{"", "additional properties 'extra', 'more' not allowed"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got\n%v\nwant\n%v", got, want)
	}
	got = s.Validate(map[string]any{"name": "X1", "id": 1, "count": 10})
	want = Problems{{"/count", "must be < 10"}, {"/name", `'X1' does not match pattern '^[a-z]+$'`}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if ps := mustCompile(t, `{"required": ["a"]}`).Validate(map[string]any{}); ps.Error() != "missing property 'a'" {
		t.Errorf("got %v", ps)
	}
	if ps := mustCompile(t, `{"type": ["string", "null"]}`).Validate(true); ps.Error() != "got boolean, want null or string" {
		t.Errorf("got %v", ps)
	}
}

// TestGoValues: values as decoded by encoding/json, ParseJSON (int64,
// float64) or with json.Number, and other Go types, validate alike.
func TestGoValues(t *testing.T) {
	s := mustCompile(t, toolSchema)
	v, err := ParseJSON(`{"zip": "02134", "count": 3, "ratio": 0.5, "tags": ["a"], "nested": {"x": 1}}`)
	if err != nil {
		t.Fatal(err)
	}
	for _, inst := range []any{
		v,
		map[string]any{"zip": "1", "count": json.Number("2")},
		map[string]any{"zip": "1", "count": 2.0},
		map[string]any{"zip": "1", "count": uint8(2), "tags": []string{"a"}},
		struct {
			Zip   string `json:"zip"`
			Count int    `json:"count"`
		}{"1", 2},
	} {
		if ps := s.Validate(inst); ps != nil {
			t.Errorf("%#v: %v", inst, ps)
		}
	}
	if ps := s.Validate(map[string]any{"zip": "1", "count": 2.5}); ps == nil {
		t.Error("2.5 is not an integer")
	}
	if ps := s.Validate(json.RawMessage(`{"zip": "1", "count": 2} x`)); ps == nil || !strings.Contains(ps.Error(), "not JSON") {
		t.Errorf("trailing data: %v", ps)
	}
}

// TestHostile: self-reference against a deep value, exponential schemas
// and big values end with a problem or a verdict, quickly.
func TestHostile(t *testing.T) {
	deep := strings.Repeat("[", 9000) + strings.Repeat("]", 9000)
	s := mustCompile(t, `{"items": {"$ref": "#"}}`)
	ps := s.Validate(json.RawMessage(deep))
	if ps == nil || !strings.Contains(ps.Error(), "too deeply") {
		t.Errorf("deep value: %v", ps)
	}
	// 2^40 paths through allOf.
	var b strings.Builder
	b.WriteString(`{"$defs": {"d0": {"type": "integer"}`)
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&b, `, "d%d": {"allOf": [{"$ref": "#/$defs/d%d"}, {"$ref": "#/$defs/d%d"}]}`, i, i-1, i-1)
	}
	b.WriteString(`}, "$ref": "#/$defs/d40"}`)
	s = mustCompile(t, b.String())
	if ps := s.Validate(json.RawMessage(`1`)); ps == nil || !strings.Contains(ps.Error(), "too many steps") {
		t.Errorf("exponential schema: %v", ps)
	}
	// uniqueItems over many items is not quadratic.
	items := make([]any, 200000)
	for i := range items {
		items[i] = fmt.Sprint(i)
	}
	s = mustCompile(t, `{"uniqueItems": true}`)
	if ps := s.Validate(items); ps != nil {
		t.Error(ps)
	}
	// A hundred thousand failing items: the first MaxProblems, then a count.
	s = mustCompile(t, `{"items": {"type": "string"}}`)
	ps = s.Validate(json.RawMessage(`[` + strings.Repeat(`1,`, 99999) + `1]`))
	if len(ps) != MaxProblems+1 || ps[MaxProblems].Message != "and 99980 more problems" || ps[0].Path != "/0" {
		t.Errorf("%d problems, first %v, last %v", len(ps), ps[0], ps[len(ps)-1])
	}
	// A schema nested too deeply says where, briefly.
	_, err := Compile(json.RawMessage(strings.Repeat(`{"items":`, 3000) + `{}` + strings.Repeat(`}`, 3000)))
	if err == nil || !strings.Contains(err.Error(), "more than 2000 levels") || len(err.Error()) > 300 {
		t.Errorf("deep schema: %v", err)
	}
}

func TestConcurrentValidate(t *testing.T) {
	s := mustCompile(t, toolSchema)
	done := make(chan bool)
	for range 4 {
		go func() {
			for range 100 {
				s.Validate(json.RawMessage(`{"zip": 1, "count": 0, "nested": {}}`))
			}
			done <- true
		}()
	}
	for range 4 {
		<-done
	}
}

// TestMalformed: a schema with keywords of the wrong type either compiles
// (the keyword ignored) or is refused with an error; it never panics, nor
// does anything done with it after.
func TestMalformed(t *testing.T) {
	for _, raw := range []string{
		`{"required": "a"}`, `{"properties": []}`, `{"items": 5}`, `{"enum": {}}`, `{"type": 5}`, `{"type": []}`,
		`{"pattern": 5}`, `{"minLength": -1}`, `{"minLength": 1.5}`, `{"maxLength": 1e400}`, `{"minimum": 1e999}`,
		`{"multipleOf": 1e-999}`, `{"$ref": "#/required"}`, `{"required": ["a"], "$ref": "#/required/0"}`,
		`{"$id": "::"}`, `{"$id": "%zz"}`, `{"$id": "http://[::1"}`, `{"$id": "#foo"}`, `{"$ref": 5}`,
		`{"$defs": {"a": {"$anchor": "x", "type": "string"}, "b": {"$anchor": "x"}}, "$ref": "#x"}`,
		`{"$schema": "http://json-schema.org/draft-07/schema#", "properties": {"a": {"$ref": "#/definitions/x", "enum": {}, "type": 7}}, "definitions": {"x": {}}}`,
		`{"$schema": "http://json-schema.org/draft-07/schema#", "$ref": "#/definitions/x", "definitions": {"x": {}}, "properties": {"a": 5, "b": {"enum": 5}}, "required": 5}`,
		`{"allOf": {}}`, `{"anyOf": [5]}`, `{"not": 5}`, `{"dependencies": {"a": 5}}`, `{"dependentRequired": {"a": [5]}}`,
		`{"uniqueItems": "yes"}`, `{"$dynamicRef": "#nope"}`, `{"const": {"type": "string"}, "$ref": "#/const"}`,
		`{"exclusiveMinimum": "x"}`, `{"prefixItems": {}}`, `{"contains": {}, "minContains": -1}`, `{"patternProperties": []}`,
		`{"if": true, "then": 5}`, `{"$schema": "https://json-schema.org/draft/2019-09/schema", "$recursiveRef": "#", "$recursiveAnchor": true}`,
		`{"$ref": "#/$defs/a/00", "$defs": {"a": [{}]}}`, `{"pattern": "\\u{110000}"}`, `{"pattern": "\\u{"}`, `{"pattern": "\\"}`,
		`true`, `false`, `null`, `5`, `"x"`,
	} {
		s, err := Compile(json.RawMessage(raw))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "invalid schema") && !strings.HasPrefix(err.Error(), "schema is not JSON") {
				t.Errorf("%s: unclear error %v", raw, err)
			}
			continue
		}
		s.Properties()
		s.ApplyDefaults(nil)
		for _, inst := range []string{`null`, `"a"`, `5`, `{"a": 1}`, `[1]`} {
			s.Validate(json.RawMessage(inst))
		}
	}
}

// A property's types are its "type" keyword when it has one, even an empty
// array; without one, they are read from its anyOf and oneOf branches.
func TestTypesOf(t *testing.T) {
	for _, c := range []struct {
		name string
		prop map[string]any
		want []string
	}{
		{"a name", map[string]any{"type": "string"}, []string{"string"}},
		{"an array", map[string]any{"type": []any{"string", "null", 3}}, []string{"string", "null"}},
		{"an empty array beside anyOf", map[string]any{"type": []any{}, "anyOf": []any{map[string]any{"type": "integer"}}}, nil},
		{"anyOf only", map[string]any{"anyOf": []any{map[string]any{"type": "integer"}, map[string]any{"type": "null"}}}, []string{"integer", "null"}},
	} {
		if got := typesOf(c.prop); !slices.Equal(got, c.want) {
			t.Errorf("%s: typesOf = %q, want %q", c.name, got, c.want)
		}
	}
}

// A 2019-09 $recursiveRef refers to the schema it names: a tree whose
// nodes have only children is valid, one with another property is not.
func TestRecursiveRef(t *testing.T) {
	s := mustCompile(t, `{
		"$schema": "https://json-schema.org/draft/2019-09/schema",
		"$recursiveAnchor": true,
		"type": "object",
		"properties": {"child": {"$recursiveRef": "#"}},
		"additionalProperties": false
	}`)
	if p := s.Validate(json.RawMessage(`{"child": {"child": {}}}`)); len(p) != 0 {
		t.Errorf("a valid tree: %v", p)
	}
	if p := s.Validate(json.RawMessage(`{"child": {"child": {"x": 1}}}`)); len(p) == 0 {
		t.Error("a node with another property passed")
	}
}
