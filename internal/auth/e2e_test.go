package auth_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpi-dev/mcpi/internal/auth"
	"github.com/mcpi-dev/mcpi/internal/auth/authtest"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// events collects what a Transport reports.
type events struct {
	mu  sync.Mutex
	all []transport.Event
}

func (e *events) Observe(ev transport.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.all = append(e.all, ev)
}

// text renders every event, headers and bodies included.
func (e *events) text() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var b strings.Builder
	for _, ev := range e.all {
		fmt.Fprintf(&b, "%s %s %s %s\n", ev.Kind, ev.Text, ev.Err, ev.Data)
		if ev.HTTP != nil {
			fmt.Fprintf(&b, "  %s %s %d %v %v\n", ev.HTTP.Method, ev.HTTP.URL, ev.HTTP.StatusCode, ev.HTTP.RequestHeader, ev.HTTP.ResponseHeader)
		}
	}
	return b.String()
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// connect opens an MCP session with the official SDK's client over an
// http.Client of tr: the SDK is the MCP client, mcpi's Transport does the
// authorization.
func connect(t *testing.T, s *authtest.Server, tr *auth.Transport) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "auth-test", Version: "1"}, nil)
	cs, err := c.Connect(ctxT(t), &mcp.StreamableClientTransport{Endpoint: s.URL, HTTPClient: tr.Client()}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func call(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) string {
	t.Helper()
	res, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", tool, err)
	}
	if res.IsError || len(res.Content) == 0 {
		t.Fatalf("call %s: %+v", tool, res)
	}
	return res.Content[0].(*mcp.TextContent).Text
}

// noSecrets fails if any secret the authorization server issued reached
// the events.
func noSecrets(t *testing.T, s *authtest.Server, ev *events) {
	t.Helper()
	text := ev.text()
	for _, sec := range s.Secrets() {
		if strings.Contains(text, sec) || strings.Contains(text, url.QueryEscape(sec)) {
			t.Errorf("the secret %q reached the tap", sec)
		}
	}
}

// TestEndToEnd: discovery, dynamic registration, code with PKCE
// (headless), token, a call; step-up for a tool that needs more scope;
// refresh when the server stops accepting the token, and when it expired;
// and credentials reused from the store by the next run.
func TestEndToEnd(t *testing.T) {
	s := authtest.Start(t, authtest.Config{Scopes: []string{"mcp:basic"}, ToolScopes: map[string]string{"add": "mcp:write"}})
	store := auth.OpenStore(t.TempDir())
	ev := &events{}
	tr := auth.NewTransport(auth.Options{ServerURL: s.URL, Headless: true, Store: store, Tap: ev, ClientVersion: "test"})
	cs := connect(t, s, tr)
	if got := call(t, cs, "echo", map[string]any{"text": "hi"}); !strings.Contains(got, "hi") {
		t.Errorf("echo: %q", got)
	}
	if c := s.Counts(); c.Registrations != 1 || c.Authorizations != 1 || c.CodeExchanges != 1 {
		t.Errorf("after the first call: %+v", c)
	}
	if got := s.ApplicationTypes(); !slices.Equal(got, []string{"native"}) {
		t.Errorf("application_type %q, want native", got)
	}
	req := s.AuthorizationRequests()[0]
	if req.Get("resource") != s.URL || req.Get("code_challenge_method") != "S256" || req.Get("scope") != "mcp:basic offline_access" {
		t.Errorf("authorization request %v", req)
	}

	// Step-up: add needs mcp:write; the new request keeps mcp:basic.
	if got := call(t, cs, "add", map[string]any{"a": 2, "b": 3}); !strings.Contains(got, "5") {
		t.Errorf("add: %q", got)
	}
	reqs := s.AuthorizationRequests()
	if c := s.Counts(); c.Registrations != 1 || c.Authorizations != 2 || len(reqs) != 2 {
		t.Fatalf("after step-up: %+v", c)
	}
	if got := reqs[1].Get("scope"); got != "mcp:basic offline_access mcp:write" {
		t.Errorf("step-up scope %q", got)
	}

	// The server forgets the token: a refresh mends it, with no new authorization.
	s.Revoke()
	call(t, cs, "echo", map[string]any{"text": "again"})
	if c := s.Counts(); c.Authorizations != 2 || c.Refreshes != 1 {
		t.Errorf("after revocation: %+v", c)
	}

	// The next run finds the credentials in the store; the token has
	// expired meanwhile, and is refreshed before it is sent.
	e, err := store.ForServer(s.URL)
	if err != nil || e == nil {
		t.Fatalf("stored: %v %v", e, err)
	}
	e.Token.Expiry = time.Now().Add(-time.Minute)
	store.Put(*e)
	ev2 := &events{}
	tr2 := auth.NewTransport(auth.Options{ServerURL: s.URL, Headless: true, Store: store, Tap: ev2})
	call(t, connect(t, s, tr2), "add", map[string]any{"a": 1, "b": 1})
	if c := s.Counts(); c.Registrations != 1 || c.Authorizations != 2 || c.Refreshes != 2 {
		t.Errorf("next run: %+v\n%s", c, ev2.text())
	}
	for _, want := range []string{"using the token stored for", "refreshing the access token"} {
		if !strings.Contains(ev2.text(), want) {
			t.Errorf("the events of the next run lack %q:\n%s", want, ev2.text())
		}
	}

	// Every step was reported, and no secret with it.
	for _, want := range []string{
		"oauth protected resource metadata: 200 OK",
		"oauth authorization server metadata: 200 OK",
		"oauth client registration: 201 Created",
		"oauth authorization (headless): 302 Found",
		"oauth token request: 200 OK",
		"oauth token refresh: 200 OK",
		"step-up authorization 1 of at most 3",
		"code=[REDACTED]",
		`"access_token":"[REDACTED]"`,
	} {
		if !strings.Contains(ev.text(), want) {
			t.Errorf("the events lack %q", want)
		}
	}
	noSecrets(t, s, ev)
	noSecrets(t, s, ev2)
	fi, err := os.Stat(store.Path())
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("store: %v %v", fi, err)
	}
}

