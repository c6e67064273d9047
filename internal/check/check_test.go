package check

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/mcptest"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

func TestMain(m *testing.M) {
	mcptest.ServePeer()
	os.Exit(m.Run())
}

// checkPeer runs check against the test binary re-executed as peer.
func checkPeer(t *testing.T, peer string, opts Options) *Report {
	t.Helper()
	obs := &Observer{}
	conn, err := transport.Spawn(transport.StdioOptions{
		Command: os.Args[0], Args: []string{"-test.run=^$"},
		Env: []string{mcptest.PeerEnv + "=" + peer},
		Tap: transport.TapFunc(func(e transport.Event) {
			if e.Kind == transport.KindStderr {
				obs.OnStderr()
			}
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := session.Connect(ctx, conn, session.Options{Era: session.EraLegacy, OnWarning: obs.OnWarning, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return Run(ctx, c, obs, opts)
}

// TestCleanServer: a correct server has no finding, and every rule that
// applies to it was checked.
func TestCleanServer(t *testing.T) {
	t.Parallel()
	rep := checkPeer(t, mcptest.BrokenPrefix, Options{Call: true})
	for _, f := range rep.Findings {
		t.Errorf("finding on the correct server: %s %s: %s", f.Rule, f.Subject, f.Message)
	}
	checked := map[string]bool{}
	for _, r := range rep.Rules {
		checked[r.ID] = true
	}
	for _, r := range ruleList {
		if !checked[r.ID] {
			t.Errorf("rule %s was not checked", r.ID)
		}
	}
}

// TestEveryRuleFinds: for each rule, a server broken in that one way is
// found out by that rule.
func TestEveryRuleFinds(t *testing.T) {
	t.Parallel()
	defects := map[string]bool{}
	for _, d := range mcptest.BrokenDefects {
		defects[d] = true
		t.Run(strings.ReplaceAll(d, "/", "-"), func(t *testing.T) {
			t.Parallel()
			rep := checkPeer(t, mcptest.BrokenPrefix+d, Options{Call: true})
			for _, f := range rep.Findings {
				if f.Rule == d {
					if f.Message == "" || f.Source == "" || f.Subject == "" {
						t.Errorf("finding without message, source or subject: %+v", f)
					}
					return
				}
			}
			var got []string
			for _, f := range rep.Findings {
				got = append(got, f.Rule+": "+f.Message)
			}
			t.Errorf("no %s finding; got:\n%s", d, strings.Join(got, "\n"))
		})
	}
	for _, r := range ruleList {
		if !defects[r.ID] {
			t.Errorf("rule %s has no broken server in mcptest.BrokenDefects", r.ID)
		}
	}
}

func TestReports(t *testing.T) {
	t.Parallel()
	rep := checkPeer(t, mcptest.BrokenPrefix+"tools/input-schema", Options{})
	var text bytes.Buffer
	WriteText(&text, rep)
	for _, want := range []string{"mcpi check: broken 1.0 · 2025-11-25 (legacy era)", "ERRORS (2)", "tools/input-schema  tool \"lookup\": inputSchema's root type is \"string\"", "MCP 2025-11-25 server/tools § Tool", `frame: {"type":"string"}`, "results/schema  tools/list: the result is not a valid ListToolsResult of 2025-11-25: /tools/0/inputSchema/type", "2 error(s)"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	b, _ := json.Marshal(rep)
	var back struct {
		Findings []struct {
			Rule, Severity, Source string
			Evidence           json.RawMessage
		}
	}
	if err := json.Unmarshal(b, &back); err != nil || len(back.Findings) != 2 || back.Findings[0].Rule != "tools/input-schema" || back.Findings[0].Severity != "error" || string(back.Findings[0].Evidence) != `{"type":"string"}` {
		t.Errorf("JSON: %v %s", err, b)
	}
	var sarif bytes.Buffer
	if err := WriteSARIF(&sarif, rep, "test"); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Version string
		Runs    []struct {
			Tool struct {
				Driver struct {
					Rules []struct{ ID string }
				}
			}
			Results []struct {
				RuleID, Level string
			}
		}
	}
	if err := json.Unmarshal(sarif.Bytes(), &doc); err != nil || doc.Version != "2.1.0" || len(doc.Runs) != 1 ||
		len(doc.Runs[0].Results) != 2 || doc.Runs[0].Results[0].RuleID != "tools/input-schema" || doc.Runs[0].Results[0].Level != "error" ||
		len(doc.Runs[0].Tool.Driver.Rules) != len(ruleList) {
		t.Errorf("SARIF: %v %s", err, sarif.String())
	}
}

func TestURITemplate(t *testing.T) {
	for _, ok := range []string{"file:///{path}", "x://{+path}/{name:3}{?q,lang}", "a{#frag*}", "plain://no/vars", "x://{%41b.c}"} {
		if err := checkURITemplate(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "x://{path", "x://path}", "x://{}", "x://{=a}", "x://{a:0}", "x://{a:10000}", "x://{a b}", "x:// space", "x://{a{b}}"} {
		if err := checkURITemplate(bad); err == nil {
			t.Errorf("%q was accepted", bad)
		}
	}
}
