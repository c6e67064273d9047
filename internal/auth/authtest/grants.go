package authtest

import (
	"crypto"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/mcpi-dev/mcpi/internal/demoserver"
)

// GrantConfig shapes a GrantServer.
type GrantConfig struct {
	// ClientID and ClientSecret are the pre-registered client: it
	// authenticates with client_secret_basic, or, when ClientKey is set,
	// with a private_key_jwt assertion this public key verifies.
	ClientID, ClientSecret string
	ClientKey              crypto.PublicKey
	// Assertion is the workload JWT the JWT bearer grant accepts.
	Assertion string
	// IDToken is the ID token the identity provider exchanges for an ID-JAG.
	IDToken string
	// DPoP makes the tokens DPoP-bound: the resource server wants the DPoP
	// scheme and a proof (RFC 9449); Nonce makes both servers ask for a
	// nonce first.
	DPoP, Nonce bool
	// GrantError makes the token endpoint refuse every grant with it.
	GrantError string
}

// GrantServer is an MCP server (mcpi's demo server) whose authorization
// server runs the grants without a person: client credentials, the JWT
// bearer grant (a workload's JWT, or an ID-JAG from the identity provider
// beside it), with DPoP-bound tokens when asked. It checks every request
// as the specifications say and records what it saw.
type GrantServer struct {
	// URL is the MCP endpoint; Issuer the authorization server's issuer;
	// IDPIssuer the identity provider's.
	URL, Issuer, IDPIssuer string
	MCP, AS, IDP           *httptest.Server

	cfg GrantConfig

	mu       sync.Mutex
	requests []url.Values      // each token request's form
	bound    map[string]string // access token -> jkt ("" when Bearer)
	jags     []string
	jtis     map[string]bool
	secrets  []string
	refusals []string // why a request was refused, for the test's failure message
}

const (
	asNonce = "as-nonce-1"
	rsNonce = "rs-nonce-1"
)

// StartGrants starts the servers; they stop when the test ends.
func StartGrants(t testing.TB, cfg GrantConfig) *GrantServer {
	t.Helper()
	s := &GrantServer{cfg: cfg, bound: map[string]string{}, jtis: map[string]bool{}}
	s.secrets = append(s.secrets, cfg.ClientSecret, cfg.Assertion, cfg.IDToken)
	as := http.NewServeMux()
	as.HandleFunc("GET /.well-known/oauth-authorization-server", s.asMetadata)
	as.HandleFunc("POST /token", s.token)
	s.AS = httptest.NewServer(as)
	t.Cleanup(s.AS.Close)
	s.Issuer = s.AS.URL

	idp := http.NewServeMux()
	idp.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"issuer": s.IDPIssuer, "token_endpoint": s.IDPIssuer + "/token",
			"authorization_endpoint": s.IDPIssuer + "/authorize", "grant_types_supported": []string{"urn:ietf:params:oauth:grant-type:token-exchange"}})
	})
	idp.HandleFunc("POST /token", s.exchange)
	s.IDP = httptest.NewServer(idp)
	t.Cleanup(s.IDP.Close)
	s.IDPIssuer = s.IDP.URL

	mux := http.NewServeMux()
	s.MCP = httptest.NewServer(mux)
	t.Cleanup(s.MCP.Close)
	s.URL = s.MCP.URL + "/mcp"
	mux.Handle("/.well-known/oauth-protected-resource/mcp", sdkauth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource: s.URL, AuthorizationServers: []string{s.Issuer}}))
	mux.Handle("/mcp", s.protect(demoserver.HTTPHandler(demoserver.Options{})))
	return s
}

func (s *GrantServer) asMetadata(w http.ResponseWriter, r *http.Request) {
	m := map[string]any{
		"issuer": s.Issuer, "token_endpoint": s.Issuer + "/token",
		"grant_types_supported":                            []string{"client_credentials", "urn:ietf:params:oauth:grant-type:jwt-bearer"},
		"token_endpoint_auth_methods_supported":            []string{"client_secret_basic", "private_key_jwt", "none"},
		"token_endpoint_auth_signing_alg_values_supported": []string{"ES256", "RS256"},
	}
	if s.cfg.DPoP {
		m["dpop_signing_alg_values_supported"] = []string{"ES256"}
	}
	writeJSON(w, http.StatusOK, m)
}

func (s *GrantServer) refuse(w http.ResponseWriter, status int, code, why string) {
	s.refusals = append(s.refusals, why)
	writeJSON(w, status, map[string]string{"error": code, "error_description": why})
}