// TestRefusals: each broken server is refused, before the code goes
// anywhere, with an error naming the rule.
func TestRefusals(t *testing.T) {
	tests := []struct {
		name      string
		cfg       authtest.Config
		rule      string
		phrase    string
		authorize bool // the authorization request is made before the refusal
	}{
		{"wrong issuer", authtest.Config{WrongIssuer: true}, auth.RuleIssuer, `says issuer "https://attacker.example.com"`, false},
		{"no PKCE", authtest.Config{NoPKCE: true}, auth.RulePKCE, "does not support PKCE", false},
		{"mismatched resource", authtest.Config{Resource: "https://evil.example.com/mcp"}, auth.RuleResource, `resource "https://evil.example.com/mcp", which is not this server`, false},
		{"unexpected iss", authtest.Config{Iss: "https://evil.example.com"}, auth.RuleIss, `says iss "https://evil.example.com"`, true},
		{"tokens refused", authtest.Config{OriginResource: true}, auth.RuleAccepted, "to the token just obtained", true},
		// The SDK's RequireBearerToken answers 403 with scope and no error.
		{"scope never granted", authtest.Config{Scopes: []string{"mcp:basic"}, DenyScopes: []string{"mcp:basic"}}, auth.RuleStepUpLimit, "after 3 authorizations", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := authtest.Start(t, tt.cfg)
			ev := &events{}
			tr := auth.NewTransport(auth.Options{ServerURL: s.URL, Headless: true, Tap: ev})
			err := post(t, tr, s.URL)
			var ae *auth.Error
			if !errors.As(err, &ae) {
				t.Fatalf("got %v, want an *auth.Error", err)
			}
			if ae.Rule != tt.rule || !strings.Contains(ae.Error(), tt.phrase) || !strings.Contains(ae.Error(), "[rule: "+tt.rule) {
				t.Errorf("got %q\nwant rule %q and %q", ae.Error(), tt.rule, tt.phrase)
			}
			c := s.Counts()
			if (c.Authorizations > 0) != tt.authorize || (!tt.authorize && c.CodeExchanges > 0) || (tt.rule == auth.RuleIss && c.CodeExchanges > 0) {
				t.Errorf("counts %+v", c)
			}
			noSecrets(t, s, ev)
		})
	}
}

