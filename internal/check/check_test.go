package check

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpi-dev/mcpi/internal/apps"
	"github.com/mcpi-dev/mcpi/internal/check/hosts"
	"github.com/mcpi-dev/mcpi/internal/demoserver"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

func TestMain(m *testing.M) {
	mcptest.ServePeer()
	os.Exit(m.Run())
}

// checkStdio runs check against the stdio server cmd (with env), in era,
// the way mcpi check does: an Observer on the session and its stderr, and
// a Dial for the checks that need a connection of their own.
func checkStdio(t *testing.T, cmd, env []string, era string, timeout time.Duration, opts Options) *Report {
	t.Helper()
	spawn := func(tap transport.Tap) (transport.Conn, error) {
		return transport.Spawn(transport.StdioOptions{Command: cmd[0], Args: cmd[1:], Env: env, Tap: tap})
	}
	obs := &Observer{}
	conn, err := spawn(transport.TapFunc(func(e transport.Event) {
		if e.Kind == transport.KindStderr {
			obs.OnStderr()
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*timeout)
	defer cancel()
	// What mcpi check declares: the CLI answers every server request.
	caps := &mcp.ClientCapabilities{Sampling: &mcp.SamplingCapability{}, Elicitation: &mcp.ElicitationCapability{Form: &mcp.Empty{}}}
	sopts := session.Options{Era: era, OnWarning: obs.OnWarning, Timeout: timeout, Capabilities: caps}
	if opts.Apps {
		sopts.Extensions = map[string]json.RawMessage{apps.Extension: apps.Declaration()}
	}
	c, err := session.Connect(ctx, conn, sopts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	opts.Dial = func(context.Context) (transport.Conn, error) { return spawn(nil) }
	if opts.Timeout == 0 {
		opts.Timeout = timeout
	}
	return Run(ctx, c, obs, opts)
}

// checkPeer runs check against the test binary re-executed as peer.
func checkPeer(t *testing.T, peer string, opts Options) *Report {
	t.Helper()
	return checkStdio(t, []string{os.Args[0], "-test.run=^$"}, []string{mcptest.PeerEnv + "=" + peer}, session.EraLegacy, 10*time.Second, opts)
}

// checkModernPeer runs check against the test binary re-executed as a
// modern peer.
func checkModernPeer(t *testing.T, peer string, opts Options) *Report {
	t.Helper()
	return checkStdio(t, []string{os.Args[0], "-test.run=^$"}, []string{mcptest.PeerEnv + "=" + peer}, session.EraModern, 10*time.Second, opts)
}

// modernOnly are the rules the legacy broken server cannot break.
var modernOnly = map[string]bool{ruleErrorsMissingCapability.ID: true, ruleSubscriptionsListChanged.ID: true}

// TestCleanModernServer: the correct modern server has no finding, and
// the modern rules were checked.
func TestCleanModernServer(t *testing.T) {
	t.Parallel()
	rep := checkModernPeer(t, mcptest.ModernBrokenPrefix, Options{Call: true})
	for _, f := range rep.Findings {
		t.Errorf("finding on the correct modern server: %s %s: %s %s", f.Rule, f.Subject, f.Message, f.Evidence)
	}
	checked := checkedRules(rep)
	for id := range modernOnly {
		if !checked[id] {
			t.Errorf("rule %s was not checked", id)
		}
	}
}

// TestCleanServer: a correct server has no finding, and every rule that
// applies to it was checked.
func TestCleanServer(t *testing.T) {
	t.Parallel()
	rep := checkPeer(t, mcptest.BrokenPrefix, Options{Call: true})
	for _, f := range rep.Findings {
		t.Errorf("finding on the correct server: %s %s: %s", f.Rule, f.Subject, f.Message)
	}
	checked := checkedRules(rep)
	for _, r := range ruleList {
		// The HTTP rules have TestHTTPRules; the other era needs a dual-era server.
		// TestSSERules has the HTTP+SSE rules, TestAppsRules the Apps rules
		// (a server without Apps has nothing they apply to).
		if !checked[r.ID] && !strings.HasPrefix(r.ID, "http/") && !strings.HasPrefix(r.ID, "sse/") && !strings.HasPrefix(r.ID, "apps/") && r.ID != "dual-era/same-tools" && !modernOnly[r.ID] {
			t.Errorf("rule %s was not checked", r.ID)
		}
	}
}

// TestEveryRuleFinds: for each rule, a server broken in that one way is
// found out by that rule.
func TestEveryRuleFinds(t *testing.T) {
	t.Parallel()
	defects := map[string]bool{}
	all := append([]string(nil), mcptest.BrokenDefects...)
	all = append(all, mcptest.ModernBrokenDefects...)
	for i, d := range all {
		defects[d] = true
		t.Run(strings.ReplaceAll(d, "/", "-"), func(t *testing.T) {
			t.Parallel()
			var rep *Report
			if i < len(mcptest.BrokenDefects) {
				rep = checkPeer(t, mcptest.BrokenPrefix+d, Options{Call: true})
			} else {
				rep = checkModernPeer(t, mcptest.ModernBrokenPrefix+d, Options{Call: true})
			}
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
		// TestHTTPRules, TestSSERules, TestNoAnswerIsNoPass; the hosts'
		// rules have their fixtures (internal/check/hosts) and
		// TestHostProfilesEndToEnd; the Apps rules TestAppsRules.
		// handshake/completes is the report of a check that could not
		// begin (TestCheckCommand, "a handshake that fails").
		if !defects[r.ID] && !strings.HasPrefix(r.ID, "http/") && !strings.HasPrefix(r.ID, "sse/") && !strings.HasPrefix(r.ID, "hosts/") && !strings.HasPrefix(r.ID, "apps/") && r.ID != "errors/no-answer" && r.ID != ruleHandshakeCompletes.ID {
			t.Errorf("rule %s has no broken server in mcptest.BrokenDefects", r.ID)
		}
	}
}

func TestReports(t *testing.T) {
	t.Parallel()
	rep := checkPeer(t, mcptest.BrokenPrefix+"tools/input-schema", Options{})
	var text bytes.Buffer
	WriteText(&text, rep)
	for _, want := range []string{"mcpi check: broken 1.0 · 2025-11-25 (legacy era)", "ERRORS (2)", "tools/input-schema  tool \"lookup\": inputSchema's root type is \"string\"", "MCP 2025-11-25 server/tools § Tool", `frame: {"type":"string"}`, "results/schema  tools/list: the result is not a valid ListToolsResult of 2025-11-25: /tools/0/inputSchema/type", "2 error(s)",
		"HOSTS", "Anthropic (Messages API)                    rejected       1 tool(s): anthropic/root-object"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	b, _ := json.Marshal(rep)
	// The two errors, then what the hosts that need an object root say.
	var back struct {
		Findings []struct {
			Rule, Severity, Source string
			Evidence               json.RawMessage
		}
		Hosts []HostVerdict
	}
	if err := json.Unmarshal(b, &back); err != nil || len(back.Findings) != 5 || len(back.Hosts) != len(HostIDs()) || back.Hosts[2].Verdict != "rejected" || back.Findings[0].Rule != "tools/input-schema" || back.Findings[0].Severity != "error" || string(back.Findings[0].Evidence) != `{"type":"string"}` {
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
		len(doc.Runs[0].Results) != 5 || doc.Runs[0].Results[0].RuleID != "tools/input-schema" || doc.Runs[0].Results[0].Level != "error" ||
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

// checkHTTP runs check against the demo server over Streamable HTTP, its
// handler wrapped by wrap.
func checkHTTP(t *testing.T, era string, wrap func(http.Handler) http.Handler) *Report {
	t.Helper()
	srv := httptest.NewServer(wrap(demoserver.HTTPHandler(demoserver.Options{Era: era})))
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn := transport.NewStreamableHTTP(transport.HTTPOptions{URL: srv.URL})
	sessEra := session.EraLegacy
	if era == demoserver.EraModern {
		sessEra = session.EraModern
	}
	c, err := session.Connect(ctx, conn, session.Options{Era: sessEra, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return Run(ctx, c, nil, Options{Transport: "streamable-http", HTTP: &HTTPTarget{URL: srv.URL}})
}

func findings(rep *Report, rule string) []Finding {
	var out []Finding
	for _, f := range rep.Findings {
		if f.Rule == rule {
			out = append(out, f)
		}
	}
	return out
}

// TestHTTPRules: the demo server (the Go SDK's handler) keeps the HTTP
// rules; the same handler made to forget one is found out.
func TestHTTPRules(t *testing.T) {
	t.Parallel()
	for _, era := range []string{demoserver.EraLegacy, demoserver.EraModern} {
		rep := checkHTTP(t, era, func(h http.Handler) http.Handler { return h })
		for _, id := range []string{"http/dns-rebinding", "http/unknown-session", "http/content-type", "http/header-validation", "http/session-end"} {
			if fs := findings(rep, id); len(fs) > 0 {
				t.Errorf("%s: the demo server breaks %s: %s", era, id, fs[0].Message)
			}
		}
		checked := false
		for _, r := range rep.Rules {
			checked = checked || r.ID == "http/dns-rebinding"
		}
		if !checked {
			t.Errorf("%s: http/dns-rebinding was not checked", era)
		}
		// The Go SDK refuses a foreign Host, not a foreign Origin alone.
		if len(findings(rep, "http/origin")) != 1 {
			t.Errorf("%s: the demo server's acceptance of a foreign Origin was not reported: %v", era, rep.Findings)
		}
	}
	// No Host check: the SDK sees the loopback Host whatever was sent.
	rep := checkHTTP(t, demoserver.EraLegacy, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			r.Host = "127.0.0.1"
			h.ServeHTTP(w, r)
		})
	})
	if len(findings(rep, "http/dns-rebinding")) == 0 {
		t.Error("a server open to DNS rebinding was not found out")
	}
	// A server that checks Origin too.
	rep = checkHTTP(t, demoserver.EraLegacy, answering(func(w http.ResponseWriter, r *http.Request) bool {
		if o := r.Header.Get("Origin"); o != "" && !strings.HasPrefix(o, "http://127.0.0.1") {
			http.Error(w, "Forbidden", http.StatusForbidden)
			return true
		}
		return false
	}))
	if fs := findings(rep, "http/origin"); len(fs) > 0 {
		t.Errorf("a server that checks Origin was reported: %v", fs)
	}
	// A modern server that takes the body's word for the method.
	rep = checkHTTP(t, demoserver.EraModern, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost {
				body, _ := io.ReadAll(r.Body)
				var m struct {
					Method string `json:"method"`
				}
				json.Unmarshal(body, &m)
				r.Header.Set("Mcp-Method", m.Method)
				r.Body = io.NopCloser(bytes.NewReader(body))
			}
			h.ServeHTTP(w, r)
		})
	})
	if len(findings(rep, "http/header-validation")) != 2 {
		t.Errorf("a server that does not check Mcp-Method was not found out twice: %v", rep.Findings)
	}
	// Its success answer is worded as one, not as a JSON-RPC code 0.
	for _, f := range findings(rep, "http/header-validation") {
		if strings.Contains(f.Message, "code 0") || !strings.Contains(f.Message, "was answered 200 with a success, not an error; 400 with -32020 (HeaderMismatch) was required") {
			t.Errorf("finding: %s", f.Message)
		}
	}
	// A DELETE that says yes and ends nothing.
	rep = checkHTTP(t, demoserver.EraLegacy, answering(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method == http.MethodDelete {
			w.WriteHeader(http.StatusNoContent)
			return true
		}
		return false
	}))
	if len(findings(rep, "http/session-end")) == 0 {
		t.Error("a session that outlives its DELETE was not found out")
	}
	// An unknown session answered 400.
	rep = checkHTTP(t, demoserver.EraLegacy, answering(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Header.Get("Mcp-Session-Id") == "mcpi-check-no-such-session" {
			http.Error(w, "Bad Request: No valid session ID provided", http.StatusBadRequest)
			return true
		}
		return false
	}))
	if len(findings(rep, "http/unknown-session")) == 0 {
		t.Error("a server that answers an unknown session with 400 was not found out")
	}
	// The first answer with a wrong Content-Type.
	rep = checkHTTP(t, demoserver.EraLegacy, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("User-Agent") == "mcpi-check" {
				h.ServeHTTP(contentTypeWriter{w}, r)
				return
			}
			h.ServeHTTP(w, r)
		})
	})
	if len(findings(rep, "http/content-type")) == 0 {
		t.Error("a server that answers with text/plain was not found out")
	}
}

