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
