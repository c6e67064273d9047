package auth

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpi-dev/mcpi/internal/browser"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// DefaultMaxAuthorizations bounds the authorizations one request may cause:
// the first, then step-ups for insufficient_scope.
const DefaultMaxAuthorizations = 3

// DefaultBrowserWait is how long an interactive flow waits for the user.
const DefaultBrowserWait = 5 * time.Minute

// expirySkew is how long before its expiry a token is refreshed.
const expirySkew = 30 * time.Second

// Options configure a Transport.
type Options struct {
	// ServerURL is the MCP endpoint the requests go to.
	ServerURL string
	// Base sends the requests; nil means transport.DefaultHTTPTransport().
	Base http.RoundTripper
	// Tap sees every exchange and step of a flow, redacted.
	Tap transport.Tap
	// Out is where an interactive flow tells the user what to do.
	Out io.Writer
	// Interactive says a person is there to authorize in a browser.
	Interactive bool
	// Headless gets the authorization URL without a browser and reads the
	// code from the authorization server's redirect (--oauth-headless).
	Headless bool
	// NoBrowser prints the authorization URL without opening a browser.
	NoBrowser bool
	// OpenBrowser opens a URL in a browser; nil means the system's way.
	OpenBrowser func(string) error
	// BrowserWait bounds the wait for the browser to come back (default
	// DefaultBrowserWait); the request's context may end it sooner.
	BrowserWait time.Duration
	// RedirectPort is the port of the loopback redirect URI; 0 chooses one.
	RedirectPort int
	// Scopes replace the scopes the spec's selection would choose (--scope).
	Scopes []string
	// ClientID and ClientSecret are pre-registered credentials.
	ClientID, ClientSecret string
	// Issuer, when set, is the one authorization server a credential that
	// works wherever it is presented (a pre-registered client secret, a
	// workload's JWT) may be sent to (--oauth-issuer). See checkIssuer.
	Issuer string
	// ClientKey, when set, authenticates the client at the token endpoint
	// with a signed assertion (private_key_jwt) instead of a secret.
	ClientKey *Key
	// Grant is how tokens are obtained: GrantAuthorizationCode (the
	// default), GrantClientCredentials, GrantJWTBearer or GrantIDJAG.
	Grant string
	// Assertion returns the workload's JWT for GrantJWTBearer. It is called
	// at each authorization, so that a token rotated on disk is read anew.
	Assertion func() (string, error)
	// IDToken returns the user's ID token for GrantIDJAG, likewise.
	IDToken func() (string, error)
	// IDP is the identity provider of GrantIDJAG.
	IDP IDP
	// DPoP is the key of DPoP proofs (RFC 9449): tokens are requested bound
	// to it and sent with a proof per request. Nil: no DPoP, unless the
	// server's challenge names the DPoP scheme only; then a key is made for
	// the run.
	DPoP *Key
	// ClientMetadataURL is the HTTPS URL of mcpi's client ID metadata
	// document, used when the authorization server supports them.
	ClientMetadataURL string
	// ClientName and ClientVersion describe mcpi in dynamic registration.
	ClientName, ClientVersion string
	// Store keeps credentials between runs; nil keeps them in memory.
	Store *Store
	// MaxAuthorizations bounds the authorizations one request may cause
	// (default DefaultMaxAuthorizations).
	MaxAuthorizations int
	// Now returns the time; nil means time.Now.
	Now func() time.Time
}

// Transport is an http.RoundTripper that authorizes requests to one MCP
// server: it sends the access token it holds and, when the server answers
// 401, or 403 with insufficient_scope, runs the flow (refresh, or a new
// authorization) and sends the request again. One flow runs at a time;
// requests that fail meanwhile wait for it and use its token.
//
// RoundTrip may be called concurrently.
type Transport struct {
	opts     Options
	origin   *url.URL // of ServerURL: the token goes there and nowhere else
	base     http.RoundTripper
	obs      *observer
	asClient *http.Client // for metadata and the authorization server: tapped

	dpopMu sync.Mutex
	dpop   *dpop // nil: no DPoP

	flowMu sync.Mutex // held while a flow runs
	// refusal is the failure of a flow that ended in the authorization
	// server's refusal: the requests that follow fail with it instead of
	// asking again (a refused grant stays refused; a workload's JWT is not
	// presented twice). Guarded by flowMu.
	refusal error

	mu     sync.Mutex
	entry  *Entry // the credentials in use
	loaded bool   // the store was looked up
	outMu  sync.Mutex
}

