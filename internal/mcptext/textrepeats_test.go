package mcptext

import (
	"encoding/json"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/mcp"
)

// The structured form of a result is printed after its text unless it
// repeats it: as the text's JSON, or as an object that only wraps the text
// (server-filesystem's read_text_file: {"content": TEXT}).
func TestStructuredThatRepeatsTheTextIsNotPrinted(t *testing.T) {
	text := func(s ...string) []mcp.Content {
		var out []mcp.Content
		for _, x := range s {
			out = append(out, mcp.Content{Type: "text", Text: x})
		}
		return out
	}
	for _, tc := range []struct {
		name       string
		blocks     []mcp.Content
		structured string
		repeats    bool
	}{
		{"the text's JSON", text(`{"sum": 3}`), `{"sum":3}`, true},
		{"a wrapper of the text", text("line one\nline two\n"), `{"content":"line one\nline two\n"}`, true},
		{"a wrapper of the texts joined", text("a", "b"), `{"content":"ab"}`, true},
		{"more than the text", text("hello"), `{"content":"hello","size":5}`, false},
		{"other text", text("hello"), `{"content":"bye"}`, false},
		{"no text", nil, `{"content":"hello"}`, false},
	} {
		if got := TextRepeats(tc.blocks, json.RawMessage(tc.structured)); got != tc.repeats {
			t.Errorf("%s: TextRepeats = %v, want %v", tc.name, got, tc.repeats)
		}
	}
}
