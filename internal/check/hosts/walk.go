package hosts

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/mcpi-dev/mcpi/internal/schema"
)

// node is one subschema of an inputSchema, with where it is.
type node struct {
	ptr string
	m   map[string]any
	// depth counts the object schemas from the root to this one (the root
	// object is 1).
	depth int
	// property says the node is a property's schema (not the root, an
	// item or a branch of anyOf).
	property bool
}

// subschemaMaps are the keywords whose value maps names to subschemas.
var subschemaMaps = []string{"properties", "$defs", "definitions", "patternProperties", "dependentSchemas"}

// subschemaLists are the keywords whose value is a list of subschemas.
var subschemaLists = []string{"anyOf", "oneOf", "allOf", "prefixItems"}

// subschemaOnes are the keywords whose value is one subschema.
var subschemaOnes = []string{"additionalProperties", "not", "if", "then", "else", "contains", "propertyNames", "unevaluatedProperties", "unevaluatedItems", "additionalItems"}

// walk calls fn for every subschema of root (root first), in a stable
// order.
func walk(root map[string]any, fn func(n node)) {
	if root == nil {
		return
	}
	var visit func(m map[string]any, ptr string, depth int, property bool)
	visit = func(m map[string]any, ptr string, depth int, property bool) {
		if isObject(m) {
			depth++
		}
		fn(node{ptr: ptr, m: m, depth: depth, property: property})
		for _, k := range subschemaMaps {
			sub, _ := m[k].(map[string]any)
			for _, name := range sortedKeys(sub) {
				if s, ok := sub[name].(map[string]any); ok {
					visit(s, ptr+"/"+k+"/"+schema.EscapeToken(name), depth, k == "properties")
				}
			}
		}
		switch items := m["items"].(type) {
		case map[string]any:
			visit(items, ptr+"/items", depth, false)
		case []any:
			for i, x := range items {
				if s, ok := x.(map[string]any); ok {
					visit(s, fmt.Sprintf("%s/items/%d", ptr, i), depth, false)
				}
			}
		}
		for _, k := range subschemaLists {
			list, _ := m[k].([]any)
			for i, x := range list {
				if s, ok := x.(map[string]any); ok {
					visit(s, fmt.Sprintf("%s/%s/%d", ptr, k, i), depth, false)
				}
			}
		}
		for _, k := range subschemaOnes {
			if s, ok := m[k].(map[string]any); ok {
				visit(s, ptr+"/"+k, depth, false)
			}
		}
	}
	visit(root, "", 0, false)
}

// types returns a node's types: its "type" as a list.
func types(m map[string]any) []string { return schema.DeclaredTypes(m) }

func hasType(m map[string]any, t string) bool {
	for _, x := range types(m) {
		if x == t {
			return true
		}
	}
	return false
}

// isObject reports whether a node describes objects: its type says so,
// or it has properties.
func isObject(m map[string]any) bool {
	if hasType(m, "object") {
		return true
	}
	_, ok := m["properties"]
	return ok && m["type"] == nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// at names a place in the inputSchema for a message.
func at(ptr string) string {
	if ptr == "" {
		return "the inputSchema's root"
	}
	return "inputSchema " + ptr
}

// stringList returns a list of strings (the strings of a []any).
func stringList(v any) []string {
	list, _ := v.([]any)
	var out []string
	for _, x := range list {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func quote(s string) string { return fmt.Sprintf("%q", s) }

// jsonText is v as JSON.
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
