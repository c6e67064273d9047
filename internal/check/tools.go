package check

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/schema"
)

// nameRule is what one spec or host accepts as a tool name: 1 to max
// characters, ASCII letters and digits and the punctuation in extra, and
// with letterFirst, a first character that is a letter or "_". (Not
// regular expressions: a {1,128} repetition costs every mcpi process
// half a millisecond to compile.)
type nameRule struct {
	max         int
	extra       string
	letterFirst bool
}

var specToolName = nameRule{max: 128, extra: "_.-"}

func (n nameRule) allowed(c rune) bool {
	return c < 0x80 && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune(n.extra, c))
}

// MatchString reports whether name keeps the rule.
func (n nameRule) MatchString(name string) bool {
	if name == "" || utf8.RuneCountInString(name) > n.max {
		return false
	}
	if n.letterFirst {
		c := name[0]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_') {
			return false
		}
	}
	for _, c := range name {
		if !n.allowed(c) {
			return false
		}
	}
	return true
}

var (
	knownDialects  = []string{"json-schema.org/draft/2020-12/schema", "json-schema.org/draft/2019-09/schema", "json-schema.org/draft-07/schema", "json-schema.org/draft-06/schema", "json-schema.org/draft-04/schema"}
	maxDescription = 4096
)

// builtins are tool names that hosts give their own tools (the agents
// most often pointed at MCP servers): a server tool with the same name may
// be taken for the host's. Checked 2026-11-24 against Claude Code's tools
// reference (code.claude.com/docs/en/settings, "Tools available to
// Claude"), gemini-cli's packages/core/src/tools and Codex's tool specs.
// VS Code's are left out: it names every MCP tool mcp_<server>_<tool>, and
// its own are referenced as #name, apart from them.
var builtins = map[string]string{
	"Bash": "Claude Code", "BashOutput": "Claude Code", "KillShell": "Claude Code", "Read": "Claude Code", "Write": "Claude Code",
	"Edit": "Claude Code", "MultiEdit": "Claude Code", "Glob": "Claude Code", "Grep": "Claude Code", "LS": "Claude Code",
	"WebFetch": "Claude Code", "WebSearch": "Claude Code", "Task": "Claude Code", "TodoWrite": "Claude Code",
	"NotebookEdit": "Claude Code", "NotebookRead": "Claude Code", "ExitPlanMode": "Claude Code", "SlashCommand": "Claude Code", "Skill": "Claude Code",
	"shell": "Codex", "apply_patch": "Codex", "update_plan": "Codex", "view_image": "Codex",
	"read_file": "gemini-cli", "write_file": "gemini-cli", "replace": "gemini-cli", "run_shell_command": "gemini-cli",
	"web_fetch": "gemini-cli", "google_web_search": "gemini-cli", "list_directory": "gemini-cli", "glob": "gemini-cli",
	"search_file_content": "gemini-cli", "read_many_files": "gemini-cli", "save_memory": "gemini-cli", "write_todos": "gemini-cli",
}

func (r *run) tools() {
	caps := r.c.ServerCapabilities()
	items, ok := r.feature("tools", "tools/list", "tools", caps.Tools != nil)
	if !ok {
		return
	}
	r.check(ruleToolsName, ruleToolsNameUnique, ruleToolsDescription, ruleToolsInputSchema, ruleToolsSchemaValid, ruleToolsOutputSchema,
		ruleToolsAnnotations, ruleSecurityDescriptionSize, ruleSecurityShadowing)
	r.toolsListed = true
	var names []string
	var tools []mcp.Tool
	for _, raw := range items {
		var t mcp.Tool
		if err := json.Unmarshal(raw, &t); err != nil {
			r.report(ruleToolsInputSchema, "tools/list", raw, "an item is not a Tool: %v", err)
			continue
		}
		names = append(names, t.Name)
		tools = append(tools, t)
		r.tool(t, raw)
	}
	r.toolList = tools
	r.duplicates("tools/list", "tool", names)
	r.checkUnique(names)
	if r.opts.Call {
		r.callReadOnly(tools)
	}
}

func (r *run) checkUnique(names []string) {
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			r.report(ruleToolsNameUnique, fmt.Sprintf("tool %q", n), nil, "two tools are named %q", n)
		}
		seen[n] = true
	}
}

