package schema

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestFormats(t *testing.T) {
	cases := []struct {
		format         string
		valid, invalid []string
	}{
		{"email", []string{"name@example.com", "a.b+c@sub.example.org", `"odd local"@example.com`, "x@[192.0.2.1]"}, []string{"bob", "bob@", "@example.com", "a..b@example.com", "a b@example.com", "x@-bad-.com"}},
		{"uri", []string{"https://example.com/path?q=1#f", "file:///tmp/x", "urn:isbn:0451450523", "mailto:x@y.z"}, []string{"example.com/path", "/relative", "http://exa mple.com", "not a uri at all::", ""}},
		{"uri-reference", []string{"https://example.com", "../path?q=1", "#frag", "", "/abs/path"}, []string{"a b", "<x>", `back\slash`}},
		{"date", []string{"2025-11-25", "2024-02-29"}, []string{"2025-02-30", "25-11-25", "2025/11/25", "2025-11-25T00:00:00Z", "2023-02-29"}},
		{"time", []string{"13:45:00Z", "13:45:00.123+01:00", "23:59:60Z"}, []string{"13:45", "25:00:00Z", "13:45:00", "12:59:60Z"}},
		{"date-time", []string{"2025-11-25T13:45:00Z", "2025-11-25t13:45:00.5-05:00"}, []string{"2025-11-25", "2025-11-25 13:45:00Z", "2025-11-25T13:45:00", "2025-13-01T00:00:00Z"}},
		{"uuid", []string{"123e4567-e89b-12d3-a456-426614174000", "123E4567-E89B-12D3-A456-426614174000"}, []string{"123e4567e89b12d3a456426614174000", "123e4567-e89b-12d3-a456-42661417400g", "x"}},
		{"ipv4", []string{"192.0.2.1", "0.0.0.0"}, []string{"256.0.0.1", "1.2.3", "01.2.3.4", "::1"}},
		{"ipv6", []string{"2001:db8::1", "::1", "::ffff:192.0.2.1"}, []string{"192.0.2.1", "2001:db8::g", "fe80::1%eth0", ":::"}},
		{"hostname", []string{"example.com", "a-b.example", "localhost", "example.com."}, []string{"-bad.com", "a_b.com", "ex ample.com", "", strings.Repeat("a", 64) + ".com"}},
	}
	for _, tc := range cases {
		raw := json.RawMessage(`{"type":"object","properties":{"v":{"type":"string","format":"` + tc.format + `"}}}`)
		asserted, err := Compile(raw, AssertFormats())
		if err != nil {
			t.Fatal(err)
		}
		annotated, _ := Compile(raw)
		for _, v := range tc.valid {
			if ps := asserted.Validate(map[string]any{"v": v}); ps != nil {
				t.Errorf("%s %q: %v, want valid", tc.format, v, ps)
			}
		}
		for _, v := range tc.invalid {
			ps := asserted.Validate(map[string]any{"v": v})
			if len(ps) != 1 || ps[0].Path != "/v" || !strings.Contains(ps[0].Message, "is not a valid "+tc.format+": expected ") {
				t.Errorf("%s %q: %v, want one problem at /v naming the format and the expected form", tc.format, v, ps)
			}
			// 2020-12 makes format an annotation: without the option the
			// validator follows the specification.
			if ps := annotated.Validate(map[string]any{"v": v}); ps != nil {
				t.Errorf("%s %q without AssertFormats: %v", tc.format, v, ps)
			}
		}
	}
}

func TestFormatProblem(t *testing.T) {
	if got := FormatProblem("email", "bob"); got != "'bob' is not a valid email: expected an email address, like name@example.com" {
		t.Errorf("email: %q", got)
	}
	if got := FormatProblem("email", "bob@example.com"); got != "" {
		t.Errorf("valid email: %q", got)
	}
	if got := FormatProblem("color", "nope"); got != "" {
		t.Errorf("an unknown format is an annotation: %q", got)
	}
}

// A format under a $ref and in array items is asserted too, and draft-07
// asserts it without the option.
func TestFormatsNested(t *testing.T) {
	raw := json.RawMessage(`{"$defs":{"when":{"type":"string","format":"date"}},"type":"object","properties":{"days":{"type":"array","items":{"$ref":"#/$defs/when"}}}}`)
	s, err := Compile(raw, AssertFormats())
	if err != nil {
		t.Fatal(err)
	}
	ps := s.Validate(map[string]any{"days": []any{"2025-01-01", "tomorrow"}})
	if len(ps) != 1 || ps[0].Path != "/days/1" {
		t.Errorf("problems = %v", ps)
	}
	d7, _ := Compile(json.RawMessage(`{"$schema":"http://json-schema.org/draft-07/schema#","format":"hostname"}`))
	if ps := d7.Validate("no_underscores"); ps == nil {
		t.Error("draft-07 does not assert hostname")
	}
}
