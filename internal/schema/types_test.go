package schema

import (
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