// NewTransport returns a Transport.
func NewTransport(opts Options) *Transport {
	if opts.MaxAuthorizations <= 0 {
		opts.MaxAuthorizations = DefaultMaxAuthorizations
	}
	if opts.BrowserWait <= 0 {
		opts.BrowserWait = DefaultBrowserWait
	}
	if opts.ClientName == "" {
		opts.ClientName = "mcpi"
	}
	base := opts.Base
	if base == nil {
		base = transport.DefaultHTTPTransport()
	}
	t := &Transport{opts: opts, base: base, obs: newObserver(opts.Tap)}
	t.origin, _ = url.Parse(opts.ServerURL)
	if opts.DPoP != nil {
		t.dpop = newDPoP(opts.DPoP, t.now)
	}
	// Every hop of a request to an authorization server or for metadata
	// is HTTPS or loopback, and none carries a body or a credential to
	// another origin; tapTransport reports each hop, redirects included.
	t.asClient = transport.NewHTTPClient(&dpopTransport{next: &tapTransport{base: base, obs: t.obs}, obs: t.obs},
		transport.EgressPolicy{SecureOnly: true, AllowCrossOriginGET: true})
	t.obs.learn(opts.ClientSecret, opts.IDP.ClientSecret)
	return t
}

// Client returns an http.Client that sends through t, with mcpi's egress
// policy (no redirect to another origin).
func (t *Transport) Client() *http.Client {
	return transport.NewHTTPClient(t, transport.EgressPolicy{Tap: t.opts.Tap})
}

// ownOrigin reports whether u is on the origin of the server t authorizes
// for: the only one its token is sent to.
func (t *Transport) ownOrigin(u *url.URL) bool {
	return t.origin != nil && t.origin.Host != "" && transport.SameOrigin(t.origin, u)
}

// Credentials returns the credentials in use, if any.
func (t *Transport) Credentials() *Entry {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.entry
}

func (t *Transport) now() time.Time {
	if t.opts.Now != nil {
		return t.opts.Now()
	}
	return time.Now()
}

func (t *Transport) say(format string, args ...any) {
	if t.opts.Out == nil {
		return
	}
	t.outMu.Lock()
	defer t.outMu.Unlock()
	fmt.Fprintf(t.opts.Out, format+"\n", args...)
}

func (t *Transport) report(e transport.Event) {
	if t.opts.Tap != nil {
		t.opts.Tap.Observe(e)
	}
}

// openBrowser opens u, which must be an absolute http or https URL
// (browser.Check), whoever the opener is.
func (t *Transport) openBrowser(u string) error {
	checked, err := browser.Check(u)
	if err != nil {
		return err
	}
	if t.opts.OpenBrowser != nil {
		return t.opts.OpenBrowser(checked)
	}
	return browser.Open(checked)
}

// credentials returns the entry in use, looking the store up the first
// time for credentials obtained for this server before.
func (t *Transport) credentials() *Entry {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.loaded {
		t.loaded = true
		if t.opts.Store != nil {
			e, err := t.opts.Store.ForServer(t.opts.ServerURL)
			if err != nil {
				t.obs.step("warning: %v", err)
			}
			if e != nil && t.usable(e) && (t.opts.ClientID == "" || e.Client == nil || e.Client.ID == t.opts.ClientID) {
				t.useLocked(e)
				t.obs.step("using the token stored for %s (authorization server %s, resource %s)", t.opts.ServerURL, e.Issuer, e.Resource)
			}
		}
	}
	return t.entry
}

func (t *Transport) useLocked(e *Entry) {
	t.entry = e
	if e.Token != nil {
		t.obs.learn(e.Token.AccessToken, e.Token.RefreshToken)
	}
	if e.Client != nil {
		t.obs.learn(e.Client.Secret)
	}
}

