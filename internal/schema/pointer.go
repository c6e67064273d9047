package schema

import (
	"fmt"
	"strconv"
	"strings"
)

// JSON pointers (RFC 6901) and the type keyword, for the packages that
// walk schemas and documents as plain JSON values.

// SplitPointer splits a JSON pointer into its unescaped tokens ("" is the
// whole document).
func SplitPointer(p string) ([]string, error) {
	if p == "" {
		return nil, nil
	}
	if !strings.HasPrefix(p, "/") {
		return nil, fmt.Errorf("%q is not a JSON pointer: it must start with \"/\"", p)
	}
	toks := strings.Split(p[1:], "/")
	for i, t := range toks {
		toks[i] = unescapeToken(t)
	}
	return toks, nil
}

// EscapeToken escapes one token of a JSON pointer.
func EscapeToken(s string) string { return escapeToken(s) }

// Lookup returns the value at toks in v, a decoded JSON value.
func Lookup(v any, toks []string) (any, bool) {
	for _, t := range toks {
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[t]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(t)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// DeclaredTypes reads a schema's "type" keyword as a list (a name, or the
// names of a type array); nil when it has none.
func DeclaredTypes(node map[string]any) []string {
	switch t := node["type"].(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, x := range t {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}
