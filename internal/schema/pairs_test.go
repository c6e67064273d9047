package schema

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestPairValueHints: a value that is no array or object where the schema
// wants one is refused with JSON that would fit: the items in their type,
// an object's shape where the items are objects.
func TestPairValueHints(t *testing.T) {
	s, err := CompileInput(json.RawMessage(`{"type":"object","properties":{
		"tags":{"type":"array","items":{"type":"string"}},
		"ids":{"type":"array","items":{"type":"integer"}},
		"flags":{"type":"array","items":{"type":"boolean"}},
		"edits":{"type":"array","items":{"type":"object","properties":{"old":{"type":"string"}}}},
		"any":{"type":"array"},
		"opts":{"type":"object"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	props := map[string]Property{}
	for _, p := range s.Properties() {
		props[p.Name] = p
	}
	for _, tc := range []struct{ key, text, want string }{
		{"tags", "a, b", `tags:='["a","b"]'`},
		{"ids", "1,2", `ids:='[1,2]'`},
		{"ids", "1,x", `ids:='[1,"x"]'`},
		{"flags", "true", `flags:='[true]'`},
		{"edits", "x", `edits:='[{"name":"value"}]'`},
		{"any", "1,a", `any:='["1","a"]'`},
		{"opts", "x", `opts:='{"name":"value"}'`},
	} {
		_, err := PairValue(tc.key, tc.text, false, props[tc.key])
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s=%s: %v; want a hint with %s", tc.key, tc.text, err, tc.want)
		}
	}
}
