// Package doctor says why a server could not be reached, step by step,
// when mcpi check cannot connect: for a command, that it is found and
// stays up long enough to answer; for a URL, DNS, TCP, TLS (the
// certificate's problem named), the HTTP status and content type of an
// MCP request, the authorization metadata, then the handshake. Each step
// passes or fails with what was seen and what to do; the steps after a
// failed one are skipped. Tests give it their own resolver and dialer.
package doctor

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/mcpi-dev/mcpi/internal/bounds"
	"github.com/mcpi-dev/mcpi/internal/check"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// Step is one step of the checklist.
type Step struct {
	Name   string `json:"name"`
	Status string `json:"status"` // passed, failed, skipped
	Detail string `json:"detail,omitempty"`
	Fix    string `json:"fix,omitempty"`
	// Elapsed is how long the step took: the time of its own probe, or
	// for a step judged from the command's own attempt to connect, the
	// time that attempt took when it failed there (left out when it
	// passed: judging took no time).
	Elapsed string `json:"elapsed,omitempty"`
}

// Attempt is the command's own attempt to connect: its error (nil: it
// connected) and how long it took. The steps it decides are judged from
// it, not made again.
type Attempt struct {
	Err  error
	Took time.Duration
}

// The statuses of a step.
const (
	Passed  = "passed"
	Failed  = "failed"
	Skipped = "skipped"
)

// Report is the checklist of one target.
type Report struct {
	Target string `json:"target"`
	Steps  []Step `json:"steps"`
	// Environment says why the failure looks like the server's
	// environment's (a service it needs refused, a credential is missing),
	// "" when it does not.
	Environment string `json:"environment,omitempty"`
}

// Failed returns the first failed step, or nil.
func (r *Report) Failed() *Step {
	for i := range r.Steps {
		if r.Steps[i].Status == Failed {
			return &r.Steps[i]
		}
	}
	return nil
}

// Net is how the doctor reaches the network: tests give their own.
type Net struct {
	// LookupHost resolves a host name (nil: net.DefaultResolver's).
	LookupHost func(ctx context.Context, host string) ([]string, error)
	// Dial opens a TCP connection (nil: a net.Dialer's).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// RootCAs are the certificates TLS trusts (nil: the system's).
	RootCAs *x509.CertPool
	// Timeout bounds each step (0: 10 s).
	Timeout time.Duration
	// HTTP, when set, sends the HTTP steps' requests instead of the
	// network (the DNS, TCP and TLS steps are then not taken): a command
	// test's transport.
	HTTP http.RoundTripper
}

func (n Net) lookup(ctx context.Context, host string) ([]string, error) {
	if n.LookupHost != nil {
		return n.LookupHost(ctx, host)
	}
	return net.DefaultResolver.LookupHost(ctx, host)
}

func (n Net) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if n.Dial != nil {
		return n.Dial(ctx, network, addr)
	}
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

func (n Net) timeout() time.Duration {
	if n.Timeout > 0 {
		return n.Timeout
	}
	return 10 * time.Second
}

// clock bounds one step. (The handshake is the command's own attempt,
// judged, not made again.)
func (n Net) clock() bounds.Clock { return bounds.Clock{Name: "doctor step", D: n.timeout()} }

// checklist is a Report being made.
type checklist struct {
	rep    Report
	failed bool
}

// step runs one step unless one before it failed; fn returns what it saw,
// and for a failure what to do.
func (c *checklist) step(name string, fn func() (detail, fix string, err error)) {
	start := time.Now()
	c.record(name, fn, func(error) time.Duration { return time.Since(start) })
}

// judge is step for a step decided by the command's attempt a: a failure
// there took the attempt's time; a pass took none of its own.
func (c *checklist) judge(name string, a Attempt, fn func() (detail, fix string, err error)) {
	c.record(name, fn, func(err error) time.Duration {
		if err != nil {
			return a.Took
		}
		return 0
	})
}

