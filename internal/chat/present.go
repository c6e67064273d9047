package chat

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/mcpi-dev/mcpi/internal/llm"
	"github.com/mcpi-dev/mcpi/internal/mcp"
)

// Hosts are the host profiles a chat can present the tools as: what that
// host would send its model (../shared/host-limits.md, and mcpi check's
// host rules, for the limits). "" is the tools as the server lists them.
var Hosts = []string{"claude-code", "vscode", "cursor", "openai", "openai-strict", "anthropic", "gemini"}

// Presented is the tool list as the chosen host would send it: the tools,
// the MCP tool each of their names stands for, and what the host did to
// the list (a name prefixed, a tool dropped, a schema rewritten), so that
// an author sees why the model picked what it picked.
type Presented struct {
	Host  string
	Tools []llm.Tool
	// Names maps a name the model sees to the server's tool.
	Names map[string]string
	// Notes say what the host changed, a line each.
	Notes []string
}

// The hosts' name rules, compiled on first use: not at every start of mcpi.
var (
	openAIName    = lazyRegexp(`^[a-zA-Z0-9_-]{1,64}$`)
	anthropicName = lazyRegexp(`^[a-zA-Z0-9_-]{1,128}$`)
	geminiName    = lazyRegexp(`^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$`)
	notNameChar   = lazyRegexp(`[^a-zA-Z0-9_-]`)
)

func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// hostLimit is how many tools a host sends at most ("" for no limit).
var hostLimit = map[string]int{"openai": 128, "openai-strict": 128, "cursor": 40, "vscode": 128}

// Present makes the tool list host would send for a server named server.
// An unknown host is an error that lists the known ones.
func Present(host, server string, tools []mcp.Tool) (*Presented, error) {
	if host != "" && !slices.Contains(Hosts, host) {
		return nil, fmt.Errorf("unknown host %q: one of %s", host, strings.Join(Hosts, ", "))
	}
	p := &Presented{Host: host, Names: map[string]string{}}
	prefix := notNameChar().ReplaceAllString(server, "_")
	for _, t := range tools {
		name := t.Name
		switch host {
		case "claude-code":
			name = "mcp__" + prefix + "__" + t.Name
		case "vscode":
			name = "mcp_" + trunc(prefix, 18) + "_" + t.Name
			if len(name) > 64 {
				p.note("%s: the name is cut to 64 characters (%s)", t.Name, name[:64])
				name = name[:64]
			}
		case "cursor":
			if len(server)+len(t.Name) > 60 {
				p.note("%s: dropped (Cursor leaves out a tool whose server and tool names pass 60 characters)", t.Name)
				continue
			}
		}
		if re := nameRule(host); re != nil && !re.MatchString(name) {
			p.note("%s: dropped (%s refuses the name %q)", t.Name, host, name)
			continue
		}
		if _, dup := p.Names[name]; dup {
			p.note("%s: dropped (a second tool named %q)", t.Name, name)
			continue
		}
		if n := hostLimit[host]; n > 0 && len(p.Tools) >= n {
			p.note("%s: dropped (%s sends at most %d tools)", t.Name, host, n)
			continue
		}
		schema := t.InputSchema
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		switch host {
		case "openai-strict":
			if s, changed := strictSchema(schema); changed {
				schema = s
				p.note("%s: schema rewritten for strict mode (additionalProperties false, every property required, optional ones nullable)", t.Name)
			}
		case "gemini":
			if s, dropped := geminiSchema(schema); len(dropped) > 0 {
				schema = s
				p.note("%s: schema keywords Gemini does not know left out: %s", t.Name, strings.Join(dropped, ", "))
			}
		}
		if name != t.Name {
			p.note("%s: sent as %s", t.Name, name)
		}
		p.Names[name] = t.Name
		p.Tools = append(p.Tools, llm.Tool{Name: name, Description: t.Description, InputSchema: schema})
	}
	return p, nil
}

