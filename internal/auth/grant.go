package auth

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// The grants mcpi runs (Options.Grant).
const (
	// GrantAuthorizationCode is the default: a person authorizes in a
	// browser (or --oauth-headless), with PKCE.
	GrantAuthorizationCode = "authorization_code"
	// GrantClientCredentials is machine to machine (OAuth 2.1 §4.2, the
	// MCP client credentials extension): the client authenticates with its
	// secret or a private_key_jwt assertion and gets a token for itself.
	GrantClientCredentials = "client_credentials"
	// GrantJWTBearer trades a JWT the workload already holds (a workload
	// identity token from its platform) for an access token (RFC 7523 §2.1,
	// the MCP workload identity federation extension).
	GrantJWTBearer = "jwt-bearer"
	// GrantIDJAG is enterprise-managed authorization (the MCP extension,
	// SEP-990): the user's ID token is exchanged at the enterprise identity
	// provider for an identity assertion authorization grant (ID-JAG, RFC
	// 8693 token exchange), which the MCP server's authorization server
	// trades for an access token (RFC 7523 JWT bearer grant).
	GrantIDJAG = "id-jag"
)

// Grants lists the values of Options.Grant.
var Grants = []string{GrantAuthorizationCode, GrantClientCredentials, GrantJWTBearer, GrantIDJAG}

// The wire names of grants and token types.
const (
	grantTypeClientCredentials = "client_credentials"
	grantTypeJWTBearer         = "urn:ietf:params:oauth:grant-type:jwt-bearer"
	grantTypeTokenExchange     = "urn:ietf:params:oauth:grant-type:token-exchange"
	tokenTypeIDToken           = "urn:ietf:params:oauth:token-type:id_token"
	tokenTypeIDJAG             = "urn:ietf:params:oauth:token-type:id-jag"
	// AuthPrivateKeyJWT is the token endpoint authentication by a signed
	// client assertion (RFC 7523 §2.2, OpenID Connect Core §9).
	AuthPrivateKeyJWT = "private_key_jwt"
)

// IDP is the enterprise identity provider of GrantIDJAG: where the user's
// ID token is exchanged for an ID-JAG. The ID token goes to this token
// endpoint and nowhere else: it is the user's to name, never a server's.
type IDP struct {
	// Issuer is the provider's issuer identifier; its token endpoint is
	// read from its metadata when TokenEndpoint is empty.
	Issuer string
	// TokenEndpoint is where the token exchange is sent.
	TokenEndpoint string
	// ClientID and ClientSecret are mcpi's client at the provider (the
	// secret may be empty: then client_id only).
	ClientID, ClientSecret string
}

// grant is the grant in force.
func (t *Transport) grant() string {
	if t.opts.Grant == "" {
		return GrantAuthorizationCode
	}
	return t.opts.Grant
}

// wireGrant is the grant_type a grant sends to the authorization server.
func wireGrant(g string) string {
	switch g {
	case GrantClientCredentials:
		return grantTypeClientCredentials
	case GrantJWTBearer, GrantIDJAG:
		return grantTypeJWTBearer
	}
	return grantCode
}

// obtain gets new credentials from d's authorization server by the grant
// in force.
func (t *Transport) obtain(ctx context.Context, d *discovery, stored *Entry, scopes []string) (*Entry, error) {
	if err := t.checkIssuer(d); err != nil {
		return nil, err
	}
	g := t.grant()
	if g == GrantAuthorizationCode {
		return t.authorize(ctx, d, stored, scopes)
	}
	asm := d.asm
	if s := asm.GrantTypesSupported; len(s) > 0 && !slices.Contains(s, wireGrant(g)) {
		t.obs.step("warning: authorization server %s lists grant_types_supported %q, without %s: asking anyway", d.issuer, s, wireGrant(g))
	}
	form := url.Values{"grant_type": {wireGrant(g)}}
	switch g {
	case GrantJWTBearer:
		a, err := t.readCredential(t.opts.Assertion, "the workload's JWT")
		if err != nil {
			return nil, err
		}
		form.Set("assertion", a)
		t.obs.step("JWT bearer grant (workload identity, RFC 7523 §2.1): presenting the workload's JWT to %s", asm.TokenEndpoint)
	case GrantIDJAG:
		jag, err := t.exchangeIDToken(ctx, d, scopes)
		if err != nil {
			return nil, err
		}
		form.Set("assertion", jag)
		t.obs.step("JWT bearer grant (RFC 7523 §2.1): presenting the ID-JAG to %s", asm.TokenEndpoint)
	default:
		t.obs.step("client credentials grant (OAuth 2.1 §4.2) at %s", asm.TokenEndpoint)
	}
	client := t.machineClient(d)
	tok, err := t.tokenRequest(ctx, StepToken, asm.TokenEndpoint, form, d.resource, scopes, client, d.issuer, asm.TokenEndpointAuthSigningAlgValuesSupported, t.dpopState())
	if err != nil {
		return nil, err
	}
	return &Entry{Issuer: d.issuer, Resource: d.resource, ServerURL: t.opts.ServerURL, TokenEndpoint: asm.TokenEndpoint,
		Client: client, Token: tok, Scopes: scopes, Updated: t.now()}, nil
}

