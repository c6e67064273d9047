package collection

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// keyPaths walks the keys a collection's Go types read (their yaml tags),
// giving each key's path from the file's root; "-" marks an element of a
// sequence, "*" a key of the user's (a capture's name, a path).
func keyPaths(t reflect.Type, prefix []string, out *[][]string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == reflect.TypeOf(PathExpects{}):
		keyPaths(reflect.TypeOf(Match{}), append(prefix, "*"), out)
		return
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct:
		keyPaths(t.Elem(), append(prefix, "-"), out)
		return
	case t.Kind() == reflect.Map && t.Key().Kind() == reflect.String && t.Elem().Kind() == reflect.String:
		*out = append(*out, append(append([]string{}, prefix...), "*"))
		return
	case t.Kind() != reflect.Struct:
		return
	}
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if name == "" || name == "-" {
			continue
		}
		p := append(append([]string{}, prefix...), name)
		*out = append(*out, p)
		switch name {
		case "args", "params", "fields", "equals":
			continue // the user's data: a null there is a value
		}
		keyPaths(t.Field(i).Type, p, out)
	}
}

// emptyAt writes a document in which the key at path has no value, and
// returns it with the key's line.
func emptyAt(path []string) (string, int) {
	var b strings.Builder
	indent := ""
	for i, k := range path {
		switch k {
		case "-":
			continue
		case "*":
			k = "x"
		}
		if i > 0 && path[i-1] == "-" {
			b.WriteString(indent + "- " + k + ":")
			indent += "  "
		} else {
			b.WriteString(indent + k + ":")
		}
		if i < len(path)-1 {
			b.WriteString("\n")
		}
		indent += "  "
	}
	b.WriteString("\n")
	return b.String(), len(path) - strings.Count(strings.Join(path, " "), "-")
}

// TestEveryKeyNeedsAValue walks every key of the collection's schema: each
// is known to the parser's list, and written with no value it is refused
// with its line (but snapshot:, a snapshot not taken yet).
func TestEveryKeyNeedsAValue(t *testing.T) {
	var paths [][]string
	keyPaths(reflect.TypeOf(File{}), nil, &paths)
	t.Logf("%d keys", len(paths))
	if len(paths) < 35 {
		t.Fatalf("only %d keys walked", len(paths))
	}
	for _, p := range paths {
		doc, line := emptyAt(p)
		_, err := Parse([]byte(doc))
		name := strings.Join(p, ".")
		if p[len(p)-1] == "snapshot" {
			if err != nil && strings.Contains(err.Error(), "no value") {
				t.Errorf("%s: refused: %v", name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), "has no value") || !strings.HasPrefix(err.Error(), "line "+strconv.Itoa(line)+":") {
			t.Errorf("%s with no value:\n%s\nerr = %v (want line %d)", name, doc, err, line)
		}
	}
	// The same keys with a value, null or empty text, are values.
	for _, doc := range []string{
		"steps: [{call: echo, expect: {path: {x: {equals: null}}}}]",
		"steps: [{call: echo, args: {a: }}]",
		`steps: [{complete: {prompt: p, argument: a, value: ""}}]`,
		"steps: [{call: echo, expect: {snapshot: }}]",
	} {
		if _, err := Parse([]byte(doc)); err != nil {
			t.Errorf("%s: %v", doc, err)
		}
	}
}