func (s *GrantServer) token(w http.ResponseWriter, r *http.Request) {
	if !parseForm(w, r) {
		return
	}
	f := r.PostForm
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, f)
	s.secrets = append(s.secrets, f.Get("client_assertion"), r.Header.Get("DPoP"))
	if f.Get("resource") != s.URL {
		s.refuse(w, http.StatusBadRequest, "invalid_target", "resource "+f.Get("resource"))
		return
	}
	if !s.clientOK(r, f) {
		s.refuse(w, http.StatusUnauthorized, "invalid_client", "client authentication")
		return
	}
	switch f.Get("grant_type") {
	case "client_credentials":
	case "urn:ietf:params:oauth:grant-type:jwt-bearer":
		a := f.Get("assertion")
		if a == "" || (a != s.cfg.Assertion && !slices.Contains(s.jags, a)) {
			s.refuse(w, http.StatusBadRequest, "invalid_grant", "unknown assertion")
			return
		}
	default:
		s.refuse(w, http.StatusBadRequest, "unsupported_grant_type", f.Get("grant_type"))
		return
	}
	if s.cfg.GrantError != "" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": s.cfg.GrantError})
		return
	}
	jkt := ""
	if s.cfg.DPoP {
		var nonce string
		var err error
		jkt, nonce, err = s.checkProof(r.Header.Get("DPoP"), http.MethodPost, s.Issuer+"/token", "")
		if err != nil {
			s.refuse(w, http.StatusBadRequest, "invalid_dpop_proof", err.Error())
			return
		}
		if s.cfg.Nonce && nonce != asNonce {
			w.Header().Set("DPoP-Nonce", asNonce)
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "use_dpop_nonce"})
			return
		}
	}
	access := "access-" + rand.Text()
	s.bound[access] = jkt
	s.secrets = append(s.secrets, access)
	typ := "Bearer"
	if jkt != "" {
		typ = "DPoP"
	}
	writeJSON(w, http.StatusOK, map[string]any{"access_token": access, "token_type": typ, "expires_in": 3600})
}

// clientOK checks the client's authentication: private_key_jwt when the
// config has a key, else client_secret_basic, else none (a client_id, or
// nothing).
func (s *GrantServer) clientOK(r *http.Request, f url.Values) bool {
	switch {
	case s.cfg.ClientKey != nil:
		if f.Get("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" {
			return false
		}
		claims, err := verifyJWT(f.Get("client_assertion"), s.cfg.ClientKey)
		return err == nil && claims["iss"] == s.cfg.ClientID && claims["sub"] == s.cfg.ClientID && claims["aud"] == s.Issuer &&
			claims["jti"] != nil && claims["exp"] != nil
	case s.cfg.ClientSecret != "":
		id, secret, ok := r.BasicAuth()
		return ok && id == s.cfg.ClientID && secret == s.cfg.ClientSecret
	}
	return f.Get("client_id") == s.cfg.ClientID
}

// exchange is the identity provider's token endpoint: RFC 8693 token
// exchange of an ID token for an ID-JAG.
func (s *GrantServer) exchange(w http.ResponseWriter, r *http.Request) {
	if !parseForm(w, r) {
		return
	}
	f := r.PostForm
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, f)
	switch {
	case f.Get("grant_type") != "urn:ietf:params:oauth:grant-type:token-exchange",
		f.Get("requested_token_type") != "urn:ietf:params:oauth:token-type:id-jag",
		f.Get("subject_token_type") != "urn:ietf:params:oauth:token-type:id_token",
		f.Get("subject_token") != s.cfg.IDToken, f.Get("audience") != s.Issuer, f.Get("resource") != s.URL:
		s.refuse(w, http.StatusBadRequest, "invalid_request", fmt.Sprintf("token exchange %v", f))
		return
	case r.Header.Get("DPoP") != "":
		s.refuse(w, http.StatusBadRequest, "invalid_request", "a DPoP proof at the identity provider")
		return
	}
	jag := "id-jag-" + rand.Text()
	s.jags = append(s.jags, jag)
	s.secrets = append(s.secrets, jag)
	writeJSON(w, http.StatusOK, map[string]any{"access_token": jag, "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag", "token_type": "N_A"})
}

