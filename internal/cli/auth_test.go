package cli

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/auth"
	"github.com/mcpi-dev/mcpi/internal/auth/authtest"
	"github.com/mcpi-dev/mcpi/internal/command"
)

// configDir gives the test a token store of its own. Tests that use it
// cannot run in parallel: the directory comes from the environment.
func configDir(t *testing.T) string {
	dir := t.TempDir()
	t.Setenv(auth.ConfigDirEnv, dir)
	return dir
}

// assertNoSecrets fails if any secret the authorization server issued is
// in text.
func assertNoSecrets(t *testing.T, what, text string, s *authtest.Server) {
	t.Helper()
	for _, sec := range s.Secrets() {
		if strings.Contains(text, sec) || strings.Contains(text, url.QueryEscape(sec)) {
			t.Errorf("%s holds the secret %q", what, sec)
		}
	}
}

func TestOAuthHeadless(t *testing.T) {
	dir := configDir(t)
	s := authtest.Start(t, authtest.Config{Scopes: []string{"mcp:basic"}})
	trace := filepath.Join(t.TempDir(), "trace.jsonl")
	code, out, errOut := runCLI(t, "", "tools", "--oauth-headless", "-v", "--record", trace, s.URL)
	if code != command.ExitOK || !strings.Contains(out, "echo") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	// -v shows every step.
	wantIn(t, "-v output", errOut,
		"oauth: the server asks for authorization (401 Unauthorized)",
		"oauth protected resource metadata: 200 OK",
		"oauth authorization server metadata: 200 OK",
		"oauth client registration: 201 Created",
		"oauth authorization (headless): 302 Found",
		"oauth token request: 200 OK",
		"authorized; sending the request again",
	)
	raw, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	wantIn(t, "the trace", string(raw), "oauth token request: 200 OK", `\"access_token\":\"[REDACTED]\"`, "code=[REDACTED]")
	assertNoSecrets(t, "the trace", string(raw), s)
	assertNoSecrets(t, "stderr", errOut, s)
	fi, err := os.Stat(filepath.Join(dir, auth.StoreFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token store: %v %v", fi, err)
	}

	// The next run, with no terminal and no --oauth-headless, uses the
	// stored token: no new authorization.
	before := s.Counts()
	if code, out, errOut := runCLI(t, "", "call", "echo", "text=again", s.URL); code != command.ExitOK || !strings.Contains(out, "again") {
		t.Fatalf("second run: exit %d\n%s\n%s", code, out, errOut)
	}
	if s.Counts() != before {
		t.Errorf("the second run authorized again: %+v, was %+v", s.Counts(), before)
	}

	// auth list shows the entry, never a secret.
	code, out, errOut = runCLI(t, "", "auth", "list")
	if code != command.ExitOK || !strings.Contains(out, s.Issuer) || !strings.Contains(out, "dynamic-registration") || !strings.Contains(out, "refreshable") {
		t.Errorf("auth list: exit %d\n%s\n%s", code, out, errOut)
	}
	assertNoSecrets(t, "auth list", out, s)
	code, out, _ = runCLI(t, "", "auth", "list", "--json")
	var list []storedCredential
	if err := json.Unmarshal([]byte(out), &list); code != command.ExitOK || err != nil || len(list) != 1 || list[0].Resource != s.URL || list[0].Scope != "mcp:basic offline_access" {
		t.Errorf("auth list --json: exit %d, %v: %s", code, err, out)
	}
	assertNoSecrets(t, "auth list --json", out, s)

	// logout by server URL removes it; then nothing is left.
	if code, _, errOut := runCLI(t, "", "auth", "logout", "--resource", s.URL); code != command.ExitOK || !strings.Contains(errOut, "removed the credentials of "+s.Issuer) {
		t.Errorf("logout: exit %d: %s", code, errOut)
	}
	if code, out, errOut := runCLI(t, "", "auth", "list"); code != command.ExitOK || out != "" || !strings.Contains(errOut, "no OAuth credentials stored") {
		t.Errorf("after logout: exit %d\n%s\n%s", code, out, errOut)
	}
}

func TestOAuthFailures(t *testing.T) {
	configDir(t)
	good := authtest.Start(t, authtest.Config{})
	evil := authtest.Start(t, authtest.Config{Resource: "https://evil.example.com/mcp"})
	noPKCE := authtest.Start(t, authtest.Config{NoPKCE: true})
	basic := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Basic realm="files"`)
		http.Error(w, "who are you?", http.StatusUnauthorized)
	}))
	t.Cleanup(basic.Close)
	for _, tc := range []cliCase{
		{name: "another scheme than Bearer", args: []string{"tools", "--oauth-headless", basic.URL}, code: command.ExitAuth,
			stderr: []string{"401 Unauthorized: who are you?"}},
		{name: "no terminal", args: []string{"tools", good.URL}, code: command.ExitAuth,
			stderr: []string{"mcpi: oauth authorization: " + good.URL + " needs authorization by " + good.Issuer, "--oauth-headless"}},
		{name: "mismatched resource", args: []string{"tools", "--oauth-headless", evil.URL}, code: command.ExitAuth,
			stderr: []string{`mcpi: oauth protected resource metadata: the metadata at ` + strings.TrimSuffix(evil.URL, "/mcp") + `/.well-known/oauth-protected-resource/mcp is for resource "https://evil.example.com/mcp"`, "[rule: " + auth.RuleResource}},
		{name: "no PKCE", args: []string{"tools", "--oauth-headless", noPKCE.URL}, code: command.ExitAuth,
			stderr: []string{"does not support PKCE", "[rule: " + auth.RulePKCE}},
		{name: "bearer refused", args: []string{"tools", "--bearer", "not-a-token", good.URL}, code: command.ExitAuth,
			stderr: []string{"401 Unauthorized"}},
		{name: "no client registration", args: []string{"tools", "--oauth-headless", "--client-id", "nobody", good.URL}, code: command.ExitAuth,
			stderr: []string{"mcpi: oauth authorization: "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkCase(t, tc)
			_, _, errOut := runCLI(t, "", tc.args...)
			if strings.Contains(errOut, `Post "`) {
				t.Errorf("the error repeats the HTTP client's wrapping: %s", errOut)
			}
		})
	}
}

