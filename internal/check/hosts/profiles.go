package hosts

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/mcpi-dev/mcpi/internal/schema"
)

// Profiles returns every host's profile, in the order the report shows
// them. The numbers are data with their sources, checked on Checked: they
// drift (OpenAI strict went from 100 to 5,000 properties; Anthropic names
// from 64 to 128 characters; Cursor's tool cap from 40 to 80).
func Profiles() []*Host { return profiles() }

var profiles = sync.OnceValue(func() []*Host {
	return []*Host{openAI(), openAIStrict(), anthropic(), anthropicStrict(), gemini(), vsCode(), cursor(), windsurf(), claudeDesktop(), claudeCode()}
})

// The name patterns of the hosts.
var (
	openaiName    = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)
	anthropicName = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)
	geminiName    = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_.:-]*$`)
	geminiParam   = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)
	vscodeName    = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)
)

// nameRule is a rule on a tool's name: it matches pattern (nil: any),
// and it, or the name a host makes of it (effective: the host's prefix and
// the server's name, made of the characters the host allows), has at most
// max characters.
func nameRule(r *Rule, pattern *regexp.Regexp, max int, effective func(t *Tool, env Env) (string, string)) *Rule {
	r.tool = func(t *Tool, env Env) []Problem {
		var why []string
		if pattern != nil && !pattern.MatchString(t.Name) {
			why = append(why, "characters it does not take: "+badChars(t.Name, pattern))
		}
		name, how := t.Name, ""
		if effective != nil {
			name, how = effective(t, env)
		}
		if n := utf8.RuneCountInString(name); n > max {
			why = append(why, fmt.Sprintf("%d characters, more than %d", n, max))
		}
		if len(why) == 0 {
			return nil
		}
		subject := "the name " + quote(name)
		if how != "" {
			subject += " (" + how + ")"
		}
		return []Problem{{Message: subject + " has " + strings.Join(why, "; ")}}
	}
	return r
}

// serverPart is the server's name as hosts put it in a tool's name: the
// characters they do not allow made _.
var serverJunk = regexp.MustCompile(`[^a-zA-Z0-9_-]`)

func serverPart(env Env) string { return serverJunk.ReplaceAllString(env.Server, "_") }

// badChars lists the characters of name that pattern does not allow.
func badChars(name string, pattern *regexp.Regexp) string {
	var bad []string
	for _, r := range name {
		if !pattern.MatchString(string(r)) && !slices.Contains(bad, quote(string(r))) {
			bad = append(bad, quote(string(r)))
		}
	}
	if len(bad) == 0 {
		return "its first character"
	}
	return strings.Join(bad, " ")
}

// countRule is a limit on how many tools a request holds.
func countRule(r *Rule, max int) *Rule {
	r.PerRequest = true
	r.server = func(ts []Tool, env Env) []Problem {
		if len(ts) <= max {
			return nil
		}
		return []Problem{{Message: fmt.Sprintf("the server lists %d tools, more than %d (judged for this server alone: a host adds every server's tools)", len(ts), max)}}
	}
	return r
}

// nodeRule is a rule every subschema of a tool's inputSchema must keep:
// fn returns what is wrong with one ("" when nothing).
func nodeRule(r *Rule, fn func(n node) string) *Rule {
	r.tool = func(t *Tool, env Env) []Problem {
		var ps []Problem
		walk(t.Schema, func(n node) {
			if msg := fn(n); msg != "" {
				ps = append(ps, Problem{Pointer: n.ptr, Message: at(n.ptr) + " " + msg})
			}
		})
		return ps
	}
	return r
}

// rootRule is a rule on the inputSchema's root.
func rootRule(r *Rule, fn func(t *Tool) string) *Rule {
	r.tool = func(t *Tool, env Env) []Problem {
		if msg := fn(t); msg != "" {
			return []Problem{{Message: msg}}
		}
		return nil
	}
	return r
}

// src is a rule's source with the date it was checked.
func src(s string) string { return s + " (checked " + Checked + ")" }

func rootNotObject(t *Tool) string {
	if t.Schema == nil {
		return "the inputSchema is not a JSON object"
	}
	if t.Schema["type"] != "object" {
		return fmt.Sprintf("the inputSchema's root type is %s, not \"object\"", show(t.Schema["type"]))
	}
	return ""
}

func rootCombinator(t *Tool) string {
	for _, k := range []string{"oneOf", "anyOf", "allOf"} {
		if _, ok := t.Schema[k]; ok {
			return "the inputSchema has " + k + " at its root"
		}
	}
	return ""
}

func show(v any) string {
	if v == nil {
		return "missing"
	}
	return fmt.Sprint(jsonText(v))
}

func openAI() *Host {
	return &Host{ID: "openai", Name: "OpenAI (function calling)", Rules: []*Rule{
		nameRule(&Rule{ID: "openai/name-pattern", Summary: "A function name has only letters, digits, _ and -.", Effect: RejectRequest, Confidence: Documented,
			Source: src("openai-python types/shared_params/function_definition.py; vercel/ai #1972"), Fix: "rename the tool with [a-zA-Z0-9_-] only"}, openaiName, 1<<30, nil),
		nameRule(&Rule{ID: "openai/name-length", Summary: "A function name has at most 64 characters.", Effect: RejectRequest, Confidence: Documented,
			Source: src("openai-python function_definition.py; microsoft/foundry-dev-tools #201")}, nil, 64, nil),
		countRule(&Rule{ID: "openai/max-tools", Summary: "A request holds at most 128 tools.", Effect: RejectRequest, Confidence: Reported,
			Source: src("array_above_max_length, zed-industries/zed #32946")}, 128),
		rootRule(&Rule{ID: "openai/description-length", Summary: "A function description has at most 1,024 characters (string_above_max_length).", Effect: RejectRequest, Confidence: Reported,
			Source: src("getsentry/sentry-mcp #106; OpenHands #4838"), Fix: "shorten the description to 1,024 characters"}, func(t *Tool) string {
			if n := utf8.RuneCountInString(t.Description); n > 1024 {
				return fmt.Sprintf("the description has %d characters, more than 1,024", n)
			}
			return ""
		}),
		nodeRule(&Rule{ID: "openai/object-needs-properties", Summary: "An object schema has \"properties\" (\"object schema missing properties\").", Effect: RejectRequest, Confidence: Reported,
			Source: src("openai-agents-python #449; containers/kubernetes-mcp-server #717"), Fix: "add \"properties\": {} to a tool without arguments"}, func(n node) string {
			if hasType(n.m, "object") && n.m["properties"] == nil && n.ptr == "" {
				return "is an object without \"properties\""
			}
			return ""
		}),
	}}
}

// The keywords and formats OpenAI's strict mode (Structured Outputs)
// supports.
var (
	openaiStrictKeywords = setOf("type", "properties", "required", "additionalProperties", "items", "anyOf", "enum", "const", "description", "title",
		"pattern", "format", "multipleOf", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minItems", "maxItems", "$defs", "definitions", "$ref", "$schema", "$id", "$comment", "default", "examples")
	openaiStrictFormats = setOf("date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid")
)

func openAIStrict() *Host {
	return &Host{ID: "openai-strict", Name: "OpenAI strict mode (Structured Outputs)", OptIn: true, Rules: []*Rule{
		rootRule(&Rule{ID: "openai-strict/root", Summary: "The root is an object schema, not anyOf.", Effect: Rewrite, Confidence: Documented,
			Source: src("OpenAI Structured Outputs, supported schemas")}, func(t *Tool) string {
			if msg := rootNotObject(t); msg != "" {
				return msg
			}
			if _, ok := t.Schema["anyOf"]; ok {
				return "the inputSchema has anyOf at its root"
			}
			return ""
		}),
		nodeRule(&Rule{ID: "openai-strict/additional-properties", Summary: "Every object sets additionalProperties: false, at every level.", Effect: Rewrite, Confidence: Documented,
			Source: src("OpenAI Structured Outputs; openai-agents strict_schema.py"), Fix: "add \"additionalProperties\": false to every object"}, func(n node) string {
			if isObject(n.m) && n.m["additionalProperties"] != false {
				return "is an object without \"additionalProperties\": false"
			}
			return ""
		}),
		nodeRule(&Rule{ID: "openai-strict/all-required", Summary: "Every property is required (optional ones are unions with null).", Effect: Rewrite, Confidence: Documented,
			Source: src("OpenAI Structured Outputs"), Fix: "list every property in \"required\" and make optional ones accept null"}, func(n node) string {
			props, _ := n.m["properties"].(map[string]any)
			req := stringList(n.m["required"])
			var missing []string
			for _, k := range sortedKeys(props) {
				if !slices.Contains(req, k) {
					missing = append(missing, quote(k))
				}
			}
			if len(missing) > 0 {
				return "does not require " + strings.Join(missing, ", ")
			}
			return ""
		}),
		nodeRule(&Rule{ID: "openai-strict/keywords", Summary: "Only the supported keywords and string formats are used (no allOf, oneOf, not, if, uniqueItems, minLength…).", Effect: Rewrite, Confidence: Documented,
			Source: src("OpenAI Structured Outputs, supported properties; posit-dev/chatlas #255; coder/mux #1220")}, func(n node) string {
			var bad []string
			for _, k := range sortedKeys(n.m) {
				if !openaiStrictKeywords[k] && !strings.HasPrefix(k, "x-") {
					bad = append(bad, quote(k))
				}
			}
			if f, ok := n.m["format"].(string); ok && !openaiStrictFormats[f] {
				bad = append(bad, "format "+quote(f))
			}
			if len(bad) > 0 {
				return "uses " + strings.Join(bad, ", ")
			}
			return ""
		}),
		rootRule(&Rule{ID: "openai-strict/size", Summary: "At most 5,000 properties, 10 levels of nesting, 1,000 enum values and 120,000 characters of names and values in one schema.", Effect: Rewrite, Confidence: Documented,
			Source: src("OpenAI Structured Outputs, limitations")}, strictSize),
	}}
}

// strictSize checks OpenAI strict mode's size limits on one schema.
func strictSize(t *Tool) string {
	props, depth, enums, chars := 0, 0, 0, 0
	walk(t.Schema, func(n node) {
		if p, ok := n.m["properties"].(map[string]any); ok {
			props += len(p)
			for k := range p {
				chars += len(k)
			}
		}
		depth = max(depth, n.depth)
		if e, ok := n.m["enum"].([]any); ok {
			enums += len(e)
			for _, v := range e {
				if s, ok := v.(string); ok {
					chars += len(s)
				}
			}
		}
		if s, ok := n.m["const"].(string); ok {
			chars += len(s)
		}
	})
	var over []string
	if props > 5000 {
		over = append(over, fmt.Sprintf("%d properties (at most 5,000)", props))
	}
	if depth > 10 {
		over = append(over, fmt.Sprintf("%d levels of nesting (at most 10)", depth))
	}
	if enums > 1000 {
		over = append(over, fmt.Sprintf("%d enum values (at most 1,000)", enums))
	}
	if chars > 120000 {
		over = append(over, fmt.Sprintf("%d characters of names and values (at most 120,000)", chars))
	}
	if len(over) == 0 {
		return ""
	}
	return "the inputSchema has " + strings.Join(over, ", ")
}

func anthropic() *Host {
	return &Host{ID: "anthropic", Name: "Anthropic (Messages API)", Rules: anthropicRules()}
}

// anthropicRules are the Messages API's rules, which Claude Code keeps too.
func anthropicRules() []*Rule {
	return []*Rule{
		nameRule(&Rule{ID: "anthropic/name", Summary: "A tool name matches ^[a-zA-Z0-9_-]{1,128}$.", Effect: RejectRequest, Confidence: Documented,
			Source: src("platform.claude.com define-tools; modelcontextprotocol #1345")}, anthropicName, 128, nil),
		rootRule(&Rule{ID: "anthropic/root-object", Summary: "input_schema has type \"object\" at its root.", Effect: RejectRequest, Confidence: Documented,
			Source: src("Anthropic API input_schema.type; lidge-jun/opencodex #75")}, rootNotObject),
		rootRule(&Rule{ID: "anthropic/root-combinator", Summary: "input_schema has no oneOf, allOf or anyOf at its root.", Effect: RejectRequest, Confidence: Reported,
			Source: src("anthropics/claude-code #5319; zereight/gitlab-mcp #551"), Fix: "move the alternatives into a property, or merge them into one object"}, rootCombinator),
		rootRule(&Rule{ID: "anthropic/valid-2020-12", Summary: "input_schema is a valid JSON Schema 2020-12.", Effect: RejectRequest, Confidence: Reported,
			Source: src("anthropics/claude-code #7365")}, func(t *Tool) string {
			if t.Schema == nil {
				return ""
			}
			if _, err := schema.Compile(t.Raw); err != nil {
				return "the inputSchema is not a valid JSON Schema: " + err.Error()
			}
			return ""
		}),
	}
}

// The keywords Anthropic's strict mode does not support.
var anthropicStrictUnsupported = setOf("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minLength", "maxLength",
	"maxItems", "uniqueItems", "contains", "patternProperties", "propertyNames", "dependentSchemas", "dependentRequired", "if", "then", "else", "not")

func anthropicStrict() *Host {
	return &Host{ID: "anthropic-strict", Name: "Anthropic strict tools", OptIn: true, Rules: []*Rule{
		nodeRule(&Rule{ID: "anthropic-strict/additional-properties", Summary: "Every object sets additionalProperties: false.", Effect: Rewrite, Confidence: Documented,
			Source: src("Anthropic structured outputs, JSON Schema limitations")}, func(n node) string {
			if isObject(n.m) && n.m["additionalProperties"] != false {
				return "is an object without \"additionalProperties\": false"
			}
			return ""
		}),
		nodeRule(&Rule{ID: "anthropic-strict/keywords", Summary: "No numeric, string-length or array constraints beyond minItems 0 or 1.", Effect: Rewrite, Confidence: Documented,
			Source: src("Anthropic structured outputs, JSON Schema limitations"), Fix: "move the constraint into the description (the SDKs' transform does)"}, func(n node) string {
			var bad []string
			for _, k := range sortedKeys(n.m) {
				if anthropicStrictUnsupported[k] {
					bad = append(bad, quote(k))
				}
			}
			if v, ok := n.m["minItems"].(float64); ok && v > 1 {
				bad = append(bad, fmt.Sprintf("\"minItems\" %v", v))
			}
			if len(bad) > 0 {
				return "uses " + strings.Join(bad, ", ")
			}
			return ""
		}),
		{ID: "anthropic-strict/request-limits", Summary: "A request holds at most 20 strict tools, 24 optional parameters and 16 union parameters.", Effect: Rewrite, Confidence: Documented,
			Source: src("Anthropic structured outputs, schema complexity limits"), PerRequest: true, server: anthropicStrictLimits},
	}}
}

// anthropicStrictLimits judges Anthropic strict mode's request-wide limits
// for this server alone.
func anthropicStrictLimits(ts []Tool, env Env) []Problem {
	optional, unions := 0, 0
	for _, t := range ts {
		walk(t.Schema, func(n node) {
			props, _ := n.m["properties"].(map[string]any)
			req := stringList(n.m["required"])
			for _, k := range sortedKeys(props) {
				if !slices.Contains(req, k) {
					optional++
				}
				if p, ok := props[k].(map[string]any); ok && (p["anyOf"] != nil || len(types(p)) > 1) {
					unions++
				}
			}
		})
	}
	var over []string
	if len(ts) > 20 {
		over = append(over, fmt.Sprintf("%d tools (at most 20 strict tools)", len(ts)))
	}
	if optional > 24 {
		over = append(over, fmt.Sprintf("%d optional parameters (at most 24)", optional))
	}
	if unions > 16 {
		over = append(over, fmt.Sprintf("%d union parameters (at most 16)", unions))
	}
	if len(over) == 0 {
		return nil
	}
	return []Problem{{Message: "made strict, this server's tools alone have " + strings.Join(over, ", ") + "; a request adds every other server's"}}
}

// The keywords Gemini's parameters (an OpenAPI 3.0 subset) know. The
// Schema of recent Vertex versions also has additionalProperties (the
// form the MCP spec recommends for a tool without arguments): it is taken
// as known, for the reports of its rejection (Laisky/one-api #60) predate
// it.
var geminiKeywords = setOf("type", "format", "title", "description", "nullable", "enum", "items", "minItems", "maxItems", "properties", "required",
	"minProperties", "maxProperties", "minLength", "maxLength", "pattern", "minimum", "maximum", "example", "default", "anyOf", "propertyOrdering",
	"additionalProperties")

func gemini() *Host {
	return &Host{ID: "gemini", Name: "Gemini (function declarations, parameters)", Rules: []*Rule{
		nameRule(&Rule{ID: "gemini/name", Summary: "A function name starts with a letter or _ and has at most 64 of a-z A-Z 0-9 _ . : -.", Effect: RejectRequest, Confidence: Documented,
			Source: src("Vertex FunctionDeclaration reference; google-gemini/gemini-cli #6704")}, geminiName, 64, nil),
		nodeRule(&Rule{ID: "gemini/parameter-name", Summary: "A parameter name starts with a letter or _ and has at most 64 of a-z A-Z 0-9 _.", Effect: RejectRequest, Confidence: Documented,
			Source: src("Vertex v1beta1 FunctionDeclaration, parameters")}, func(n node) string {
			if n.ptr != "" {
				return "" // the documented limit is on the function's parameters
			}
			props, _ := n.m["properties"].(map[string]any)
			var bad []string
			for _, k := range sortedKeys(props) {
				if !geminiParam.MatchString(k) || len(k) > 64 {
					bad = append(bad, quote(k))
				}
			}
			if len(bad) > 0 {
				return "has parameter names Gemini does not take: " + strings.Join(bad, ", ")
			}
			return ""
		}),
		nodeRule(&Rule{ID: "gemini/unknown-keyword", Summary: "parameters use only the OpenAPI subset Gemini knows (no additionalProperties, $ref, const, oneOf, $schema…).", Effect: RejectRequest, Confidence: Reported,
			Source: src("Laisky/one-api #60; zed-extensions/mcp-server-brave-search #12; decolua/9router #2309"), Fix: "clients that send parametersJsonSchema (gemini-cli) are not affected"}, func(n node) string {
			var bad []string
			for _, k := range sortedKeys(n.m) {
				// $schema at the root is stripped by the clients that use
				// parameters (litellm; gemini-cli did before it sent
				// parametersJsonSchema).
				if !geminiKeywords[k] && !(k == "$schema" && n.ptr == "") {
					bad = append(bad, quote(k))
				}
			}
			if len(bad) > 0 {
				return "uses " + strings.Join(bad, ", ")
			}
			return ""
		}),
		nodeRule(&Rule{ID: "gemini/type-array", Summary: "A type is one name, not an array (use nullable: true).", Effect: RejectRequest, Confidence: Observed,
			Source: src("vscode-copilot-chat toolSchemaNormalizer.ts")}, func(n node) string {
			if _, ok := n.m["type"].([]any); ok {
				return fmt.Sprintf("has a type array %s", jsonText(n.m["type"]))
			}
			return ""
		}),
		nodeRule(&Rule{ID: "gemini/properties-on-object", Summary: "properties and required appear on object schemas only.", Effect: RejectRequest, Confidence: Reported,
			Source: src("anomalyco/opencode #11888")}, func(n node) string {
			if n.m["properties"] != nil && n.m["type"] != nil && n.m["type"] != "object" {
				return "has properties on a schema of type " + jsonText(n.m["type"])
			}
			return ""
		}),
		nodeRule(&Rule{ID: "gemini/array-items", Summary: "Every array has items.", Effect: RejectRequest, Confidence: Reported,
			Source: src("cline/cline #7339")}, arrayWithoutItems),
		nodeRule(&Rule{ID: "gemini/enum-strings", Summary: "enum is on strings only, with string values.", Effect: RejectRequest, Confidence: Reported,
			Source: src("microsoft/azure-devops-mcp #139, #145")}, func(n node) string {
			enum, ok := n.m["enum"].([]any)
			if !ok {
				return ""
			}
			for _, v := range enum {
				if _, ok := v.(string); !ok {
					return "has a non-string enum value " + jsonText(v)
				}
			}
			return ""
		}),
		rootRule(&Rule{ID: "gemini/root-object", Summary: "parameters is an OBJECT schema.", Effect: RejectRequest, Confidence: Reported,
			Source: src("diegosouzapw/OmniRoute #3360")}, rootNotObject),
	}}
}

func arrayWithoutItems(n node) string {
	if hasType(n.m, "array") && n.m["items"] == nil && n.m["prefixItems"] == nil {
		return "is an array without items"
	}
	return ""
}

// vscodeEffective is the tool's name as VS Code makes it: mcp_, a server
// prefix of at most 18 characters, the tool's name.
func vscodeEffective(t *Tool, env Env) (string, string) {
	prefix := serverPart(env)
	if len(prefix) > 18 {
		prefix = prefix[:18]
	}
	how := "mcp_ + the server's name"
	if env.ServerFrom != "" {
		how += " (" + env.ServerFrom + ")"
	}
	return "mcp_" + prefix + "_" + t.Name, how + " + _ + the tool's"
}

func vsCode() *Host {
	return &Host{ID: "vscode", Name: "VS Code / GitHub Copilot", Rules: []*Rule{
		countRule(&Rule{ID: "vscode/max-tools", Summary: "A chat request holds at most 128 tools.", Effect: RejectRequest, Confidence: Reported,
			Source: src("microsoft/vscode-copilot-release #11653, #9894"), Fix: "VS Code's virtual tools group tools past its threshold"}, 128),
		nameRule(&Rule{ID: "vscode/name-charset", Summary: "A tool name has only a-z A-Z 0-9 _ -; others become _ with a warning.", Effect: Warn, Confidence: Observed,
			Source: src("microsoft/vscode mcpServer.ts toolInvalidCharRe")}, vscodeName, 1<<30, nil),
		nameRule(&Rule{ID: "vscode/name-length", Summary: "mcp_ + the server prefix (at most 18) + the tool name has at most 64 characters; longer names are cut.", Effect: Truncate, Confidence: Observed,
			Source: src("microsoft/vscode mcpTypes.ts McpToolName; microsoft/vscode #243602")}, nil, 64, vscodeEffective),
		rootRule(&Rule{ID: "vscode/description", Summary: "A tool has a description.", Effect: Warn, Confidence: Observed,
			Source: src("microsoft/vscode mcpServer.ts")}, func(t *Tool) string {
			if strings.TrimSpace(t.Description) == "" {
				return "the tool has no description (VS Code shows <empty>)"
			}
			return ""
		}),
		rootRule(&Rule{ID: "vscode/schema-draft-07", Summary: "inputSchema is a valid JSON Schema (VS Code validates it against the draft-07 meta-schema); a tool whose schema is not is dropped.", Effect: DropTool, Confidence: Observed,
			Source: src("microsoft/vscode mcpServer.ts")}, func(t *Tool) string {
			if t.Schema == nil {
				return rootNotObject(t)
			}
			if _, err := schema.Compile(t.Raw); err != nil {
				return "the inputSchema is not a valid JSON Schema: " + err.Error()
			}
			return ""
		}),
		// 2025's VS Code dropped a tool for a 2020-12 $schema alone; the
		// 2026 reports (microsoft/vscode #318984) are of $dynamicRef and
		// unevaluatedProperties, and Microsoft's own servers declare
		// 2020-12: not held against a server.
		rootRule(&Rule{ID: "vscode/schema-2020-12", Summary: "Older VS Code versions drop a tool whose $schema names 2020-12 or 2019-09 (\"uses meta-schema features ($dynamicRef) that are not yet supported\").", Effect: DropTool, Confidence: Unverified,
			Source: src("metoro-io/mcp-golang #119 (2025); microsoft/vscode #318984"), Fix: "leave out $schema, or name draft-07"}, func(t *Tool) string {
			if d, ok := t.Schema["$schema"].(string); ok && (strings.Contains(d, "2020-12") || strings.Contains(d, "2019-09")) {
				return "the inputSchema's $schema is " + quote(d)
			}
			return ""
		}),
		nodeRule(&Rule{ID: "vscode/array-items", Summary: "Every array has items (\"tool parameters array type must have items\").", Effect: RejectRequest, Confidence: Observed,
			Source: src("vscode-copilot-chat toolSchemaNormalizer.ts; microsoft/vscode #257537")}, arrayWithoutItems),
	}}
}

func cursor() *Host {
	return &Host{ID: "cursor", Name: "Cursor", Rules: []*Rule{
		nameRule(&Rule{ID: "cursor/name-length", Summary: "The server's name and the tool's together have fewer than 60 characters; longer ones are filtered out.", Effect: DropTool, Confidence: Reported,
			Source: src("ComposioHQ/composio #2788; awslabs/mcp #1283")}, nil, 59, func(t *Tool, env Env) (string, string) {
			how := "the server's name"
			if env.ServerFrom != "" {
				how += " (" + env.ServerFrom + ")"
			}
			return serverPart(env) + t.Name, how + " + the tool's"
		}),
		countRule(&Rule{ID: "cursor/max-tools", Summary: "Cursor warns past 80 tools across its servers (older versions sent the first 40 only).", Effect: Warn, Confidence: Reported,
			Source: src("Snowflake-Labs/mcp #77; getsentry/sentry-mcp-stdio #3")}, 80),
	}}
}

func windsurf() *Host {
	return &Host{ID: "windsurf", Name: "Windsurf (Cascade)", Rules: []*Rule{
		countRule(&Rule{ID: "windsurf/max-tools", Summary: "Cascade enables at most 100 tools across its servers.", Effect: DropTool, Confidence: Documented,
			Source: src("docs.windsurf.com cascade/mcp"), Fix: "the user turns tools off, per server, to stay under 100"}, 100),
	}}
}

func claudeDesktop() *Host {
	return &Host{ID: "claude-desktop", Name: "Claude Desktop / claude.ai connectors", Rules: []*Rule{
		nameRule(&Rule{ID: "claude-desktop/name", Summary: "A connector's tool name matches ^[a-zA-Z0-9_-]{1,64}$.", Effect: RejectRequest, Confidence: Reported,
			Source: src("malloydata/publisher #543; API-200/api200 #14")}, anthropicName, 64, nil),
	}}
}

func claudeCode() *Host {
	effective := func(t *Tool, env Env) (string, string) {
		how := "mcp__ + the server's name"
		if env.ServerFrom != "" {
			how += " (" + env.ServerFrom + ")"
		}
		return "mcp__" + serverPart(env) + "__" + t.Name, how + " + __ + the tool's"
	}
	rules := []*Rule{
		nameRule(&Rule{ID: "claude-code/name", Summary: "mcp__server__tool matches the API's ^[a-zA-Z0-9_-]{1,128}$.", Effect: RejectRequest, Confidence: Reported,
			Source: src("anthropics/claude-code #20830")}, anthropicName, 128, effective),
		nameRule(&Rule{ID: "claude-code/name-64", Summary: "With tool search, mcp__server__tool has at most 64 characters (tool_reference.tool_name).", Effect: Warn, Confidence: Reported,
			Source: src("anthropics/claude-code #20830, #21492")}, nil, 64, effective),
		{ID: "claude-code/result-warn", Summary: "A tool result over 10,000 tokens is warned about; about 4 characters a token.", Effect: Warn, Confidence: Documented,
			Source: src("code.claude.com/docs/en/mcp, output limits"),
			tool: func(t *Tool, env Env) []Problem {
				if tokens := t.ResultChars / 4; tokens > 10000 {
					return []Problem{{Message: fmt.Sprintf("the result of the call had %d characters (about %d tokens, more than 10,000)", t.ResultChars, tokens)}}
				}
				return nil
			}},
		{ID: "claude-code/result-size", Summary: "A tool result over 25,000 tokens (MAX_MCP_OUTPUT_TOKENS) is cut; about 4 characters a token.", Effect: Truncate, Confidence: Documented,
			Source: src("code.claude.com/docs/en/mcp, output limits"), Fix: "paginate or filter the result, or declare _meta[\"anthropic/maxResultSizeChars\"]",
			tool: func(t *Tool, env Env) []Problem {
				tokens := t.ResultChars / 4
				if tokens > 25000 {
					return []Problem{{Message: fmt.Sprintf("the result of the call had %d characters (about %d tokens, more than 25,000)", t.ResultChars, tokens)}}
				}
				return nil
			}},
	}
	// Claude Code sends the schemas to the Messages API as they are.
	for _, r := range anthropicRules() {
		if r.ID != "anthropic/name" {
			c := *r
			c.ID = "claude-code/" + strings.TrimPrefix(r.ID, "anthropic/")
			rules = append(rules, &c)
		}
	}
	return &Host{ID: "claude-code", Name: "Claude Code", Rules: rules}
}

func setOf(ks ...string) map[string]bool {
	m := make(map[string]bool, len(ks))
	for _, k := range ks {
		m[k] = true
	}
	return m
}
