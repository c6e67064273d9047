// Package authtest runs an OAuth-protected MCP server for tests, on
// loopback: mcpi's demo server (built on the official Go SDK) behind the
// SDK's auth.RequireBearerToken middleware and protected resource metadata
// handler, and a small authorization server of its own (RFC 8414 metadata,
// dynamic client registration, the authorization code grant with PKCE S256,
// refresh tokens, RFC 8707 resources, RFC 9207 iss) that approves every
// request without a person, the way the conformance suite's mock does.
//
// Only tests import it.
package authtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/mcpi-dev/mcpi/internal/demoserver"
)

// Config shapes the servers, good or broken.
type Config struct {
	// Scopes are required for every MCP request, and named in the
	// WWW-Authenticate challenge.
	Scopes []string
	// ToolScopes name a scope that calling a tool needs on top: without it
	// the call gets 403 insufficient_scope (step-up).
	ToolScopes map[string]string
	// TokenLifetime is the access tokens' lifetime (default one hour).
	TokenLifetime time.Duration
	// NoRefreshTokens makes the token endpoint issue no refresh tokens.
	NoRefreshTokens bool
	// IssuerPath is the path of the issuer identifier ("/tenant1").
	IssuerPath string
	// DenyScopes are never granted, whoever asks.
	DenyScopes []string

	// Broken servers.
	// WrongIssuer makes the metadata name another issuer.
	WrongIssuer bool
	// NoPKCE leaves code_challenge_methods_supported out of the metadata.
	NoPKCE bool
	// Resource replaces the resource of the protected resource metadata.
	Resource string
	// OriginResource makes the metadata name the server's origin as its
	// resource, while the resource server accepts only tokens for its
	// exact URL: every token is refused with 401.
	OriginResource bool
	// Iss replaces the iss of authorization responses ("-" leaves it out).
	Iss string
}

// Server is an OAuth-protected MCP server and its authorization server.
type Server struct {
	// URL is the MCP endpoint.
	URL string
	// Issuer is the authorization server's issuer identifier.
	Issuer string
	// MCP serves the MCP endpoint and the protected resource metadata; AS
	// is the authorization server.
	MCP, AS *httptest.Server

	cfg Config

	mu       sync.Mutex
	clients  map[string]*client
	codes    map[string]*grant
	access   map[string]*grant // access token -> what it grants
	refresh  map[string]*grant // refresh token -> what it grants
	counts   Counts
	requests []url.Values // the query of each authorization request
	secrets  []string
}

// Counts are the requests the authorization server got.
type Counts struct {
	Registrations, Authorizations, CodeExchanges, Refreshes int
}

type client struct {
	secret       string
	authMethod   string
	redirectURIs []string
	appType      string
}

type grant struct {
	clientID, redirectURI, challenge, resource string
	scopes                                     []string
	expiry                                     time.Time
}

// Start starts the servers; they stop when the test ends.
func Start(t testing.TB, cfg Config) *Server {
	t.Helper()
	if cfg.TokenLifetime <= 0 {
		cfg.TokenLifetime = time.Hour
	}
	s := &Server{cfg: cfg, clients: map[string]*client{}, codes: map[string]*grant{},
		access: map[string]*grant{}, refresh: map[string]*grant{}}
	s.AS = httptest.NewServer(s.asHandler())
	t.Cleanup(s.AS.Close)
	s.Issuer = s.AS.URL + cfg.IssuerPath

	mux := http.NewServeMux()
	s.MCP = httptest.NewServer(mux)
	t.Cleanup(s.MCP.Close)
	s.URL = s.MCP.URL + "/mcp"
	prmURL := s.MCP.URL + "/.well-known/oauth-protected-resource/mcp"
	resource := s.URL
	switch {
	case cfg.Resource != "":
		resource = cfg.Resource
	case cfg.OriginResource:
		resource = s.MCP.URL
	}
	mux.Handle("/.well-known/oauth-protected-resource/mcp", sdkauth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource:             resource,
		AuthorizationServers: []string{s.Issuer},
		ScopesSupported:      cfg.Scopes,
	}))
	protect := sdkauth.RequireBearerToken(s.verify, &sdkauth.RequireBearerTokenOptions{ResourceMetadataURL: prmURL, Scopes: cfg.Scopes})
	mux.Handle("/mcp", protect(s.stepUp(prmURL, demoserver.HTTPHandler(demoserver.Options{}))))
	return s
}