func TestOAuthBearer(t *testing.T) {
	configDir(t)
	s := authtest.Start(t, authtest.Config{})
	runCLIExit(t, command.ExitOK, "ping", "--oauth-headless", s.URL)
	store, _ := authStore()
	e, err := store.ForServer(s.URL)
	if err != nil || e == nil {
		t.Fatalf("no stored token: %v", err)
	}
	token := e.Token.AccessToken
	if _, err := store.Remove(func(auth.Entry) bool { return true }); err != nil {
		t.Fatal(err)
	}
	trace := filepath.Join(t.TempDir(), "trace.jsonl")
	before := s.Counts()
	code, out, errOut := runCLI(t, "", "tools", "--bearer", token, "--record", trace, s.URL)
	if code != command.ExitOK || !strings.Contains(out, "echo") || s.Counts() != before {
		t.Fatalf("--bearer: exit %d, %+v\n%s\n%s", code, s.Counts(), out, errOut)
	}
	raw, _ := os.ReadFile(trace)
	if strings.Contains(string(raw), token) {
		t.Error("the --bearer token reached the trace")
	}
}

func TestAuthFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []cliCase{
		{name: "secret without id", args: []string{"tools", "--client-secret", "s3cret", "https://h/mcp"}, code: command.ExitUsage, stderr: []string{"--client-secret needs --client-id"}},
		{name: "bearer with a command", args: []string{"tools", "--bearer", "t0ken", "--", "server"}, code: command.ExitUsage, stderr: []string{"apply to HTTP servers"}},
		{name: "bearer and OAuth", args: []string{"tools", "--bearer", "t0ken", "--oauth-headless", "https://h/mcp"}, code: command.ExitUsage, stderr: []string{"does not go with the OAuth flags"}},
		{name: "bearer and Authorization", args: []string{"tools", "--bearer", "t0ken", "-H", "Authorization: Bearer x", "https://h/mcp"}, code: command.ExitUsage, stderr: []string{"not both"}},
		{name: "metadata URL not HTTPS", args: []string{"tools", "--client-metadata-url", "http://h/client.json", "https://h/mcp"}, code: command.ExitUsage, stderr: []string{"invalid --client-metadata-url"}},
		{name: "redirect port", args: []string{"tools", "--oauth-redirect-port", "70000", "https://h/mcp"}, code: command.ExitUsage, stderr: []string{"invalid --oauth-redirect-port"}},
		{name: "logout needs a selector", args: []string{"auth", "logout"}, code: command.ExitUsage, stderr: []string{"--issuer URL, --resource URL"}},
		{name: "logout --all alone", args: []string{"auth", "logout", "--all", "--issuer", "https://as"}, code: command.ExitUsage, stderr: []string{"--all removes everything"}},
		{name: "unknown grant", args: []string{"tools", "--grant", "password", "https://h/mcp"}, code: command.ExitUsage, stderr: []string{"invalid --grant \"password\""}},
		{name: "client_credentials without a secret", args: []string{"tools", "--grant", "client_credentials", "--client-id", "c", "https://h/mcp"}, code: command.ExitUsage, stderr: []string{"needs --client-id and its secret"}},
		{name: "secret and key", args: []string{"tools", "--client-id", "c", "--client-secret", "s3cret", "--client-assertion-key", "k.pem", "https://h/mcp"}, code: command.ExitUsage, stderr: []string{"give one of them"}},
		{name: "jwt-bearer without a JWT", args: []string{"tools", "--grant", "jwt-bearer", "https://h/mcp"}, code: command.ExitUsage, stderr: []string{"--assertion-file FILE or $MCPI_OAUTH_ASSERTION"}},
		{name: "id-jag without a provider", args: []string{"tools", "--grant", "id-jag", "--client-id", "c", "https://h/mcp"}, code: command.ExitUsage, stderr: []string{"--idp-issuer or --idp-token-endpoint"}},
		{name: "idp flags without id-jag", args: []string{"tools", "--idp-issuer", "https://idp", "https://h/mcp"}, code: command.ExitUsage, stderr: []string{"go with --grant id-jag"}},
		{name: "dpop key missing", args: []string{"tools", "--dpop-key", "/nonexistent.pem", "https://h/mcp"}, code: command.ExitUsage, stderr: []string{"--dpop-key:"}},
		{name: "dpop with bearer", args: []string{"tools", "--bearer", "t0ken", "--dpop", "https://h/mcp"}, code: command.ExitUsage, stderr: []string{"does not go with the OAuth flags"}},
	} {
		t.Run(tc.name, func(t *testing.T) { checkCase(t, tc) })
	}
}

