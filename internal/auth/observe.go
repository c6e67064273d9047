package auth

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/mcpi-dev/mcpi/internal/record"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// secretFields are the JSON members, form fields and query parameters of
// OAuth messages whose values are secrets.
var secretFields = []string{
	"access_token", "refresh_token", "id_token", "code", "code_verifier",
	"client_secret", "registration_access_token", "client_assertion", "assertion",
	"subject_token", "actor_token",
}

// maxBody bounds what is read of an authorization server's answer.
const maxBody = 1 << 20

// observer reports the flow: each HTTP exchange to the tap, with every
// secret it has learned of redacted, and each step as a lifecycle event.
// It learns secrets from what it sees (token responses, registrations,
// authorization responses, form bodies), so that a value is redacted
// wherever it turns up later: in a URL, a header, a body or an error.
type observer struct {
	tap transport.Tap

	mu      sync.Mutex
	secrets []string
	red     *record.Redactor
}

func newObserver(tap transport.Tap) *observer {
	return &observer{tap: tap, red: record.NewRedactor(nil)}
}

// learn adds secret values.
func (o *observer) learn(values ...string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	added := false
	for _, v := range values {
		if len(v) >= record.MinSecretLen && !slices.Contains(o.secrets, v) {
			o.secrets = append(o.secrets, v)
			added = true
		}
	}
	if added {
		o.red = record.NewRedactor(o.secrets)
	}
}

func (o *observer) redactor() *record.Redactor {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.red
}

// redact removes every known secret, and the credential parameters of
// URLs, from free text.
func (o *observer) redact(s string) string { return o.redactor().Text(s) }

// learnForm learns the secret fields of a form or query.
func (o *observer) learnForm(v url.Values) {
	for _, k := range secretFields {
		o.learn(v[k]...)
	}
}

// learnBody learns the secret members of a JSON object or the secret fields
// of a form-encoded body.
func (o *observer) learnBody(b []byte) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return
	}
	if b[0] == '{' {
		var m map[string]any
		if json.Unmarshal(b, &m) == nil {
			for _, k := range secretFields {
				if s, ok := m[k].(string); ok {
					o.learn(s)
				}
			}
		}
		return
	}
	if v, err := url.ParseQuery(string(b)); err == nil {
		o.learnForm(v)
	}
}

// learnURL learns the secret parameters of a URL's query.
func (o *observer) learnURL(raw string) {
	if u, err := url.Parse(raw); err == nil {
		o.learnForm(u.Query())
	}
}

// step reports a step of the flow as a lifecycle event ("oauth: ...").
func (o *observer) step(format string, args ...any) {
	if o.tap == nil {
		return
	}
	o.tap.Observe(transport.Event{Kind: transport.KindLifecycle, Text: o.redact("oauth: " + fmt.Sprintf(format, args...))})
}

// exchange reports one HTTP exchange of the flow: the request body, if any,
// as an outgoing event, then the answer (or the failure) as an incoming
// one, all redacted.
func (o *observer) exchange(label string, req *http.Request, reqBody []byte, resp *http.Response, respBody []byte, err error) {
	if o.tap == nil {
		return
	}
	red := o.redactor()
	meta := &transport.HTTPMeta{Method: req.Method, URL: red.URL(req.URL.String()), RequestHeader: red.Header(req.Header)}
	if len(reqBody) > 0 {
		o.tap.Observe(transport.Event{Kind: transport.KindHTTP, Dir: transport.Outgoing, Data: redactBody(red, reqBody),
			Text: "oauth " + label + ": request", HTTP: meta})
	}
	in := *meta
	ev := transport.Event{Kind: transport.KindHTTP, Dir: transport.Incoming, HTTP: &in}
	ev.Text = "oauth " + label
	if resp != nil {
		in.StatusCode = resp.StatusCode
		in.ResponseHeader = red.Header(resp.Header)
		ev.Text += ": " + resp.Status
		ev.Data = redactBody(red, respBody)
	}
	if err != nil {
		ev.Err = red.Text(err.Error())
	}
	o.tap.Observe(ev)
}

func redactBody(red *record.Redactor, b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	if json.Valid(b) {
		out, _ := red.JSON(b)
		return out
	}
	return []byte(red.String(string(b)))
}

type labelKey struct{}

// withLabel names the exchanges made with ctx in the tap ("token request").
func withLabel(ctx context.Context, label string) context.Context {
	return context.WithValue(ctx, labelKey{}, label)
}

type formExtraKey struct{}

// withFormExtra adds fields to the form bodies of the POSTs made with ctx:
// golang.org/x/oauth2 sends a refresh request with no parameters of the
// caller's, and RFC 8707 wants the resource in every token request.
func withFormExtra(ctx context.Context, v url.Values) context.Context {
	return context.WithValue(ctx, formExtraKey{}, v)
}

// tapTransport is the RoundTripper of every request the flow makes to an
// authorization server or for metadata: it learns the secrets in each
// exchange, then reports it.
type tapTransport struct {
	base http.RoundTripper
	obs  *observer
}

func (t *tapTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	label, _ := req.Context().Value(labelKey{}).(string)
	if label == "" {
		label = "request"
	}
	var reqBody []byte
	if req.Body != nil && req.GetBody != nil {
		if b, err := req.GetBody(); err == nil {
			reqBody, _ = io.ReadAll(b)
			b.Close()
		}
	}
	if extra, ok := req.Context().Value(formExtraKey{}).(url.Values); ok && req.Method == http.MethodPost &&
		strings.HasPrefix(req.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		form, err := url.ParseQuery(string(reqBody))
		if err == nil {
			for k, vs := range extra {
				if !form.Has(k) {
					form[k] = vs
				}
			}
			reqBody = []byte(form.Encode())
			req = req.Clone(req.Context())
			req.Body = io.NopCloser(bytes.NewReader(reqBody))
			req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(reqBody)), nil }
			req.ContentLength = int64(len(reqBody))
		}
	}
	if len(reqBody) > 0 {
		t.obs.learnBody(reqBody) // a JSON registration, or a form
	}
	if u, p, ok := req.BasicAuth(); ok {
		t.obs.learn(u+":"+p, p)
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		t.obs.exchange(label, req, reqBody, nil, nil, err)
		return nil, err
	}
	body, rerr := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	t.obs.learnBody(body)
	if loc := resp.Header.Get("Location"); loc != "" {
		t.obs.learnURL(loc)
	}
	t.obs.exchange(label, req, reqBody, resp, body, rerr)
	return resp, nil
}