func (r *run) tool(t mcp.Tool, raw json.RawMessage) {
	subject := fmt.Sprintf("tool %q", t.Name)
	switch {
	case !specToolName.MatchString(t.Name):
		r.report(ruleToolsName, subject, raw, "the name has %d characters%s; the spec asks 1 to 128 of A-Z a-z 0-9 _ - .", utf8.RuneCountInString(t.Name), badChars(t.Name, specToolName))
	}
	if host, ok := builtins[t.Name]; ok {
		r.report(ruleSecurityShadowing, subject, nil, "%s has a built-in tool named %q", host, t.Name)
	}
	if strings.TrimSpace(t.Description) == "" {
		r.report(ruleToolsDescription, subject, raw, "the tool has no description")
	}
	if n := utf8.RuneCountInString(t.Description); n > maxDescription {
		r.report(ruleSecurityDescriptionSize, subject, nil, "the description has %d characters", n)
	}
	fields := map[string]string{"name": t.Name, "title": t.Title, "description": t.Description}
	if t.Annotations != nil {
		fields["annotations.title"] = t.Annotations.Title
		if t.Annotations.ReadOnlyHint != nil && *t.Annotations.ReadOnlyHint && t.Annotations.DestructiveHint != nil && *t.Annotations.DestructiveHint {
			r.report(ruleToolsAnnotations, subject, t.Annotations, "readOnlyHint and destructiveHint are both true")
		}
	}
	r.hiddenText(subject, nil, fields)
	r.icons(subject, t.Icons)
	r.headerAnnotations(subject, t.InputSchema)
	r.inputSchema(subject, t.InputSchema)
	if len(t.OutputSchema) > 0 {
		r.outputSchema(subject, t.OutputSchema)
	}
}

func (r *run) inputSchema(subject string, raw json.RawMessage) {
	if len(raw) == 0 || string(raw) == "null" {
		r.report(ruleToolsInputSchema, subject, nil, "the tool has no inputSchema (an empty one is {\"type\":\"object\"})")
		return
	}
	var root map[string]any
	if err := json.Unmarshal(raw, &root); err != nil {
		r.report(ruleToolsInputSchema, subject, raw, "inputSchema is not a JSON object")
		return
	}
	if root["type"] != "object" {
		r.report(ruleToolsInputSchema, subject, raw, "inputSchema's root type is %s, not \"object\"", show(root["type"]))
	}
	r.schemaValid(subject, "inputSchema", raw, root)
	r.schemaText(subject, raw)
}

func (r *run) outputSchema(subject string, raw json.RawMessage) {
	var root map[string]any
	if err := json.Unmarshal(raw, &root); err != nil {
		r.report(ruleToolsOutputSchema, subject, raw, "outputSchema is not a JSON object")
		return
	}
	if root["type"] != "object" && !mcp.IsModern(r.rev) {
		r.report(ruleToolsOutputSchema, subject, raw, "outputSchema's root type is %s, not \"object\"", show(root["type"]))
	}
	r.schemaValid(subject, "outputSchema", raw, root)
	r.schemaText(subject, raw)
}

// schemaValid compiles a schema and checks its dialect.
func (r *run) schemaValid(subject, which string, raw json.RawMessage, root map[string]any) {
	r.check(ruleToolsSchemaDialect)
	if d, ok := root["$schema"].(string); ok {
		known := false
		for _, k := range knownDialects {
			if strings.Contains(d, k) {
				known = true
			}
		}
		if !known {
			r.report(ruleToolsSchemaDialect, subject, nil, "%s's $schema %q is no JSON Schema dialect clients know", which, d)
		}
	}
	if _, err := schema.Compile(raw); err != nil {
		r.report(ruleToolsSchemaValid, subject, raw, "%s is not a valid JSON Schema: %v", which, err)
	}
}

// schemaText checks the text inside a schema a model reads: property
// names, titles, descriptions, enum values.
func (r *run) schemaText(subject string, raw json.RawMessage) {
	var root any
	if json.Unmarshal(raw, &root) != nil {
		return
	}
	fields := map[string]string{}
	var walk func(v any, ptr string)
	walk = func(v any, ptr string) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				fields["schema key "+ptr+"/"+k] = k
				walk(x, ptr+"/"+k)
			}
		case []any:
			for i, x := range v {
				walk(x, fmt.Sprintf("%s/%d", ptr, i))
			}
		case string:
			fields["schema "+ptr] = v
		}
	}
	walk(root, "")
	r.hiddenText(subject, nil, fields)
}

