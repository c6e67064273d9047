package auth_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpi-dev/mcpi/internal/auth"
	"github.com/mcpi-dev/mcpi/internal/auth/authtest"
	"github.com/mcpi-dev/mcpi/internal/record"
)

// connectURL opens an MCP session with the official SDK's client through tr.
func connectURL(t *testing.T, serverURL string, tr *auth.Transport) (*mcp.ClientSession, error) {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "auth-test", Version: "1"}, nil)
	cs, err := c.Connect(ctxT(t), &mcp.StreamableClientTransport{Endpoint: serverURL, HTTPClient: tr.Client()}, nil)
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

func p256(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func newKey(t *testing.T, k *ecdsa.PrivateKey) *auth.Key {
	t.Helper()
	key, err := auth.NewKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func constant(v string) func() (string, error) { return func() (string, error) { return v, nil } }

// TestGrants runs each grant without a person against a local
// authorization server that checks it as the specifications say, with
// Bearer and with DPoP-bound tokens (nonces asked by both servers), and
// records the flow in a trace that must hold none of the secrets.
func TestGrants(t *testing.T) {
	clientKey := p256(t)
	for _, dpop := range []bool{false, true} {
		for _, tc := range []struct {
			name string
			cfg  authtest.GrantConfig
			opts func(s *authtest.GrantServer) auth.Options
			// want is the grant_type of the last token request.
			want string
		}{
			{"client_credentials basic", authtest.GrantConfig{ClientID: "m2m", ClientSecret: "m2m-secret-value"},
				func(*authtest.GrantServer) auth.Options {
					return auth.Options{Grant: auth.GrantClientCredentials, ClientID: "m2m", ClientSecret: "m2m-secret-value"}
				}, "client_credentials"},
			{"client_credentials private_key_jwt", authtest.GrantConfig{ClientID: "m2m", ClientKey: clientKey.Public()},
				func(*authtest.GrantServer) auth.Options {
					return auth.Options{Grant: auth.GrantClientCredentials, ClientID: "m2m", ClientKey: newKey(t, clientKey)}
				}, "client_credentials"},
			{"jwt-bearer workload identity", authtest.GrantConfig{ClientID: "workload", Assertion: "eyJ.workload-jwt.sig"},
				func(*authtest.GrantServer) auth.Options {
					return auth.Options{Grant: auth.GrantJWTBearer, ClientID: "workload", Assertion: constant("eyJ.workload-jwt.sig\n")}
				}, "urn:ietf:params:oauth:grant-type:jwt-bearer"},
			{"id-jag enterprise-managed", authtest.GrantConfig{ClientID: "xaa", ClientSecret: "xaa-secret-value", IDToken: "eyJ.the-users-id-token.sig"},
				func(s *authtest.GrantServer) auth.Options {
					return auth.Options{Grant: auth.GrantIDJAG, ClientID: "xaa", ClientSecret: "xaa-secret-value", IDToken: constant("eyJ.the-users-id-token.sig"),
						IDP: auth.IDP{Issuer: s.IDPIssuer, ClientID: "idp-client"}}
				}, "urn:ietf:params:oauth:grant-type:jwt-bearer"},
		} {
			name := tc.name
			if dpop {
				name += " dpop"
			}
			t.Run(name, func(t *testing.T) {
				cfg := tc.cfg
				cfg.DPoP, cfg.Nonce = dpop, dpop
				s := authtest.StartGrants(t, cfg)
				tracePath := filepath.Join(t.TempDir(), "trace.jsonl")
				rec, err := record.Create(tracePath, record.Header{Mcpi: "test"}, record.Options{})
				if err != nil {
					t.Fatal(err)
				}
				opts := tc.opts(s)
				opts.ServerURL, opts.Tap = s.URL, rec
				if dpop {
					opts.DPoP = newKey(t, p256(t))
				}
				tr := auth.NewTransport(opts)
				cs, err := connectURL(t, s.URL, tr)
				if err != nil {
					t.Fatalf("connect: %v\nrefusals: %q", err, s.Refusals())
				}
				if got := call(t, cs, "echo", map[string]any{"text": "hi"}); !strings.Contains(got, "hi") {
					t.Errorf("echo: %q", got)
				}
				reqs := s.TokenRequests()
				last := reqs[len(reqs)-1]
				if last.Get("grant_type") != tc.want || last.Get("resource") != s.URL {
					t.Errorf("token request %v, want grant_type %s and resource %s", last, tc.want, s.URL)
				}
				if e := tr.Credentials(); e == nil || (dpop != strings.EqualFold(e.Token.TokenType, "DPoP")) {
					t.Errorf("credentials %+v, DPoP %v", e, dpop)
				}
				rec.Close()
				trace, err := os.ReadFile(tracePath)
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(string(trace), "oauth token request") {
					t.Errorf("the trace lacks the token request:\n%s", trace)
				}
				for _, sec := range s.Secrets() {
					if strings.Contains(string(trace), sec) || strings.Contains(string(trace), url.QueryEscape(sec)) {
						t.Errorf("the trace holds the secret %q", sec)
					}
				}
			})
		}
	}
}

// TestJWTBearerRefusal: a refused JWT bearer grant is reported with the
// authorization server's error, without retrying or switching grants.
func TestJWTBearerRefusal(t *testing.T) {
	s := authtest.StartGrants(t, authtest.GrantConfig{Assertion: "eyJ.workload-jwt.sig", GrantError: "invalid_grant"})
	tr := auth.NewTransport(auth.Options{ServerURL: s.URL, Grant: auth.GrantJWTBearer, Assertion: constant("eyJ.workload-jwt.sig")})
	req, _ := http.NewRequestWithContext(ctxT(t), http.MethodPost, s.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	_, err := tr.Client().Do(req)
	var ae *auth.Error
	if !errors.As(err, &ae) || ae.Step != auth.StepToken || !strings.Contains(ae.Msg, "invalid_grant") {
		t.Fatalf("err %v, want a token request error naming invalid_grant", err)
	}
	if n := len(s.TokenRequests()); n != 1 {
		t.Errorf("%d token requests, want 1 (no retry)", n)
	}
}

// TestKeys: the PEM forms a key file may take give the same key (the
// same JWK thumbprint); a certificate is not a private key.
func TestKeys(t *testing.T) {
	k := p256(t)
	pkcs8, _ := x509.MarshalPKCS8PrivateKey(k)
	sec1, _ := x509.MarshalECPrivateKey(k)
	var want string
	for _, b := range []*pem.Block{{Type: "PRIVATE KEY", Bytes: pkcs8}, {Type: "EC PRIVATE KEY", Bytes: sec1}} {
		key, err := auth.ParseKey(pem.EncodeToMemory(b))
		if err != nil {
			t.Fatalf("%s: %v", b.Type, err)
		}
		if key.Alg() != "ES256" || (want != "" && key.Thumbprint() != want) {
			t.Errorf("%s: alg %s thumbprint %s, want ES256 %s", b.Type, key.Alg(), key.Thumbprint(), want)
		}
		want = key.Thumbprint()
	}
	if _, err := auth.ParseKey([]byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")); err == nil {
		t.Error("a certificate parsed as a private key")
	}
}

// TestCredentialGoesOnlyToItsIssuer: a client secret or a workload's JWT
// works wherever it is presented, and the server names the authorization
// server: with --oauth-issuer only that one gets it; without, a client ID
// authorized by another issuer before is refused for this one; a first use
// is allowed and told of.
func TestCredentialGoesOnlyToItsIssuer(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts auth.Options
	}{
		{"client secret", auth.Options{Grant: auth.GrantClientCredentials, ClientID: "m2m", ClientSecret: "m2m-secret-value"}},
		{"workload JWT", auth.Options{Grant: auth.GrantJWTBearer, ClientID: "workload", Assertion: constant("eyJ.workload-jwt.sig")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := authtest.GrantConfig{ClientID: tc.opts.ClientID, ClientSecret: tc.opts.ClientSecret}
			if tc.opts.Assertion != nil {
				cfg.Assertion = "eyJ.workload-jwt.sig"
			}
			s := authtest.StartGrants(t, cfg)
			store := auth.OpenStore(t.TempDir())
			connect := func(issuer string) (string, error) {
				var out strings.Builder
				o := tc.opts
				o.ServerURL, o.Issuer, o.Store, o.Out = s.URL, issuer, store, &out
				_, err := connectURL(t, s.URL, auth.NewTransport(o))
				return out.String(), err
			}
			// Pinned to another issuer: refused before any token request.
			if _, err := connect("https://as.example.com"); err == nil || !strings.Contains(err.Error(), "is not sent there") {
				t.Fatalf("pinned to another issuer: %v", err)
			}
			if n := len(s.TokenRequests()); n != 0 {
				t.Fatalf("%d token request(s) reached the authorization server the pin excludes", n)
			}
			// A first use, unpinned: allowed, and said.
			out, err := connect("")
			if err != nil {
				t.Fatalf("first use: %v", err)
			}
			if !strings.Contains(out, "warning: sending") || !strings.Contains(out, "--oauth-issuer "+s.Issuer) {
				t.Errorf("a first use says %q", out)
			}
			// The client was authorized by this issuer: no word any more.
			if out, err := connect(""); err != nil || out != "" {
				t.Errorf("a known issuer: %v, %q", err, out)
			}
			// Another server naming another issuer for the same client is refused.
			s2 := authtest.StartGrants(t, cfg)
			o := tc.opts
			o.ServerURL, o.Store = s2.URL, store
			if _, err := connectURL(t, s2.URL, auth.NewTransport(o)); err == nil || !strings.Contains(err.Error(), "was authorized by "+s.Issuer) {
				t.Errorf("another issuer for the same client: %v", err)
			}
			if n := len(s2.TokenRequests()); n != 0 {
				t.Errorf("%d token request(s) reached the other issuer", n)
			}
		})
	}
}