// post sends an initialize request through tr.
func post(t *testing.T, tr *auth.Transport, u string) error {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	req, _ := http.NewRequestWithContext(ctxT(t), http.MethodPost, u, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := tr.Client().Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %s", resp.Status)
	}
	return nil
}

// TestStepUpLimit: a server that keeps asking for a scope it never grants
// gets at most three authorizations for one request.
func TestStepUpLimit(t *testing.T) {
	s := authtest.Start(t, authtest.Config{ToolScopes: map[string]string{"echo": "mcp:never"}, DenyScopes: []string{"mcp:never"}})
	tr := auth.NewTransport(auth.Options{ServerURL: s.URL, Headless: true})
	cs := connect(t, s, tr)
	_, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
	if err == nil || !strings.Contains(err.Error(), auth.RuleStepUpLimit) {
		t.Errorf("got %v, want the step-up limit", err)
	}
	// One authorization for initialize, then at most three for the call.
	if c := s.Counts(); c.Authorizations != 1+auth.DefaultMaxAuthorizations {
		t.Errorf("%d authorizations, want 1+%d", c.Authorizations, auth.DefaultMaxAuthorizations)
	}
}

// TestInteractive: the browser (here a plain HTTP client that follows the
// redirects) comes back to the loopback listener, which listens only while
// the flow runs.
func TestInteractive(t *testing.T) {
	s := authtest.Start(t, authtest.Config{})
	var out strings.Builder
	var opened []string
	browser := func(u string) error {
		opened = append(opened, u)
		go func() {
			if resp, err := http.Get(u); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
		return nil
	}
	ev := &events{}
	tr := auth.NewTransport(auth.Options{ServerURL: s.URL, Interactive: true, OpenBrowser: browser, Out: &out, Tap: ev})
	if err := post(t, tr, s.URL); err != nil {
		t.Fatalf("%v\n%s", err, ev.text())
	}
	if len(opened) != 1 || !strings.Contains(out.String(), opened[0]) || !strings.Contains(out.String(), "Opened the browser") {
		t.Errorf("opened %q; said %q", opened, out.String())
	}
	redirect := s.AuthorizationRequests()[0].Get("redirect_uri")
	u, _ := url.Parse(redirect)
	if u.Hostname() != "127.0.0.1" {
		t.Errorf("redirect URI %s is not on loopback", redirect)
	}
	if c, err := net.Dial("tcp", u.Host); err == nil {
		c.Close()
		t.Errorf("%s still listens after the flow", u.Host)
	}
	if !strings.Contains(ev.text(), "the browser came back") || !strings.Contains(ev.text(), "code=[REDACTED]") {
		t.Errorf("the callback is not reported, redacted:\n%s", ev.text())
	}
	noSecrets(t, s, ev)
}

// TestNoTerminal: with no one to ask and no --oauth-headless, the flow
// stops after discovery, before registering anything, and says what to do.
func TestNoTerminal(t *testing.T) {
	s := authtest.Start(t, authtest.Config{})
	tr := auth.NewTransport(auth.Options{ServerURL: s.URL})
	err := post(t, tr, s.URL)
	var ae *auth.Error
	if !errors.As(err, &ae) || ae.Step != auth.StepAuthorization || !strings.Contains(ae.Msg, "no terminal to ask on") || !strings.Contains(ae.Msg, "--oauth-headless") {
		t.Errorf("got %v", err)
	}
	if c := s.Counts(); c.Registrations != 0 {
		t.Errorf("registered anyway: %+v", c)
	}
}

// TestConcurrentRequests: requests refused at once wait for one flow.
func TestConcurrentRequests(t *testing.T) {
	s := authtest.Start(t, authtest.Config{})
	tr := auth.NewTransport(auth.Options{ServerURL: s.URL, Headless: true})
	var wg sync.WaitGroup
	errs := make(chan error, 5)
	for range 5 {
		wg.Go(func() { errs <- post(t, tr, s.URL) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if c := s.Counts(); c.Authorizations != 1 || c.Registrations != 1 {
		t.Errorf("%+v, want one flow", c)
	}
}