// verify is the resource server's token check: an access token the
// authorization server issued for this resource, and not expired.
func (s *Server) verify(_ context.Context, token string, _ *http.Request) (*sdkauth.TokenInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.access[token]
	if g == nil || !oauthex.MatchesResource([]string{g.resource}, s.URL) || g.expiry.Before(time.Now()) {
		return nil, fmt.Errorf("%w: unknown token, or not for %s", sdkauth.ErrInvalidToken, s.URL)
	}
	return &sdkauth.TokenInfo{Scopes: g.scopes, Expiration: g.expiry}, nil
}

// stepUp answers 403 insufficient_scope to a tool call whose tool needs a
// scope the token lacks.
func (s *Server) stepUp(prmURL string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(s.cfg.ToolScopes) > 0 && r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var msg struct {
				Method string `json:"method"`
				Params struct {
					Name string `json:"name"`
				} `json:"params"`
			}
			json.Unmarshal(body, &msg)
			need := s.cfg.ToolScopes[msg.Params.Name]
			if ti := sdkauth.TokenInfoFromContext(r.Context()); msg.Method == "tools/call" && need != "" && (ti == nil || !slices.Contains(ti.Scopes, need)) {
				w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope", scope=%q, resource_metadata=%q, error_description="%s needs %s"`, need, prmURL, msg.Params.Name, need))
				http.Error(w, "insufficient scope", http.StatusForbidden)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) asHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server"+s.cfg.IssuerPath, s.metadata)
	mux.HandleFunc("POST /register", s.register)
	mux.HandleFunc("GET /authorize", s.authorize)
	mux.HandleFunc("POST /token", s.token)
	return mux
}

func (s *Server) metadata(w http.ResponseWriter, r *http.Request) {
	base := "http://" + r.Host
	m := oauthex.AuthServerMeta{
		Issuer:                                     s.Issuer,
		AuthorizationEndpoint:                      base + "/authorize",
		TokenEndpoint:                              base + "/token",
		RegistrationEndpoint:                       base + "/register",
		ResponseTypesSupported:                     []string{"code"},
		GrantTypesSupported:                        []string{"authorization_code", "refresh_token"},
		TokenEndpointAuthMethodsSupported:          []string{"none", "client_secret_basic", "client_secret_post"},
		CodeChallengeMethodsSupported:              []string{"S256"},
		ScopesSupported:                            append(slices.Clone(s.cfg.Scopes), "offline_access"),
		AuthorizationResponseIssParameterSupported: s.cfg.Iss == "",
	}
	if s.cfg.WrongIssuer {
		m.Issuer = "https://attacker.example.com"
	}
	if s.cfg.NoPKCE {
		m.CodeChallengeMethodsSupported = nil
	}
	writeJSON(w, http.StatusOK, m)
}

func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	var meta oauthex.ClientRegistrationMetadata
	if err := json.NewDecoder(r.Body).Decode(&meta); err != nil || len(meta.RedirectURIs) == 0 {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_client_metadata"})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counts.Registrations++
	id := "client-" + rand.Text()[:8]
	c := &client{authMethod: meta.TokenEndpointAuthMethod, redirectURIs: meta.RedirectURIs, appType: meta.ApplicationType}
	if c.authMethod == "" {
		c.authMethod = "client_secret_basic"
	}
	if c.authMethod != "none" {
		c.secret = "secret-" + rand.Text()
		s.secrets = append(s.secrets, c.secret)
	}
	s.clients[id] = c
	writeJSON(w, http.StatusCreated, map[string]any{
		"client_id": id, "client_secret": c.secret, "redirect_uris": c.redirectURIs,
		"token_endpoint_auth_method": c.authMethod, "application_type": c.appType,
	})
}