// protect lets through the requests with a token the authorization server
// issued, presented as it was bound.
func (s *GrantServer) protect(next http.Handler) http.Handler {
	prm := s.MCP.URL + "/.well-known/oauth-protected-resource/mcp"
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		s.mu.Lock()
		jkt, known := s.bound[tok]
		var err error
		var nonce, proofJKT string
		if known && jkt != "" {
			proofJKT, nonce, err = s.checkProof(r.Header.Get("DPoP"), r.Method, s.URL, tok)
			s.secrets = append(s.secrets, r.Header.Get("DPoP"))
		}
		s.mu.Unlock()
		challenge := fmt.Sprintf(`Bearer resource_metadata="%s"`, prm)
		if s.cfg.DPoP {
			challenge = fmt.Sprintf(`DPoP resource_metadata="%s", algs="ES256"`, prm)
		}
		switch {
		case !known:
			w.Header().Set("WWW-Authenticate", challenge)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		case jkt == "" && !strings.EqualFold(scheme, "Bearer"), jkt != "" && !strings.EqualFold(scheme, "DPoP"),
			err != nil, jkt != "" && proofJKT != jkt:
			w.Header().Set("WWW-Authenticate", challenge+`, error="invalid_token"`)
			http.Error(w, fmt.Sprintf("scheme %s, proof: %v", scheme, err), http.StatusUnauthorized)
			return
		case jkt != "" && s.cfg.Nonce && nonce != rsNonce:
			w.Header().Set("WWW-Authenticate", `DPoP error="use_dpop_nonce"`)
			w.Header().Set("DPoP-Nonce", rsNonce)
			http.Error(w, "nonce", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// checkProof checks a DPoP proof (RFC 9449 §4.3) and returns the
// thumbprint of its key and its nonce. s.mu is held.
func (s *GrantServer) checkProof(proof, method, uri, accessToken string) (jkt, nonce string, err error) {
	if proof == "" {
		return "", "", fmt.Errorf("no DPoP proof")
	}
	jws, err := jose.ParseSignedCompact(proof, []jose.SignatureAlgorithm{jose.ES256, jose.ES384, jose.RS256, jose.PS256, jose.EdDSA})
	if err != nil {
		return "", "", err
	}
	h := jws.Signatures[0].Header
	if h.ExtraHeaders["typ"] != "dpop+jwt" || h.JSONWebKey == nil || !h.JSONWebKey.IsPublic() {
		return "", "", fmt.Errorf("header typ %v, jwk %v", h.ExtraHeaders["typ"], h.JSONWebKey)
	}
	payload, err := jws.Verify(h.JSONWebKey)
	if err != nil {
		return "", "", err
	}
	var c struct {
		JTI, HTM, HTU, ATH, Nonce string
		IAT                       int64
	}
	if err := json.Unmarshal(payload, &c); err != nil {
		return "", "", err
	}
	switch {
	case c.JTI == "" || s.jtis[c.JTI]:
		return "", "", fmt.Errorf("jti %q missing or used before", c.JTI)
	case c.HTM != method || c.HTU != uri:
		return "", "", fmt.Errorf("htm %s htu %s, want %s %s", c.HTM, c.HTU, method, uri)
	case time.Since(time.Unix(c.IAT, 0)).Abs() > time.Minute:
		return "", "", fmt.Errorf("iat %d", c.IAT)
	}
	if accessToken != "" {
		sum := sha256.Sum256([]byte(accessToken))
		if c.ATH != base64.RawURLEncoding.EncodeToString(sum[:]) {
			return "", "", fmt.Errorf("ath does not match the token")
		}
	}
	s.jtis[c.JTI] = true
	tp, err := h.JSONWebKey.Thumbprint(crypto.SHA256)
	if err != nil {
		return "", "", err
	}
	return base64.RawURLEncoding.EncodeToString(tp), c.Nonce, nil
}

// verifyJWT checks a JWS signed by key and returns its claims.
func verifyJWT(token string, key crypto.PublicKey) (map[string]any, error) {
	jws, err := jose.ParseSignedCompact(token, []jose.SignatureAlgorithm{jose.ES256, jose.ES384, jose.RS256, jose.PS256, jose.EdDSA})
	if err != nil {
		return nil, err
	}
	payload, err := jws.Verify(key)
	if err != nil {
		return nil, err
	}
	var claims map[string]any
	return claims, json.Unmarshal(payload, &claims)
}

// TokenRequests returns the form of each request to the token endpoints
// (the authorization server's and the identity provider's).
func (s *GrantServer) TokenRequests() []url.Values {
	return snapshot(&s.mu, &s.requests)
}

// Refusals says why requests were refused.
func (s *GrantServer) Refusals() []string {
	return snapshot(&s.mu, &s.refusals)
}

// Secrets returns every secret that went by: the client secret, the
// workload JWT, the ID token, client assertions, ID-JAGs, access tokens
// and DPoP proofs.
func (s *GrantServer) Secrets() []string {
	return slices.DeleteFunc(snapshot(&s.mu, &s.secrets), func(v string) bool { return v == "" })
}
