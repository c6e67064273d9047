// Package strictyaml reads YAML files of mcpi's own (eval cases, model
// settings) as strictly as the collections of mcpi test: a key the Go type
// does not know, or a key written with no value, is refused with its line,
// because a misspelt key must not quietly mean nothing. It imports nothing
// of mcpi.
package strictyaml

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ErrEmpty is the error of a document with nothing in it.
var ErrEmpty = errors.New("the file is empty")

// Decode reads the first YAML document of data into v (a pointer to a
// struct with yaml tags) and returns its root mapping node, for lines. A
// document that is not a mapping is refused, and so is every key v's type
// does not know and every key with no value, each with its line. Of the
// decoder's type errors the first three are kept. Aliases are checked where
// they are used, once per anchor and type, so a "billion laughs" document
// costs no more than its anchors.
func Decode(data []byte, v any) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, ErrEmpty
		}
		return nil, err
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: want a mapping of keys", root.Line)
	}
	if err := CheckKeys(root, reflect.TypeOf(v)); err != nil {
		return nil, err
	}
	if err := root.Decode(v); err != nil {
		return nil, firstErrors(err)
	}
	return root, nil
}

// firstErrors keeps the first three of the YAML decoder's type errors:
// a file may hold thousands, and one says what is wrong.
func firstErrors(err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) || len(te.Errors) <= 3 {
		return err
	}
	return fmt.Errorf("%s (and %d more)", strings.Join(te.Errors[:3], "; "), len(te.Errors)-3)
}

var nodeType = reflect.TypeOf(yaml.Node{})

// checked is a node checked against a type: each is checked once, so that
// aliases repeated many times cost no more than their anchors.
type checked struct {
	n *yaml.Node
	t reflect.Type
}

// CheckKeys refuses, in n, a key that t (a struct with yaml tags; a
// slice, map or pointer of one) does not know, and a key written with no
// value, each with its line. A yaml.Node field is data (a value, a schema):
// not walked.
func CheckKeys(n *yaml.Node, t reflect.Type) error {
	return checkKeys(n, t, map[checked]bool{})
}

func checkKeys(n *yaml.Node, t reflect.Type, seen map[checked]bool) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < 100; i++ {
		n = n.Alias
	}
	if seen[checked{n, t}] {
		return nil
	}
	seen[checked{n, t}] = true
	switch {
	case t == nodeType:
		return nil
	case t.Kind() == reflect.Slice && n.Kind == yaml.SequenceNode:
		for _, c := range n.Content {
			if err := checkKeys(c, t.Elem(), seen); err != nil {
				return err
			}
		}
	case t.Kind() == reflect.Map && n.Kind == yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if noValue(v) {
				return fmt.Errorf("line %d: %s: has no value: give one, or remove the key", k.Line, k.Value)
			}
			if err := checkKeys(v, t.Elem(), seen); err != nil {
				return err
			}
		}
	case t.Kind() == reflect.Struct && n.Kind == yaml.MappingNode:
		known := map[string]reflect.Type{}
		var names []string
		for i := range t.NumField() {
			sf := t.Field(i)
			name, _, _ := strings.Cut(sf.Tag.Get("yaml"), ",")
			if name == "" || name == "-" || !sf.IsExported() {
				continue
			}
			known[name] = sf.Type
			names = append(names, name)
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			ft, ok := known[k.Value]
			if !ok {
				return fmt.Errorf("line %d: unknown key %q (want one of %s)", k.Line, k.Value, strings.Join(names, ", "))
			}
			if noValue(v) {
				return fmt.Errorf("line %d: %s: has no value: give one (\"\" for an empty text), or remove the key", k.Line, k.Value)
			}
			if err := checkKeys(v, ft, seen); err != nil {
				return err
			}
		}
	}
	return nil
}

func noValue(v *yaml.Node) bool {
	return v.Kind == yaml.ScalarNode && v.Tag == "!!null" && v.Value == "" && v.Style == 0
}

// Field is the value of key in the mapping n, or nil.
func Field(n *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}