// record runs fn as the step name, unless one before it failed; took says
// how long it took, given its error.
func (c *checklist) record(name string, fn func() (detail, fix string, err error), took func(error) time.Duration) {
	if c.failed {
		c.rep.Steps = append(c.rep.Steps, Step{Name: name, Status: Skipped})
		return
	}
	detail, fix, err := fn()
	s := Step{Name: name, Status: Passed, Detail: detail}
	if d := took(err); d > 0 {
		s.Elapsed = d.Round(time.Millisecond).String()
	}
	if err != nil {
		s.Status, s.Fix, c.failed = Failed, fix, true
		s.Detail = err.Error()
		if detail != "" {
			s.Detail = detail + ": " + err.Error()
		}
	}
	c.rep.Steps = append(c.rep.Steps, s)
}

// environment notes when what the failure said looks environmental.
func (c *checklist) environment(texts ...string) {
	if why, ok := check.Environmental(strings.Join(texts, "\n")); ok {
		c.rep.Environment = why
	}
}

// Stdio diagnoses a stdio server: command is what was run, lookPath finds
// it (nil: nothing is looked up), a is the command's attempt to connect
// (its stderr, when the server exited, says why it failed).
func Stdio(command []string, lookPath func(string) (string, error), a Attempt) Report {
	connectErr := a.Err
	c := &checklist{rep: Report{Target: strings.Join(command, " ")}}
	c.step("the command is found", func() (string, string, error) {
		if len(command) == 0 {
			return "", "give the server's command after --", errors.New("no command")
		}
		if lookPath == nil {
			return command[0], "", nil
		}
		path, err := lookPath(command[0])
		switch {
		case err == nil:
			return path, "", nil
		case strings.ContainsRune(command[0], '/'):
			// A path is looked for where it says, not on PATH.
			return command[0], "check the path: it must name an executable file", pathProblem(command[0], err)
		}
		return command[0], "install it, or give its full path", errors.New("not found on PATH")
	})
	var exit *transport.ServerExitError
	c.judge("the server starts and stays up", a, func() (string, string, error) {
		if errors.As(connectErr, &exit) {
			why := transport.StderrWhy(exit.StderrTail)
			c.environment(why, strings.Join(exit.StderrTail, "\n"))
			fix := "run the command yourself to see its output; mcpi check -v shows the server's stderr"
			if c.rep.Environment != "" {
				fix = "the server's environment: " + c.rep.Environment + "; check its configuration (environment variables, credentials, services)"
			}
			return "", fix, errors.New(exit.Error())
		}
		return "", "", nil
	})
	c.judge("the handshake", a, func() (string, string, error) {
		if connectErr != nil && exit == nil {
			c.environment(connectErr.Error())
			return "", handshakeFix(connectErr), connectErr
		}
		return "", "", nil
	})
	return c.rep
}

// pathProblem says why the file a path names cannot be run.
func pathProblem(path string, lookErr error) error {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errors.New("no such file")
	case err != nil:
		return err
	case st.IsDir():
		return errors.New("a directory, not a program")
	case st.Mode()&0o111 == 0:
		return errors.New("not executable (no x permission)")
	}
	return lookErr
}

// handshakeFix is what to do when the handshake failed.
func handshakeFix(err error) string {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "timeout") || strings.Contains(msg, "no answer"):
		return "the server did not answer initialize: does it speak MCP on stdout (and log on stderr only)? --timeout gives it longer"
	case strings.Contains(msg, "revision") || strings.Contains(msg, "version"):
		return "the server and mcpi share no protocol revision: --protocol or --era chooses one"
	}
	return "mcpi check -v shows the frames and the server's stderr"
}

