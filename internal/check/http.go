package check

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/mcpi-dev/mcpi/internal/bounds"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

const srcHTTP = "MCP 2025-11-25 basic/transports § Streamable HTTP"

// HTTPTarget is what the HTTP checks need to reach the server themselves.
type HTTPTarget struct {
	URL string
	// Header holds the user's headers (-H, a bearer token), sent with each
	// probe.
	Header http.Header
}

// httpChecks probes the Streamable HTTP endpoint directly.
func (r *run) httpChecks() {
	t := r.opts.HTTP
	if t == nil || t.URL == "" {
		return
	}
	p := &httpProbe{r: r, t: t, modern: mcp.IsModern(r.rev),
		client: transport.NewHTTPClient(nil, transport.EgressPolicy{UserHeaders: headerNames(t.Header)})}
	first := p.firstRequest()
	// The same first request, as a page of another site would send it.
	base, body, err := p.post(nil, first)
	if err != nil || base.StatusCode != http.StatusOK {
		return // the probes cannot reach it as the session did (authorization?): nothing to compare
	}
	r.sessionEnd(p.client, t, base, p.post)
	r.check(ruleHttpOrigin, ruleHttpContentType)
	if ct, _, _ := mime.ParseMediaType(base.Header.Get("Content-Type")); ct != "application/json" && ct != "text/event-stream" {
		r.report(ruleHttpContentType, first["method"].(string), nil, "the answer's Content-Type is %q", base.Header.Get("Content-Type"))
	}
	r.priming(base, body, first["method"].(string))
	p.originChecks(first)
	if p.modern {
		p.headerValidation(first)
		r.nameHeader(t.URL, p.post)
		r.paramHeaders(t.URL, p.post)
		r.missingCapabilityStatus(t.URL, p.post)
	} else {
		p.unknownSession(base)
	}
}

// httpProbe sends the raw requests of the HTTP checks to one endpoint.
type httpProbe struct {
	r      *run
	t      *HTTPTarget
	client *http.Client
	modern bool
}

// firstRequest is the request a client starts with: server/discover, or
// initialize.
func (p *httpProbe) firstRequest() map[string]any {
	if p.modern {
		return map[string]any{"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": map[string]any{"_meta": map[string]any{
			mcp.MetaProtocolVersion: p.r.rev, mcp.MetaClientCapabilities: map[string]any{}, mcp.MetaClientInfo: map[string]any{"name": "mcpi-check", "version": "1"}}}}
	}
	return map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
		"protocolVersion": p.r.rev, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "mcpi-check", "version": "1"}}}
}

// post sends body as the session would, with the headers of extra set
// over the usual ones (a nil value removes one; Host sets the host).
func (p *httpProbe) post(extra http.Header, body any) (*http.Response, []byte, error) {
	r, t := p.r, p.t
	b, _ := json.Marshal(body)
	ctx, cancel := context.WithTimeout(r.ctx, r.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.URL, bytes.NewReader(b))
	if err != nil {
		return nil, nil, err
	}
	for k, v := range t.Header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", r.rev)
	if p.modern {
		setStandardHeaders(req.Header, b)
	}
	for k, v := range extra {
		switch {
		case k == "Host":
			req.Host = v[0]
		case v == nil:
			req.Header.Del(k)
		default:
			req.Header[k] = v
		}
	}
	req.Header.Set("User-Agent", "mcpi-check")
	resp, err := p.client.Do(req)
	if err != nil {
		if ctx.Err() != nil && r.ctx.Err() == nil {
			// Held open with no status: the probe learnt nothing.
			method, _ := mcp.MemberString(b, "method")
			r.noAnswerFor(&noAnswerError{method: method, after: r.opts.Timeout, err: ctx.Err()}, "POST "+t.URL+" ("+method+")", "the HTTP rule it probed")
		}
		return nil, nil, err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return resp, data, nil
}

// endSession closes again a session a probe opened.
func (p *httpProbe) endSession(resp *http.Response) {
	id := resp.Header.Get("Mcp-Session-Id")
	if id == "" {
		return
	}
	ctx, cancel := context.WithTimeout(p.r.ctx, p.r.opts.Timeout)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodDelete, p.t.URL, nil)
	for k, v := range p.t.Header {
		req.Header[k] = v
	}
	req.Header.Set("Mcp-Session-Id", id)
	if resp, err := p.client.Do(req); err == nil {
		resp.Body.Close()
	}
}

