package schema

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

const toolSchema = `{
	"type": "object",
	"properties": {
		"zip": {"type": "string"},
		"count": {"type": "integer", "minimum": 1},
		"ratio": {"type": "number"},
		"on": {"type": "boolean", "default": true},
		"tags": {"type": "array", "items": {"type": "string"}},
		"opt": {"type": ["string", "null"]},
		"anything": {},
		"mode": {"enum": ["a", "b"]},
		"nested": {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}
	},
	"required": ["zip", "count"]
}`

func TestCoerce(t *testing.T) {
	s, err := Compile(json.RawMessage(toolSchema))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		prop, text string
		want       any
		err        bool
	}{
		{"zip", "02134", "02134", false},
		{"zip", "true", "true", false},
		{"count", "3", int64(3), false},
		{"count", "3.0", int64(3), false},
		{"count", "three", nil, true},
		{"ratio", "0.5", 0.5, false},
		{"on", "false", false, false},
		{"on", "yes", true, false},
		{"on", "True", true, false},
		{"on", "FALSE", false, false},
		{"on", "1", true, false},
		{"on", "0", false, false},
		{"on", "Y", true, false},
		{"on", "Off", false, false},
		{"on", "maybe", nil, true},
		{"on", "2", nil, true},
		{"tags", `["a","b"]`, []any{"a", "b"}, false},
		{"tags", "a", nil, true},
		{"opt", "null", nil, false},
		{"opt", "12", "12", false},
		{"anything", `{"k":1}`, map[string]any{"k": float64(1)}, false},
		{"anything", "plain words", "plain words", false},
		{"mode", "a", "a", false},
		{"nested", `{"x":1}`, map[string]any{"x": int64(1)}, false},
	} {
		p, ok := s.Property(tc.prop)
		if !ok {
			t.Fatalf("no property %s", tc.prop)
		}
		got, err := p.Coerce(tc.text)
		if (err != nil) != tc.err {
			t.Errorf("%s=%s: error %v", tc.prop, tc.text, err)
			continue
		}
		if !tc.err && !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s=%s: got %#v, want %#v", tc.prop, tc.text, got, tc.want)
		}
	}
}

func TestValidateNamesTheField(t *testing.T) {
	s, err := Compile(json.RawMessage(toolSchema))
	if err != nil {
		t.Fatal(err)
	}
	if ps := s.Validate(map[string]any{"zip": "1", "count": 2}); ps != nil {
		t.Errorf("valid value: %v", ps)
	}
	ps := s.Validate(json.RawMessage(`{"zip": 1, "count": 0, "nested": {}}`))
	msg := ps.Error()
	for _, want := range []string{"/zip", "/count", "/nested", "x"} {
		if !strings.Contains(msg, want) {
			t.Errorf("problems %q do not mention %s", msg, want)
		}
	}
	ps = s.Validate(map[string]any{})
	if !strings.Contains(ps.Error(), "zip") || !strings.Contains(ps.Error(), "count") {
		t.Errorf("missing required: %v", ps)
	}
}

func TestPropertyOrderFollowsTheText(t *testing.T) {
	s, _ := Compile(json.RawMessage(toolSchema))
	var names []string
	for _, p := range s.Properties() {
		names = append(names, p.Name)
	}
	want := []string{"zip", "count", "ratio", "on", "tags", "opt", "anything", "mode", "nested"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("order %v", names)
	}
}

func TestNoExternalRefs(t *testing.T) {
	_, err := Compile(json.RawMessage(`{"$ref": "https://example.com/schema.json"}`))
	if err == nil || !strings.Contains(err.Error(), "not followed") {
		t.Errorf("external ref: %v", err)
	}
	s, err := Compile(json.RawMessage(`{"$defs": {"n": {"type": "integer"}}, "type": "object", "properties": {"a": {"$ref": "#/$defs/n"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if ps := s.Validate(json.RawMessage(`{"a": "x"}`)); ps == nil {
		t.Error("local ref not followed")
	}
}

func TestApplyDefaults(t *testing.T) {
	s, _ := Compile(json.RawMessage(toolSchema))
	got := s.ApplyDefaults(map[string]any{"zip": "x"})
	if got["on"] != true || got["zip"] != "x" {
		t.Errorf("defaults: %v", got)
	}
}