// HTTP diagnoses a Streamable HTTP (or HTTP+SSE) endpoint: header is what
// the request carries (authorization included), handshake is the
// command's own attempt to connect (nil: not tried), whose error says why
// it failed.
func HTTP(ctx context.Context, rawURL string, header http.Header, n Net, handshake *Attempt) Report {
	c := &checklist{rep: Report{Target: rawURL}}
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		c.step("the URL", func() (string, string, error) {
			return rawURL, "give an http:// or https:// URL", errors.New("not an http or https URL")
		})
		return c.rep
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	addr := net.JoinHostPort(host, port)
	if n.HTTP == nil {
		c.network(ctx, n, u, host, addr)
	}
	var status int
	var wwwAuth string
	c.step("HTTP", func() (string, string, error) {
		var detail, fix string
		var err error
		status, wwwAuth, detail, fix, err = httpStep(ctx, n, u, header)
		return detail, fix, err
	})
	if status == http.StatusUnauthorized || wwwAuth != "" {
		c.step("authorization metadata", func() (string, string, error) { return metadataStep(ctx, n, u) })
		c.step("authorization", func() (string, string, error) {
			return "the server answered 401", "give --bearer TOKEN, or let mcpi run OAuth (mcpi auth login URL)", errors.New("authorization required")
		})
	}
	a := Attempt{}
	if handshake != nil {
		a = *handshake
	}
	c.judge("the handshake (era probe, initialize)", a, func() (string, string, error) {
		if handshake == nil {
			return "not tried", "", nil
		}
		if err := handshake.Err; err != nil {
			c.environment(err.Error())
			return "", handshakeFix(err), err
		}
		return "the server answered", "", nil
	})
	return c.rep
}

// tlsStep shakes hands with addr, naming the certificate's problem.
func tlsStep(ctx context.Context, n Net, addr, host string) (string, string, error) {
	ctx, cancel := n.clock().Context(ctx)
	defer cancel()
	raw, err := n.dial(ctx, "tcp", addr)
	if err != nil {
		return addr, "", err
	}
	defer raw.Close()
	conn := tls.Client(raw, &tls.Config{ServerName: host, RootCAs: n.RootCAs, MinVersion: tls.VersionTLS12})
	err = conn.HandshakeContext(ctx)
	if err == nil {
		st := conn.ConnectionState()
		detail := "TLS " + tls.VersionName(st.Version)
		if len(st.PeerCertificates) > 0 {
			cert := st.PeerCertificates[0]
			detail += fmt.Sprintf(", certificate for %s valid until %s", strings.Join(cert.DNSNames, ", "), cert.NotAfter.Format("2006-01-02"))
		}
		return detail, "", nil
	}
	var unknown x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var invalid x509.CertificateInvalidError
	var v *tls.CertificateVerificationError
	if errors.As(err, &v) {
		err = v.Err
	}
	switch {
	case errors.As(err, &unknown):
		return "", "the certificate is signed by an authority this machine does not trust (self-signed?): add it to the system's trust store", errors.New("the certificate is signed by an unknown authority")
	case errors.As(err, &hostErr):
		return "", "connect with the name the certificate is for, or have the server's certificate name this host", fmt.Errorf("the certificate is not for %s: %v", host, hostErr.Error())
	case errors.As(err, &invalid) && invalid.Reason == x509.Expired:
		return "", "the server's certificate must be renewed (or this machine's clock is wrong)", fmt.Errorf("the certificate has expired or is not yet valid: %v", invalid.Error())
	}
	return "", "is the port a TLS one? a plain http:// URL, or the server's TLS setup", err
}

