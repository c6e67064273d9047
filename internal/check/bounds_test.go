package check

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// checkBounds runs check against mcptest.ListsPrefix+mode with a probe
// timeout of probe and a session of sopts, under a test deadline that is a
// guard, not a measure.
func checkBounds(t *testing.T, mode string, probe time.Duration, sopts session.Options) *Report {
	t.Helper()
	spawn := func() (transport.Conn, error) {
		return transport.Spawn(transport.StdioOptions{Command: os.Args[0], Args: []string{"-test.run=^$"}, Env: []string{mcptest.PeerEnv + "=" + mcptest.ListsPrefix + mode}})
	}
	conn, err := spawn()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	obs := &Observer{}
	sopts.Era, sopts.OnWarning, sopts.Timeout = session.EraLegacy, obs.OnWarning, 10*time.Second
	sopts.Capabilities = &mcp.ClientCapabilities{}
	c, err := session.Connect(ctx, conn, sopts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return Run(ctx, c, obs, Options{Timeout: probe, Dial: func(context.Context) (transport.Conn, error) { return spawn() }})
}

// TestNoAnswerIsNoPass: a server that never answers an unknown method,
// tool, resource or prompt breaks JSON-RPC, which requires a response; each
// silence is an error finding, and the rules those probes were for are not
// listed as checked, since nothing was learnt of them.
func TestNoAnswerIsNoPass(t *testing.T) {
	t.Parallel()
	rep := checkBounds(t, mcptest.BoundsSilentUnknowns, 300*time.Millisecond, session.Options{})
	silent := map[string]bool{}
	for _, f := range rep.Findings {
		if f.Rule == "errors/no-answer" {
			if f.Severity != Error || !strings.Contains(f.Message, "no answer within 300ms") {
				t.Errorf("finding: %+v", f)
			}
			silent[f.Subject] = true
		}
	}
	for _, s := range []string{"mcpi/no-such-method", "tools/call mcpi-no-such-tool", "resources/read mcpi-check://no/such/resource", "prompts/get mcpi-no-such-prompt"} {
		if !silent[s] {
			t.Errorf("no errors/no-answer finding for %s; findings: %+v", s, rep.Findings)
		}
	}
	for _, r := range rep.Rules {
		switch r.ID {
		case "errors/unknown-method", "errors/unknown-tool", "errors/unknown-resource", "errors/unknown-prompt":
			t.Errorf("%s is listed as checked, but its probe got no answer", r.ID)
		}
	}
	if rep.Count(Error) == 0 {
		t.Error("the report has no error: it would pass")
	}
}

// TestCheckPaginationRule: mcpi check lists under the session's pagination
// rule: a list whose cursors never end stops at the page cap, one whose
// cursors go round stops at the repeated cursor, and either is a
// pagination/cursor finding.
func TestCheckPaginationRule(t *testing.T) {
	t.Parallel()
	for mode, want := range map[string]string{
		mcptest.BoundsEndlessCursor: "still had a nextCursor after 5 pages",
		mcptest.BoundsCyclingCursor: `nextCursor "a" was given before, after 3 page(s)`,
	} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			rep := checkBounds(t, mode, 5*time.Second, session.Options{MaxPages: 5})
			found := map[string]bool{}
			for _, f := range rep.Findings {
				if f.Rule == "pagination/cursor" {
					if !strings.Contains(f.Message, want) {
						t.Errorf("%s: %s", f.Subject, f.Message)
					}
					found[f.Subject] = true
				}
			}
			for _, m := range []string{"tools/list", "resources/list", "resources/templates/list", "prompts/list"} {
				if !found[m] {
					t.Errorf("no pagination/cursor finding for %s: %+v", m, rep.Findings)
				}
			}
		})
	}
}

// maxWriter records the largest single write and the bytes written.
type maxWriter struct{ max, total int }

func (w *maxWriter) Write(b []byte) (int, error) {
	w.max = max(w.max, len(b))
	w.total += len(b)
	return len(b), nil
}

// TestSARIFIsWrittenAsBuilt: the SARIF of a report with 100,000 findings
// (a server with 100,000 tools) is written a result at a time: no write
// holds more than the rules or one result (64 KiB of some 40 MB), so the
// document is never whole in memory, and it is compact (its size the --json report's order, not a
// multiple of it for indentation).
func TestSARIFIsWrittenAsBuilt(t *testing.T) {
	rep := &Report{Server: mcp.Implementation{Name: "wide"}, Findings: make([]Finding, 100_000)}
	for i := range rep.Findings {
		rep.Findings[i] = Finding{Rule: ruleToolsDescription.ID, Severity: Warning, Subject: fmt.Sprintf("tool %q", fmt.Sprintf("t%06d", i)),
			Message: "the tool has no description", Source: ruleToolsDescription.Source, Evidence: json.RawMessage(`{"name":"t","inputSchema":{"type":"object","properties":{"a":{"type":"string"}}}}`)}
	}
	var w maxWriter
	if err := WriteSARIF(&w, rep, "test"); err != nil {
		t.Fatal(err)
	}
	// The rules are one write (about 35 KB); each result another.
	if w.max > 64<<10 {
		t.Errorf("a write of %d bytes of %d: the document is held whole", w.max, w.total)
	}
	asJSON, _ := json.Marshal(rep)
	if w.total > 2*len(asJSON) {
		t.Errorf("the SARIF has %d bytes, the JSON report %d", w.total, len(asJSON))
	}
	var buf bytes.Buffer
	small := &Report{Findings: rep.Findings[:3]}
	if err := WriteSARIF(&buf, small, "test"); err != nil || !json.Valid(buf.Bytes()) || !bytes.HasSuffix(buf.Bytes(), []byte("}\n")) {
		t.Errorf("not one JSON document: %v %s", err, buf.Bytes())
	}
}
