package auth

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/mcpi-dev/mcpi/internal/transport"
)

// callbackPath is where the authorization server sends the browser back.
const callbackPath = "/callback"

// redirect is the loopback redirect URI of one flow and, when a browser
// is to come back to it, the listener behind it. The listener lives only
// as long as the flow.
type redirect struct {
	uri string
	ln  net.Listener
}

func (r *redirect) close() {
	if r != nil && r.ln != nil {
		r.ln.Close()
	}
}

func loopbackURI(port int) string {
	return "http://127.0.0.1:" + strconv.Itoa(port) + callbackPath
}

// openRedirect chooses the redirect URI: --oauth-redirect-port, else the
// one a stored registration was made for (so that it can be used again),
// else a free port. Headless flows need no listener.
func (t *Transport) openRedirect(stored *Entry) (*redirect, error) {
	var storedURI string
	if stored != nil && stored.Client != nil && stored.Client.Method == MethodDynamic && len(stored.Client.RedirectURIs) > 0 {
		if u, err := url.Parse(stored.Client.RedirectURIs[0]); err == nil && u.Scheme == "http" && isLoopback(u.Hostname()) && u.Port() != "" {
			storedURI = u.String()
		}
	}
	if t.opts.Headless {
		switch {
		case t.opts.RedirectPort > 0:
			return &redirect{uri: loopbackURI(t.opts.RedirectPort)}, nil
		case storedURI != "":
			return &redirect{uri: storedURI}, nil
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, &Error{Step: StepAuthorization, Msg: "choosing a loopback port for the redirect URI: " + err.Error(), Err: err}
		}
		port := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		return &redirect{uri: loopbackURI(port)}, nil
	}
	addrs := []string{"127.0.0.1:0"}
	switch {
	case t.opts.RedirectPort > 0:
		addrs = []string{"127.0.0.1:" + strconv.Itoa(t.opts.RedirectPort)}
	case storedURI != "":
		u, _ := url.Parse(storedURI)
		addrs = []string{"127.0.0.1:" + u.Port(), "127.0.0.1:0"}
	}
	var lerr error
	for _, a := range addrs {
		ln, err := net.Listen("tcp", a)
		if err != nil {
			lerr = err
			continue
		}
		port := ln.Addr().(*net.TCPAddr).Port
		return &redirect{uri: loopbackURI(port), ln: ln}, nil
	}
	return nil, &Error{Step: StepAuthorization, Msg: "listening for the browser's return on the loopback interface: " + lerr.Error(), Err: lerr}
}