// initializeProbe is the request the HTTP step sends: what any MCP client
// sends first.
const initializeProbe = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"mcpi-doctor","version":"1"}}}`

// client is the doctor's HTTP client, over its own dialer.
func (n Net) client() *http.Client {
	if n.HTTP != nil {
		return transport.NewHTTPClient(n.HTTP, transport.EgressPolicy{})
	}
	base := &http.Transport{DialContext: n.dial, TLSClientConfig: &tls.Config{RootCAs: n.RootCAs, MinVersion: tls.VersionTLS12},
		ResponseHeaderTimeout: n.timeout(), DisableKeepAlives: true}
	return transport.NewHTTPClient(base, transport.EgressPolicy{})
}

// httpStep posts an initialize request and says what the status and
// content type mean.
func httpStep(ctx context.Context, n Net, u *url.URL, header http.Header) (status int, wwwAuth, detail, fix string, err error) {
	ctx, cancel := n.clock().Context(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader([]byte(initializeProbe)))
	if err != nil {
		return 0, "", "", "", err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := n.client().Do(req)
	if err != nil {
		return 0, "", "POST " + u.String(), "", err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	ct := resp.Header.Get("Content-Type")
	status, wwwAuth = resp.StatusCode, resp.Header.Get("WWW-Authenticate")
	detail = fmt.Sprintf("POST %s: %s, Content-Type %q", u.Path, resp.Status, ct)
	switch {
	case status == http.StatusUnauthorized:
		return status, wwwAuth, detail, "", nil // the authorization steps follow
	case status == http.StatusNotFound:
		return status, wwwAuth, detail, "no MCP endpoint at this path: servers usually serve /mcp (Streamable HTTP) or /sse (HTTP+SSE)", errors.New("not found")
	case status == http.StatusMethodNotAllowed:
		return status, wwwAuth, detail, "the endpoint takes no POST: an HTTP+SSE server? give --transport sse and its /sse URL", errors.New("POST not allowed")
	case status == http.StatusForbidden && wwwAuth == "":
		return status, wwwAuth, detail, "the server refused the request itself, with no authorization challenge: a Host or Origin allowlist (DNS rebinding protection)? reach it by a name it allows, or allow this one in its configuration; mcpi check -v shows the answer", errors.New("refused (403 without an authorization challenge)")
	case status >= 400:
		return status, wwwAuth, detail, "the server refused the initialize request: mcpi check -v shows the answer", fmt.Errorf("status %d", status)
	case strings.HasPrefix(ct, "text/html"):
		return status, wwwAuth, detail, "the URL serves a web page, not an MCP endpoint: check its path", errors.New("a web page")
	case !strings.HasPrefix(ct, "application/json") && !strings.HasPrefix(ct, "text/event-stream") && status != http.StatusAccepted:
		return status, wwwAuth, detail, "an MCP endpoint answers application/json or text/event-stream", fmt.Errorf("content type %q", ct)
	}
	return status, wwwAuth, detail, "", nil
}

// metadataStep looks for the server's protected resource metadata.
func metadataStep(ctx context.Context, n Net, u *url.URL) (string, string, error) {
	ctx, cancel := n.clock().Context(ctx)
	defer cancel()
	var tried []string
	for _, p := range []string{"/.well-known/oauth-protected-resource" + strings.TrimSuffix(u.Path, "/"), "/.well-known/oauth-protected-resource"} {
		m := *u
		m.Path, m.RawQuery = p, ""
		tried = append(tried, m.String())
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.String(), nil)
		if err != nil {
			continue
		}
		resp, err := n.client().Do(req)
		if err != nil {
			continue
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return m.String() + " is there: mcpi auth login runs OAuth with it", "", nil
		}
	}
	return strings.Join(tried, ", "), "the server asks for authorization but publishes no protected resource metadata (RFC 9728): give --bearer TOKEN", errors.New("not found")
}

// network runs the steps below HTTP: DNS, TCP and, for https, TLS.
func (c *checklist) network(ctx context.Context, n Net, u *url.URL, host, addr string) {
	c.step("DNS", func() (string, string, error) {
		if net.ParseIP(host) != nil {
			return host + " is an address", "", nil
		}
		ctx, cancel := n.clock().Context(ctx)
		defer cancel()
		addrs, err := n.lookup(ctx, host)
		if err != nil {
			return host, "check the host name, and that this machine's DNS can resolve it", err
		}
		return host + " is " + strings.Join(addrs, ", "), "", nil
	})
	var tcp net.Conn
	c.step("TCP", func() (string, string, error) {
		ctx, cancel := n.clock().Context(ctx)
		defer cancel()
		conn, err := n.dial(ctx, "tcp", addr)
		if err != nil {
			return addr, "is the server running, and listening on that port? a firewall or proxy between?", err
		}
		tcp = conn
		return addr + " accepts connections", "", nil
	})
	if tcp != nil {
		tcp.Close()
	}
	if u.Scheme == "https" {
		c.step("TLS", func() (string, string, error) { return tlsStep(ctx, n, addr, host) })
	}
}
