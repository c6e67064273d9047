package check

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/check/hosts"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
)

// TestHostProfilesEndToEnd: for each host, a server whose tools break its
// profile gets the host's verdict in the matrix and its findings; named
// with --host, a rejection is an error (a strict mode's rewrite never is);
// the hosts not named give no error; the correct server gets no host
// finding and every host's acceptance.
func TestHostProfilesEndToEnd(t *testing.T) {
	t.Parallel()
	t.Run("clean", func(t *testing.T) {
		t.Parallel()
		rep := checkPeer(t, mcptest.HostsPrefix+"clean", Options{Hosts: HostIDs()})
		for _, f := range rep.Findings {
			if strings.HasPrefix(f.Rule, "hosts/") {
				t.Errorf("a host finding on the correct server: %s %s: %s", f.Rule, f.Subject, f.Message)
			}
		}
		if len(rep.Hosts) != len(HostIDs()) {
			t.Fatalf("%d rows in the matrix, want %d", len(rep.Hosts), len(HostIDs()))
		}
		for _, h := range rep.Hosts {
			if h.Verdict != string(hosts.Accepted) || !h.Named {
				t.Errorf("%s: %s (named %v)", h.Host, h.Verdict, h.Named)
			}
		}
	})
	for _, p := range hosts.Profiles() {
		t.Run(p.ID, func(t *testing.T) {
			t.Parallel()
			rep := checkPeer(t, mcptest.HostsPrefix+p.ID, Options{Hosts: []string{p.ID}})
			want := hosts.Rejected
			if p.OptIn {
				want = hosts.NeedsRewrite
			}
			var row HostVerdict
			for _, h := range rep.Hosts {
				if h.Host == p.ID {
					row = h
				}
			}
			if row.Verdict != string(want) || !row.Named || row.Summary == "" {
				t.Errorf("the matrix says %+v, want %s", row, want)
			}
			errors := 0
			for _, f := range rep.Findings {
				own := strings.HasPrefix(f.Rule, "hosts/"+p.ID+"/")
				if f.Severity == Error {
					if !own {
						t.Errorf("an error not of the named host: %s %s", f.Rule, f.Message)
					}
					errors++
				}
			}
			switch {
			case p.OptIn && errors > 0:
				t.Errorf("%d error(s) for a strict mode's rewrite", errors)
			case !p.OptIn && errors == 0:
				t.Errorf("no error although %s, named, rejects the server", p.ID)
			}
			found := false
			for _, f := range rep.Findings {
				if strings.HasPrefix(f.Rule, "hosts/"+p.ID+"/") && strings.Contains(f.Message, p.Name) {
					found = true
				}
			}
			if !found {
				t.Errorf("no finding of %s says what %s does", p.ID, p.Name)
			}
		})
	}
}

// TestBackendDownIsNoFinding: a server whose database is not running
// fails its tools/list with an internal error naming the refused
// connection: that is the environment's failure, said as such, not a
// protocol finding (and the tools are unknown to every host).
func TestBackendDownIsNoFinding(t *testing.T) {
	t.Parallel()
	rep := checkPeer(t, mcptest.HostsPrefix+mcptest.HostsBackendDown, Options{})
	for _, f := range rep.Findings {
		if f.Severity == Error {
			t.Errorf("an error finding for the environment's failure: %s %s", f.Rule, f.Message)
		}
	}
	if len(rep.Environment) != 1 || !strings.Contains(rep.Environment[0].Why, "refused the connection") || !strings.Contains(rep.Environment[0].Message, "ECONNREFUSED") {
		t.Fatalf("environment: %+v", rep.Environment)
	}
	var text strings.Builder
	WriteText(&text, rep)
	if !strings.Contains(text.String(), "NOT CHECKED: THE SERVER'S ENVIRONMENT (1)") || !strings.Contains(text.String(), "check the server's configuration") {
		t.Errorf("the text report:\n%s", text.String())
	}
}

