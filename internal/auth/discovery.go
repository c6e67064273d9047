package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/mcpi-dev/mcpi/internal/transport"
)

// ResourceMetadataURLs returns where to look for the protected resource
// metadata of the MCP server at serverURL, in the order the spec gives:
// the URL named by the challenge (if any), then the well-known URI at the
// server's path, then the well-known URI at the root.
func ResourceMetadataURLs(serverURL, fromChallenge string) []string {
	var urls []string
	if fromChallenge != "" {
		urls = append(urls, fromChallenge)
	}
	u, err := url.Parse(serverURL)
	if err != nil {
		return urls
	}
	u.Fragment, u.RawFragment = "", ""
	path := strings.TrimSuffix(u.EscapedPath(), "/")
	if path != "" {
		w := *u
		w.RawPath = ""
		w.Path = "/.well-known/oauth-protected-resource" + u.Path
		w.Path = strings.TrimSuffix(w.Path, "/")
		urls = appendNew(urls, w.String())
	}
	root := *u
	root.Path, root.RawPath, root.RawQuery = "/.well-known/oauth-protected-resource", "", ""
	return appendNew(urls, root.String())
}

// ServerMetadataURLs returns the URLs of an authorization server's metadata
// in the order the spec gives: for an issuer with a path, RFC 8414 with the
// path inserted, OpenID Connect with the path inserted, OpenID Connect with
// the path appended; for one without, RFC 8414 then OpenID Connect.
func ServerMetadataURLs(issuer string) []string {
	u, err := url.Parse(issuer)
	if err != nil || u.Host == "" {
		return nil
	}
	u.RawQuery, u.Fragment, u.RawFragment = "", "", ""
	path := strings.TrimSuffix(u.Path, "/")
	at := func(p string) string {
		w := *u
		w.Path, w.RawPath = p, ""
		return w.String()
	}
	if path == "" {
		return []string{at("/.well-known/oauth-authorization-server"), at("/.well-known/openid-configuration")}
	}
	return []string{
		at("/.well-known/oauth-authorization-server" + path),
		at("/.well-known/openid-configuration" + path),
		at(path + "/.well-known/openid-configuration"),
	}
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// ResourceCovers reports whether the resource identifier res, from
// protected resource metadata, identifies the MCP server at serverURL: the
// same URL, or the same origin with a path that is a whole-segment prefix
// of the server's ("https://h" and "https://h/api" cover "https://h/api/mcp";
// "https://h/ap" does not). Scheme and host compare without case, and a
// default port is the same as none.
func ResourceCovers(res, serverURL string) bool {
	r, err1 := url.Parse(res)
	s, err2 := url.Parse(serverURL)
	if err1 != nil || err2 != nil || r.Scheme == "" || r.Host == "" || r.Fragment != "" {
		return false
	}
	if !strings.EqualFold(r.Scheme, s.Scheme) || !strings.EqualFold(hostPort(r), hostPort(s)) {
		return false
	}
	if r.RawQuery != "" && r.RawQuery != s.RawQuery {
		return false
	}
	rp := strings.TrimSuffix(r.Path, "/")
	return rp == "" || s.Path == rp || strings.HasPrefix(s.Path, rp+"/") || strings.TrimSuffix(s.Path, "/") == rp
}

func hostPort(u *url.URL) string {
	port := u.Port()
	if (port == "443" && strings.EqualFold(u.Scheme, "https")) || (port == "80" && strings.EqualFold(u.Scheme, "http")) {
		port = ""
	}
	if port == "" {
		return u.Hostname()
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// isLoopback reports whether host names this machine (the rule every hop
// of an OAuth request is held to, transport.IsLoopbackHost).
func isLoopback(host string) bool { return transport.IsLoopbackHost(host) }

// checkHTTPS refuses a URL that is neither HTTPS nor on a loopback address.
func checkHTTPS(step Step, what, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return errorf(step, RuleEndpoints, "%s %q is not an absolute URL", what, raw)
	}
	if strings.EqualFold(u.Scheme, "https") || (strings.EqualFold(u.Scheme, "http") && isLoopback(u.Hostname())) {
		return nil
	}
	return errorf(step, RuleHTTPS, "%s %s uses %s on a host that is not this machine", what, raw, u.Scheme)
}

// discovery is what the flow learned of the server and its authorization
// server.
type discovery struct {
	serverURL string
	challenge Challenge
	prmURL    string                             // "" when the server has no metadata
	prm       *oauthex.ProtectedResourceMetadata // nil likewise
	resource  string                             // what goes in the resource parameter
	issuer    string                             // the authorization server, as recorded from its metadata
	asmURL    string
	asm       *oauthex.AuthServerMeta
	dpopAlgs  []string // dpop_signing_alg_values_supported; nil when absent
	// fallback says asm holds the default endpoints of 2025-03-26, for a
	// server without metadata; status is the server's answer that started
	// the flow.
	fallback bool
	status   string
}

// fetched is the outcome of one metadata GET.
type fetched struct {
	url    string
	status string // "404 Not Found", or what went wrong
}

// getJSON GETs a metadata document. ok is false when there is none there
// (a status other than 200, or not JSON); err is set for failures that
// end the discovery (a cancelled context).
func (t *Transport) getJSON(ctx context.Context, label, u string, into any) (ok bool, status string, err error) {
	req, err := http.NewRequestWithContext(withLabel(ctx, label), http.MethodGet, u, nil)
	if err != nil {
		return false, err.Error(), nil
	}
	req.Header.Set("Accept", "application/json")
	resp, err := t.asClient.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return false, "", ctx.Err()
		}
		return false, t.obs.redact(err.Error()), nil
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if resp.StatusCode != http.StatusOK {
		return false, resp.Status, nil
	}
	if err := json.Unmarshal(body, into); err != nil {
		return false, "200 OK but not a JSON object: " + err.Error(), nil
	}
	return true, resp.Status, nil
}

// discover finds the protected resource metadata of the server and the
// metadata of its (first) authorization server, checking each as the
// spec asks.
// status is the server's answer that started the flow ("401 Unauthorized").
func (t *Transport) discover(ctx context.Context, status string, ch Challenge) (*discovery, error) {
	d := &discovery{serverURL: t.opts.ServerURL, challenge: ch}
	var tried []fetched
	for _, u := range ResourceMetadataURLs(d.serverURL, ch.ResourceMetadata) {
		if err := checkHTTPS(StepResourceMetadata, "protected resource metadata URL", u); err != nil {
			return nil, err
		}
		var prm oauthex.ProtectedResourceMetadata
		ok, status, err := t.getJSON(ctx, string(StepResourceMetadata), u, &prm)
		if err != nil {
			return nil, &Error{Step: StepResourceMetadata, Msg: err.Error(), Err: err}
		}
		if !ok {
			tried = append(tried, fetched{u, status})
			continue
		}
		d.prmURL, d.prm = u, &prm
		break
	}
	if d.prm == nil {
		// A server of 2025-03-26 has no resource metadata: its origin is
		// its authorization server.
		u, _ := url.Parse(d.serverURL)
		d.issuer = (&url.URL{Scheme: u.Scheme, Host: u.Host}).String()
		d.resource = d.serverURL
		t.obs.step("no protected resource metadata (%s); trying the server's origin %s as its authorization server, as 2025-03-26 did", describeTried(tried), d.issuer)
		if err := t.discoverServer(ctx, d); err != nil {
			var ae *Error
			if !errors.As(err, &ae) || ae.Rule != RuleServerMetadata {
				return nil, err
			}
			t.fallbackEndpoints(d, status, tried)
		}
		return d, nil
	}
	prm := d.prm
	d.resource = prm.Resource
	switch {
	case prm.Resource == "":
		d.resource = d.serverURL
		t.obs.step("warning: the protected resource metadata at %s has no resource (RFC 9728 §2 requires one); using the server's URL %s", d.prmURL, d.serverURL)
	case !ResourceCovers(prm.Resource, d.serverURL):
		return nil, errorf(StepResourceMetadata, RuleResource, "the metadata at %s is for resource %q, which is not this server (%s): refusing to authorize", d.prmURL, prm.Resource, d.serverURL)
	}
	if len(prm.AuthorizationServers) == 0 {
		return nil, errorf(StepResourceMetadata, RuleAuthServers, "the metadata at %s lists no authorization_servers", d.prmURL)
	}
	d.issuer = prm.AuthorizationServers[0]
	note := ""
	if n := len(prm.AuthorizationServers); n > 1 {
		note = fmt.Sprintf(" (the first of %d)", n)
	}
	t.obs.step("protected resource metadata from %s: resource %s, authorization server %s%s, scopes_supported %q", d.prmURL, d.resource, d.issuer, note, prm.ScopesSupported)
	if err := checkHTTPS(StepResourceMetadata, "authorization server", d.issuer); err != nil {
		return nil, err
	}
	if err := t.discoverServer(ctx, d); err != nil {
		return nil, err
	}
	return d, nil
}

// fallbackEndpoints gives d the default endpoints 2025-03-26 names for a
// server without metadata: /authorize, /token and /register at the
// origin of the server (which is its authorization server).
func (t *Transport) fallbackEndpoints(d *discovery, status string, tried []fetched) {
	at := func(p string) string { return d.issuer + p }
	d.asm = &oauthex.AuthServerMeta{Issuer: d.issuer, AuthorizationEndpoint: at("/authorize"), TokenEndpoint: at("/token"),
		RegistrationEndpoint: at("/register"), ResponseTypesSupported: []string{"code"}, CodeChallengeMethodsSupported: []string{"S256"}}
	d.fallback, d.status = true, status
	t.obs.step("the server answered %s and publishes no metadata (%s), nor does its origin: using the default endpoints of 2025-03-26 at %s: %s, %s, %s",
		status, describeTried(tried), d.issuer, d.asm.AuthorizationEndpoint, d.asm.TokenEndpoint, d.asm.RegistrationEndpoint)
}

// discoverServer fetches and checks the metadata of the authorization
// server d.issuer, and records the issuer from it.
func (t *Transport) discoverServer(ctx context.Context, d *discovery) error {
	var tried []fetched
	for _, u := range ServerMetadataURLs(d.issuer) {
		var m struct {
			oauthex.AuthServerMeta
			DPoPAlgs []string `json:"dpop_signing_alg_values_supported"`
		}
		ok, status, err := t.getJSON(ctx, string(StepServerMetadata), u, &m)
		asm := m.AuthServerMeta
		if err != nil {
			return &Error{Step: StepServerMetadata, Msg: err.Error(), Err: err}
		}
		if !ok {
			tried = append(tried, fetched{u, status})
			continue
		}
		if err := checkServerMetadata(&asm, d.issuer, u, t.grant() == GrantAuthorizationCode); err != nil {
			return err
		}
		if asm.Issuer != d.issuer {
			t.obs.step("warning: the issuer %q of %s differs from %q by a trailing slash only; accepted, and %q is the recorded issuer", asm.Issuer, u, d.issuer, asm.Issuer)
		}
		d.asmURL, d.asm, d.issuer, d.dpopAlgs = u, &asm, asm.Issuer, m.DPoPAlgs
		t.obs.step("authorization server metadata from %s: issuer %s checked; PKCE %s; registration: %s; iss parameter %s; scopes_supported %q",
			u, asm.Issuer, strings.Join(asm.CodeChallengeMethodsSupported, ","), registrationSupport(&asm), advertised(asm.AuthorizationResponseIssParameterSupported), asm.ScopesSupported)
		return nil
	}
	return errorf(StepServerMetadata, RuleServerMetadata, "no metadata for authorization server %s (%s)", d.issuer, describeTried(tried))
}

// checkServerMetadata applies the checks the spec asks of authorization
// server metadata fetched for issuer from u; code says the authorization
// code grant is to run (it needs the authorization endpoint and PKCE).
func checkServerMetadata(asm *oauthex.AuthServerMeta, issuer, u string, code bool) error {
	if asm.Issuer != issuer && strings.TrimSuffix(asm.Issuer, "/") != strings.TrimSuffix(issuer, "/") {
		return errorf(StepServerMetadata, RuleIssuer, "the metadata at %s says issuer %q, but it was fetched for issuer %q: refusing to use it", u, asm.Issuer, issuer)
	}
	if asm.TokenEndpoint == "" || (code && asm.AuthorizationEndpoint == "") {
		return errorf(StepServerMetadata, RuleEndpoints, "the metadata at %s lacks authorization_endpoint or token_endpoint", u)
	}
	if code && !slices.Contains(asm.CodeChallengeMethodsSupported, "S256") {
		what := "has no code_challenge_methods_supported, so the server does not support PKCE"
		if len(asm.CodeChallengeMethodsSupported) > 0 {
			what = fmt.Sprintf("offers PKCE methods %q but not S256", asm.CodeChallengeMethodsSupported)
		}
		return errorf(StepServerMetadata, RulePKCE, "authorization server %s %s: refusing to authorize", asm.Issuer, what)
	}
	for _, e := range []struct{ name, url string }{
		{"authorization_endpoint", asm.AuthorizationEndpoint},
		{"token_endpoint", asm.TokenEndpoint},
		{"registration_endpoint", asm.RegistrationEndpoint},
	} {
		if e.url == "" {
			continue
		}
		if err := checkHTTPS(StepServerMetadata, e.name, e.url); err != nil {
			return err
		}
	}
	return nil
}

func registrationSupport(asm *oauthex.AuthServerMeta) string {
	var s []string
	if asm.ClientIDMetadataDocumentSupported {
		s = append(s, "client ID metadata documents")
	}
	if asm.RegistrationEndpoint != "" {
		s = append(s, "dynamic registration")
	}
	if len(s) == 0 {
		return "pre-registered clients only"
	}
	return strings.Join(s, ", ")
}

func advertised(b bool) string {
	if b {
		return "advertised"
	}
	return "not advertised"
}

func describeTried(tried []fetched) string {
	if len(tried) == 0 {
		return "nothing to try"
	}
	parts := make([]string, len(tried))
	for i, f := range tried {
		parts[i] = f.url + ": " + f.status
	}
	return strings.Join(parts, "; ")
}
