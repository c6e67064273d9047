package check

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcpi-dev/mcpi/internal/check/hosts"
)

// A host's rules are rules of check's like any other, named
// "hosts/<host rule>" ("hosts/openai/name-pattern"): listed, documented
// and reported the same way. Their severity is a warning when the host
// documents (or its code shows) that it rejects (or drops a tool); info
// for a strict mode's rewrite, a warning that decides nothing, a limit
// seen only in bug reports or an unverified one; an error only when the
// host is one --host names and it rejects. A strict mode's problems are findings only
// when --host names it: otherwise its row in the matrix says it.

// HostVerdict is one host's verdict in a report: the matrix's row.
type HostVerdict struct {
	Host    string `json:"host"`
	Name    string `json:"name"`
	OptIn   bool   `json:"optIn,omitempty"`
	Named   bool   `json:"named,omitempty"` // given with --host
	Verdict string `json:"verdict"`         // accepted, rejected, needs rewrite, unknown
	// Tools is how many tools break a rule that decides the verdict.
	Tools   int      `json:"tools"`
	Rules   []string `json:"rules,omitempty"`
	Summary string   `json:"summary,omitempty"`
}

// hostRule is the check Rule of a host's rule.
func hostRule(r *hosts.Rule, h *hosts.Host) *Rule {
	sev := Warning
	if h.OptIn || r.Effect == hosts.Rewrite || r.Effect == hosts.Warn || r.Confidence == hosts.Unverified || r.Confidence == hosts.Reported {
		sev = Info
	}
	summary := fmt.Sprintf("%s: %s (%s)", h.Name, r.Summary, r.Effect)
	if r.PerRequest {
		summary += "; a per-request limit, judged for this server alone"
	}
	return &Rule{ID: "hosts/" + r.ID, Severity: sev, Summary: summary, Source: r.Source + "; " + string(r.Confidence)}
}

// ruleList is every rule check knows: the protocol's, then each host's.
var ruleList = append(slices.Clip(protocolRules), hostRules()...)

// hostRules are the rules of every host's profile, in the profiles' order.
func hostRules() []*Rule {
	var out []*Rule
	for _, h := range hosts.Profiles() {
		for _, r := range h.Rules {
			out = append(out, hostRule(r, h))
		}
	}
	return out
}

// HostIDs are the hosts --host may name.
func HostIDs() []string { return hosts.IDs() }

// hostMatrix judges the listed tools against every host's profile: each
// problem is a finding, and each host a row of the report's matrix.
func (r *run) hostMatrix() []HostVerdict {
	env := hosts.Env{Server: r.opts.ServerName, ServerFrom: "--server"}
	if env.Server == "" {
		if init := r.c.InitializeResult(); init != nil {
			env.Server, env.ServerFrom = init.ServerInfo.Name, "serverInfo.name"
		}
	}
	var tools []hosts.Tool
	for _, t := range r.toolList {
		ht := hosts.NewTool(t.Name, t.Description, t.InputSchema)
		ht.ResultChars = r.resultChars[t.Name]
		tools = append(tools, ht)
	}
	var rows []HostVerdict
	for _, res := range hosts.Judge(tools, env, r.toolsListed) {
		h := res.Host
		named := slices.Contains(r.opts.Hosts, h.ID)
		for _, rule := range h.Rules {
			r.check(rules["hosts/"+rule.ID])
		}
		row := HostVerdict{Host: h.ID, Name: h.Name, OptIn: h.OptIn, Named: named, Verdict: string(res.Verdict), Tools: res.Tools, Summary: res.Summary()}
		for _, p := range res.Problems {
			if !slices.Contains(row.Rules, p.Rule.ID) {
				row.Rules = append(row.Rules, p.Rule.ID)
			}
		}
		// A strict mode is a profile a client opts into: its rewrites are
		// the matrix's row, and findings only when --host names it.
		if !h.OptIn || named {
			for _, g := range groupProblems(res.Problems) {
				r.hostFinding(h, g, named)
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// groupProblems makes one problem of a rule's problems in one tool (a
// schema shared by its properties may break a rule in a thousand places):
// the first, saying how many more places and where.
func groupProblems(ps []hosts.Problem) []hosts.Problem {
	var out []hosts.Problem
	at := map[string]int{}
	more := map[int][]string{}
	for _, p := range ps {
		key := p.Rule.ID + "\x00" + p.Tool
		if i, ok := at[key]; ok {
			more[i] = append(more[i], p.Pointer)
			continue
		}
		at[key] = len(out)
		out = append(out, p)
	}
	for i, ptrs := range more {
		shown := ptrs[:min(3, len(ptrs))]
		for j, p := range shown {
			if p == "" {
				shown[j] = "the root"
			}
		}
		msg := fmt.Sprintf(" (and %d more place(s) in this tool: %s", len(ptrs), strings.Join(shown, ", "))
		if len(ptrs) > len(shown) {
			msg += ", …"
		}
		out[i].Message += msg + ")"
	}
	return out
}

// hostFinding reports one host problem: what the host would do, and the
// fix where the host documents one.
func (r *run) hostFinding(h *hosts.Host, p hosts.Problem, named bool) {
	rule := rules["hosts/"+p.Rule.ID]
	subject := "tools"
	if p.Tool != "" {
		subject = fmt.Sprintf("tool %q", p.Tool)
	}
	what := h.Name + " " + string(p.Rule.Effect)
	if h.OptIn || p.Rule.Effect == hosts.Rewrite {
		what = h.Name + ": needs rewriting for strict mode"
	}
	msg := what + ": " + p.Message
	if p.Rule.Fix != "" {
		msg += " (fix: " + p.Rule.Fix + ")"
	}
	if p.Rule.Confidence == hosts.Unverified {
		msg += " (unverified)"
	}
	r.report(rule, subject, nil, "%s", msg)
	if named && hosts.Rejects(p.Rule, h) {
		// A host the server must work with rejects it: an error.
		r.found[len(r.found)-1].Severity = Error
	}
}
