package conformance

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/mcptest"
)

// scenario is a client scenario and the checks that must come back SUCCESS.
type scenario struct {
	name string
	// rev is the revision whose wire the scenario runs at; "" for an
	// extension's scenario, which is on no revision's timeline (the suite
	// skips it when given one).
	rev    string
	checks []string
	// stdout and stderr, when set, must appear in the client's output.
	stdout, stderr []string
}

var scenarios = []scenario{
	{name: "initialize", rev: "2025-11-25", checks: []string{"mcp-client-initialization"}},
	{name: "tools_call", rev: "2025-11-25", checks: []string{"tool-add-numbers", "wire-schema-valid"}, stdout: []string{`"text":"The sum of 5 and 3 is 8"`}},
	{name: "elicitation-sep1034-client-defaults", rev: "2025-11-25", checks: []string{
		"client-elicitation-sep1034-string-default",
		"client-elicitation-sep1034-integer-default",
		"client-elicitation-sep1034-number-default",
		"client-elicitation-sep1034-enum-default",
		"client-elicitation-sep1034-boolean-default",
	}, stdout: []string{`{\"age\":30,\"name\":\"John Doe\",\"score\":95.5,\"status\":\"active\",\"verified\":true}`}},
	{name: "sse-retry", rev: "2025-11-25", checks: []string{
		"client-sse-graceful-reconnect",
		"client-sse-retry-timing",
		"client-sse-last-event-id",
	}, stdout: []string{"Reconnection test completed successfully"}},
	{name: "json-schema-2020-12-preservation", rev: "2025-11-25", checks: []string{
		"json-schema-2020-12-client-tool-found",
		"json-schema-2020-12-client-echo-completed",
		"json-schema-2020-12-client-$schema-preserved",
		"json-schema-2020-12-client-$defs-preserved",
		"json-schema-2020-12-client-additionalProperties-preserved",
		"sep-2106-client-composition-keywords-preserved",
		"sep-2106-client-conditional-keywords-preserved",
		"sep-2106-client-anchor-keyword-preserved",
		"wire-schema-valid",
	}},

	// 2026-07-28, the modern era.
	{name: "tools_call", rev: "2026-07-28", checks: []string{"tool-add-numbers", "wire-schema-valid"}, stdout: []string{`"text":"The sum of 5 and 3 is 8"`}},
	{name: "request-metadata", rev: "2026-07-28", checks: []string{
		"sep-2575-http-client-sends-version-header",
		"sep-2575-client-populates-meta",
		"sep-2575-client-sends-client-info",
		"sep-2575-http-version-header-matches-meta",
		"sep-2575-client-declares-roots-capability",
		"sep-2575-client-declares-sampling-capability",
		"sep-2575-client-declares-elicitation-capability",
		"sep-2575-client-retry-supported-version",
	}},
	{name: "sep-2322-client-request-state", rev: "2026-07-28", checks: []string{
		"sep-2322-client-request-state-echoed",
		"sep-2322-client-jsonrpc-id-different",
		"sep-2322-client-no-state-omitted",
		"sep-2322-client-parallel-isolation",
		"sep-2322-default-result-type-complete",
	}},
	{name: "http-standard-headers", rev: "2026-07-28", checks: []string{"sep-2243-client-includes-standard-headers"}},
	{name: "http-custom-headers", rev: "2026-07-28", checks: []string{
		"sep-2243-client-supports-custom-headers",
		"sep-2243-client-mirrors-designated-params",
		"sep-2243-client-encode-values",
		"sep-2243-client-base64-unsafe",
		"sep-2243-client-omit-null",
	}},
	{name: "http-invalid-tool-headers", rev: "2026-07-28", checks: []string{
		"sep-2243-client-reject-invalid-tool",
		"sep-2243-x-mcp-header-not-empty",
		"sep-2243-x-mcp-header-primitive-only",
		"sep-2243-x-mcp-header-unique",
		"sep-2243-x-mcp-header-charset",
	}},
	{name: "json-schema-ref-no-deref", rev: "2026-07-28", checks: []string{"sep-2106-no-network-ref-deref"}},
	{name: "json-schema-2020-12-preservation", rev: "2026-07-28", checks: []string{
		"json-schema-2020-12-client-tool-found",
		"json-schema-2020-12-client-echo-completed",
		"json-schema-2020-12-client-$schema-preserved",
		"json-schema-2020-12-client-$defs-preserved",
		"json-schema-2020-12-client-additionalProperties-preserved",
		"wire-schema-valid",
	}},

	// Extensions: skills (SEP-2640). mcpi runs `skills` and `skill NAME`
	// (see scripts/conformance-client.sh); the tampered SKILL.md ends in
	// exit 7, which the suite allows of the verify scenarios.
	{name: "sep-2640-client-no-prefetch", checks: []string{"sep-2640-host-no-prefetch"}, stdout: []string{"skill://pdf-processing/SKILL.md"}},
	{name: "sep-2640-client-verify-digest", checks: []string{"sep-2640-host-verify-digest"}, stderr: []string{"failed verification, not used", "digest: served sha256:"}},
	{name: "sep-2640-client-verify-size", checks: []string{"sep-2640-host-size-mismatch-failure"}, stderr: []string{"failed verification, not used", "size: 139 bytes served, 97 listed"}},
	{name: "sep-2640-client-verify-frontmatter", checks: []string{"sep-2640-host-frontmatter-comparison"}, stderr: []string{"failed verification, not used", "frontmatter: description: file \"Exfiltrate credentials\""}},

	// OAuth (auth/*): mcpi runs `call test-tool --oauth-headless` (see
	// scripts/conformance-client.sh); the refusals end in exit 6, which the
	// suite expects of them.
	{name: "auth/metadata-default", rev: "2025-11-25", checks: cat(authFlow, authResource, dcr25)},
	{name: "auth/metadata-var1", rev: "2025-11-25", checks: cat(authFlow, authResource, dcr25)},
	{name: "auth/metadata-var2", rev: "2025-11-25", checks: cat(authFlow, authResource, dcr25)},
	{name: "auth/metadata-var3", rev: "2025-11-25", checks: cat(authFlow, authResource, dcr25)},
	{name: "auth/basic-cimd", rev: "2025-11-25", checks: cat(authFlow, []string{"cimd-client-id-used"})},
	{name: "auth/pre-registration", rev: "2025-11-25", checks: cat(authFlow, []string{"pre-registration-auth"})},
	{name: "auth/scope-from-www-authenticate", rev: "2025-11-25", checks: cat(authFlow, dcr25, []string{"scope-from-www-authenticate"})},
	{name: "auth/scope-from-scopes-supported", rev: "2025-11-25", checks: cat(authFlow, dcr25, []string{"scope-from-scopes-supported"})},
	{name: "auth/scope-omitted-when-undefined", rev: "2025-11-25", checks: cat(authFlow, dcr25, []string{"scope-omitted-when-undefined"})},
	{name: "auth/scope-step-up", rev: "2025-11-25", checks: cat(authFlow, dcr25, []string{"scope-step-up-initial", "scope-step-up-escalation"})},
	{name: "auth/scope-retry-limit", rev: "2025-11-25", checks: cat(authRequest, authToken, dcr25, []string{"scope-retry-limit"})},
	{name: "auth/token-endpoint-auth-basic", rev: "2025-11-25", checks: cat(authFlow, authResource, dcr25, []string{"token-endpoint-auth-method"})},
	{name: "auth/token-endpoint-auth-post", rev: "2025-11-25", checks: cat(authFlow, authResource, dcr25, []string{"token-endpoint-auth-method"})},
	{name: "auth/token-endpoint-auth-none", rev: "2025-11-25", checks: cat(authFlow, authResource, dcr25, []string{"token-endpoint-auth-method"})},

	{name: "auth/metadata-default", rev: "2026-07-28", checks: cat(authFlow, authResource, dcr26)},
	{name: "auth/metadata-var1", rev: "2026-07-28", checks: cat(authFlow, authResource, dcr26)},
	{name: "auth/metadata-var2", rev: "2026-07-28", checks: cat(authFlow, authResource, dcr26)},
	{name: "auth/metadata-var3", rev: "2026-07-28", checks: cat(authFlow, authResource, dcr26)},
	{name: "auth/basic-cimd", rev: "2026-07-28", checks: cat(authFlow, []string{"cimd-client-id-used"})},
	{name: "auth/pre-registration", rev: "2026-07-28", checks: cat(authFlow, []string{"pre-registration-auth"})},
	{name: "auth/scope-from-www-authenticate", rev: "2026-07-28", checks: cat(authFlow, dcr26, []string{"scope-from-www-authenticate"})},
	{name: "auth/scope-from-scopes-supported", rev: "2026-07-28", checks: cat(authFlow, dcr26, []string{"scope-from-scopes-supported"})},
	{name: "auth/scope-omitted-when-undefined", rev: "2026-07-28", checks: cat(authFlow, dcr26, []string{"scope-omitted-when-undefined"})},
	{name: "auth/scope-step-up", rev: "2026-07-28", checks: cat(authFlow, dcr26, []string{"scope-step-up-initial", "scope-step-up-escalation", "sep-2350-scope-union-on-reauth"})},
	{name: "auth/scope-retry-limit", rev: "2026-07-28", checks: cat(authRequest, authToken, dcr26, []string{"scope-retry-limit"})},
	{name: "auth/token-endpoint-auth-basic", rev: "2026-07-28", checks: cat(authFlow, authResource, dcr26, []string{"token-endpoint-auth-method"})},
	{name: "auth/token-endpoint-auth-post", rev: "2026-07-28", checks: cat(authFlow, authResource, dcr26, []string{"token-endpoint-auth-method"})},
	{name: "auth/token-endpoint-auth-none", rev: "2026-07-28", checks: cat(authFlow, authResource, dcr26, []string{"token-endpoint-auth-method"})},
	{name: "auth/resource-mismatch", rev: "2026-07-28", checks: []string{"prm-pathbased-requested", "resource-mismatch-rejected"}},
	{name: "auth/metadata-issuer-mismatch", rev: "2026-07-28", checks: []string{"prm-pathbased-requested", "authorization-server-metadata", "sep-2468-client-validate-metadata-issuer"}},
	{name: "auth/offline-access-scope", rev: "2026-07-28", checks: cat(authFlow, []string{"sep-2207-offline-access-requested"})},
	{name: "auth/offline-access-not-supported", rev: "2026-07-28", checks: cat(authFlow, dcr26, []string{"sep-2207-offline-access-not-requested"})},
	{name: "auth/authorization-server-migration", rev: "2026-07-28", checks: cat(authFlow, dcr26, []string{
		"sep-2352-reregister-on-as-change", "sep-2352-no-reuse-on-as-change", "sep-2352-no-cross-as-credential-reuse"})},
	{name: "auth/iss-supported", rev: "2026-07-28", checks: cat(authFlow, dcr26, []string{"sep-2468-client-compare-iss-supported"})},
	{name: "auth/iss-not-advertised", rev: "2026-07-28", checks: cat(authFlow, dcr26, []string{"sep-2468-client-proceed-no-iss"})},
	{name: "auth/iss-supported-missing", rev: "2026-07-28", checks: cat(authRequest, dcr26, []string{"sep-2468-client-reject-missing-iss"})},
	{name: "auth/iss-wrong-issuer", rev: "2026-07-28", checks: cat(authRequest, dcr26, []string{"sep-2468-client-compare-iss-supported"})},
	{name: "auth/iss-unexpected", rev: "2026-07-28", checks: cat(authRequest, dcr26, []string{"sep-2468-client-compare-iss-unadvertised"})},
	{name: "auth/iss-normalized", rev: "2026-07-28", checks: cat(authRequest, dcr26, []string{"sep-2468-client-no-normalization"})},

	// 2025-03-26: no protected resource metadata; the server's origin is
	// its authorization server, with metadata or with the default endpoints.
	{name: "auth/2025-03-26-oauth-metadata-backcompat", rev: "2025-03-26", checks: cat([]string{"authorization-server-metadata", "client-registration"},
		authRequest[2:], authToken, []string{"valid-bearer-token"})},
	{name: "auth/2025-03-26-oauth-endpoint-fallback", rev: "2025-03-26", checks: []string{"client-registration", "authorization-request", "token-request", "valid-bearer-token"}},

	// The authorization extensions: machine to machine (client credentials
	// with a secret or a private_key_jwt assertion, workload identity),
	// enterprise-managed authorization and DPoP.
	{name: "auth/client-credentials-basic", checks: cat(authDiscovery, []string{"token-request", "client-credentials-basic-auth", "valid-bearer-token"})},
	{name: "auth/client-credentials-jwt", checks: cat(authDiscovery, []string{"token-request", "client-credentials-jwt-verified", "valid-bearer-token"})},
	{name: "auth/wif-jwt-bearer", checks: cat(authDiscovery, []string{"token-request", "wif-assertion-verified", "valid-bearer-token"})},
	{name: "auth/enterprise-managed-authorization", checks: cat(authDiscovery, []string{"complete-flow-token-exchange", "token-request", "complete-flow-jwt-bearer", "valid-bearer-token"})},
	{name: "auth/dpop", checks: cat(authRequest, authToken, dcr25, dpop)},
	{name: "auth/dpop-nonce", checks: cat(authRequest, authToken, dcr25, dpop, []string{"sep-1932-client-as-nonce", "sep-1932-client-rs-nonce"})},
}

