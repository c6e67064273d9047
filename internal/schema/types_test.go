package schema

import (
	"encoding/json"
	"slices"
	"testing"
)

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
	s, err := Compile(json.RawMessage(`{
		"$schema": "https://json-schema.org/draft/2019-09/schema",
		"$recursiveAnchor": true,
		"type": "object",
		"properties": {"child": {"$recursiveRef": "#"}},
		"additionalProperties": false
	}`))
	if err != nil {
		t.Fatal(err)
	}
	if p := s.Validate(json.RawMessage(`{"child": {"child": {}}}`)); len(p) != 0 {
		t.Errorf("a valid tree: %v", p)
	}
	if p := s.Validate(json.RawMessage(`{"child": {"child": {"x": 1}}}`)); len(p) == 0 {
		t.Error("a node with another property passed")
	}
}