// checkedRules is the set of the rules rep checked.
func checkedRules(rep *Report) map[string]bool {
	checked := map[string]bool{}
	for _, r := range rep.Rules {
		checked[r.ID] = true
	}
	return checked
}

// checkedClean says where rep did not check one of rules, or found
// something against it on the server who names.
func checkedClean(t *testing.T, rep *Report, rules []string, who string) {
	t.Helper()
	checked := checkedRules(rep)
	for _, id := range rules {
		if !checked[id] {
			t.Errorf("%s was not checked", id)
		}
		for _, f := range findings(rep, id) {
			t.Errorf("%s breaks %s: %s", who, id, f.Message)
		}
	}
}

// answering is the middleware that lets answer take each request first:
// one it answered (it returns true) goes no further.
func answering(answer func(w http.ResponseWriter, r *http.Request) bool) func(http.Handler) http.Handler {
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !answer(w, r) {
				h.ServeHTTP(w, r)
			}
		})
	}
}

// contentTypeWriter answers with Content-Type text/plain.
type contentTypeWriter struct{ http.ResponseWriter }

func (w contentTypeWriter) WriteHeader(code int) {
	w.Header().Set("Content-Type", "text/plain")
	w.ResponseWriter.WriteHeader(code)
}

func (w contentTypeWriter) Write(b []byte) (int, error) {
	w.Header().Set("Content-Type", "text/plain")
	return w.ResponseWriter.Write(b)
}

