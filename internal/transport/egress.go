package transport

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// EgressPolicy is the one rule every HTTP request mcpi makes follows when a
// server redirects it. NewHTTPClient is the only place an http.Client is
// made (TestOneHTTPClientConstructor keeps it so).
//
// The rule: credentials never cross an origin. A redirect to the same
// origin (scheme, host and port) keeps every header; a redirect to another
// origin is refused unless AllowCrossOrigin says otherwise, and then it
// keeps only the headers that describe the message (Accept, Content-Type,
// the MCP method and protocol headers...): Authorization, cookies,
// Mcp-Session-Id, Referer and every header the user gave (-H) are dropped.
// A redirect from HTTPS to plain HTTP on another host is always refused.
// Every redirect, followed or refused, is a tap event.
type EgressPolicy struct {
	// AllowCrossOrigin follows a redirect to another origin, without
	// credentials; otherwise such a redirect is an error naming both URLs.
	AllowCrossOrigin bool
	// AllowCrossOriginGET follows, without credentials, a redirect to
	// another origin that carries no body (OAuth metadata): a token
	// request's form, which holds codes and secrets, never follows one.
	AllowCrossOriginGET bool
	// SecureOnly refuses a hop to a URL that is neither HTTPS nor on a
	// loopback host (OAuth discovery and token requests).
	SecureOnly bool
	// NoFollow follows no redirect: the 3xx answer is returned as it is
	// (the headless OAuth flow reads its Location by hand).
	NoFollow bool
	// UserHeaders names the headers the user added (-H): they never cross
	// an origin, whatever their name.
	UserHeaders []string
	// MaxRedirects bounds the hops of one request (default 10).
	MaxRedirects int
	// Tap sees each redirect as a KindHTTP event.
	Tap Tap
	// Refused is added to the error of a refused cross-origin redirect, to
	// say how to allow it (the CLI names its flag).
	Refused string
}

// crossOriginHeaders are the headers a redirect to another origin keeps:
// they describe the message, and none of them is a credential.
var crossOriginHeaders = map[string]bool{
	"Accept":               true,
	"Accept-Language":      true,
	"Content-Type":         true,
	"Content-Length":       true,
	"User-Agent":           true,
	"Last-Event-Id":        true,
	"Mcp-Protocol-Version": true,
	"Mcp-Method":           true,
	"Mcp-Name":             true,
}

// RedirectError is a redirect the policy refused.
type RedirectError struct {
	From, To string
	Status   string
	Reason   string
}

func (e *RedirectError) Error() string {
	return fmt.Sprintf("refused the redirect (%s) from %s to %s: %s", e.Status, e.From, e.To, e.Reason)
}

// NewHTTPClient returns the client of every HTTP request mcpi makes: base
// sends them (nil means DefaultHTTPTransport), p decides what a redirect
// may do. The client has no overall timeout: streams live long.
func NewHTTPClient(base http.RoundTripper, p EgressPolicy) *http.Client {
	if base == nil {
		base = DefaultHTTPTransport()
	}
	if p.MaxRedirects <= 0 {
		p.MaxRedirects = 10
	}
	return &http.Client{Transport: base, CheckRedirect: p.checkRedirect}
}

func (p EgressPolicy) checkRedirect(req *http.Request, via []*http.Request) error {
	if p.NoFollow {
		return http.ErrUseLastResponse
	}
	prev := via[len(via)-1]
	first := via[0]
	from, to := redactedURL(prev.URL), redactedURL(req.URL)
	status := "3xx"
	var respHeader http.Header
	code := 0
	if req.Response != nil {
		status, code, respHeader = req.Response.Status, req.Response.StatusCode, req.Response.Header.Clone()
	}
	meta := &HTTPMeta{Method: prev.Method, URL: prev.URL.String(), StatusCode: code, ResponseHeader: respHeader}
	meta.Exchange, _ = req.Context().Value(exchangeKey{}).(uint64)
	refuse := func(reason string) error {
		e := &RedirectError{From: from, To: to, Status: status, Reason: reason}
		tapper{p.Tap}.emit(Event{Kind: KindHTTP, Dir: Incoming, HTTP: meta, Text: status + ": redirect to " + to + " refused", Err: reason})
		return e
	}
	if len(via) > p.MaxRedirects {
		return refuse(fmt.Sprintf("more than %d redirects", p.MaxRedirects))
	}
	if p.SecureOnly && !SecureURL(req.URL) {
		return refuse("it is neither HTTPS nor on this machine (loopback), and OAuth requests go to such URLs only")
	}
	note := "same origin"
	if !SameOrigin(first.URL, req.URL) {
		if strings.EqualFold(first.URL.Scheme, "https") && !strings.EqualFold(req.URL.Scheme, "https") {
			return refuse("it goes from HTTPS to plain HTTP on another origin")
		}
		bodyless := req.Body == nil || req.Body == http.NoBody
		if !p.AllowCrossOrigin && !(p.AllowCrossOriginGET && bodyless) {
			reason := "another origin; mcpi sends requests and credentials to the server's own origin only"
			if p.Refused != "" {
				reason += " (" + p.Refused + ")"
			}
			return refuse(reason)
		}
		dropCredentials(req.Header, p.UserHeaders)
		note = "another origin: followed without credentials"
	}
	tapper{p.Tap}.emit(Event{Kind: KindHTTP, Dir: Incoming, HTTP: meta, Text: status + ": redirect to " + to + " (" + note + ")"})
	return nil
}

// dropCredentials keeps only the headers a request to another origin may
// carry.
func dropCredentials(h http.Header, user []string) {
	for k := range h {
		if !crossOriginHeaders[http.CanonicalHeaderKey(k)] && !strings.HasPrefix(http.CanonicalHeaderKey(k), HeaderParamPrefix) {
			delete(h, k)
		}
	}
	for _, k := range user {
		for hk := range h {
			if strings.EqualFold(hk, k) {
				delete(h, hk)
			}
		}
	}
}

// SameOrigin reports whether a and b have the same scheme, host and port
// (the port a scheme implies counts as given).
func SameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && portOf(a) == portOf(b)
}

func portOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return "443"
	case "http":
		return "80"
	}
	return ""
}

// IsLoopbackHost reports whether host names this machine: localhost, a
// name under .localhost, or a loopback address.
func IsLoopbackHost(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// SecureURL reports whether u is HTTPS, or plain HTTP to this machine.
func SecureURL(u *url.URL) bool {
	return strings.EqualFold(u.Scheme, "https") || (strings.EqualFold(u.Scheme, "http") && IsLoopbackHost(u.Hostname()))
}

func redactedURL(u *url.URL) string {
	c := *u
	c.RawQuery, c.Fragment = "", ""
	s := c.Redacted()
	if u.RawQuery != "" {
		s += "?…"
	}
	return s
}
