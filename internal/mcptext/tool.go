package mcptext

import (
	"encoding/json"
	"io"
	"strings"

	"github.com/mcpi-dev/mcpi/internal/apps"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/safetext"
	"github.com/mcpi-dev/mcpi/internal/schema"
)

// ToolSig is a tool as tools --signatures prints it.
type ToolSig struct {
	Name      string `json:"name"`
	Signature string `json:"signature"`
	Summary   string `json:"summary,omitempty"`
}

// Signature is a tool's name and arguments on one line:
// get-sum(a: number, b?: number, mode: "fast"|"slow", tags?: string[]).
func Signature(t *mcp.Tool) string {
	s, err := schema.Compile(t.InputSchema)
	if err != nil || len(t.InputSchema) == 0 {
		return t.Name + "(…)"
	}
	var args []string
	for _, p := range s.Properties() {
		name := p.Name
		if !p.Required {
			name += "?"
		}
		args = append(args, name+": "+typeText(p.Types, p.Enum, p.Raw))
	}
	return t.Name + "(" + strings.Join(args, ", ") + ")"
}

// typeText names a property's type compactly.
func typeText(types []string, enum []any, raw map[string]any) string {
	if len(enum) > 0 {
		var vals []string
		for i, v := range enum {
			if i == 5 {
				vals = append(vals, "…")
				break
			}
			b, _ := json.Marshal(v)
			vals = append(vals, string(b))
		}
		return strings.Join(vals, "|")
	}
	if len(types) == 0 {
		return "any"
	}
	out := make([]string, len(types))
	for i, t := range types {
		out[i] = t
		if t == "array" {
			item := "any"
			if items, ok := raw["items"].(map[string]any); ok {
				switch it := items["type"].(type) {
				case string:
					item = it
				}
			}
			out[i] = item + "[]"
		}
	}
	return strings.Join(out, "|")
}

// FirstSentence is a description's first sentence, at most 100 runes.
func FirstSentence(d string) string {
	d = strings.Join(strings.Fields(d), " ")
	if i := strings.Index(d, ". "); i >= 0 {
		d = d[:i+1]
	}
	return safetext.Truncate(d, 100)
}

// Badges names a tool's behaviour hints, and its App: "app"
// when it has one, "app-only" when the model may not see it,
// "model-only" when its App may not call it.
func Badges(t *mcp.Tool) string {
	var b []string
	ui := apps.ToolMeta(t.Meta)
	if ui.HasApp() {
		b = append(b, "app")
	}
	switch {
	case !ui.Visible(apps.Model):
		b = append(b, "app-only")
	case !ui.Visible(apps.App):
		b = append(b, "model-only")
	}
	a := t.Annotations
	if a == nil {
		return strings.Join(b, ",")
	}
	flag := func(p *bool, yes, no string) {
		if p == nil {
			return
		}
		if *p && yes != "" {
			b = append(b, yes)
		} else if !*p && no != "" {
			b = append(b, no)
		}
	}
	flag(a.ReadOnlyHint, "read-only", "")
	flag(a.DestructiveHint, "destructive", "")
	flag(a.IdempotentHint, "idempotent", "")
	flag(a.OpenWorldHint, "open-world", "")
	return strings.Join(b, ",")
}

// PrintTools prints tools as a table of names, badges and descriptions.
func PrintTools(w io.Writer, tools []mcp.Tool) {
	tw := Table(w, "NAME", "ANNOTATIONS", "DESCRIPTION")
	for i := range tools {
		t := &tools[i]
		desc := t.Description
		if title := t.DisplayName(); title != t.Name {
			desc = title + ": " + desc
		}
		if t.Execution != nil && t.Execution.TaskSupport != "" && t.Execution.TaskSupport != "forbidden" {
			desc = "[task " + t.Execution.TaskSupport + "] " + desc
		}
		Row(tw, t.Name, Badges(t), desc)
	}
	tw.Flush()
}