func (w contentTypeWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// TestSeveritiesAgreeWithDocs: docs/check.md's table of rules is the
// code's, row for row (every rule has one row, with its severity, summary
// and source, and no row names a rule that is gone), and the severities
// keep what its "Severities" section says: a rule whose source says a
// server MUST is an error; a host's limit seen only in bug reports is
// info.
func TestSeveritiesAgreeWithDocs(t *testing.T) {
	b, err := os.ReadFile("../../docs/check.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("^\\| `([a-z0-9/-]+)` \\| (error|warning|info) \\| (.*) \\| (.*) \\|$")
	type docRow struct{ severity, summary, source string }
	rows := map[string][]docRow{}
	for _, line := range strings.Split(string(b), "\n") {
		if m := row.FindStringSubmatch(line); m != nil {
			rows[m[1]] = append(rows[m[1]], docRow{m[2], m[3], m[4]})
		}
	}
	serverMust := regexp.MustCompile(`\b(a |the )?servers? MUST\b|\bthe server MUST\b`)
	for _, r := range ruleList {
		got := rows[r.ID]
		delete(rows, r.ID)
		if len(got) != 1 {
			t.Errorf("docs/check.md has %d row(s) for %s, want 1", len(got), r.ID)
			continue
		}
		if got[0].severity != r.Severity.String() {
			t.Errorf("%s: the docs say %s, the code %s", r.ID, got[0].severity, r.Severity)
		}
		if got[0].source != r.Source {
			t.Errorf("%s: the docs' source %q, the code's %q", r.ID, got[0].source, r.Source)
		}
		if serverMust.MatchString(r.Source) && r.Severity != Error {
			t.Errorf("%s: its source says a server MUST (%s), but it is a %s", r.ID, r.Source, r.Severity)
		}
		if strings.HasPrefix(r.ID, "hosts/") && strings.HasSuffix(r.Source, "; "+string(hosts.Reported)) && r.Severity != Info {
			t.Errorf("%s: a limit seen only in bug reports is info, not %s", r.ID, r.Severity)
		}
	}
	for id := range rows {
		t.Errorf("docs/check.md lists %s, which is no rule", id)
	}
}

// headerServer is a modern Go SDK server with a read-only tool that
// mirrors its region argument into Mcp-Param-Region, and a read-only tool
// that asks the user first and refuses with -32021 a client that cannot.
func headerServer() http.Handler {
	s := sdk.NewServer(&sdk.Implementation{Name: "headers", Version: "1"}, nil)
	ro := &sdk.ToolAnnotations{ReadOnlyHint: true}
	sdk.AddTool(s, &sdk.Tool{Name: "weather", Description: "The weather of a region.", Annotations: ro,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}},"required":["region"]}`)},
		func(_ context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "sunny"}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "confirm", Description: "Asks the user to confirm.", Annotations: ro},
		func(_ context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			if caps := req.ClientCapabilities(); caps == nil || caps.Elicitation == nil {
				return nil, nil, &jsonrpc.Error{Code: sdk.CodeMissingRequiredClientCapabilities, Message: "confirm needs elicitation",
					Data: json.RawMessage(`{"requiredCapabilities":{"elicitation":{}}}`)}
			}
			if _, ok := req.Params.InputResponses["ok"]; ok {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "confirmed"}}}, nil, nil
			}
			return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{"ok": &sdk.ElicitParams{Mode: "form", Message: "Confirm?",
				RequestedSchema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}}}`)}}}, nil, nil
		})
	return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, &sdk.StreamableHTTPOptions{Stateless: true})
}

