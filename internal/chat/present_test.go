package chat

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/mcp"
)

// TestPresent: each host's tool list is what that host sends its model:
// names prefixed, tools it refuses dropped and said, strict schemas
// rewritten, keywords a host does not know left out.
func TestPresent(t *testing.T) {
	tools := []mcp.Tool{
		{Name: "search", Description: "Search", InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"},"limit":{"type":"integer"}},"required":["q"]}`)},
		{Name: "fs.read", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"additionalProperties":false,"$schema":"https://json-schema.org/draft/2020-12/schema"}`)},
		{Name: "noschema"},
	}
	for _, tc := range []struct {
		host  string
		names []string
		notes []string
	}{
		{"", []string{"search", "fs.read", "noschema"}, nil},
		{"claude-code", []string{"mcp__my-server__search", "mcp__my-server__noschema"}, []string{"fs.read: dropped (claude-code refuses the name \"mcp__my-server__fs.read\")", "search: sent as mcp__my-server__search"}},
		{"vscode", []string{"mcp_my-server_search", "mcp_my-server_noschema"}, nil},
		{"openai-strict", []string{"search", "noschema"}, []string{"search: schema rewritten for strict mode"}},
		{"gemini", []string{"search", "fs.read", "noschema"}, []string{"fs.read: schema keywords Gemini does not know left out: $schema, additionalProperties"}},
		{"anthropic", []string{"search", "noschema"}, []string{"fs.read: dropped"}},
	} {
		p, err := Present(tc.host, "my-server", tools)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, x := range p.Tools {
			names = append(names, x.Name)
			if p.Names[x.Name] == "" {
				t.Errorf("%s: %s stands for no tool", tc.host, x.Name)
			}
		}
		if strings.Join(names, ",") != strings.Join(tc.names, ",") {
			t.Errorf("%s: names %v, want %v", tc.host, names, tc.names)
		}
		notes := strings.Join(p.Notes, "\n")
		for _, n := range tc.notes {
			if !strings.Contains(notes, n) {
				t.Errorf("%s: the notes lack %q:\n%s", tc.host, n, notes)
			}
		}
	}
	p, _ := Present("openai-strict", "s", tools[:1])
	var s map[string]any
	json.Unmarshal(p.Tools[0].InputSchema, &s)
	if s["additionalProperties"] != false || len(s["required"].([]any)) != 2 {
		t.Errorf("strict schema: %s", p.Tools[0].InputSchema)
	}
	if typ := s["properties"].(map[string]any)["limit"].(map[string]any)["type"]; typ.([]any)[1] != "null" {
		t.Errorf("an optional property is not nullable: %v", typ)
	}
	if _, err := Present("nosuch", "s", tools); err == nil || !strings.Contains(err.Error(), "claude-code") {
		t.Errorf("an unknown host: %v", err)
	}
}
