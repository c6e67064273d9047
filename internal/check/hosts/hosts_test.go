package hosts

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// tool builds a tool from its name and inputSchema's JSON.
func tool(name, schema string) Tool { return NewTool(name, "Does one thing.", json.RawMessage(schema)) }

// clean is a tool every host takes as it is, strict modes included.
var clean = tool("get_weather", `{"type":"object","properties":{"city":{"type":"string","description":"A city."}},"required":["city"],"additionalProperties":false}`)

// many returns n clean tools.
func many(n int) []Tool {
	out := make([]Tool, n)
	for i := range out {
		out[i] = clean
		out[i].Name = fmt.Sprintf("tool_%d", i)
	}
	return out
}

// fixture is, for one rule, tools that break it and tools that do not.
type fixture struct {
	bad, good []Tool
	env       Env
}

var env = Env{Server: "weather", ServerFrom: "serverInfo.name"}

func withDescription(t Tool, n int) Tool { t.Description = strings.Repeat("d", n); return t }
func withResult(t Tool, n int) Tool      { t.ResultChars = n; return t }

var fixtures = map[string]fixture{
	"openai/name-pattern":            {bad: []Tool{tool("get.weather", clean.String())}, good: []Tool{clean}},
	"openai/name-length":             {bad: []Tool{tool(strings.Repeat("a", 65), clean.String())}, good: []Tool{tool(strings.Repeat("a", 64), clean.String())}},
	"openai/max-tools":               {bad: many(129), good: many(128)},
	"openai/description-length":      {bad: []Tool{withDescription(clean, 1025), withDescription(clean, 5079), withDescription(clean, 34527)}, good: []Tool{withDescription(clean, 1024)}},
	"openai/object-needs-properties": {bad: []Tool{tool("ping", `{"type":"object","additionalProperties":false}`)}, good: []Tool{tool("ping", `{"type":"object","properties":{}}`)}},
	"openai-strict/root":             {bad: []Tool{tool("t", `{"anyOf":[{"type":"object"}]}`), tool("t", `{"type":"string"}`)}, good: []Tool{clean}},
	"openai-strict/additional-properties": {bad: []Tool{tool("t", `{"type":"object","properties":{"o":{"type":"object","properties":{},"additionalProperties":false}},"required":["o"]}`)},
		good: []Tool{clean}},
	"openai-strict/all-required": {bad: []Tool{tool("t", `{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}`)}, good: []Tool{clean}},
	"openai-strict/keywords": {bad: []Tool{tool("t", `{"type":"object","properties":{"u":{"type":"string","format":"uri"}},"required":["u"],"additionalProperties":false}`),
		tool("t", `{"type":"object","properties":{"u":{"type":"string","minLength":1}},"required":["u"],"additionalProperties":false}`)},
		good: []Tool{tool("t", `{"type":"object","properties":{"d":{"type":"string","format":"date-time"}},"required":["d"],"additionalProperties":false}`)}},
	"openai-strict/size":    {bad: []Tool{tool("t", deep(11))}, good: []Tool{tool("t", deep(10))}},
	"anthropic/name":        {bad: []Tool{tool(strings.Repeat("a", 129), clean.String()), tool("a.b", clean.String())}, good: []Tool{tool(strings.Repeat("a", 128), clean.String())}},
	"anthropic/root-object": {bad: []Tool{tool("t", `{"properties":{}}`)}, good: []Tool{clean}},
	"anthropic/root-combinator": {bad: []Tool{tool("t", `{"type":"object","oneOf":[{"required":["a"]},{"required":["b"]}]}`)},
		good: []Tool{tool("t", `{"type":"object","properties":{"a":{"oneOf":[{"type":"string"},{"type":"number"}]}}}`)}},
	"anthropic/valid-2020-12":                {bad: []Tool{tool("t", `{"type":"object","properties":{"a":{"type":"strin"}}}`)}, good: []Tool{clean}},
	"anthropic-strict/additional-properties": {bad: []Tool{tool("t", `{"type":"object","properties":{}}`)}, good: []Tool{clean}},
	"anthropic-strict/keywords": {bad: []Tool{tool("t", `{"type":"object","properties":{"n":{"type":"integer","minimum":1}},"additionalProperties":false}`)},
		good: []Tool{tool("t", `{"type":"object","properties":{"l":{"type":"array","items":{"type":"string"},"minItems":1}},"additionalProperties":false}`)}},
	"anthropic-strict/request-limits": {bad: many(21), good: many(20)},
	"gemini/name":                     {bad: []Tool{tool("1tool", clean.String()), tool(strings.Repeat("a", 65), clean.String())}, good: []Tool{tool("_get.weather:v1", clean.String())}},
	"gemini/parameter-name": {bad: []Tool{tool("t", `{"type":"object","properties":{"city-name":{"type":"string"}}}`)},
		good: []Tool{tool("t", `{"type":"object","properties":{"city_name":{"type":"object","properties":{"$vectorSearch":{"type":"string"}}}}}`)}},
	"gemini/unknown-keyword": {bad: []Tool{tool("t", `{"type":"object","properties":{"k":{"$ref":"#/$defs/k"}},"$defs":{"k":{"type":"string"}}}`), tool("t", `{"type":"object","properties":{"k":{"const":"x"}}}`)},
		good: []Tool{tool("t", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"k":{"type":"string","enum":["x"],"nullable":true}},"required":["k"]}`)}},
	"gemini/type-array":           {bad: []Tool{tool("t", `{"type":"object","properties":{"k":{"type":["string","null"]}}}`)}, good: []Tool{tool("t", `{"type":"object","properties":{"k":{"type":"string"}}}`)}},
	"gemini/properties-on-object": {bad: []Tool{tool("t", `{"type":"object","properties":{"k":{"type":["object","null"],"properties":{}}}}`)}, good: []Tool{tool("t", `{"type":"object","properties":{"k":{"type":"object","properties":{}}}}`)}},
	"gemini/array-items":          {bad: []Tool{tool("t", `{"type":"object","properties":{"l":{"type":"array"}}}`)}, good: []Tool{tool("t", `{"type":"object","properties":{"l":{"type":"array","items":{"type":"string"}}}}`)}},
	"gemini/enum-strings":         {bad: []Tool{tool("t", `{"type":"object","properties":{"n":{"type":"integer","enum":[1,2]}}}`)}, good: []Tool{tool("t", `{"type":"object","properties":{"n":{"type":"string","enum":["1","2"]}}}`)}},
	"gemini/root-object":          {bad: []Tool{tool("t", `{"type":"string"}`)}, good: []Tool{tool("t", `{"type":"object","properties":{}}`)}},
	"vscode/max-tools":            {bad: many(129), good: many(128)},
	"vscode/name-charset":         {bad: []Tool{tool("get.weather", clean.String())}, good: []Tool{clean}},
	"vscode/name-length":          {bad: []Tool{tool(strings.Repeat("a", 53), clean.String())}, good: []Tool{tool(strings.Repeat("a", 52), clean.String())}, env: env},
	"vscode/description":          {bad: []Tool{withDescription(clean, 0)}, good: []Tool{clean}},
	"vscode/schema-draft-07":      {bad: []Tool{tool("t", `{"type":"object","properties":{"a":{"type":"strin"}}}`)}, good: []Tool{tool("t", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{}}`)}},
	"vscode/schema-2020-12":       {bad: []Tool{tool("t", `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{}}`)}, good: []Tool{tool("t", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{}}`)}},
	"vscode/array-items":          {bad: []Tool{tool("t", `{"type":"object","properties":{"l":{"type":"array"}}}`)}, good: []Tool{tool("t", `{"type":"object","properties":{"l":{"type":"array","items":{}}}}`)}},
	"cursor/name-length":          {bad: []Tool{tool(strings.Repeat("a", 53), clean.String())}, good: []Tool{tool(strings.Repeat("a", 52), clean.String())}, env: env},
	"cursor/max-tools":            {bad: many(81), good: many(80)},
	"windsurf/max-tools":          {bad: many(101), good: many(100)},
	"claude-desktop/name":         {bad: []Tool{tool(strings.Repeat("a", 65), clean.String())}, good: []Tool{tool(strings.Repeat("a", 64), clean.String())}},
	"claude-code/name":            {bad: []Tool{tool(strings.Repeat("a", 115), clean.String()), tool("a.b", clean.String())}, good: []Tool{tool(strings.Repeat("a", 114), clean.String())}, env: env},
	"claude-code/name-64":         {bad: []Tool{tool(strings.Repeat("a", 51), clean.String())}, good: []Tool{tool(strings.Repeat("a", 50), clean.String())}, env: env},
	"claude-code/result-size":     {bad: []Tool{withResult(clean, 100004)}, good: []Tool{withResult(clean, 100000), clean}},
	"claude-code/result-warn":     {bad: []Tool{withResult(clean, 40004), withResult(clean, 100004)}, good: []Tool{withResult(clean, 40000), clean}},
	"claude-code/root-object":     {bad: []Tool{tool("t", `{"properties":{}}`)}, good: []Tool{clean}},
	"claude-code/root-combinator": {bad: []Tool{tool("t", `{"type":"object","anyOf":[{"required":["a"]}]}`)}, good: []Tool{clean}},
	"claude-code/valid-2020-12":   {bad: []Tool{tool("t", `{"type":"object","required":"a"}`)}, good: []Tool{clean}},
}

// String is the tool's inputSchema.
func (t Tool) String() string { return string(t.Raw) }

// deep is an object schema nested n levels.
func deep(n int) string {
	s := `{"type":"string"}`
	for range n {
		s = `{"type":"object","properties":{"k":` + s + `},"required":["k"],"additionalProperties":false}`
	}
	return s
}

// problemsOf runs one rule over tools.
func problemsOf(r *Rule, tools []Tool, env Env) []Problem {
	var ps []Problem
	if r.server != nil {
		ps = append(ps, r.server(tools, env)...)
	}
	if r.tool != nil {
		for i := range tools {
			ps = append(ps, r.tool(&tools[i], env)...)
		}
	}
	return ps
}

// TestEveryRuleHasFixtures: each rule of each profile is broken by its
// bad tools, one finding for each bad tool (or one for the server), and
// kept by its good ones; a rule without fixtures fails.
func TestEveryRuleHasFixtures(t *testing.T) {
	seen := map[string]bool{}
	for _, h := range Profiles() {
		for _, r := range h.Rules {
			seen[r.ID] = true
			fx, ok := fixtures[r.ID]
			if !ok {
				t.Errorf("rule %s has no fixtures", r.ID)
				continue
			}
			if r.Summary == "" || r.Source == "" || r.Effect == "" || r.Confidence == "" || !strings.Contains(r.Source, Checked) {
				t.Errorf("rule %s lacks its summary, effect, confidence or dated source: %+v", r.ID, r)
			}
			if ps := problemsOf(r, fx.good, fx.env); len(ps) > 0 {
				t.Errorf("rule %s finds the good tools: %s", r.ID, ps[0].Message)
			}
			if r.server != nil {
				if ps := problemsOf(r, fx.bad, fx.env); len(ps) != 1 {
					t.Errorf("rule %s: %d problem(s) for the server, want 1", r.ID, len(ps))
				}
				continue
			}
			for _, bt := range fx.bad {
				if ps := problemsOf(r, []Tool{bt}, fx.env); len(ps) == 0 {
					t.Errorf("rule %s does not find %s %s", r.ID, bt.Name, bt.Raw)
				} else if ps[0].Message == "" {
					t.Errorf("rule %s: a problem without a message", r.ID)
				}
			}
		}
	}
	for id := range fixtures {
		if !seen[id] {
			t.Errorf("fixtures for %s, which no profile has", id)
		}
	}
}

// TestCleanToolIsAcceptedEverywhere: a correct server gets no host
// finding at all.
func TestCleanToolIsAcceptedEverywhere(t *testing.T) {
	for _, res := range Judge([]Tool{clean}, env, true) {
		if res.Verdict != Accepted || len(res.Problems) > 0 {
			t.Errorf("%s: %s, %v", res.Host.ID, res.Verdict, res.Problems)
		}
	}
}

// TestVerdicts: a rejection by a host that is not opt-in, a rewrite for a
// strict mode, an unknown when the tools could not be listed, and a
// warning that decides nothing.
func TestVerdicts(t *testing.T) {
	bad := tool("get.weather", `{"type":"object","properties":{"city":{"type":"string"}}}`)
	verdicts := map[string]Verdict{}
	var openai Result
	for _, res := range Judge([]Tool{bad, clean}, env, true) {
		verdicts[res.Host.ID] = res.Verdict
		if res.Host.ID == "openai" {
			openai = res
		}
	}
	want := map[string]Verdict{"openai": Rejected, "openai-strict": NeedsRewrite, "anthropic": Rejected, "anthropic-strict": NeedsRewrite,
		"gemini": Accepted, "vscode": Accepted, "claude-desktop": Rejected, "windsurf": Accepted}
	for h, v := range want {
		if verdicts[h] != v {
			t.Errorf("%s: %s, want %s", h, verdicts[h], v)
		}
	}
	if openai.Tools != 1 || !strings.Contains(openai.Summary(), "openai/name-pattern") {
		t.Errorf("openai's summary: %q (%d tools)", openai.Summary(), openai.Tools)
	}
	if !Rejects(Profile("openai").Rules[0], Profile("openai")) || Rejects(Profile("openai-strict").Rules[0], Profile("openai-strict")) {
		t.Error("Rejects: a strict mode's rule rejects, or openai's name rule does not")
	}
	for _, res := range Judge(nil, env, false) {
		if res.Verdict != Unknown {
			t.Errorf("%s: %s when the tools could not be listed", res.Host.ID, res.Verdict)
		}
	}
}

// TestServerNameAsHostsMakeIt: a host puts the server's name in a tool's
// name with the characters it does not allow made _ (serverInfo.name
// "mcp-servers/everything" is no fault of the tools).
func TestServerNameAsHostsMakeIt(t *testing.T) {
	e := Env{Server: "mcp-servers/everything", ServerFrom: "serverInfo.name"}
	for _, h := range Profiles() {
		for _, r := range h.Rules {
			if ps := problemsOf(r, []Tool{tool("echo", clean.String())}, e); len(ps) > 0 {
				t.Errorf("%s: %s", r.ID, ps[0].Message)
			}
		}
	}
}

// verdictOf is what one broken rule alone makes of a host.
func verdictOf(r *Rule, h *Host) Verdict {
	switch {
	case Rejects(r, h):
		return Rejected
	case decides(r, h):
		return NeedsRewrite
	}
	return Accepted
}

// worse is the more severe of two verdicts.
func worse(a, b Verdict) Verdict {
	rank := map[Verdict]int{Accepted: 0, NeedsRewrite: 1, Rejected: 2}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

// TestVerdictIsEachRuleAlone: for every rule of every host, the tools that
// break it get from the host the verdict the rule's effect gives (a
// description of 5,079 characters is rejected by OpenAI however many other
// rules, of mcpi's or of the host's, it also breaks), and the host's
// verdict is the worst of its rules each judged alone: no rule's problem
// is silenced because another rule is broken too.
func TestVerdictIsEachRuleAlone(t *testing.T) {
	for _, h := range Profiles() {
		for _, r := range h.Rules {
			fx := fixtures[r.ID]
			for _, bad := range fx.bad {
				tools := []Tool{bad}
				if r.server != nil {
					tools = fx.bad
				}
				want := Accepted
				for _, each := range h.Rules {
					if len(problemsOf(each, tools, fx.env)) > 0 {
						want = worse(want, verdictOf(each, h))
					}
				}
				if got := verdictOf(r, h); worse(want, got) != want {
					t.Fatalf("%s: the test's own combination lost the rule's verdict", r.ID)
				}
				res := judgeHost(h, tools, fx.env, true)
				if res.Verdict != want {
					t.Errorf("%s on %q: %s says %s, want %s (the worst of its rules judged alone)", r.ID, bad.Name, h.ID, res.Verdict, want)
				}
				if !slices.ContainsFunc(res.Problems, func(p Problem) bool { return p.Rule == r }) {
					t.Errorf("%s on %q: not among %s's problems", r.ID, bad.Name, h.ID)
				}
				if r.server != nil {
					break
				}
			}
		}
	}
}