// checkModernHTTP runs check with --call against h over Streamable HTTP
// in the modern era, declaring elicitation as mcpi check does.
func checkModernHTTP(t *testing.T, h http.Handler) *Report {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	caps := &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{Form: &mcp.Empty{}}}
	dial := func(context.Context) (transport.Conn, error) {
		return transport.NewStreamableHTTP(transport.HTTPOptions{URL: srv.URL}), nil
	}
	conn, _ := dial(ctx)
	c, err := session.Connect(ctx, conn, session.Options{Era: session.EraModern, Timeout: 10 * time.Second, Capabilities: caps})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return Run(ctx, c, nil, Options{Call: true, Transport: "streamable-http", HTTP: &HTTPTarget{URL: srv.URL}, Dial: dial})
}

// rewriteHeader makes h take the body's word for header: it is set from
// the value from gives the request's body (deleted when from says "").
func rewriteHeader(h http.Handler, header string, from func(body []byte) string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			if v := from(body); v != "" {
				r.Header.Set(header, v)
			} else {
				r.Header.Del(header)
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		h.ServeHTTP(w, r)
	})
}

// TestModernHTTPHeaderRules: the Go SDK's handler checks Mcp-Name and
// Mcp-Param-* and answers -32021 with 400; a handler that takes the body's
// word for them, or answers -32021 with 200, is found out.
func TestModernHTTPHeaderRules(t *testing.T) {
	t.Parallel()
	rules := []string{"http/name-header", "http/param-header", ruleErrorsMissingCapability.ID, "handshake/unknown-version"}
	rep := checkModernHTTP(t, headerServer())
	checkedClean(t, rep, rules, "the SDK's handler")
	name := rewriteHeader(headerServer(), "Mcp-Name", func(body []byte) string {
		var m struct{ Params struct{ Name, URI string } }
		json.Unmarshal(body, &m)
		return m.Params.Name + m.Params.URI
	})
	if fs := findings(checkModernHTTP(t, name), "http/name-header"); len(fs) != 2 {
		t.Errorf("a server that does not check Mcp-Name was not found out twice: %v", fs)
	}
	param := rewriteHeader(headerServer(), "Mcp-Param-Region", func(body []byte) string {
		var m struct {
			Params struct{ Arguments struct{ Region string } }
		}
		json.Unmarshal(body, &m)
		return m.Params.Arguments.Region
	})
	if fs := findings(checkModernHTTP(t, param), "http/param-header"); len(fs) != 2 {
		t.Errorf("a server that does not check Mcp-Param-Region was not found out twice: %v", fs)
	}
	status := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		headerServer().ServeHTTP(rec, r)
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		if rec.Code == http.StatusBadRequest && bytes.Contains(rec.Body.Bytes(), []byte("-32021")) {
			rec.Code = http.StatusOK
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	})
	if fs := findings(checkModernHTTP(t, status), ruleErrorsMissingCapability.ID); len(fs) != 1 {
		t.Errorf("a -32021 answered 200 was not found out: %v", fs)
	}
}