// originChecks sends the first request with a foreign Host and Origin
// (DNS rebinding), then with a foreign Origin only.
func (p *httpProbe) originChecks(first map[string]any) {
	r, url := p.r, p.t.URL
	r.check(ruleHttpDnsRebinding)
	const evil = "dns-rebinding.mcpi.invalid"
	resp, _, err := p.post(http.Header{"Origin": {"http://" + evil}, "Host": {evil}}, first)
	if err == nil {
		p.endSession(resp)
		if resp.StatusCode < 400 {
			r.report(ruleHttpDnsRebinding, "POST "+url, map[string]any{"Host": evil, "Origin": "http://" + evil, "status": resp.StatusCode},
				"a request with Host %s and Origin http://%s was answered %d: a web page whose name the attacker points at this machine can drive the server", evil, evil, resp.StatusCode)
		}
	}
	resp, _, err = p.post(http.Header{"Origin": {"http://" + evil}}, first)
	if err == nil {
		p.endSession(resp)
		if resp.StatusCode != http.StatusForbidden {
			r.report(ruleHttpOrigin, "POST "+url, map[string]any{"Origin": "http://" + evil, "status": resp.StatusCode},
				"a request with Origin http://%s was answered %d, not 403 (browsers still ask before a cross-site JSON POST, but the spec asks the server to refuse it)", evil, resp.StatusCode)
		}
	}
}

// headerValidation sends the first request with an Mcp-Method header
// that does not match it, and with none.
func (p *httpProbe) headerValidation(first map[string]any) {
	r, url := p.r, p.t.URL
	r.check(ruleHttpHeaderValidation)
	for _, probe := range []struct {
		what   string
		header http.Header
	}{
		{"Mcp-Method: tools/list on a server/discover request", http.Header{"Mcp-Method": {"tools/list"}}},
		{"no Mcp-Method header", http.Header{"Mcp-Method": nil}},
	} {
		resp, body, err := p.post(probe.header, first)
		if err != nil {
			continue
		}
		p.endSession(resp)
		code, _ := errorCode(resp, body)
		if resp.StatusCode != http.StatusBadRequest || code != -32020 {
			r.report(ruleHttpHeaderValidation, "POST "+url, map[string]any{"request": probe.what, "status": resp.StatusCode, "code": code},
				"a request with %s was answered %s; 400 with -32020 (HeaderMismatch) was required", probe.what, answerWords(resp, body))
		}
	}
}

// unknownSession sends a ping with a session id the server never gave.
func (p *httpProbe) unknownSession(base *http.Response) {
	r := p.r
	r.check(ruleHttpUnknownSession)
	ping := map[string]any{"jsonrpc": "2.0", "id": 2, "method": "ping"}
	resp, _, err := p.post(http.Header{"Mcp-Session-Id": {"mcpi-check-no-such-session"}}, ping)
	if err == nil && resp.StatusCode != http.StatusNotFound && base.Header.Get("Mcp-Session-Id") != "" {
		r.report(ruleHttpUnknownSession, "POST "+p.t.URL, map[string]any{"Mcp-Session-Id": "mcpi-check-no-such-session", "status": resp.StatusCode},
			"a request with an unknown session id was answered %d, not 404", resp.StatusCode)
	}
}

// primingRevision is the first revision whose SSE streams are primed;
// modern streams are not resumable, and not primed.
const primingRevision = "2025-11-25"