// use makes e the credentials in use and stores them.
func (t *Transport) use(e *Entry) {
	t.mu.Lock()
	t.useLocked(e)
	t.mu.Unlock()
	if t.opts.Store == nil {
		return
	}
	keep := *e
	if keep.Client != nil && keep.Client.Method == MethodPreRegistered {
		c := *keep.Client
		c.Secret = "" // the user's to give again; mcpi keeps only what it was issued
		keep.Client = &c
	}
	if err := t.opts.Store.Put(keep); err != nil {
		t.obs.step("warning: the token is not kept for the next run: %v", err)
	}
}

// usable reports whether e holds a token mcpi can send: a DPoP-bound
// token only with the key it is bound to.
func (t *Transport) usable(e *Entry) bool {
	if e == nil || e.Token == nil {
		return false
	}
	if !isDPoPToken(e.Token) {
		return true
	}
	dp := t.dpopState()
	return dp != nil && e.Token.DPoPJKT == dp.key.Thumbprint()
}

// dpopState returns the DPoP state, nil when DPoP is off.
func (t *Transport) dpopState() *dpop {
	t.dpopMu.Lock()
	defer t.dpopMu.Unlock()
	return t.dpop
}

// attempt is what one request has tried so far.
type attempt struct {
	authorizations int
	refreshed      bool
	reloaded       bool
	nonceRetried   bool
}

// RoundTrip sends req with the access token and, when the server asks
// for authorization, runs the flow and sends req again. A request to
// another origin than the server's (a redirect the caller's policy
// follows) goes out untouched: no token, no flow. net/http calls RoundTrip
// again for every hop of a redirect, so this check, not net/http's own
// stripping of Authorization, is what keeps the token on its origin.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !t.ownOrigin(req.URL) {
		return t.base.RoundTrip(req)
	}
	getBody, err := rewindable(req)
	if err != nil {
		return nil, err
	}
	ctx := req.Context()
	var st attempt
	for {
		e := t.credentials()
		if e != nil && e.Token != nil && e.Token.RefreshToken != "" && e.TokenEndpoint != "" && !st.refreshed && e.Token.Expired(t.now(), expirySkew) {
			st.refreshed = true
			t.renew(ctx, e)
			e = t.credentials()
		}
		r := req.Clone(ctx)
		if getBody != nil {
			if r.Body, err = getBody(); err != nil {
				return nil, err
			}
		}
		var sent *Token
		if e != nil && e.Token != nil {
			sent = e.Token
			if err := t.present(r, sent); err != nil {
				return nil, err
			}
		}
		resp, err := t.base.RoundTrip(r)
		if err != nil {
			return nil, err
		}
		resp.Request = req // the caller never sees the token
		if dp := t.dpopState(); dp != nil {
			dp.noteNonce(r.URL, resp.Header)
		}
		if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden {
			return resp, nil
		}
		ch := ParseChallenge(resp.Header)
		if ch.Error == "use_dpop_nonce" && isDPoPToken(sent) {
			// RFC 9449 §9: not a refusal of the token; the proof lacked the
			// nonce the server wants, which came with the answer.
			t.refused(req, resp, ch, sent)
			if st.nonceRetried {
				return nil, errorf(StepRetry, RuleDPoPNonce, "the server asks for a DPoP nonce again, after mcpi sent a proof with the one it gave: giving up")
			}
			st.nonceRetried = true
			t.obs.step("sending the request again with a DPoP proof that carries the server's nonce")
			continue
		}
		switch {
		case len(ch.Raw) > 0 && !ch.Bearer && !ch.DPoP && ch.ParseErr == nil:
			return resp, nil // another scheme (Basic, ...): not OAuth's to answer
		case resp.StatusCode == http.StatusForbidden && !scopeChallenge(ch):
			return resp, nil // a refusal that more authorization cannot mend
		}
		t.refused(req, resp, ch, sent)
		if err := t.recover(ctx, resp, ch, sent, &st); err != nil {
			return nil, err
		}
	}
}

