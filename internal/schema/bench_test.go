package schema

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

const benchArgs = `{"zip": "02134", "count": 3, "ratio": 0.5, "on": true, "tags": ["a", "b", "c"], "opt": null, "mode": "a", "nested": {"x": 1}}`

// BenchmarkValidate validates a typical tool call's arguments against its
// inputSchema: with this package, and with santhosh-tekuri/jsonschema (what
// mcpi used before) for comparison.
func BenchmarkValidate(b *testing.B) {
	b.Run("ours/compile", func(b *testing.B) {
		for b.Loop() {
			if _, err := Compile(json.RawMessage(toolSchema)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ours/raw", func(b *testing.B) {
		s, _ := Compile(json.RawMessage(toolSchema))
		for b.Loop() {
			if ps := s.Validate(json.RawMessage(benchArgs)); ps != nil {
				b.Fatal(ps)
			}
		}
	})
	b.Run("ours/decoded", func(b *testing.B) {
		s, _ := Compile(json.RawMessage(toolSchema))
		v, _ := ParseJSON(benchArgs)
		for b.Loop() {
			if ps := s.Validate(v); ps != nil {
				b.Fatal(ps)
			}
		}
	})
	b.Run("ours/invalid", func(b *testing.B) {
		s, _ := Compile(json.RawMessage(toolSchema))
		for b.Loop() {
			if ps := s.Validate(json.RawMessage(`{"zip": 1, "count": 0, "nested": {}}`)); ps == nil {
				b.Fatal("valid")
			}
		}
	})
	b.Run("santhosh/compile", func(b *testing.B) {
		for b.Loop() {
			santhosh(b, toolSchema)
		}
	})
	b.Run("santhosh/raw", func(b *testing.B) {
		s := santhosh(b, toolSchema)
		for b.Loop() {
			v, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(benchArgs)))
			if err != nil {
				b.Fatal(err)
			}
			if err := s.Validate(v); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func santhosh(tb testing.TB, schema string) *jsonschema.Schema {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(schema)))
	if err != nil {
		tb.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource("mcpi:///schema.json", doc); err != nil {
		tb.Fatal(err)
	}
	s, err := c.Compile("mcpi:///schema.json")
	if err != nil {
		tb.Fatal(err)
	}
	return s
}