// readCredential reads a credential the user gives by file or environment
// (read at each authorization: workload tokens are short-lived, and
// rotated on disk by their platform).
func (t *Transport) readCredential(read func() (string, error), what string) (string, error) {
	if read == nil {
		return "", errorf(StepToken, "", "%s is not given", what)
	}
	v, err := read()
	if err != nil {
		return "", errorf(StepToken, "", "reading %s: %v", what, err)
	}
	v = strings.TrimSpace(v)
	if v == "" {
		return "", errorf(StepToken, "", "%s is empty", what)
	}
	t.obs.learn(v)
	return v, nil
}

// machineClient is the client of a grant without a person: the one the
// user registered (--client-id), authenticating by private_key_jwt when
// it has a key, by its secret as the server prefers when it has one, and
// by its client_id alone otherwise.
func (t *Transport) machineClient(d *discovery) *Client {
	c := &Client{ID: t.opts.ClientID, Secret: t.opts.ClientSecret, Method: MethodPreRegistered}
	supported := d.asm.TokenEndpointAuthMethodsSupported
	switch {
	case t.opts.ClientKey != nil:
		c.AuthMethod = AuthPrivateKeyJWT
		if len(supported) > 0 && !slices.Contains(supported, AuthPrivateKeyJWT) {
			t.obs.step("warning: authorization server %s lists token_endpoint_auth_methods_supported %q, without private_key_jwt: using it anyway", d.issuer, supported)
		}
	default:
		c.AuthMethod = authMethodFor(c.Secret != "", supported)
	}
	who := "no client_id"
	if c.ID != "" {
		who = fmt.Sprintf("client %q", c.ID)
	}
	t.obs.step("client: %s, token endpoint authentication %s", who, c.AuthMethod)
	return c
}

// exchangeIDToken trades the user's ID token for an ID-JAG at the
// enterprise identity provider (RFC 8693, SEP-990): audience the MCP
// server's authorization server, resource the MCP server.
func (t *Transport) exchangeIDToken(ctx context.Context, d *discovery, scopes []string) (string, error) {
	idt, err := t.readCredential(t.opts.IDToken, "the ID token (identity assertion)")
	if err != nil {
		return "", err
	}
	endpoint, err := t.idpTokenEndpoint(ctx)
	if err != nil {
		return "", err
	}
	form := url.Values{
		"grant_type":           {grantTypeTokenExchange},
		"requested_token_type": {tokenTypeIDJAG},
		"audience":             {d.issuer},
		"subject_token":        {idt},
		"subject_token_type":   {tokenTypeIDToken},
	}
	idp := t.opts.IDP
	c := &Client{ID: idp.ClientID, Secret: idp.ClientSecret, Method: MethodPreRegistered, AuthMethod: authMethodFor(idp.ClientSecret != "", nil)}
	t.obs.step("token exchange (RFC 8693) at the identity provider %s: the ID token for an ID-JAG with audience %s and resource %s", endpoint, d.issuer, d.resource)
	resp, err := t.postToken(ctx, StepTokenExchange, endpoint, form, d.resource, scopes, c, idp.Issuer, nil, nil)
	if err != nil {
		return "", err
	}
	if resp.IssuedTokenType != tokenTypeIDJAG {
		return "", errorf(StepTokenExchange, RuleIDJAG, "the identity provider issued a token of type %q, not an ID-JAG (%s)", resp.IssuedTokenType, tokenTypeIDJAG)
	}
	t.obs.step("token exchange: received an ID-JAG")
	return resp.AccessToken, nil
}