// present puts the token on r: a Bearer token as it is, a DPoP-bound one
// with the DPoP scheme and a proof for this request (RFC 9449 §7.1).
func (t *Transport) present(r *http.Request, tok *Token) error {
	if !isDPoPToken(tok) {
		r.Header.Set("Authorization", "Bearer "+tok.AccessToken)
		return nil
	}
	dp := t.dpopState()
	if dp == nil {
		return errorf(StepRetry, "", "the token is DPoP-bound, and mcpi has no DPoP key for it")
	}
	p, err := dp.proof(r.Method, r.URL, tok.AccessToken)
	if err != nil {
		return &Error{Step: StepRetry, Msg: "signing the DPoP proof: " + err.Error(), Err: err}
	}
	r.Header.Set("Authorization", "DPoP "+tok.AccessToken)
	r.Header.Set("DPoP", p)
	return nil
}

// scopeChallenge reports whether a 403's challenge asks for more scope:
// error="insufficient_scope" (RFC 6750 §3.1), or, as the official Go
// SDK's RequireBearerToken answers, a Bearer challenge that names a scope
// and no error.
func scopeChallenge(ch Challenge) bool {
	return ch.Error == "insufficient_scope" || (ch.Error == "" && len(ch.Scopes) > 0)
}

// rewindable makes sure req's body can be sent again and closes the
// original, as a RoundTripper must.
func rewindable(req *http.Request) (func() (io.ReadCloser, error), error) {
	if req.Body == nil || req.Body == http.NoBody {
		return nil, nil
	}
	if req.GetBody != nil {
		req.Body.Close()
		return req.GetBody, nil
	}
	b, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	return func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }, nil
}

// refused reports the answer that starts a flow (the transport never sees
// it) and drains it.
func (t *Transport) refused(req *http.Request, resp *http.Response, ch Challenge, sent *Token) {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	red := t.obs.redactor()
	t.report(transport.Event{Kind: transport.KindHTTP, Dir: transport.Incoming, Data: redactBody(red, body),
		Text: "oauth: the server refused the request: " + resp.Status,
		HTTP: &transport.HTTPMeta{Method: req.Method, URL: red.URL(req.URL.String()), StatusCode: resp.StatusCode,
			RequestHeader: red.Header(req.Header), ResponseHeader: red.Header(resp.Header)}})
	what := "the server asks for authorization"
	switch {
	case resp.StatusCode == http.StatusForbidden && ch.Error == "":
		what = `the token's scope is not enough for this request (the challenge names a scope but lacks error="insufficient_scope", which RFC 6750 §3.1 asks for; taken as one)`
	case resp.StatusCode == http.StatusForbidden:
		what = "the token's scope is not enough for this request"
	case sent != nil:
		what = "the server refused the token"
	}
	t.obs.step("%s (%s): %s", what, resp.Status, ch)
	if ch.ParseErr != nil {
		t.obs.step("warning: %v", ch.ParseErr)
	}
}