// authorize runs the authorization code grant with PKCE against the
// authorization server of d and returns the new credentials.
func (t *Transport) authorize(ctx context.Context, d *discovery, stored *Entry, scopes []string) (*Entry, error) {
	if !t.opts.Headless && !t.opts.Interactive {
		by := "by " + d.issuer
		if d.fallback {
			by = fmt.Sprintf("(it answered %s and publishes no metadata: its origin %s would be asked at the default endpoints of 2025-03-26)", d.status, d.issuer)
		}
		return nil, errorf(StepAuthorization, "", "%s needs authorization %s, and there is no terminal to ask on: run mcpi on a terminal to authorize in a browser, add --oauth-headless for an authorization server that approves without a person, or give --bearer TOKEN",
			d.serverURL, by)
	}
	rd, err := t.openRedirect(stored)
	if err != nil {
		return nil, err
	}
	defer rd.close()
	client, err := t.identity(ctx, d, rd.uri, stored)
	if err != nil {
		return nil, err
	}
	asm := d.asm
	verifier := oauth2.GenerateVerifier()
	t.obs.learn(verifier, client.Secret)
	state := rand.Text()
	cfg := &oauth2.Config{
		ClientID:     client.ID,
		ClientSecret: client.Secret,
		Endpoint:     oauth2.Endpoint{AuthURL: asm.AuthorizationEndpoint, TokenURL: asm.TokenEndpoint, AuthStyle: authStyle(client.AuthMethod)},
		RedirectURL:  rd.uri,
		Scopes:       scopes,
	}
	if client.AuthMethod == AuthNone || client.AuthMethod == AuthPrivateKeyJWT {
		cfg.ClientSecret = ""
	}
	authURL := cfg.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", d.resource))
	mode := "in a browser"
	if t.opts.Headless {
		mode = "headless"
	}
	t.obs.step("authorization request to %s (%s): scope %q, resource %s, PKCE S256, redirect %s", asm.AuthorizationEndpoint, mode, strings.Join(scopes, " "), d.resource, rd.uri)
	var params url.Values
	if t.opts.Headless {
		params, err = t.followHeadless(ctx, authURL, rd.uri)
	} else {
		params, err = t.waitBrowser(ctx, d, authURL, rd)
	}
	if err != nil {
		return nil, err
	}
	code, err := t.checkResponse(d, state, params)
	if err != nil {
		return nil, err
	}
	assertion, err := t.assertionParams(client, d.issuer, asm.TokenEndpointAuthSigningAlgValuesSupported)
	if err != nil {
		return nil, err
	}
	tok, err := t.exchange(ctx, cfg, code, verifier, d.resource, scopes, assertion)
	if err != nil {
		return nil, err
	}
	if !t.opts.Headless {
		t.say("mcpi: authorized by %s.", d.issuer)
	}
	return &Entry{Issuer: d.issuer, Resource: d.resource, ServerURL: t.opts.ServerURL, TokenEndpoint: asm.TokenEndpoint,
		Client: client, Token: tok, Scopes: scopes, Updated: t.now()}, nil
}

// checkResponse validates an authorization response and returns its code:
// first the issuer (RFC 9207; on a mismatch nothing else of the response is
// acted on or shown), then the state, then an error, then the code.
func (t *Transport) checkResponse(d *discovery, state string, p url.Values) (string, error) {
	iss, hasIss := p.Get("iss"), p.Has("iss")
	switch {
	case hasIss && iss != d.issuer:
		return "", errorf(StepAuthorization, RuleIss, "the authorization response says iss %q, but mcpi asked %q: refusing it before the code goes anywhere", iss, d.issuer)
	case !hasIss && d.asm.AuthorizationResponseIssParameterSupported:
		return "", errorf(StepAuthorization, RuleIssMissing, "%s advertises authorization_response_iss_parameter_supported, but its authorization response has no iss: refusing it", d.issuer)
	}
	switch got := p.Get("state"); {
	case !p.Has("state"):
		return "", errorf(StepAuthorization, RuleState, "the authorization response has no state: discarding it")
	case got != state:
		return "", errorf(StepAuthorization, RuleState, "the authorization response's state does not match the request's: discarding it")
	}
	if e := p.Get("error"); e != "" {
		return "", errorf(StepAuthorization, "", "the authorization server refused: %s", t.obs.redact(describeOAuthError(e, p.Get("error_description"))))
	}
	code := p.Get("code")
	if code == "" {
		return "", errorf(StepAuthorization, RuleAuthResponse, "the authorization response has neither a code nor an error")
	}
	how := "absent, and not advertised"
	if hasIss {
		how = "matches"
	}
	t.obs.step("authorization response: state matches; iss %s; code received", how)
	return code, nil
}