// checkSSE runs check against the demo server's HTTP+SSE handler wrapped
// by wrap.
func checkSSE(t *testing.T, wrap func(http.Handler) http.Handler) *Report {
	t.Helper()
	srv := httptest.NewServer(wrap(demoserver.SSEHandler(demoserver.Options{Era: demoserver.EraLegacy})))
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := transport.DialLegacySSE(ctx, transport.HTTPOptions{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	c, err := session.Connect(ctx, conn, session.Options{Era: session.EraLegacy, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return Run(ctx, c, nil, Options{Transport: "sse", Timeout: time.Second, SSE: &HTTPTarget{URL: srv.URL}})
}

// forCheck wraps h for the check's own requests (User-Agent mcpi-check)
// only, so that the session itself still connects.
func forCheck(bad func(h http.Handler) http.Handler) func(http.Handler) http.Handler {
	return func(h http.Handler) http.Handler {
		b := bad(h)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("User-Agent") == "mcpi-check" {
				b.ServeHTTP(w, r)
				return
			}
			h.ServeHTTP(w, r)
		})
	}
}

// replaceWriter replaces old with new in what the handler writes.
type replaceWriter struct {
	http.ResponseWriter
	old, new string
}

func (w replaceWriter) Write(b []byte) (int, error) {
	_, err := w.ResponseWriter.Write(bytes.ReplaceAll(b, []byte(w.old), []byte(w.new)))
	return len(b), err
}

func (w replaceWriter) Flush() { w.ResponseWriter.(http.Flusher).Flush() }

func replacing(old, new string) func(http.Handler) http.Handler {
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h.ServeHTTP(replaceWriter{w, old, new}, r)
		})
	}
}