// idpTokenEndpoint is the identity provider's token endpoint: given, or
// read from its metadata.
func (t *Transport) idpTokenEndpoint(ctx context.Context) (string, error) {
	idp := t.opts.IDP
	if idp.TokenEndpoint != "" {
		return idp.TokenEndpoint, checkHTTPS(StepTokenExchange, "identity provider token endpoint", idp.TokenEndpoint)
	}
	if idp.Issuer == "" {
		return "", errorf(StepTokenExchange, "", "name the identity provider: its issuer or its token endpoint")
	}
	if err := checkHTTPS(StepTokenExchange, "identity provider", idp.Issuer); err != nil {
		return "", err
	}
	var tried []fetched
	for _, u := range ServerMetadataURLs(idp.Issuer) {
		var m oauthex.AuthServerMeta
		ok, status, err := t.getJSON(ctx, "identity provider metadata", u, &m)
		if err != nil {
			return "", &Error{Step: StepTokenExchange, Msg: err.Error(), Err: err}
		}
		if !ok {
			tried = append(tried, fetched{u, status})
			continue
		}
		if strings.TrimSuffix(m.Issuer, "/") != strings.TrimSuffix(idp.Issuer, "/") {
			return "", errorf(StepTokenExchange, RuleIssuer, "the metadata at %s says issuer %q, but it was fetched for issuer %q: refusing to use it", u, m.Issuer, idp.Issuer)
		}
		if m.TokenEndpoint == "" {
			return "", errorf(StepTokenExchange, RuleEndpoints, "the identity provider's metadata at %s names no token_endpoint", u)
		}
		return m.TokenEndpoint, checkHTTPS(StepTokenExchange, "identity provider token_endpoint", m.TokenEndpoint)
	}
	return "", errorf(StepTokenExchange, RuleServerMetadata, "no metadata for identity provider %s (%s)", idp.Issuer, describeTried(tried))
}

// tokenResponse is what a token endpoint answers (RFC 6749 §5.1 and
// §5.2, RFC 8693 §2.2).
type tokenResponse struct {
	AccessToken      string      `json:"access_token"`
	TokenType        string      `json:"token_type"`
	ExpiresIn        json.Number `json:"expires_in"`
	RefreshToken     string      `json:"refresh_token"`
	Scope            string      `json:"scope"`
	IssuedTokenType  string      `json:"issued_token_type"`
	Error            string      `json:"error"`
	ErrorDescription string      `json:"error_description"`
}

// tokenRequest sends a token request of a grant without a person and
// keeps the token it gets.
func (t *Transport) tokenRequest(ctx context.Context, step Step, endpoint string, form url.Values, resource string, scopes []string, c *Client, issuer string, algs []string, dp *dpop) (*Token, error) {
	resp, err := t.postToken(ctx, step, endpoint, form, resource, scopes, c, issuer, algs, dp)
	if err != nil {
		return nil, err
	}
	tok := &Token{AccessToken: resp.AccessToken, TokenType: resp.TokenType, RefreshToken: resp.RefreshToken, Scope: resp.Scope}
	if n, err := resp.ExpiresIn.Int64(); err == nil && n > 0 {
		tok.Expiry = t.now().Add(time.Duration(n) * time.Second)
	}
	return t.keepToken(step, tok, strings.Join(scopes, " ")), nil
}

// postToken POSTs a token request: form, plus the resource (RFC 8707) and
// the scope, with the client authenticated by its method (a client
// assertion's audience is issuer), a DPoP proof when dp is set. The body
// goes to endpoint only: a redirect elsewhere is refused (egress policy).
func (t *Transport) postToken(ctx context.Context, step Step, endpoint string, form url.Values, resource string, scopes []string, c *Client, issuer string, algs []string, dp *dpop) (*tokenResponse, error) {
	if err := checkHTTPS(step, "token endpoint", endpoint); err != nil {
		return nil, err
	}
	if resource != "" && !form.Has("resource") {
		form.Set("resource", resource)
	}
	if len(scopes) > 0 {
		form.Set("scope", strings.Join(scopes, " "))
	}
	var basicID, basicSecret string
	switch c.AuthMethod {
	case AuthBasic:
		// RFC 6749 §2.3.1: both form-encoded, then Basic.
		basicID, basicSecret = url.QueryEscape(c.ID), url.QueryEscape(c.Secret)
	case AuthPost:
		form.Set("client_id", c.ID)
		form.Set("client_secret", c.Secret)
	case AuthPrivateKeyJWT:
		extra, err := t.assertionParams(c, issuer, algs)
		if err != nil {
			return nil, err
		}
		if c.ID != "" {
			form.Set("client_id", c.ID)
		}
		for k := range extra {
			form.Set(k, extra.Get(k))
		}
	default:
		if c.ID != "" {
			form.Set("client_id", c.ID)
		}
	}
	body := form.Encode()
	req, err := http.NewRequestWithContext(withDPoP(withLabel(ctx, string(step)), dp), http.MethodPost, endpoint, strings.NewReader(body))
	if err != nil {
		return nil, &Error{Step: step, Msg: t.obs.redact(err.Error()), Err: err}
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if c.AuthMethod == AuthBasic {
		req.SetBasicAuth(basicID, basicSecret)
	}
	resp, err := t.asClient.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, &Error{Step: step, Msg: ctx.Err().Error(), Err: ctx.Err()}
		}
		return nil, &Error{Step: step, Msg: t.obs.redact(err.Error()), Err: err}
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	var tr tokenResponse
	jerr := json.Unmarshal(raw, &tr)
	switch {
	case resp.StatusCode != http.StatusOK || tr.Error != "":
		if tr.Error == "" && jerr != nil {
			return nil, errorf(step, RuleTokenResponse, "%s answered %s", endpoint, resp.Status)
		}
		return nil, errorf(step, RuleTokenResponse, "%s answered %s: %s", endpoint, resp.Status, t.obs.redact(describeOAuthError(tr.Error, tr.ErrorDescription)))
	case jerr != nil:
		return nil, errorf(step, RuleTokenResponse, "%s answered %s with a body that is not a JSON object: %s", endpoint, resp.Status, t.obs.redact(jerr.Error()))
	case tr.AccessToken == "":
		return nil, errorf(step, RuleTokenResponse, "%s answered %s without an access_token", endpoint, resp.Status)
	}
	t.obs.learn(tr.AccessToken, tr.RefreshToken)
	return &tr, nil
}