// followHeadless gets the authorization URL without a browser, as the
// conformance suite's reference clients do: it follows the authorization
// server's redirects (never the one to the redirect URI) and reads the
// response from the Location that points at the redirect URI.
func (t *Transport) followHeadless(ctx context.Context, authURL, redirectURI string) (url.Values, error) {
	c := transport.NewHTTPClient(t.asClient.Transport, transport.EgressPolicy{NoFollow: true})
	ru, _ := url.Parse(redirectURI)
	next := authURL
	for range 10 {
		req, err := http.NewRequestWithContext(withLabel(ctx, "authorization (headless)"), http.MethodGet, next, nil)
		if err != nil {
			return nil, &Error{Step: StepAuthorization, Msg: t.obs.redact(err.Error()), Err: err}
		}
		resp, err := c.Do(req)
		if err != nil {
			return nil, &Error{Step: StepAuthorization, Msg: t.obs.redact(err.Error()), Err: err}
		}
		resp.Body.Close()
		loc := resp.Header.Get("Location")
		if resp.StatusCode < 300 || resp.StatusCode > 399 || loc == "" {
			return nil, errorf(StepAuthorization, "", "headless: %s answered %s instead of redirecting to %s: this authorization server wants a person (a login or consent page); run without --oauth-headless",
				t.obs.redact(req.URL.Redacted()), resp.Status, redirectURI)
		}
		u, err := req.URL.Parse(loc)
		if err != nil {
			return nil, errorf(StepAuthorization, RuleAuthResponse, "headless: the redirect to %q is not a URL", t.obs.redact(loc))
		}
		if u.Scheme == ru.Scheme && u.Host == ru.Host && u.Path == ru.Path {
			return u.Query(), nil
		}
		if !transport.SecureURL(u) {
			return nil, errorf(StepAuthorization, RuleHTTPS, "headless: the authorization server redirects to %s, which is neither HTTPS nor on this machine: not followed", t.obs.redact(u.Redacted()))
		}
		next = u.String()
	}
	return nil, errorf(StepAuthorization, "", "headless: more than 10 redirects without coming back to %s", redirectURI)
}

// waitBrowser sends the user to the authorization URL and waits, as long
// as ctx allows, for the browser to come back to the loopback listener.
func (t *Transport) waitBrowser(ctx context.Context, d *discovery, authURL string, rd *redirect) (url.Values, error) {
	got := make(chan url.Values, 1)
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != callbackPath {
			http.NotFound(w, r)
			return
		}
		q := r.URL.Query()
		t.obs.learnForm(q)
		t.report(transport.Event{Kind: transport.KindHTTP, Dir: transport.Incoming, Text: "oauth authorization response: the browser came back",
			HTTP: &transport.HTTPMeta{Method: r.Method, URL: t.obs.redactor().URL(rd.uri + "?" + r.URL.RawQuery), RequestHeader: t.obs.redactor().Header(r.Header)}})
		select {
		case got <- q:
		default:
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!doctype html><title>mcpi</title><p>mcpi received the answer of %s. You can close this tab and go back to the terminal.</p>\n", html.EscapeString(d.issuer))
	})}
	go srv.Serve(rd.ln)
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}()
	how := "Open this URL in a browser to authorize mcpi"
	if !t.opts.NoBrowser {
		if err := t.openBrowser(authURL); err == nil {
			how = "Opened the browser to authorize mcpi; if it did not open, visit"
		} else {
			t.obs.step("no browser: %v", err)
		}
	}
	t.say("mcpi: %s needs authorization by %s.\n%s:\n\n  %s\n\nWaiting up to %v for the browser to come back to %s ...", d.serverURL, d.issuer, how, authURL, t.opts.BrowserWait, rd.uri)
	wait := time.NewTimer(t.opts.BrowserWait)
	defer wait.Stop()
	select {
	case q := <-got:
		return q, nil
	case <-wait.C:
		return nil, errorf(StepAuthorization, "", "gave up after %v waiting for the browser to come back to %s", t.opts.BrowserWait, rd.uri)
	case <-ctx.Done():
		return nil, &Error{Step: StepAuthorization, Msg: "stopped waiting for the browser: " + ctx.Err().Error(), Err: ctx.Err()}
	}
}

// exchange trades the code for a token (with the PKCE verifier and the
// resource).
func (t *Transport) exchange(ctx context.Context, cfg *oauth2.Config, code, verifier, resource string, scopes []string, extra url.Values) (*Token, error) {
	ctx = context.WithValue(withDPoP(withLabel(ctx, string(StepToken)), t.dpopState()), oauth2.HTTPClient, t.asClient)
	opts := []oauth2.AuthCodeOption{oauth2.VerifierOption(verifier), oauth2.SetAuthURLParam("resource", resource)}
	for k := range extra {
		opts = append(opts, oauth2.SetAuthURLParam(k, extra.Get(k)))
	}
	tok, err := cfg.Exchange(ctx, code, opts...)
	if err != nil {
		return nil, t.tokenError(ctx, StepToken, cfg.Endpoint.TokenURL, err)
	}
	return t.keep(StepToken, tok, strings.Join(scopes, " ")), nil
}