// TestSSERules: the Go SDK's HTTP+SSE handler keeps the framing a client
// relies on; the same handler made to break it one way at a time is found
// out.
func TestSSERules(t *testing.T) {
	t.Parallel()
	sseRules := []string{"sse/endpoint", "sse/endpoint-origin", "sse/post-accepted", "sse/message-events"}
	rep := checkSSE(t, func(h http.Handler) http.Handler { return h })
	checkedClean(t, rep, sseRules, "the SDK's SSE handler")
	for _, c := range []struct {
		rule string
		bad  func(http.Handler) http.Handler
	}{
		{"sse/endpoint", func(h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodGet {
					w.Header().Set("Content-Type", "text/event-stream")
					w.WriteHeader(http.StatusOK)
					io.WriteString(w, "event: hello\ndata: starting\n\n")
				}
				h.ServeHTTP(w, r)
			})
		}},
		{"sse/endpoint-origin", replacing("data: /", "data: http://mcpi-other.invalid/")},
		{"sse/message-events", replacing("event: message", "event: reply")},
		{"sse/post-accepted", func(h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPost {
					w.Header().Set("Content-Type", "application/json")
					io.WriteString(w, `{"jsonrpc":"2.0","id":7,"result":{}}`)
					return
				}
				h.ServeHTTP(w, r)
			})
		}},
	} {
		rep := checkSSE(t, forCheck(c.bad))
		if len(findings(rep, c.rule)) == 0 {
			t.Errorf("%s: the broken handler was not found out: %v", c.rule, rep.Findings)
		}
	}
}

// A 2026-07-28 server with serverInfo at the top level of its
// server/discover result: the finding says where it was found, and the
// name and version it gives are not said to be missing.
func TestServerInfoAtTheTopLevel(t *testing.T) {
	t.Parallel()
	rep := checkModernPeer(t, mcptest.ModernBrokenPrefix+"handshake/server-info", Options{})
	var msgs []string
	for _, f := range rep.Findings {
		if f.Rule == "handshake/server-info" {
			msgs = append(msgs, f.Message)
		}
	}
	if len(msgs) != 1 || !strings.Contains(msgs[0], `serverInfo is at the top level of the server/discover result, not in _meta["io.modelcontextprotocol/serverInfo"]`) {
		t.Errorf("findings: %q", msgs)
	}
}

