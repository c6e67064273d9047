// Package hosts says which hosts accept a server's tools: one profile per
// host (an LLM API or an application that loads MCP servers), each a list
// of rules kept as dated data with its source and how sure it is
// (shared/host-limits.md is the sheet they come from). A rule is a pure
// function of the tools' JSON; Judge runs every profile and gives each host
// a verdict.
package hosts

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Checked is the date the hosts' limits were last checked against their
// sources.
const Checked = "2026-11-24"

// Confidence is how sure a rule is.
type Confidence string

const (
	Documented Confidence = "documented"        // in the vendor's docs or API types
	Observed   Confidence = "observed in code"  // in a host's or library's source
	Reported   Confidence = "reported in issue" // a real error in a public bug report
	Unverified Confidence = "unverified"        // plausible, not confirmed: never a rejection
)

// Effect is what the host does with a tool that breaks a rule.
type Effect string

const (
	RejectRequest Effect = "rejects the request" // one bad tool fails every request with every tool
	DropTool      Effect = "drops the tool"      // the tool is left out, the others work
	Truncate      Effect = "cuts"                // a name or a result is shortened
	Rewrite       Effect = "needs rewriting"     // a strict mode needs the schema rewritten
	Warn          Effect = "warns"               // the host says so and goes on
)

// Tool is a tool as the rules see it.
type Tool struct {
	Name        string
	Description string
	// Schema is the inputSchema, decoded (nil when it is not an object).
	Schema map[string]any
	// Raw is the inputSchema as the server sent it.
	Raw json.RawMessage
	// ResultChars is the length of the tool's result text when it was
	// called (mcpi check --call), 0 when it was not.
	ResultChars int
}

// NewTool decodes a listed tool's fields for the rules.
func NewTool(name, description string, inputSchema json.RawMessage) Tool {
	t := Tool{Name: name, Description: description, Raw: inputSchema}
	json.Unmarshal(inputSchema, &t.Schema)
	return t
}

// Env is what the rules know of the server besides its tools.
type Env struct {
	// Server is the server's name as a host would prefix it, and
	// ServerFrom where it comes from ("--server", "serverInfo.name").
	Server     string
	ServerFrom string
}

// Problem is one rule broken.
type Problem struct {
	Rule *Rule
	// Tool is the tool that breaks it ("" for the server as a whole).
	Tool string
	// Pointer is where in the tool's inputSchema, as a JSON pointer.
	Pointer string
	Message string
}

// Rule is one thing a host asks of tools.
type Rule struct {
	ID         string // "openai/name-pattern"
	Summary    string
	Effect     Effect
	Confidence Confidence
	Source     string
	// Fix is what the host's documentation says to do, when it says.
	Fix string
	// PerRequest says the limit holds for a whole request, which a host
	// fills with every server's tools: it is judged for this server alone.
	PerRequest bool

	tool   func(t *Tool, env Env) []Problem
	server func(ts []Tool, env Env) []Problem
}

// Host is one host's profile.
type Host struct {
	ID   string // "openai", "openai-strict", …
	Name string
	// OptIn says a client must ask for this profile (the strict modes):
	// a server that breaks it needs a rewrite, and is not rejected.
	OptIn bool
	Rules []*Rule
}

// Verdict is what a host makes of a server's tools.
type Verdict string

const (
	Accepted     Verdict = "accepted"
	Rejected     Verdict = "rejected"
	NeedsRewrite Verdict = "needs rewrite"
	Unknown      Verdict = "unknown"
)

// Result is one host's verdict on a server, with the problems behind it.
type Result struct {
	Host    *Host
	Verdict Verdict
	// Tools is how many tools break a rule that decides the verdict.
	Tools    int
	Problems []Problem
}

// Summary says in a few words why the verdict is what it is: how many
// tools, which rules.
func (r Result) Summary() string {
	if len(r.Problems) == 0 {
		return ""
	}
	var ids []string
	seen := map[string]bool{}
	for _, p := range r.Problems {
		if decides(p.Rule, r.Host) && !seen[p.Rule.ID] {
			seen[p.Rule.ID] = true
			ids = append(ids, p.Rule.ID)
		}
	}
	if len(ids) == 0 {
		return fmt.Sprintf("%d note(s), none decisive", len(r.Problems))
	}
	sort.Strings(ids)
	what := fmt.Sprintf("%d tool(s)", r.Tools)
	if r.Tools == 0 {
		what = "the server"
	}
	return what + ": " + strings.Join(ids, ", ")
}

// decides reports whether a broken rule decides host's verdict: a rule
// that rejects, drops or needs a rewrite, and is more than unverified.
func decides(r *Rule, h *Host) bool {
	if r.Confidence == Unverified {
		return false
	}
	switch r.Effect {
	case RejectRequest, DropTool, Rewrite:
		return true
	}
	return false
}

// Rejects reports whether a problem of rule makes host reject the server
// (or drop a tool of it): the rules a named host (--host) fails on.
func Rejects(r *Rule, h *Host) bool {
	return !h.OptIn && decides(r, h) && r.Effect != Rewrite
}

// Judge runs every profile over tools. listed is false when the tools
// could not be listed: every verdict is then Unknown.
func Judge(tools []Tool, env Env, listed bool) []Result {
	var out []Result
	for _, h := range Profiles() {
		out = append(out, judgeHost(h, tools, env, listed))
	}
	return out
}

func judgeHost(h *Host, tools []Tool, env Env, listed bool) Result {
	res := Result{Host: h, Verdict: Accepted}
	if !listed {
		res.Verdict = Unknown
		return res
	}
	for _, r := range h.Rules {
		var ps []Problem
		if r.server != nil {
			ps = append(ps, r.server(tools, env)...)
		}
		if r.tool != nil {
			for i := range tools {
				for _, p := range r.tool(&tools[i], env) {
					p.Tool = tools[i].Name
					ps = append(ps, p)
				}
			}
		}
		for i := range ps {
			ps[i].Rule = r
		}
		res.Problems = append(res.Problems, ps...)
	}
	bad := map[string]bool{}
	for _, p := range res.Problems {
		if !decides(p.Rule, h) {
			continue
		}
		if p.Tool != "" {
			bad[p.Tool] = true
		}
		switch {
		case h.OptIn || p.Rule.Effect == Rewrite:
			if res.Verdict == Accepted {
				res.Verdict = NeedsRewrite
			}
		default:
			res.Verdict = Rejected
		}
	}
	res.Tools = len(bad)
	return res
}

// Profile returns the host id's profile, or nil.
func Profile(id string) *Host {
	for _, h := range Profiles() {
		if h.ID == id {
			return h
		}
	}
	return nil
}

// IDs lists every profile's id, in order.
func IDs() []string {
	var out []string
	for _, h := range Profiles() {
		out = append(out, h.ID)
	}
	return out
}
