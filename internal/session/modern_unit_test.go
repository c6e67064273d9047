package session

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestToolHeaderParams(t *testing.T) {
	for _, tc := range []struct {
		name, schema string
		want         []string // header names, or nil
		err          string
	}{
		{"none", `{"type":"object","properties":{"a":{"type":"string"}}}`, nil, ""},
		{"one", `{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`, []string{"Region"}, ""},
		{"nested", `{"type":"object","properties":{"o":{"type":"object","properties":{"n":{"type":"integer","x-mcp-header":"N"}}}}}`, []string{"N"}, ""},
		{"boolean", `{"type":"object","properties":{"v":{"type":"boolean","x-mcp-header":"Verbose"}}}`, []string{"Verbose"}, ""},
		{"empty", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":""}}}`, nil, "empty"},
		{"number", `{"type":"object","properties":{"a":{"type":"number","x-mcp-header":"A"}}}`, nil, "only string, integer and boolean"},
		{"object", `{"type":"object","properties":{"a":{"type":"object","x-mcp-header":"A"}}}`, nil, "only string"},
		{"duplicate", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"X"},"b":{"type":"string","x-mcp-header":"x"}}}`, nil, "twice"},
		{"space", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A B"}}}`, nil, "token"},
		{"colon", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A:B"}}}`, nil, "token"},
		{"non-ascii", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Régión"}}}`, nil, "token"},
		{"under items", `{"type":"object","properties":{"a":{"type":"array","items":{"type":"string","x-mcp-header":"A"}}}}`, nil, "reachable"},
		{"under anyOf", `{"type":"object","properties":{"a":{"anyOf":[{"type":"string","x-mcp-header":"A"}]}}}`, nil, "reachable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := toolHeaderParams(json.RawMessage(tc.schema))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, p := range got {
				names = append(names, p.header)
			}
			if strings.Join(names, ",") != strings.Join(tc.want, ",") {
				t.Errorf("headers %v, want %v", names, tc.want)
			}
		})
	}
}
