package collection

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// shape is what a collection's node may be: a mapping of known keys
// (keys, each with the shape of its value), a mapping of any keys whose
// values have one shape (values), a sequence of one shape (items), a
// scalar or a sequence of them (neither), or data written by the user
// (a tool's arguments: anything, not walked).
type shape struct {
	keys   []key
	values *shape
	items  *shape
	data   bool
	// mayBeEmpty says the key may be written with no value (snapshot:,
	// a snapshot not taken yet).
	mayBeEmpty bool
}

type key struct {
	name string
	*shape
}

var (
	scalar    = &shape{}
	data      = &shape{data: true}
	matchKeys = &shape{keys: []key{{"equals", data}, {"contains", scalar}, {"matches", scalar}}}
	stepShape = &shape{keys: []key{
		{"name", scalar}, {"call", scalar}, {"prompt", scalar}, {"read", scalar}, {"request", scalar},
		{"complete", &shape{keys: []key{{"prompt", scalar}, {"template", scalar}, {"argument", scalar}, {"value", scalar},
			{"context", &shape{values: scalar}}}}},
		{"args", data}, {"params", data},
		{"answers", &shape{keys: []key{{"sampling", &shape{keys: []key{{"model", scalar}}}}, {"elicit", scalar}, {"fields", data}, {"roots", scalar}}}},
		{"expect", &shape{keys: []key{
			{"error", &shape{keys: []key{{"code", scalar}, {"message", matchKeys}}}},
			{"isError", scalar}, {"text", matchKeys}, {"path", &shape{values: matchKeys}},
			{"outputSchema", scalar}, {"count", scalar}, {"maxDuration", scalar},
			{"snapshot", &shape{mayBeEmpty: true}},
		}}},
		{"capture", &shape{values: scalar}},
	}}
	// fileShape is every key a collection may have, and the shape of its
	// value: the one list the parser checks a file against.
	fileShape = &shape{keys: []key{
		{"server", &shape{keys: []key{{"command", scalar}, {"url", scalar}, {"config", scalar}}}},
		{"secrets", scalar},
		{"steps", &shape{items: stepShape}},
	}}
)

func (s *shape) names() []string {
	out := make([]string, len(s.keys))
	for i, k := range s.keys {
		out[i] = k.name
	}
	return out
}

func (s *shape) lookup(name string) *shape {
	for _, k := range s.keys {
		if k.name == name {
			return k.shape
		}
	}
	return nil
}

// noValue reports whether n was written with nothing after its key
// ("text:"): an explicit null (null, ~) is a value.
func noValue(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null" && n.Value == "" && n.Style == 0
}

// checkShape refuses, in n, a key the shape does not know (a misspelt
// expectation must not pass by expecting nothing) and a key written with
// no value (it would expect nothing too), each with its line. Aliases
// are followed and merged mappings (<<) checked as if written in place;
// seen keeps each node checked once per shape.
func checkShape(n *yaml.Node, s *shape, seen map[shapeAt]bool) error {
	n = resolve(n)
	if n == nil || s.data || seen[shapeAt{n, s}] {
		return nil
	}
	seen[shapeAt{n, s}] = true
	switch {
	case n.Kind == yaml.SequenceNode && s.items != nil:
		for _, c := range n.Content {
			if err := checkShape(c, s.items, seen); err != nil {
				return err
			}
		}
	case n.Kind == yaml.MappingNode && (s.keys != nil || s.values != nil):
		for _, m := range merged(n) {
			if err := checkShape(m, s, seen); err != nil {
				return err
			}
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Value == "<<" && !(k.Tag == "!!str" && k.Style != 0) {
				continue
			}
			sub := s.values
			if sub == nil {
				if sub = s.lookup(k.Value); sub == nil {
					return fmt.Errorf("line %d: unknown key %q (want one of %s)", k.Line, k.Value, strings.Join(s.names(), ", "))
				}
			}
			if noValue(v) && !sub.mayBeEmpty {
				return fmt.Errorf("line %d: %s: has no value: give one (\"\" for an empty text), or remove the key", k.Line, k.Value)
			}
			if err := checkShape(v, sub, seen); err != nil {
				return err
			}
		}
	}
	return nil
}

type shapeAt struct {
	n *yaml.Node
	s *shape
}