// TestOAuthGrants: the grants without a person, their secrets from files
// and the environment, DPoP; neither the trace nor -v shows a secret, and
// a refused grant is not tried again.
func TestOAuthGrants(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, _ := x509.MarshalPKCS8PrivateKey(k)
	keyFile := write("client.pem", string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})))
	secretFile := write("secret", "cli-client-secret-value")
	for _, tc := range []struct {
		name string
		cfg  authtest.GrantConfig
		env  map[string]string
		args func(s *authtest.GrantServer) []string
	}{
		{"client_credentials secret file dpop", authtest.GrantConfig{ClientID: "m2m", ClientSecret: "cli-client-secret-value", DPoP: true, Nonce: true}, nil,
			func(*authtest.GrantServer) []string {
				return []string{"--grant", "client_credentials", "--client-id", "m2m", "--client-secret-file", secretFile, "--dpop"}
			}},
		{"client_credentials secret env", authtest.GrantConfig{ClientID: "m2m", ClientSecret: "cli-client-secret-value"}, map[string]string{command.EnvClientSecret: "cli-client-secret-value"},
			func(*authtest.GrantServer) []string {
				return []string{"--grant", "client_credentials", "--client-id", "m2m"}
			}},
		{"client_credentials private_key_jwt", authtest.GrantConfig{ClientID: "m2m", ClientKey: k.Public()}, nil,
			func(*authtest.GrantServer) []string {
				return []string{"--grant", "client_credentials", "--client-id", "m2m", "--client-assertion-key", keyFile}
			}},
		{"jwt-bearer env", authtest.GrantConfig{Assertion: "eyJ.cli-workload-jwt.sig"}, map[string]string{command.EnvAssertion: "eyJ.cli-workload-jwt.sig"},
			func(*authtest.GrantServer) []string { return []string{"--grant", "jwt-bearer"} }},
		{"jwt-bearer file", authtest.GrantConfig{Assertion: "eyJ.cli-workload-jwt.sig"}, nil,
			func(*authtest.GrantServer) []string {
				return []string{"--grant", "jwt-bearer", "--assertion-file", write("workload.jwt", "eyJ.cli-workload-jwt.sig")}
			}},
		{"id-jag", authtest.GrantConfig{ClientID: "xaa", ClientSecret: "cli-client-secret-value", IDToken: "eyJ.cli-id-token.sig", DPoP: true},
			map[string]string{command.EnvIDToken: "eyJ.cli-id-token.sig"},
			func(s *authtest.GrantServer) []string {
				return []string{"--grant", "id-jag", "--client-id", "xaa", "--client-secret-file", secretFile, "--idp-issuer", s.IDPIssuer, "--idp-client-id", "idp", "--dpop"}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			configDir(t)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			s := authtest.StartGrants(t, tc.cfg)
			trace := filepath.Join(t.TempDir(), "trace.jsonl")
			args := append([]string{"tools", "-v", "--record", trace}, tc.args(s)...)
			code, out, errOut := runCLI(t, "", append(args, s.URL)...)
			if code != command.ExitOK || !strings.Contains(out, "echo") {
				t.Fatalf("exit %d\nstdout: %s\nstderr: %s\nrefusals: %q", code, out, errOut, s.Refusals())
			}
			raw, _ := os.ReadFile(trace)
			for _, sec := range s.Secrets() {
				for what, text := range map[string]string{"the trace": string(raw), "-v": errOut} {
					if strings.Contains(text, sec) || strings.Contains(text, url.QueryEscape(sec)) {
						t.Errorf("%s holds the secret %q", what, sec)
					}
				}
			}
		})
	}

	t.Run("config entry", func(t *testing.T) {
		configDir(t)
		s := authtest.StartGrants(t, authtest.GrantConfig{ClientID: "m2m", ClientSecret: "cli-client-secret-value", DPoP: true, Nonce: true})
		conf := write("mcp.json", `{"mcpServers": {"m2m": {"url": "`+s.URL+`", "oauth": {"clientId": "m2m", "grant": "client_credentials", "clientSecretFile": "secret", "dpop": true}}}}`)
		trace := filepath.Join(t.TempDir(), "trace.jsonl")
		code, out, errOut := runCLI(t, "", "tools", "--record", trace, "--server", "m2m", "--config", conf)
		if code != command.ExitOK || !strings.Contains(out, "echo") {
			t.Fatalf("exit %d\nstdout: %s\nstderr: %s\nrefusals: %q", code, out, errOut, s.Refusals())
		}
		raw, _ := os.ReadFile(trace)
		for _, sec := range s.Secrets() {
			if strings.Contains(string(raw), sec) {
				t.Errorf("the trace holds the secret %q", sec)
			}
		}
	})

	t.Run("refused", func(t *testing.T) {
		configDir(t)
		s := authtest.StartGrants(t, authtest.GrantConfig{Assertion: "eyJ.cli-workload-jwt.sig", GrantError: "invalid_grant"})
		t.Setenv(command.EnvAssertion, "eyJ.cli-workload-jwt.sig")
		code, _, errOut := runCLI(t, "", "tools", "--grant", "jwt-bearer", s.URL)
		if code != command.ExitAuth || !strings.Contains(errOut, "invalid_grant") {
			t.Errorf("exit %d: %s", code, errOut)
		}
		if n := len(s.TokenRequests()); n != 1 {
			t.Errorf("%d token requests, want 1 (a refused grant is not tried again)", n)
		}
	})
}