// recover makes new credentials after the server refused sent: another
// request's flow, a token stored meanwhile, a refresh, or a new
// authorization (a step-up for insufficient_scope), within the limits of st.
func (t *Transport) recover(ctx context.Context, resp *http.Response, ch Challenge, sent *Token, st *attempt) error {
	status := resp.StatusCode
	t.flowMu.Lock()
	defer t.flowMu.Unlock()
	if cur := t.credentials(); cur != nil && cur.Token != nil && cur.Token != sent {
		return nil // a flow ran while this request waited
	}
	if t.refusal != nil {
		t.obs.step("not asking again: the authorization of this run failed")
		return t.refusal
	}
	if status == http.StatusUnauthorized && st.authorizations > 0 {
		return errorf(StepRetry, RuleAccepted, "the server answers 401 (%s) to the token just obtained: it does not accept it", ch)
	}
	if status == http.StatusForbidden && st.authorizations >= t.opts.MaxAuthorizations {
		return errorf(StepStepUp, RuleStepUpLimit, "the server still answers 403 insufficient_scope (%s) after %d authorizations: giving up", ch, st.authorizations)
	}
	d, err := t.discover(ctx, resp.Status, ch)
	if err != nil {
		return err
	}
	t.dpopFor(ch, d)
	stored := t.storedFor(d)
	if status == http.StatusUnauthorized && t.usable(stored) && stored.Client != nil {
		switch {
		case !st.reloaded && (sent == nil || stored.Token.AccessToken != sent.AccessToken):
			st.reloaded = true
			t.obs.step("using the token stored for authorization server %s and resource %s", stored.Issuer, stored.Resource)
			t.use(stored)
			return nil
		case !st.refreshed && stored.Token.RefreshToken != "" && stored.TokenEndpoint == d.asm.TokenEndpoint:
			st.refreshed = true
			if t.renew(ctx, stored) {
				return nil
			}
		}
	}
	st.authorizations++
	var previous []string
	if stored != nil {
		previous = stored.Scopes
	}
	var resourceScopes []string
	if d.prm != nil {
		resourceScopes = d.prm.ScopesSupported
	}
	scopes, from := ScopeChoice{Override: t.opts.Scopes, Challenged: ch.Scopes, ResourceSupported: resourceScopes,
		Previous: previous, ServerSupported: d.asm.ScopesSupported}.Scopes()
	what := "authorization"
	if status == http.StatusForbidden {
		what = "step-up authorization"
	}
	t.obs.step("%s %d of at most %d: scope %q (%s)", what, st.authorizations, t.opts.MaxAuthorizations, strings.Join(scopes, " "), from)
	e, err := t.obtain(ctx, d, stored, scopes)
	if err != nil {
		if ctx.Err() == nil {
			t.refusal = err
		}
		return err
	}
	t.use(e)
	t.obs.step("authorized; sending the request again")
	return nil
}

// dpopFor turns DPoP on for a server whose challenge names the DPoP
// scheme only, with a key made for this run, and says how the
// authorization server stands with the key in use.
func (t *Transport) dpopFor(ch Challenge, d *discovery) {
	t.dpopMu.Lock()
	if t.dpop == nil && ch.DPoP && !ch.Bearer {
		if k, err := GenerateKey(); err == nil {
			t.dpop = newDPoP(k, t.now)
			t.obs.step("the server's challenge names the DPoP scheme only: requesting a DPoP-bound token, with a key made for this run (%s, thumbprint %s)", k.Alg(), k.Thumbprint())
		}
	}
	dp := t.dpop
	t.dpopMu.Unlock()
	switch {
	case dp == nil:
	case d.dpopAlgs == nil:
		t.obs.step("DPoP: authorization server %s does not advertise DPoP (no dpop_signing_alg_values_supported); sending proofs anyway", d.issuer)
	case !slices.Contains(d.dpopAlgs, dp.key.Alg()):
		t.obs.step("warning: authorization server %s lists dpop_signing_alg_values_supported %q, without %s, the algorithm of mcpi's DPoP key", d.issuer, d.dpopAlgs, dp.key.Alg())
	default:
		t.obs.step("DPoP: proofs signed with %s (thumbprint %s), which authorization server %s supports", dp.key.Alg(), dp.key.Thumbprint(), d.issuer)
	}
}

// storedFor returns the credentials kept for d's authorization server and
// resource: those in use, or the store's.
func (t *Transport) storedFor(d *discovery) *Entry {
	if e := t.credentials(); e != nil && e.Issuer == d.issuer && e.Resource == d.resource {
		return e
	}
	if t.opts.Store == nil {
		return nil
	}
	e, err := t.opts.Store.Get(d.issuer, d.resource)
	if err != nil {
		t.obs.step("warning: %v", err)
	}
	if e != nil && t.opts.ClientID != "" && e.Client != nil && e.Client.ID != t.opts.ClientID {
		return nil // the user named another client
	}
	return e
}

// renew refreshes e's token and uses the result; it reports whether it
// worked (a failure is reported, and the caller authorizes anew).
func (t *Transport) renew(ctx context.Context, e *Entry) bool {
	n, err := t.refresh(ctx, e)
	if err != nil {
		t.obs.step("the refresh failed: %v", err)
		return false
	}
	t.use(n)
	return true
}
