package auth

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

func TestParseChallenge(t *testing.T) {
	tests := []struct {
		name   string
		header []string
		want   Challenge
	}{
		{"none", nil, Challenge{}},
		{"resource metadata and scope", []string{`Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", scope="files:read"`},
			Challenge{Bearer: true, ResourceMetadata: "https://mcp.example.com/.well-known/oauth-protected-resource", Scopes: []string{"files:read"}}},
		{"another scheme", []string{`Basic realm="files"`}, Challenge{}},
		{"insufficient scope", []string{`Bearer error="insufficient_scope", scope="files:read files:write user:profile", resource_metadata="https://mcp.example.com/prm", error_description="Additional file write permission required"`},
			Challenge{Bearer: true, ResourceMetadata: "https://mcp.example.com/prm", Scopes: []string{"files:read", "files:write", "user:profile"},
				Error: "insufficient_scope", ErrorDescription: "Additional file write permission required"}},
		{"scheme and keys in any case, token values", []string{`bearer Error=invalid_token, SCOPE="a"`},
			Challenge{Bearer: true, Error: "invalid_token", Scopes: []string{"a"}}},
		{"bearer among other schemes", []string{`Basic realm="x", Bearer scope="mcp:basic", resource_metadata="https://h/prm"`},
			Challenge{Bearer: true, ResourceMetadata: "https://h/prm", Scopes: []string{"mcp:basic"}}},
		{"two header values, one broken", []string{`Bearer "broken`, `Bearer resource_metadata="https://h/prm"`},
			Challenge{Bearer: true, ResourceMetadata: "https://h/prm"}},
		{"bare scheme", []string{"Bearer"}, Challenge{Bearer: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for _, v := range tt.header {
				h.Add("WWW-Authenticate", v)
			}
			got := ParseChallenge(h)
			tt.want.Raw = tt.header
			if tt.name == "two header values, one broken" {
				if got.ParseErr == nil {
					t.Error("no ParseErr for the broken value")
				}
				got.ParseErr = nil
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestResourceMetadataURLs(t *testing.T) {
	tests := []struct {
		server, fromHeader string
		want               []string
	}{
		{"https://example.com/public/mcp", "", []string{
			"https://example.com/.well-known/oauth-protected-resource/public/mcp",
			"https://example.com/.well-known/oauth-protected-resource"}},
		{"https://example.com/mcp", "https://example.com/custom/prm.json", []string{
			"https://example.com/custom/prm.json",
			"https://example.com/.well-known/oauth-protected-resource/mcp",
			"https://example.com/.well-known/oauth-protected-resource"}},
		{"https://example.com", "", []string{"https://example.com/.well-known/oauth-protected-resource"}},
		{"https://example.com/", "", []string{"https://example.com/.well-known/oauth-protected-resource"}},
		{"http://127.0.0.1:8080/mcp/", "", []string{
			"http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp",
			"http://127.0.0.1:8080/.well-known/oauth-protected-resource"}},
		{"https://example.com/mcp", "https://example.com/.well-known/oauth-protected-resource/mcp", []string{
			"https://example.com/.well-known/oauth-protected-resource/mcp",
			"https://example.com/.well-known/oauth-protected-resource"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, ResourceMetadataURLs(tt.server, tt.fromHeader)); diff != "" {
			t.Errorf("%s %q: (-want +got)\n%s", tt.server, tt.fromHeader, diff)
		}
	}
}

func TestServerMetadataURLs(t *testing.T) {
	tests := []struct {
		issuer string
		want   []string
	}{
		{"https://auth.example.com/tenant1", []string{
			"https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
			"https://auth.example.com/.well-known/openid-configuration/tenant1",
			"https://auth.example.com/tenant1/.well-known/openid-configuration"}},
		{"https://auth.example.com/tenant1/", []string{
			"https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
			"https://auth.example.com/.well-known/openid-configuration/tenant1",
			"https://auth.example.com/tenant1/.well-known/openid-configuration"}},
		{"https://auth.example.com", []string{
			"https://auth.example.com/.well-known/oauth-authorization-server",
			"https://auth.example.com/.well-known/openid-configuration"}},
		{"https://auth.example.com/", []string{
			"https://auth.example.com/.well-known/oauth-authorization-server",
			"https://auth.example.com/.well-known/openid-configuration"}},
		{"http://localhost:9000/a/b", []string{
			"http://localhost:9000/.well-known/oauth-authorization-server/a/b",
			"http://localhost:9000/.well-known/openid-configuration/a/b",
			"http://localhost:9000/a/b/.well-known/openid-configuration"}},
		{"not a url", nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, ServerMetadataURLs(tt.issuer)); diff != "" {
			t.Errorf("%s: (-want +got)\n%s", tt.issuer, diff)
		}
	}
}

func TestResourceCovers(t *testing.T) {
	tests := []struct {
		res, server string
		want        bool
	}{
		{"https://h/mcp", "https://h/mcp", true},
		{"https://h", "https://h/mcp", true},
		{"https://h/", "https://h/mcp", true},
		{"https://h/api", "https://h/api/mcp", true},
		{"HTTPS://H:443/mcp", "https://h/mcp", true},
		{"https://h/mcp/", "https://h/mcp", true},
		{"https://h/ap", "https://h/api/mcp", false},
		{"https://h/other", "https://h/mcp", false},
		{"https://evil.example.com/mcp", "http://localhost:1/mcp", false},
		{"http://h/mcp", "https://h/mcp", false},
		{"https://h:8443/mcp", "https://h/mcp", false},
		{"https://h/mcp#frag", "https://h/mcp", false},
		{"h/mcp", "https://h/mcp", false},
	}
	for _, tt := range tests {
		if got := ResourceCovers(tt.res, tt.server); got != tt.want {
			t.Errorf("ResourceCovers(%q, %q) = %v", tt.res, tt.server, got)
		}
	}
}

func TestScopeChoice(t *testing.T) {
	tests := []struct {
		name string
		in   ScopeChoice
		want []string
	}{
		{"challenge wins", ScopeChoice{Challenged: []string{"a"}, ResourceSupported: []string{"a", "b", "c"}}, []string{"a"}},
		{"else scopes_supported", ScopeChoice{ResourceSupported: []string{"a", "b"}}, []string{"a", "b"}},
		{"else none", ScopeChoice{}, nil},
		{"override", ScopeChoice{Override: []string{"x"}, Challenged: []string{"a"}}, []string{"x"}},
		{"step-up unions", ScopeChoice{Challenged: []string{"write"}, Previous: []string{"basic"}}, []string{"basic", "write"}},
		{"union keeps no duplicates", ScopeChoice{Challenged: []string{"b", "a"}, Previous: []string{"a"}}, []string{"a", "b"}},
		{"offline_access when advertised", ScopeChoice{ResourceSupported: []string{"mcp:basic"}, ServerSupported: []string{"mcp:basic", "offline_access"}},
			[]string{"mcp:basic", "offline_access"}},
		{"no offline_access when not advertised", ScopeChoice{ResourceSupported: []string{"mcp:basic"}, ServerSupported: []string{"mcp:basic"}},
			[]string{"mcp:basic"}},
		{"no offline_access alone", ScopeChoice{ServerSupported: []string{"offline_access"}}, nil},
		{"offline_access once", ScopeChoice{Previous: []string{"a", "offline_access"}, Challenged: []string{"b"}, ServerSupported: []string{"offline_access"}},
			[]string{"a", "offline_access", "b"}},
	}
	for _, tt := range tests {
		got, from := tt.in.Scopes()
		if diff := cmp.Diff(tt.want, got); diff != "" || from == "" {
			t.Errorf("%s: (-want +got)\n%s (from %q)", tt.name, diff, from)
		}
	}
}

func TestAuthMethodFor(t *testing.T) {
	tests := []struct {
		secret    bool
		supported []string
		want      string
	}{
		{false, []string{"client_secret_basic"}, AuthNone},
		{true, nil, AuthBasic},
		{true, []string{"client_secret_post"}, AuthPost},
		{true, []string{"client_secret_post", "client_secret_basic"}, AuthBasic},
		{true, []string{"none"}, AuthBasic},
	}
	for _, tt := range tests {
		if got := authMethodFor(tt.secret, tt.supported); got != tt.want {
			t.Errorf("authMethodFor(%v, %q) = %s, want %s", tt.secret, tt.supported, got, tt.want)
		}
	}
}

func TestCheckServerMetadata(t *testing.T) {
	good := func() *oauthex.AuthServerMeta {
		return &oauthex.AuthServerMeta{Issuer: "https://as.example.com", AuthorizationEndpoint: "https://as.example.com/authorize",
			TokenEndpoint: "https://as.example.com/token", CodeChallengeMethodsSupported: []string{"S256"}}
	}
	tests := []struct {
		name   string
		edit   func(*oauthex.AuthServerMeta)
		rule   string
		phrase string
	}{
		{"good", func(*oauthex.AuthServerMeta) {}, "", ""},
		{"trailing slash tolerated", func(m *oauthex.AuthServerMeta) { m.Issuer += "/" }, "", ""},
		{"wrong issuer", func(m *oauthex.AuthServerMeta) { m.Issuer = "https://attacker.example.com" }, RuleIssuer, `says issuer "https://attacker.example.com"`},
		{"no PKCE", func(m *oauthex.AuthServerMeta) { m.CodeChallengeMethodsSupported = nil }, RulePKCE, "does not support PKCE"},
		{"plain PKCE only", func(m *oauthex.AuthServerMeta) { m.CodeChallengeMethodsSupported = []string{"plain"} }, RulePKCE, "not S256"},
		{"no token endpoint", func(m *oauthex.AuthServerMeta) { m.TokenEndpoint = "" }, RuleEndpoints, "token_endpoint"},
		{"plain HTTP endpoint", func(m *oauthex.AuthServerMeta) { m.TokenEndpoint = "http://as.example.com/token" }, RuleHTTPS, "token_endpoint"},
		{"loopback HTTP is fine", func(m *oauthex.AuthServerMeta) { m.TokenEndpoint = "http://127.0.0.1:9/token" }, "", ""},
	}
	for _, tt := range tests {
		m := good()
		tt.edit(m)
		err := checkServerMetadata(m, "https://as.example.com", "https://as.example.com/.well-known/oauth-authorization-server", true)
		checkRule(t, tt.name, err, tt.rule, tt.phrase)
	}
}

// checkRule checks that err is nil when rule is empty, or an *Error naming
// rule whose message holds phrase.
func checkRule(t *testing.T, name string, err error, rule, phrase string) {
	t.Helper()
	if rule == "" {
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
		return
	}
	ae, ok := err.(*Error)
	if !ok {
		t.Errorf("%s: got %v (%T), want an *Error", name, err, err)
		return
	}
	if ae.Rule != rule || !strings.Contains(ae.Error(), phrase) || !strings.Contains(ae.Error(), rule) {
		t.Errorf("%s: got %q, want rule %q and %q", name, ae.Error(), rule, phrase)
	}
}

func TestCheckResponse(t *testing.T) {
	const issuer = "https://as.example.com"
	tests := []struct {
		name       string
		advertised bool
		query      string
		rule       string
		phrase     string
	}{
		{"iss advertised and right", true, "code=c0de&state=s&iss=https%3A%2F%2Fas.example.com", "", ""},
		{"iss neither advertised nor sent", false, "code=c0de&state=s", "", ""},
		{"iss not advertised but right", false, "code=c0de&state=s&iss=https%3A%2F%2Fas.example.com", "", ""},
		{"iss advertised, missing", true, "code=c0de&state=s", RuleIssMissing, "has no iss"},
		{"iss wrong", true, "code=c0de&state=s&iss=https%3A%2F%2Fevil.example.com", RuleIss, `says iss "https://evil.example.com"`},
		{"iss unexpected and wrong", false, "code=c0de&state=s&iss=https%3A%2F%2Fevil.example.com", RuleIss, "evil.example.com"},
		{"iss normalized is not the same", true, "code=c0de&state=s&iss=https%3A%2F%2Fas.example.com%2F", RuleIss, `"https://as.example.com/"`},
		{"iss with upper case host", true, "code=c0de&state=s&iss=https%3A%2F%2FAS.example.com", RuleIss, "AS.example.com"},
		{"state mismatch", true, "code=c0de&state=other&iss=https%3A%2F%2Fas.example.com", RuleState, "does not match"},
		{"state missing", true, "code=c0de&iss=https%3A%2F%2Fas.example.com", RuleState, "no state"},
		{"error", true, "error=access_denied&error_description=nope&state=s&iss=https%3A%2F%2Fas.example.com", "", ""},
		{"error from the wrong issuer is not shown", true, "error=access_denied&error_description=SHOWME&state=s&iss=https%3A%2F%2Fevil.example.com", RuleIss, "refusing"},
		{"no code", true, "state=s&iss=https%3A%2F%2Fas.example.com", RuleAuthResponse, "neither a code nor an error"},
	}
	for _, tt := range tests {
		tr := NewTransport(Options{})
		d := &discovery{issuer: issuer, asm: &oauthex.AuthServerMeta{Issuer: issuer, AuthorizationResponseIssParameterSupported: tt.advertised}}
		q, _ := parseQuery(tt.query)
		code, err := tr.checkResponse(d, "s", q)
		if tt.name == "error" {
			if err == nil || !strings.Contains(err.Error(), "refused: access_denied (nope)") {
				t.Errorf("%s: %v", tt.name, err)
			}
			continue
		}
		checkRule(t, tt.name, err, tt.rule, tt.phrase)
		if err != nil && strings.Contains(err.Error(), "SHOWME") {
			t.Errorf("%s: the error of a response from the wrong issuer is shown: %v", tt.name, err)
		}
		if err == nil && code != "c0de" {
			t.Errorf("%s: code %q", tt.name, code)
		}
	}
}

func TestStore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "config", "mcpi")
	s := OpenStore(dir)
	if e, err := s.ForServer("https://h/mcp"); e != nil || err != nil {
		t.Fatalf("empty store: %v %v", e, err)
	}
	now := time.Now()
	a := Entry{Issuer: "https://as1", Resource: "https://h/mcp", ServerURL: "https://h/mcp", Token: &Token{AccessToken: "t1"}, Updated: now}
	b := Entry{Issuer: "https://as2", Resource: "https://h/mcp", ServerURL: "https://h/mcp", Token: &Token{AccessToken: "t2"}, Updated: now.Add(time.Second)}
	c := Entry{Issuer: "https://as1", Resource: "https://other/mcp", ServerURL: "https://other/mcp", Token: &Token{AccessToken: "t3"}, Updated: now}
	for _, e := range []Entry{a, b, c} {
		if err := s.Put(e); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{s.Path(), dir} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		want := os.FileMode(0o600)
		if fi.IsDir() {
			want = 0o700
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", p, fi.Mode().Perm(), want)
		}
	}
	// Keyed by issuer and resource: a new token replaces only its own entry.
	a.Token = &Token{AccessToken: "t1b"}
	if err := s.Put(a); err != nil {
		t.Fatal(err)
	}
	all, _ := s.List()
	if len(all) != 3 {
		t.Fatalf("%d entries, want 3: %+v", len(all), all)
	}
	if e, _ := s.Get("https://as1", "https://h/mcp"); e == nil || e.Token.AccessToken != "t1b" {
		t.Errorf("Get as1: %+v", e)
	}
	if e, _ := s.Get("https://as2", "https://other/mcp"); e != nil {
		t.Errorf("Get of a pair never stored: %+v", e)
	}
	// ForServer finds the newest entry for the server.
	a.Updated = now.Add(time.Hour)
	s.Put(a)
	if e, _ := s.ForServer("https://h/mcp"); e == nil || e.Issuer != "https://as1" {
		t.Errorf("ForServer: %+v", e)
	}
	removed, err := s.Remove(func(e Entry) bool { return e.Issuer == "https://as1" })
	if err != nil || len(removed) != 2 {
		t.Errorf("Remove: %v %+v", err, removed)
	}
	all, _ = s.List()
	if len(all) != 1 || all[0].Issuer != "https://as2" {
		t.Errorf("after Remove: %+v", all)
	}
	os.WriteFile(s.Path(), []byte("{not json"), 0o600)
	if _, err := s.List(); err == nil || !strings.Contains(err.Error(), "not valid JSON") {
		t.Errorf("broken store: %v", err)
	}
}

func TestTokenExpired(t *testing.T) {
	now := time.Now()
	if (&Token{}).Expired(now, time.Minute) {
		t.Error("a token without expiry expired")
	}
	if !(&Token{Expiry: now.Add(10 * time.Second)}).Expired(now, 30*time.Second) {
		t.Error("a token 10s from expiry is not refreshed with a 30s skew")
	}
	if (&Token{Expiry: now.Add(time.Hour)}).Expired(now, 30*time.Second) {
		t.Error("a fresh token expired")
	}
}

func TestValidClientMetadataURL(t *testing.T) {
	for u, ok := range map[string]bool{
		"https://example.com/client.json": true,
		"https://example.com":             false,
		"https://example.com/":            false,
		"http://example.com/client.json":  false,
		"client.json":                     false,
	} {
		if err := ValidClientMetadataURL(u); (err == nil) != ok {
			t.Errorf("%s: %v", u, err)
		}
	}
}

func parseQuery(s string) (map[string][]string, error) {
	v, err := url.ParseQuery(s)
	return v, err
}

func FuzzParseChallenge(f *testing.F) {
	for _, s := range []string{
		`Bearer resource_metadata="https://h/prm", scope="a b"`,
		`Bearer error="insufficient_scope", scope="files:write", error_description="needs \"write\""`,
		`Basic realm="x", Bearer scope=a`,
		`Bearer`, `"`, `Bearer a=`, `Bearer a="unterminated`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		c := ParseChallenge(http.Header{"Www-Authenticate": {v}})
		_ = c.String()
		if c.ParseErr == nil && c.ResourceMetadata != "" && !c.Bearer && len(c.Raw) == 0 {
			t.Errorf("resource_metadata from nowhere: %+v", c)
		}
	})
}