// The checks of an OAuth flow, in the order it earns them: discovery and
// the authorization request, the token request, the authorized request.
var (
	authRequest = []string{"prm-pathbased-requested", "authorization-server-metadata", "authorization-request",
		"pkce-code-challenge-sent", "pkce-s256-method-used"}
	authToken = []string{"token-request", "pkce-code-verifier-sent", "pkce-verifier-matches-challenge"}
	authFlow  = cat(authRequest, authToken, []string{"valid-bearer-token"})
	// Discovery alone: the grants without a person start there.
	authDiscovery = authRequest[:2]
	authResource  = []string{"resource-parameter-in-authorization", "resource-parameter-in-token",
		"resource-parameter-valid-uri", "resource-parameter-consistency", "resource-parameter-matches-prm"}
	// Dynamic client registration; 2026-07-28 checks its application_type.
	dcr25 = []string{"client-registration"}
	dcr26 = []string{"client-registration", "sep-837-application-type-present"}
	// DPoP: a proof at the token request, the DPoP scheme and a fresh proof
	// on every MCP request.
	dpop = []string{"sep-1932-client-token-request-proof", "sep-1932-client-dpop-auth-scheme", "sep-1932-client-fresh-proof"}
)

func cat(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

type suite struct {
	node, cli, mcpi, client string
}

func setup(t *testing.T) suite {
	t.Helper()
	root := mcptest.RepoRoot()
	s := suite{
		node:   filepath.Join(mcptest.NPMDir(), "node_modules", ".bin", "node"),
		cli:    filepath.Join(mcptest.NPMDir(), "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js"),
		client: filepath.Join(root, "scripts", "conformance-client.sh"),
	}
	for _, p := range []string{s.node, s.cli} {
		if _, err := os.Stat(p); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("the conformance suite is not installed (%v): scripts/deps.sh should have installed it", err)
			}
			t.Skip("the conformance suite is not installed: run scripts/deps.sh (make test does)")
		}
	}
	s.mcpi = filepath.Join(t.TempDir(), "mcpi")
	if out, err := exec.Command("go", "build", "-o", s.mcpi, "github.com/mcpi-dev/mcpi/cmd/mcpi").CombinedOutput(); err != nil {
		t.Fatalf("building mcpi: %v\n%s", err, out)
	}
	return s
}