// TestEnvironmental: what looks like the environment's failure, and what
// does not.
func TestEnvironmental(t *testing.T) {
	for _, s := range []string{"connect ECONNREFUSED 127.0.0.1:5432", "Error: OPENAI_API_KEY environment variable is not set", "Invalid API key provided",
		"getaddrinfo ENOTFOUND api.example.com", "request failed with status code 401", "database \"app\" does not exist",
		"tools/list: server error: fetch failed (code -32603)", "Error loading credentials: Error: ENOENT: no such file or directory, copyfile '/tmp/x'",
		"Cannot find config file `panda.config.{ts,js,mjs,mts}`"} {
		if _, ok := Environmental(s); !ok {
			t.Errorf("%q is not taken for the environment's failure", s)
		}
	}
	for _, s := range []string{"Tool x not found", "invalid params: missing field name", "MCP error -32602: Invalid arguments",
		"clients refuse to send their messages, and credentials, there http://mcpi-other.invalid/"} {
		if why, ok := Environmental(s); ok {
			t.Errorf("%q is taken for the environment's failure (%s)", s, why)
		}
	}
}

// TestHostsHeavy: what a hostile server gives a linter to chew on (5,000
// tools, a schema 2,000 objects deep, one 100,000 properties wide) is
// judged, not choked on: the counts are found, the strict mode's size
// limit too, and every host has its verdict.
func TestHostsHeavy(t *testing.T) {
	t.Parallel()
	rep := checkPeer(t, mcptest.HostsPrefix+mcptest.HostsHeavy, Options{Hosts: []string{"openai-strict"}})
	for _, want := range []string{"hosts/openai/max-tools", "hosts/vscode/max-tools", "hosts/windsurf/max-tools", "hosts/openai-strict/size"} {
		if len(findings(rep, want)) == 0 {
			t.Errorf("no %s finding", want)
		}
	}
	for _, h := range rep.Hosts {
		if h.Verdict == "unknown" {
			t.Errorf("%s: unknown", h.Host)
		}
	}
}

// TestHostProblemsOfOneToolAreOne: a rule broken in many places of one
// tool (a shared schema) is one finding saying how many more and where.
func TestHostProblemsOfOneToolAreOne(t *testing.T) {
	rule := hosts.Profile("gemini").Rules[0]
	var ps []hosts.Problem
	for i := range 5 {
		ps = append(ps, hosts.Problem{Rule: rule, Tool: "a", Pointer: fmt.Sprintf("/p%d", i), Message: "bad"})
	}
	ps = append(ps, hosts.Problem{Rule: rule, Tool: "b", Pointer: "/q", Message: "bad"})
	g := groupProblems(ps)
	if len(g) != 2 || g[0].Message != "bad (and 4 more place(s) in this tool: /p1, /p2, /p3, …)" || g[1].Message != "bad" {
		t.Errorf("grouped: %+v", g)
	}
}

// TestHostVerdictBesideOtherFindings: a description of 5,079 characters
// breaks check's own size rule and OpenAI's limit of 1,024: both are said,
// the matrix says OpenAI rejects it, and with --host openai that is an
// error (the run fails). A host's verdict never waits on another rule.
func TestHostVerdictBesideOtherFindings(t *testing.T) {
	t.Parallel()
	rep := checkPeer(t, mcptest.HostsPrefix+mcptest.HostsLongDescription, Options{Hosts: []string{"openai"}})
	if len(findings(rep, ruleSecurityDescriptionSize.ID)) != 1 {
		t.Errorf("no %s finding", ruleSecurityDescriptionSize.ID)
	}
	fs := findings(rep, "hosts/openai/description-length")
	if len(fs) != 1 || fs[0].Severity != Error || !strings.Contains(fs[0].Message, "5079 characters") {
		t.Fatalf("the OpenAI finding: %+v", fs)
	}
	for _, h := range rep.Hosts {
		if h.Host == "openai" && (h.Verdict != string(hosts.Rejected) || !slices.Contains(h.Rules, "openai/description-length")) {
			t.Errorf("the matrix's OpenAI row: %+v", h)
		}
	}
	if rep.Count(Error) == 0 {
		t.Error("no error, so --host openai would pass")
	}
}