func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counts.Authorizations++
	s.requests = append(s.requests, q)
	c := s.clients[q.Get("client_id")]
	switch {
	case c == nil:
		http.Error(w, "unknown client", http.StatusBadRequest)
		return
	case !slices.Contains(c.redirectURIs, q.Get("redirect_uri")):
		http.Error(w, "unregistered redirect_uri", http.StatusBadRequest)
		return
	case q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("resource") == "":
		http.Error(w, "want response_type=code, PKCE S256 and a resource", http.StatusBadRequest)
		return
	}
	code := "code-" + rand.Text()
	s.secrets = append(s.secrets, code)
	s.codes[code] = &grant{clientID: q.Get("client_id"), redirectURI: q.Get("redirect_uri"), challenge: q.Get("code_challenge"),
		resource: q.Get("resource"), scopes: slices.DeleteFunc(strings.Fields(q.Get("scope")), func(sc string) bool { return slices.Contains(s.cfg.DenyScopes, sc) })}
	back, _ := url.Parse(q.Get("redirect_uri"))
	v := back.Query()
	v.Set("code", code)
	v.Set("state", q.Get("state"))
	switch s.cfg.Iss {
	case "":
		v.Set("iss", s.Issuer)
	case "-":
	default:
		v.Set("iss", s.cfg.Iss)
	}
	back.RawQuery = v.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	if !parseForm(w, r) {
		return
	}
	f := r.PostForm
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ok := s.authenticate(r)
	if !ok {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client"})
		return
	}
	var g *grant
	switch f.Get("grant_type") {
	case "authorization_code":
		s.counts.CodeExchanges++
		g = s.codes[f.Get("code")]
		delete(s.codes, f.Get("code"))
		sum := sha256.Sum256([]byte(f.Get("code_verifier")))
		if g == nil || g.clientID != id || g.redirectURI != f.Get("redirect_uri") || g.resource != f.Get("resource") ||
			base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant", "error_description": "code, client, redirect_uri, resource or code_verifier do not match"})
			return
		}
	case "refresh_token":
		s.counts.Refreshes++
		g = s.refresh[f.Get("refresh_token")]
		delete(s.refresh, f.Get("refresh_token")) // rotated, as OAuth 2.1 asks for public clients
		if g == nil || g.clientID != id || (f.Get("resource") != "" && f.Get("resource") != g.resource) {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
			return
		}
	default:
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "unsupported_grant_type"})
		return
	}
	n := *g
	n.expiry = time.Now().Add(s.cfg.TokenLifetime)
	access := "access-" + rand.Text()
	s.access[access] = &n
	s.secrets = append(s.secrets, access)
	resp := map[string]any{"access_token": access, "token_type": "Bearer", "expires_in": int(s.cfg.TokenLifetime.Seconds()),
		"scope": strings.Join(n.scopes, " ")}
	if !s.cfg.NoRefreshTokens {
		rt := "refresh-" + rand.Text()
		s.refresh[rt] = &n
		s.secrets = append(s.secrets, rt)
		resp["refresh_token"] = rt
	}
	writeJSON(w, http.StatusOK, resp)
}

// authenticate checks the client's credentials by its registered method.
func (s *Server) authenticate(r *http.Request) (string, bool) {
	id, secret, basic := r.BasicAuth()
	if !basic {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	c := s.clients[id]
	if c == nil {
		return "", false
	}
	switch c.authMethod {
	case "none":
		return id, !basic && secret == ""
	case "client_secret_basic":
		return id, basic && secret == c.secret
	case "client_secret_post":
		return id, !basic && secret == c.secret
	}
	return "", false
}

// Revoke forgets every access token, as a server restarting or revoking
// would: the next request gets 401 and needs a refresh.
func (s *Server) Revoke() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.access)
}

// Counts returns the requests the authorization server got so far.
func (s *Server) Counts() Counts {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts
}

// AuthorizationRequests returns the query of each authorization request.
func (s *Server) AuthorizationRequests() []url.Values {
	return snapshot(&s.mu, &s.requests)
}

// Secrets returns every secret the authorization server handed out: client
// secrets, codes, access and refresh tokens.
func (s *Server) Secrets() []string {
	return snapshot(&s.mu, &s.secrets)
}

// ApplicationTypes returns the application_type of each registration.
func (s *Server) ApplicationTypes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, c := range s.clients {
		out = append(out, c.appType)
	}
	return out
}

// parseForm parses r's form, and answers invalid_request when it cannot.
func parseForm(w http.ResponseWriter, r *http.Request) bool {
	if err := r.ParseForm(); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request"})
		return false
	}
	return true
}

// snapshot returns a copy of *list, read under mu.
func snapshot[T any](mu *sync.Mutex, list *[]T) []T {
	mu.Lock()
	defer mu.Unlock()
	return slices.Clone(*list)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