// TestIdenticalFindingsAreGrouped: findings that say the same of several
// subjects are one entry of the text report, naming them all; JSON keeps
// each.
func TestIdenticalFindingsAreGrouped(t *testing.T) {
	rep := &Report{Findings: []Finding{
		{Rule: "r/a", Severity: Warning, Subject: `tool "x"`, Message: "same", Source: "s"},
		{Rule: "r/b", Severity: Warning, Subject: `tool "x"`, Message: "other", Source: "s"},
		{Rule: "r/a", Severity: Warning, Subject: `tool "y"`, Message: "same", Source: "s"},
	}}
	var b bytes.Buffer
	WriteText(&b, rep)
	if !strings.Contains(b.String(), `r/a  2 tools ("x", "y"): same`) || strings.Count(b.String(), "r/a") != 1 || !strings.Contains(b.String(), "WARNINGS (3)") {
		t.Errorf("not grouped:\n%s", b.String())
	}
}

// TestDualEraListingFailsInBoth: a dual-era server whose tools/list
// fails the same way in both eras has no difference between its eras to
// report (the failure is capabilities/declared-works's).
func TestDualEraListingFailsInBoth(t *testing.T) {
	t.Parallel()
	h := demoserver.HTTPHandler(demoserver.Options{Era: demoserver.EraBoth})
	failing := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(body, &m) == nil && m.Method == "tools/list" {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":"tools are not ready"}}`, m.ID)
			return
		}
		h.ServeHTTP(w, r)
	})
	rep := checkModernHTTP(t, failing)
	if len(findings(rep, "capabilities/declared-works")) == 0 {
		t.Errorf("the failing tools/list is not reported")
	}
	if fs := findings(rep, "dual-era/same-tools"); len(fs) > 0 {
		t.Errorf("a dual-era finding for a listing that fails in both eras: %s", fs[0].Message)
	}
}

// TestSecuritySourcesHoldTheRules: the security rules cite sources that
// hold them; server/tools § Security Considerations speaks of none of
// hidden text, description size or shadowing.
func TestSecuritySourcesHoldTheRules(t *testing.T) {
	for _, r := range ruleList {
		if strings.HasPrefix(r.ID, "security/") && (strings.Contains(r.Source, "Security Considerations") || !strings.Contains(r.Source, "Invariant Labs")) {
			t.Errorf("%s cites %q", r.ID, r.Source)
		}
	}
}

// TestAppsRules: each MCP Apps rule is broken by one Apps server of
// mcptest and kept by the correct one, with and without --apps.
func TestAppsRules(t *testing.T) {
	for _, c := range []struct {
		mode string
		apps bool
		want []string // rule ids found
	}{
		{mcptest.AppsGood, false, nil},
		{mcptest.AppsGood, true, nil},
		{mcptest.AppsAlways, false, []string{"apps/negotiated"}},
		{mcptest.AppsLegacy, false, []string{"apps/resource-uri"}},
		{mcptest.AppsLoose, true, []string{"apps/csp", "apps/resource-content", "apps/resource-listed", "apps/static-loads", "apps/visibility"}},
		{mcptest.AppsMissing, true, []string{"apps/resource-uri"}},
		{mcptest.AppsHuge, true, []string{"apps/resource-content"}},
		{mcptest.AppsNoCSP, false, nil},
		{mcptest.AppsNoCSP, true, nil},
		{mcptest.AppsOnlyLeak, false, []string{"apps/negotiated"}},
	} {
		t.Run(fmt.Sprintf("%s apps=%v", c.mode, c.apps), func(t *testing.T) {
			rep := runAppsCheck(t, mcptest.AppsPrefix+c.mode, c.apps)
			got := map[string]bool{}
			for _, f := range rep.Findings {
				if strings.HasPrefix(f.Rule, "apps/") {
					got[f.Rule] = true
				}
			}
			for _, id := range c.want {
				if !got[id] {
					t.Errorf("%s not found (findings %+v)", id, rep.Findings)
				}
				delete(got, id)
			}
			for id := range got {
				t.Errorf("unexpected %s (findings %+v)", id, rep.Findings)
			}
			checked := checkedRules(rep)
			want := []string{"apps/resource-uri", "apps/visibility"}
			if c.mode == mcptest.AppsGood || c.mode == mcptest.AppsNoCSP {
				want = append(want, "apps/resource-listed", "apps/resource-content", "apps/csp", "apps/static-loads")
				if !c.apps {
					want = append(want, "apps/negotiated")
				}
			}
			for _, id := range want {
				if !checked[id] {
					t.Errorf("%s is not listed as checked", id)
				}
			}
		})
	}
}