// TestScenarioListCovered fails when the suite requires a client scenario
// (OAuth ones included) for 2025-11-25 or 2026-07-28 that this harness does
// not run.
func TestScenarioListCovered(t *testing.T) {
	s := setup(t)
	for _, rev := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(rev, func(t *testing.T) { checkCovered(t, s, rev) })
	}
}

func checkCovered(t *testing.T, s suite, rev string) {
	out, err := exec.Command(s.node, s.cli, "list", "--client", "--requirements", rev).Output()
	if err != nil {
		t.Fatalf("conformance list: %v", err)
	}
	var required []string
	inClient := false
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "Client scenarios") {
			inClient = true
			continue
		}
		if strings.HasPrefix(line, "Run and reported") {
			break
		}
		if inClient && strings.HasPrefix(line, "- ") {
			required = append(required, strings.Fields(strings.TrimPrefix(line, "- "))[0])
		} else if inClient && line != "" && !strings.HasPrefix(line, "- ") {
			inClient = false
		}
	}
	if len(required) == 0 {
		t.Fatalf("no client scenarios in the suite's list:\n%s", out)
	}
	for _, name := range required {
		if !slices.ContainsFunc(scenarios, func(sc scenario) bool { return sc.name == name && sc.rev == rev }) {
			t.Errorf("the suite requires client scenario %s for %s; the harness does not run it", name, rev)
		}
	}
}

