package eval

import (
	"encoding/json"
	"fmt"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/surface"
)

// ToolsFrom is the tool list the model is shown with --tools-from: the
// snapshot's tools (names, descriptions, schemas, annotations), so that an
// author measures an edited description before shipping it; the calls
// still go to the server, by name. Notes say what differs from the
// server's list: a tool of the snapshot the server does not have (its
// calls will fail), a tool of the server the snapshot leaves out (the
// model is not shown it).
func ToolsFrom(snap *surface.Snapshot, server []mcp.Tool) ([]mcp.Tool, []string, error) {
	if snap.Tools == nil {
		return nil, nil, fmt.Errorf("the snapshot holds no tool list")
	}
	have := map[string]bool{}
	for _, t := range server {
		have[t.Name] = true
	}
	var out []mcp.Tool
	var notes []string
	shown := map[string]bool{}
	for i, e := range snap.Tools {
		b, err := json.Marshal(e)
		if err != nil {
			return nil, nil, fmt.Errorf("tool %d of the snapshot: %w", i+1, err)
		}
		var t mcp.Tool
		if err := json.Unmarshal(b, &t); err != nil || t.Name == "" {
			return nil, nil, fmt.Errorf("tool %d of the snapshot is not a tool", i+1)
		}
		if !have[t.Name] {
			notes = append(notes, fmt.Sprintf("%s: in the snapshot, not on the server: its calls will fail", t.Name))
		}
		shown[t.Name] = true
		out = append(out, t)
	}
	for _, t := range server {
		if !shown[t.Name] {
			notes = append(notes, fmt.Sprintf("%s: on the server, not in the snapshot: the model is not shown it", t.Name))
		}
	}
	return out, notes, nil
}
