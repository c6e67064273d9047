package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Change is one difference between two JSON values.
type Change struct {
	// Path locates the value: "result.content[0].text".
	Path string
	// Old and New are the values as compact JSON; empty when absent.
	Old, New string
}

func (c Change) String() string {
	switch {
	case c.Old == "":
		return fmt.Sprintf("+ %s: %s", c.Path, c.New)
	case c.New == "":
		return fmt.Sprintf("- %s: %s", c.Path, c.Old)
	}
	return fmt.Sprintf("~ %s: %s → %s", c.Path, c.Old, c.New)
}

// Ignore is a set of paths whose values are not compared. A pattern is a
// dotted path where "*" matches any one key or index and a trailing ".**"
// (or nothing) covers everything below: "result._meta",
// "result.content[*].text", "result.structuredContent.*.observed".
type Ignore []string

func (ig Ignore) match(path []string) bool {
	for _, pat := range ig {
		if matchPath(splitPattern(pat), path) {
			return true
		}
	}
	return false
}

// CheckIgnore refuses patterns that would make a verify pass vacuously:
// one that names no path ("", ".", "[", what an unset shell variable
// leaves) or one that ignores a whole answer ("**", "*", "result", "error").
func CheckIgnore(patterns []string) error {
	for _, p := range patterns {
		pat := splitPattern(p)
		switch {
		case len(pat) == 0:
			return fmt.Errorf("--ignore %q names no path (an unset variable?): give a path such as result._meta or result.content[*].text", p)
		case matchPath(pat, []string{"result"}) || matchPath(pat, []string{"error"}):
			return fmt.Errorf("--ignore %q ignores whole answers, so nothing would be compared", p)
		}
	}
	return nil
}

func splitPattern(p string) []string {
	p = strings.ReplaceAll(p, "[", ".")
	p = strings.ReplaceAll(p, "]", "")
	p = strings.TrimPrefix(p, ".")
	var out []string
	for _, s := range strings.Split(p, ".") {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

func matchPath(pat, path []string) bool {
	for i, p := range pat {
		if p == "**" {
			return true
		}
		if i >= len(path) {
			return false
		}
		if p != "*" && p != path[i] {
			return false
		}
	}
	return true // a prefix covers the subtree below it
}

// Diff compares two JSON documents structurally: key order and whitespace
// do not matter, numbers compare by value.
func Diff(old, new []byte, ignore Ignore) ([]Change, error) {
	a, err := decode(old)
	if err != nil {
		return nil, fmt.Errorf("the recorded value is not JSON: %w", err)
	}
	b, err := decode(new)
	if err != nil {
		return nil, fmt.Errorf("the live value is not JSON: %w", err)
	}
	var out []Change
	diffValues(a, b, nil, ignore, &out)
	return out, nil
}

func decode(data []byte) (any, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil
	}
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	err := d.Decode(&v)
	return v, err
}

func render(path []string) string {
	var b strings.Builder
	for i, p := range path {
		if _, err := strconv.Atoi(p); err == nil && i > 0 {
			b.WriteString("[" + p + "]")
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(p)
	}
	if b.Len() == 0 {
		return "(root)"
	}
	return b.String()
}

func compact(v any) string {
	b, _ := json.Marshal(v)
	s := string(b)
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

func diffValues(a, b any, path []string, ig Ignore, out *[]Change) {
	if ig.match(path) {
		return
	}
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			break
		}
		keys := make([]string, 0, len(x)+len(y))
		for k := range x {
			keys = append(keys, k)
		}
		for k := range y {
			if _, ok := x[k]; !ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := append(append([]string(nil), path...), k)
			av, inA := x[k]
			bv, inB := y[k]
			switch {
			case ig.match(p):
			case !inB:
				*out = append(*out, Change{Path: render(p), Old: compact(av)})
			case !inA:
				*out = append(*out, Change{Path: render(p), New: compact(bv)})
			default:
				diffValues(av, bv, p, ig, out)
			}
		}
		return
	case []any:
		y, ok := b.([]any)
		if !ok {
			break
		}
		for i := 0; i < max(len(x), len(y)); i++ {
			p := append(append([]string(nil), path...), strconv.Itoa(i))
			switch {
			case ig.match(p):
			case i >= len(y):
				*out = append(*out, Change{Path: render(p), Old: compact(x[i])})
			case i >= len(x):
				*out = append(*out, Change{Path: render(p), New: compact(y[i])})
			default:
				diffValues(x[i], y[i], p, ig, out)
			}
		}
		return
	case json.Number:
		if y, ok := b.(json.Number); ok {
			fa, errA := x.Float64()
			fb, errB := y.Float64()
			if errA == nil && errB == nil && fa == fb {
				return
			}
		}
	default:
		if a == b {
			return
		}
	}
	*out = append(*out, Change{Path: render(path), Old: compact(a), New: compact(b)})
}