// keepToken reports a token obtained and returns it. A token response
// without a scope grants the scope asked for (RFC 6749 §5.1): fallback.
func (t *Transport) keepToken(step Step, k *Token, fallback string) *Token {
	t.obs.learn(k.AccessToken, k.RefreshToken)
	granted := "granted scope " + strconv.Quote(k.Scope)
	if k.Scope == "" {
		k.Scope = fallback
		granted = "no scope said (taken as " + strconv.Quote(fallback) + ")"
	}
	expiry := "no expiry"
	if !k.Expiry.IsZero() {
		expiry = "expires in " + k.Expiry.Sub(t.now()).Round(time.Second).String()
	}
	refresh := "no refresh token"
	if k.RefreshToken != "" {
		refresh = "a refresh token"
	}
	t.obs.step("%s: %s access token, %s, %s, %s", step, orDefault(k.TokenType, "untyped"), expiry, granted, refresh)
	dp := t.dpopState()
	switch {
	case isDPoPToken(k) && dp == nil:
		t.obs.step("warning: the token type is DPoP, but mcpi sent no DPoP proof: it sends the token as a Bearer token")
		k.TokenType = "Bearer"
	case isDPoPToken(k):
		k.DPoPJKT = dp.key.Thumbprint()
	case k.TokenType != "" && !strings.EqualFold(k.TokenType, "bearer"):
		t.obs.step("warning: the token type is %q; mcpi sends it as a Bearer token", k.TokenType)
	case dp != nil:
		t.obs.step("the authorization server issued a Bearer token, not a DPoP-bound one: mcpi sends it as a Bearer token")
	}
	return k
}

// replayable names the credential of the flow in force that works wherever
// it is presented, when there is one: a pre-registered client secret, or
// the workload's JWT of the JWT bearer grant. A private key's assertion
// names its audience, and an ID token goes only to the identity provider
// the user named: neither is one.
func (t *Transport) replayable() string {
	switch {
	case t.grant() == GrantJWTBearer:
		return "the workload's JWT"
	case t.opts.ClientSecret != "" && t.opts.ClientID != "":
		return "the client secret of " + t.opts.ClientID
	}
	return ""
}

// checkIssuer keeps a replayable credential from an authorization server it
// was not issued for. A server names its authorization servers in its
// metadata, and a hostile one would name its own to collect them. With
// Options.Issuer only that issuer gets it. Without, a client ID that went
// to another issuer before (the store remembers) is refused for this one,
// and a first use is allowed and told of on Out, naming the issuer and how
// to pin it.
func (t *Transport) checkIssuer(d *discovery) error {
	what := t.replayable()
	if what == "" {
		return nil
	}
	same := func(a, b string) bool { return strings.TrimSuffix(a, "/") == strings.TrimSuffix(b, "/") }
	if pin := t.opts.Issuer; pin != "" {
		if same(pin, d.issuer) {
			return nil
		}
		return errorf(StepToken, RuleCredentialAS, "the server names authorization server %s, not %s (--oauth-issuer): %s is not sent there", d.issuer, pin, what)
	}
	known := false
	if t.opts.Store != nil && t.opts.ClientID != "" {
		if entries, err := t.opts.Store.List(); err == nil {
			for _, e := range entries {
				if e.Client == nil || e.Client.ID != t.opts.ClientID || e.Client.Method != MethodPreRegistered {
					continue
				}
				if !same(e.Issuer, d.issuer) {
					return errorf(StepToken, RuleCredentialAS, "client %s was authorized by %s before, and this server names %s: %s is not sent there (if %s is right, give --oauth-issuer %s)",
						t.opts.ClientID, e.Issuer, d.issuer, what, d.issuer, d.issuer)
				}
				known = true
			}
		}
	}
	if !known && t.opts.Out != nil {
		fmt.Fprintf(t.opts.Out, "warning: sending %s to authorization server %s, which the server's metadata names; --oauth-issuer %s makes it the only one\n", what, d.issuer, d.issuer)
	}
	return nil
}
