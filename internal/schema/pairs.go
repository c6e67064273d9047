package schema

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// SplitPair reads a KEY=VALUE or KEY:=JSON pair, as mcpi call's arguments
// and --elicit-field are given.
func SplitPair(pair string) (key, text string, isJSON bool) {
	k, v, _ := strings.Cut(pair, "=")
	if key, ok := strings.CutSuffix(k, ":"); ok {
		return key, v, true
	}
	return k, v, false
}

// PairValue is the value of a pair for property p: JSON as given after
// :=, else the text read as p's type; a value that is no array or object
// where p wants one is refused with how to give it as JSON.
func PairValue(key, text string, isJSON bool, p Property) (any, error) {
	if isJSON {
		var x any
		if err := json.Unmarshal([]byte(text), &x); err != nil {
			return nil, fmt.Errorf("%q is not JSON: %v", text, err)
		}
		return x, nil
	}
	x, err := p.Coerce(text)
	if err != nil {
		if hint := jsonPairHint(key, text, p); hint != "" {
			err = fmt.Errorf("%v: %s", err, hint)
		}
		return nil, err
	}
	return x, nil
}

// jsonPairHint says how to give an array or an object, as JSON after :=:
// for an array, the text split at its commas into items of the type the
// array's items have (an object's shape where they are objects).
func jsonPairHint(key, text string, p Property) string {
	switch {
	case slices.Contains(p.Types, "array"):
		var itemTypes []string
		if items, ok := p.Raw["items"].(map[string]any); ok {
			itemTypes = typesOf(items)
		}
		if slices.Contains(itemTypes, "object") {
			return fmt.Sprintf(`give an array as JSON, e.g. %s:='[{"name":"value"}]'`, key)
		}
		items := []any{}
		if text != "" {
			for _, part := range strings.Split(text, ",") {
				items = append(items, hintItem(strings.TrimSpace(part), itemTypes))
			}
		}
		b, _ := json.Marshal(items)
		return fmt.Sprintf("give an array as JSON, e.g. %s:='%s'", key, b)
	case slices.Contains(p.Types, "object"):
		return fmt.Sprintf(`give an object as JSON, e.g. %s:='{"name":"value"}'`, key)
	}
	return ""
}

// hintItem is part as an item of one of types: a number or a boolean
// where the items are and part reads as one, else the text.
func hintItem(part string, types []string) any {
	var x any
	if json.Unmarshal([]byte(part), &x) == nil {
		switch x.(type) {
		case float64:
			if slices.Contains(types, "number") || slices.Contains(types, "integer") {
				return json.RawMessage(part)
			}
		case bool:
			if slices.Contains(types, "boolean") {
				return x
			}
		}
	}
	return part
}

// FieldNames lists the properties of s, sorted, for a message.
func FieldNames(s *Schema) string {
	var names []string
	for _, p := range s.Properties() {
		names = append(names, p.Name)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