func (p *Presented) note(format string, args ...any) {
	if len(p.Notes) < 1000 {
		p.Notes = append(p.Notes, fmt.Sprintf(format, args...))
	}
}

func nameRule(host string) *regexp.Regexp {
	switch host {
	case "openai", "openai-strict", "vscode", "claude-code", "cursor":
		return openAIName()
	case "anthropic":
		return anthropicName()
	case "gemini":
		return geminiName()
	}
	return nil
}

func trunc(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// strictSchema rewrites a schema as OpenAI's strict mode needs it: every
// object closed (additionalProperties false) with every property required,
// the optional ones made nullable. changed says it was not so already.
func strictSchema(raw json.RawMessage) (json.RawMessage, bool) {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return raw, false
	}
	changed := false
	var walk func(n any, depth int)
	walk = func(n any, depth int) {
		m, ok := n.(map[string]any)
		if !ok || depth > 32 {
			return
		}
		if props, ok := m["properties"].(map[string]any); ok || m["type"] == "object" {
			if m["additionalProperties"] != false {
				m["additionalProperties"] = false
				changed = true
			}
			req := map[string]bool{}
			if r, ok := m["required"].([]any); ok {
				for _, x := range r {
					if s, ok := x.(string); ok {
						req[s] = true
					}
				}
			}
			var all []any
			for _, k := range sortedKeys(props) {
				all = append(all, k)
				if !req[k] {
					changed = true
					if pm, ok := props[k].(map[string]any); ok {
						nullable(pm)
					}
				}
			}
			if props == nil {
				m["properties"] = map[string]any{}
			}
			m["required"] = append([]any{}, all...)
		}
		for _, k := range []string{"properties", "$defs", "definitions"} {
			if sub, ok := m[k].(map[string]any); ok {
				for _, c := range sub {
					walk(c, depth+1)
				}
			}
		}
		if it, ok := m["items"]; ok {
			walk(it, depth+1)
		}
		for _, k := range []string{"anyOf", "oneOf", "allOf"} {
			if xs, ok := m[k].([]any); ok {
				for _, x := range xs {
					walk(x, depth+1)
				}
			}
		}
	}
	walk(v, 0)
	out, err := json.Marshal(v)
	if err != nil {
		return raw, false
	}
	return out, changed
}

// nullable lets a property be null: its type gains "null".
func nullable(m map[string]any) {
	switch t := m["type"].(type) {
	case string:
		m["type"] = []any{t, "null"}
	case []any:
		if !slices.Contains(t, any("null")) {
			m["type"] = append(t, "null")
		}
	}
}

// geminiKnows are the schema keywords Gemini's function declarations take
// (an OpenAPI subset); the others are left out of what is sent.
var geminiKnows = map[string]bool{"type": true, "format": true, "description": true, "nullable": true, "enum": true,
	"properties": true, "required": true, "items": true, "minItems": true, "maxItems": true, "minimum": true, "maximum": true,
	"title": true, "anyOf": true, "propertyOrdering": true, "default": true, "minLength": true, "maxLength": true, "pattern": true}

// geminiSchema leaves out what Gemini does not know, and names it.
func geminiSchema(raw json.RawMessage) (json.RawMessage, []string) {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return raw, nil
	}
	seen := map[string]bool{}
	var walk func(n any, depth int)
	walk = func(n any, depth int) {
		m, ok := n.(map[string]any)
		if !ok || depth > 32 {
			return
		}
		for k := range m {
			if !geminiKnows[k] {
				seen[k] = true
				delete(m, k)
			}
		}
		if props, ok := m["properties"].(map[string]any); ok {
			for _, c := range props {
				walk(c, depth+1)
			}
		}
		if it, ok := m["items"]; ok {
			walk(it, depth+1)
		}
		if xs, ok := m["anyOf"].([]any); ok {
			for _, x := range xs {
				walk(x, depth+1)
			}
		}
	}
	walk(v, 0)
	out, err := json.Marshal(v)
	if err != nil {
		return raw, nil
	}
	return out, sortedKeys(seen)
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