func runAppsCheck(t *testing.T, peer string, declare bool) *Report {
	t.Helper()
	return checkPeer(t, peer, Options{Apps: declare})
}

// TestOneInstanceOfAStdioServer: a server that allows one instance at a
// time (a second one exits, as @browsermcp/mcp's kills the first) gets
// the same report as any other: the steps on connections of their own
// (the Apps listing, an unknown revision, the other era) run after the
// session's is closed, one at a time, and what they find says on which
// connection it was found.
func TestOneInstanceOfAStdioServer(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{mcptest.AppsGood, mcptest.AppsAlways} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			lock := filepath.Join(t.TempDir(), "lock")
			env := []string{mcptest.PeerEnv + "=" + mcptest.AppsPrefix + mode, mcptest.SingleLockEnv + "=" + lock}
			rep := checkStdio(t, []string{os.Args[0], "-test.run=^$"}, env, session.EraLegacy, 10*time.Second, Options{})
			base := checkPeer(t, mcptest.AppsPrefix+mode, Options{})
			key := func(f Finding) string { return f.Rule + " " + f.Subject + ": " + f.Message }
			want := map[string]bool{}
			for _, f := range base.Findings {
				want[key(f)] = true
			}
			for _, f := range rep.Findings {
				if !want[key(f)] {
					t.Errorf("a finding the server of many instances does not get: %s", key(f))
				}
				delete(want, key(f))
				if strings.HasPrefix(f.Rule, "apps/") && f.Connection != appsDeclared {
					t.Errorf("%s does not say it was found on the Apps connection: %q", f.Rule, f.Connection)
				}
			}
			for k := range want {
				t.Errorf("a finding missing: %s", k)
			}
			if mode == mcptest.AppsAlways && len(findings(rep, ruleAppsNegotiated.ID)) != 1 {
				t.Errorf("no %s finding", ruleAppsNegotiated.ID)
			}
			checked := checkedRules(rep)
			for _, id := range []string{ruleAppsNegotiated.ID, ruleAppsResourceContent.ID, ruleHandshakeUnknownVersion.ID} {
				if !checked[id] {
					t.Errorf("%s was not checked", id)
				}
			}
			if _, err := os.Stat(lock); !os.IsNotExist(err) {
				t.Errorf("the lock is still held after the run: %v", err)
			}
		})
	}
}

// unprimedWriter drops the events with empty data a server writes: its
// SSE streams lose their priming event.
type unprimedWriter struct{ http.ResponseWriter }

func (w unprimedWriter) Write(b []byte) (int, error) {
	if bytes.HasSuffix(b, []byte("data: \n\n")) {
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

func (w unprimedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// TestSSEPriming: a 2025-11-25 server whose POST streams begin with a
// priming event (the Go SDK's) keeps http/sse-priming; one whose streams
// do not is found out; a modern server's streams are not resumable, and
// not judged.
func TestSSEPriming(t *testing.T) {
	t.Parallel()
	checked := func(rep *Report) bool {
		for _, r := range rep.Rules {
			if r.ID == ruleHttpSSEPriming.ID {
				return true
			}
		}
		return false
	}
	rep := checkHTTP(t, demoserver.EraLegacy, func(h http.Handler) http.Handler { return h })
	if fs := findings(rep, ruleHttpSSEPriming.ID); len(fs) > 0 || !checked(rep) {
		t.Errorf("the primed server: checked %v, %v", checked(rep), fs)
	}
	rep = checkHTTP(t, demoserver.EraLegacy, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(unprimedWriter{w}, r) })
	})
	if fs := findings(rep, ruleHttpSSEPriming.ID); len(fs) != 1 || !strings.Contains(fs[0].Message, "priming event") {
		t.Errorf("the unprimed server: %v", rep.Findings)
	}
	if rep = checkHTTP(t, demoserver.EraModern, func(h http.Handler) http.Handler { return h }); checked(rep) {
		t.Error("a modern server's streams were judged for priming")
	}
}