// refresh renews e's token with its refresh token.
func (t *Transport) refresh(ctx context.Context, e *Entry) (*Entry, error) {
	c := e.Client
	secret := c.Secret
	if c.Method == MethodPreRegistered && c.ID == t.opts.ClientID {
		secret = t.opts.ClientSecret
	}
	if c.AuthMethod == AuthNone || c.AuthMethod == AuthPrivateKeyJWT {
		secret = ""
	}
	cfg := &oauth2.Config{ClientID: c.ID, ClientSecret: secret, Endpoint: oauth2.Endpoint{TokenURL: e.TokenEndpoint, AuthStyle: authStyle(c.AuthMethod)}}
	extra, err := t.assertionParams(c, e.Issuer, nil)
	if err != nil {
		return nil, err
	}
	if extra == nil {
		extra = url.Values{}
	}
	extra.Set("resource", e.Resource)
	ctx = withFormExtra(withLabel(ctx, string(StepRefresh)), extra)
	ctx = context.WithValue(withDPoP(ctx, t.dpopState()), oauth2.HTTPClient, t.asClient)
	t.obs.step("refreshing the access token at %s", e.TokenEndpoint)
	tok, err := cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: e.Token.RefreshToken}).Token()
	if err != nil {
		return nil, t.tokenError(ctx, StepRefresh, e.TokenEndpoint, err)
	}
	n := *e
	n.Token = t.keep(StepRefresh, tok, e.Token.Scope)
	n.Updated = t.now()
	return &n, nil
}

// assertionParams are the token request parameters of a private_key_jwt
// client (none for another): a fresh client assertion for issuer.
func (t *Transport) assertionParams(c *Client, issuer string, algs []string) (url.Values, error) {
	if c.AuthMethod != AuthPrivateKeyJWT {
		return nil, nil
	}
	if t.opts.ClientKey == nil {
		return nil, errorf(StepToken, "", "client %q authenticates with private_key_jwt, and no key is given (--client-assertion-key)", c.ID)
	}
	a, err := t.opts.ClientKey.clientAssertion(c.ID, issuer, algs, t.now())
	if err != nil {
		return nil, &Error{Step: StepToken, Msg: "signing the client assertion: " + err.Error(), Err: err}
	}
	t.obs.learn(a)
	return url.Values{"client_assertion_type": {clientAssertionType}, "client_assertion": {a}}, nil
}

// keep turns what x/oauth2 got from the token endpoint into a Token and
// reports it.
func (t *Transport) keep(step Step, tok *oauth2.Token, fallback string) *Token {
	k := &Token{AccessToken: tok.AccessToken, TokenType: tok.TokenType, RefreshToken: tok.RefreshToken, Expiry: tok.Expiry}
	k.Scope, _ = tok.Extra("scope").(string)
	return t.keepToken(step, k, fallback)
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// tokenError describes a failed token request without what came back in
// its body (which could echo a secret).
func (t *Transport) tokenError(ctx context.Context, step Step, tokenURL string, err error) error {
	if ctx.Err() != nil {
		return &Error{Step: step, Msg: ctx.Err().Error(), Err: ctx.Err()}
	}
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		status := "an error"
		if re.Response != nil {
			status = re.Response.Status
		}
		return errorf(step, RuleTokenResponse, "%s answered %s: %s", tokenURL, status, t.obs.redact(describeOAuthError(re.ErrorCode, re.ErrorDescription)))
	}
	return &Error{Step: step, Rule: RuleTokenResponse, Msg: t.obs.redact(err.Error()), Err: err}
}