type check struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	ErrorMessage string `json:"errorMessage"`
}

// TestClientScenarios runs each scenario, one at a time (sse-retry measures
// timing), and checks every expected check id is present and SUCCESS, and
// that nothing failed or warned.
func TestClientScenarios(t *testing.T) {
	s := setup(t)
	for _, sc := range scenarios {
		rev := sc.rev
		if rev == "" {
			rev = "extension"
		}
		t.Run(rev+"/"+sc.name, func(t *testing.T) {
			dir := t.TempDir()
			args := []string{s.cli, "client", "--command", s.client, "--scenario", sc.name, "-o", dir, "--timeout", "30000"}
			if sc.rev != "" {
				args = append(args, "--spec-version", sc.rev)
			}
			cmd := exec.Command(s.node, args...)
			// Each scenario is a new server: detect its era, and remember
			// nothing outside the test.
			cmd.Env = append(os.Environ(), "MCPI="+s.mcpi, "NODE="+s.node, "MCPI_ERA=auto", "XDG_CACHE_HOME="+t.TempDir())
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Errorf("the suite says the scenario failed (%v):\n%s", err, out)
			}
			matches, _ := filepath.Glob(filepath.Join(dir, sc.name+"-*", "checks.json"))
			if len(matches) != 1 {
				t.Fatalf("want one checks.json, found %v\n%s", matches, out)
			}
			data, err := os.ReadFile(matches[0])
			if err != nil {
				t.Fatal(err)
			}
			var checks []check
			if err := json.Unmarshal(data, &checks); err != nil {
				t.Fatalf("checks.json: %v", err)
			}
			status := map[string]string{}
			for _, c := range checks {
				// A check may come once per method; one SUCCESS counts.
				if status[c.ID] != "SUCCESS" {
					status[c.ID] = c.Status
				}
				if c.Status == "FAILURE" || c.Status == "WARNING" {
					t.Errorf("check %s: %s %s", c.ID, c.Status, c.ErrorMessage)
				}
			}
			for _, id := range sc.checks {
				switch st, ok := status[id]; {
				case !ok:
					t.Errorf("check %s is missing", id)
				case st != "SUCCESS":
					t.Errorf("check %s is %s", id, st)
				}
			}
			if len(sc.stdout) > 0 {
				stdout, _ := os.ReadFile(filepath.Join(filepath.Dir(matches[0]), "stdout.txt"))
				for _, want := range sc.stdout {
					if !strings.Contains(string(stdout), want) {
						t.Errorf("client stdout lacks %s:\n%s", want, stdout)
					}
				}
			}
			if len(sc.stderr) > 0 {
				stderr, _ := os.ReadFile(filepath.Join(filepath.Dir(matches[0]), "stderr.txt"))
				for _, want := range sc.stderr {
					if !strings.Contains(string(stderr), want) {
						t.Errorf("client stderr lacks %s:\n%s", want, stderr)
					}
				}
			}
			if t.Failed() {
				stderr, _ := os.ReadFile(filepath.Join(filepath.Dir(matches[0]), "stderr.txt"))
				t.Logf("client stderr:\n%s", stderr)
			}
		})
	}
}