func show(v any) string {
	if v == nil {
		return "missing"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// badChars lists the characters of name the rule does not allow, as
// ", has ...".
func badChars(name string, rule nameRule) string {
	var bad []string
	seen := map[rune]bool{}
	for _, c := range name {
		if !rule.allowed(c) && !seen[c] {
			seen[c] = true
			bad = append(bad, fmt.Sprintf("%q", c))
		}
	}
	if len(bad) == 0 {
		return ""
	}
	return ", has " + strings.Join(bad, " ")
}

// callReadOnly calls each tool annotated read-only with arguments made
// from its input schema, and checks the result.
func (r *run) callReadOnly(tools []mcp.Tool) {
	r.check(ruleToolsCallResult)
	for _, t := range tools {
		if t.Annotations == nil || t.Annotations.ReadOnlyHint == nil || !*t.Annotations.ReadOnlyHint {
			continue
		}
		if t.Execution != nil && t.Execution.TaskSupport == "required" {
			continue
		}
		subject := fmt.Sprintf("tool %q", t.Name)
		s, err := schema.Compile(t.InputSchema)
		if err != nil {
			continue
		}
		args, ok := sampleArgs(s)
		if !ok {
			continue
		}
		b, _ := json.Marshal(args)
		ctx, cancel := context.WithTimeout(r.ctx, r.opts.Timeout)
		params := mustJSON(mcp.CallToolParams{Name: t.Name, Arguments: b})
		res, err := r.c.Send(ctx, "tools/call", params, nil)
		cancel()
		r.noteAnswer("tools/call", params, res, err)
		if err != nil {
			r.report(ruleToolsCallResult, subject, b, "calling it with %s failed: %v", b, err)
			continue
		}
		if rt, _ := mcp.MemberString(res, "resultType"); rt == mcp.ResultInputRequired {
			continue // it asks the user first: check answers no input request
		}
		var ctr mcp.CallToolResult
		if err := json.Unmarshal(res, &ctr); err != nil {
			r.report(ruleToolsCallResult, subject, res, "the result is not a CallToolResult: %v", err)
			continue
		}
		r.resultChars[t.Name] = resultText(ctr)
		var probe map[string]json.RawMessage
		json.Unmarshal(res, &probe)
		if _, ok := probe["content"]; !ok {
			r.report(ruleToolsCallResult, subject, res, "the result has no content array")
		}
		if len(t.OutputSchema) > 0 && !ctr.IsError {
			if len(ctr.StructuredContent) == 0 {
				r.report(ruleToolsCallResult, subject, res, "the tool declares an outputSchema but returned no structuredContent")
			} else if os, err := schema.Compile(t.OutputSchema); err == nil {
				if ps := os.Validate(ctr.StructuredContent); ps != nil {
					r.report(ruleToolsCallResult, subject, ctr.StructuredContent, "structuredContent does not match the outputSchema: %v", ps)
				}
			}
		}
	}
}

// sampleArgs makes arguments for a schema's required properties: a
// default, the first enum value, or a plain value of the type. ok is false
// when a required property's type is not known.
func sampleArgs(s *schema.Schema) (map[string]any, bool) {
	args := map[string]any{}
	for _, p := range s.Properties() {
		if !p.Required {
			continue
		}
		switch {
		case p.HasDefault:
			args[p.Name] = p.Default
		case len(p.Enum) > 0:
			args[p.Name] = p.Enum[0]
		case len(p.Types) == 0:
			return nil, false
		default:
			switch p.Types[0] {
			case "string":
				args[p.Name] = "mcpi"
			case "integer", "number":
				v := 1.0
				if m, ok := p.Raw["minimum"].(float64); ok && m > v {
					v = m
				}
				args[p.Name] = v
			case "boolean":
				args[p.Name] = false
			case "array":
				args[p.Name] = []any{}
			case "object":
				args[p.Name] = map[string]any{}
			default:
				return nil, false
			}
		}
	}
	if s.Validate(args) != nil {
		return nil, false
	}
	return args, true
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// resultText is how many characters of text a result gives the model:
// its text blocks and its structured content.
func resultText(res mcp.CallToolResult) int {
	n := len(res.StructuredContent)
	for _, c := range res.Content {
		n += utf8.RuneCountInString(c.Text)
	}
	return n
}