// priming checks that an SSE stream answering a POST begins with a
// priming event: an id and empty data, the Last-Event-ID a client resumes
// it with.
func (r *run) priming(resp *http.Response, body []byte, method string) {
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if ct != "text/event-stream" || mcp.IsModern(r.rev) || r.rev < primingRevision {
		return
	}
	r.check(ruleHttpSSEPriming)
	id, data, ok := firstEvent(body)
	switch {
	case !ok:
		r.report(ruleHttpSSEPriming, "POST "+r.opts.HTTP.URL+" ("+method+")", nil, "the SSE stream that answered %s has no event", method)
	case id == "" || strings.TrimSpace(data) != "":
		r.report(ruleHttpSSEPriming, "POST "+r.opts.HTTP.URL+" ("+method+")", map[string]string{"id": id, "data": bounds.Clip(data)},
			"the SSE stream that answered %s does not begin with a priming event (an event id and empty data): a client whose stream breaks cannot resume it with Last-Event-ID", method)
	}
}

// firstEvent returns the id and data of the first event of an SSE body.
func firstEvent(body []byte) (id, data string, ok bool) {
	var lines []string
	for _, line := range strings.Split(strings.ReplaceAll(string(body), "\r\n", "\n"), "\n") {
		if line == "" {
			if ok {
				return id, strings.Join(lines, "\n"), true
			}
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "id":
			id, ok = value, true
		case "data":
			lines, ok = append(lines, value), true
		case "event", "retry":
			ok = true
		}
	}
	return id, strings.Join(lines, "\n"), ok
}

func headerNames(h http.Header) []string {
	var names []string
	for k := range h {
		names = append(names, k)
	}
	return names
}

// errorCode reads the JSON-RPC error code of an answer, JSON or the first
// event of an SSE stream (0 when there is none).
func errorCode(resp *http.Response, body []byte) (int, bool) {
	if ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); ct == "text/event-stream" {
		for _, line := range bytes.Split(body, []byte("\n")) {
			if d, ok := bytes.CutPrefix(line, []byte("data:")); ok {
				body = bytes.TrimSpace(d)
				break
			}
		}
	}
	var m struct {
		Error *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &m) != nil || m.Error == nil {
		return 0, false
	}
	return m.Error.Code, true
}

// sessionEnd ends the session a probe opened with DELETE, as a client
// does when it is done, and checks that it is gone: a request in it is
// answered 404. A server may refuse DELETE with 405 instead.
func (r *run) sessionEnd(client *http.Client, t *HTTPTarget, opened *http.Response, post func(http.Header, any) (*http.Response, []byte, error)) {
	id := opened.Header.Get("Mcp-Session-Id")
	if id == "" {
		return
	}
	r.check(ruleHttpSessionEnd)
	ctx, cancel := context.WithTimeout(r.ctx, r.opts.Timeout)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodDelete, t.URL, nil)
	for k, v := range t.Header {
		req.Header[k] = v
	}
	req.Header.Set("Mcp-Session-Id", id)
	req.Header.Set("MCP-Protocol-Version", r.rev)
	resp, err := client.Do(req)
	if err != nil {
		return
	}
	resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusMethodNotAllowed:
		return // the server does not let clients end sessions: allowed
	case resp.StatusCode >= 300:
		r.report(ruleHttpSessionEnd, "DELETE "+t.URL, map[string]any{"status": resp.StatusCode},
			"DELETE of the session it had just opened was answered %d (2xx ends it, 405 says the server does not allow it)", resp.StatusCode)
		return
	}
	after, _, err := post(http.Header{"Mcp-Session-Id": {id}}, map[string]any{"jsonrpc": "2.0", "id": 3, "method": "ping"})
	switch {
	case err != nil || after.StatusCode == http.StatusNotFound:
	case after.StatusCode < 300:
		r.report(ruleHttpSessionEnd, "POST "+t.URL, map[string]any{"status": after.StatusCode},
			"a request in a session ended by DELETE was answered %d: the session lives on", after.StatusCode)
	default:
		r.report(ruleHttpSessionEnd, "POST "+t.URL, map[string]any{"status": after.StatusCode},
			"a request in a session ended by DELETE was answered %d, not 404 (404 is what tells a client the session is gone)", after.StatusCode)
	}
}
