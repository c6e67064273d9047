package doctor

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/transport"
)

// statuses are a report's steps as "name=status".
func statuses(r Report) string {
	var out []string
	for _, s := range r.Steps {
		out = append(out, s.Name+"="+s.Status)
	}
	return strings.Join(out, " ")
}

func TestStdio(t *testing.T) {
	found := func(string) (string, error) { return "/usr/bin/x", nil }
	missing := func(string) (string, error) { return "", errors.New("not found") }
	crash := &transport.ServerExitError{ExitCode: 1, StderrTail: []string{"Error: connect ECONNREFUSED 127.0.0.1:5432", "    at TCPConnectWrap.afterConnect", "", "Node.js v22.11.0"}}
	tests := []struct {
		name    string
		look    func(string) (string, error)
		err     error
		want    string
		env     bool
		inFixes string
	}{
		{"not installed", missing, errors.New("exec: not found"), "the command is found=failed the server starts and stays up=skipped the handshake=skipped", false, "install it"},
		{"dies at start, its database down", found, crash, "the command is found=passed the server starts and stays up=failed the handshake=skipped", true, "environment"},
		{"does not answer", found, errors.New("initialize: no answer within 10s (timeout)"), "the command is found=passed the server starts and stays up=passed the handshake=failed", false, "does it speak MCP on stdout"},
		{"fine", found, nil, "the command is found=passed the server starts and stays up=passed the handshake=passed", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Stdio([]string{"x"}, tt.look, Attempt{Err: tt.err})
			if got := statuses(r); got != tt.want {
				t.Errorf("steps: %s\nwant   %s", got, tt.want)
			}
			if (r.Environment != "") != tt.env {
				t.Errorf("environment: %q", r.Environment)
			}
			if f := r.Failed(); tt.inFixes != "" && (f == nil || !strings.Contains(f.Fix, tt.inFixes)) {
				t.Errorf("the failed step: %+v, want a fix saying %q", f, tt.inFixes)
			}
		})
	}
	r := Stdio([]string{"x"}, found, Attempt{Err: crash})
	if d := r.Failed().Detail; !strings.Contains(d, "ECONNREFUSED") || strings.Contains(d, "Node.js v22") {
		t.Errorf("the crash is explained by %q, want the error line, not the version banner", d)
	}
}

func TestHTTPNetwork(t *testing.T) {
	noDNS := Net{LookupHost: func(context.Context, string) ([]string, error) {
		return nil, &net.DNSError{Err: "no such host", Name: "mcp.invalid", IsNotFound: true}
	}}
	refused := Net{LookupHost: func(context.Context, string) ([]string, error) { return []string{"192.0.2.1"}, nil },
		Dial: func(context.Context, string, string) (net.Conn, error) {
			return nil, errors.New("connect: connection refused")
		}}
	r := HTTP(context.Background(), "https://mcp.invalid/mcp", nil, noDNS, nil)
	if got := statuses(r); !strings.HasPrefix(got, "DNS=failed TCP=skipped TLS=skipped HTTP=skipped") {
		t.Errorf("no DNS: %s", got)
	}
	r = HTTP(context.Background(), "http://mcp.example/mcp", nil, refused, nil)
	if got := statuses(r); !strings.HasPrefix(got, "DNS=passed TCP=failed HTTP=skipped") || !strings.Contains(r.Failed().Fix, "is the server running") {
		t.Errorf("refused: %s %+v", got, r.Failed())
	}
	r = HTTP(context.Background(), "ftp://x/mcp", nil, Net{}, nil)
	if got := statuses(r); got != "the URL=failed" {
		t.Errorf("ftp: %s", got)
	}
}

// local dials the test server whatever the URL's host, and resolves every
// name to it: no network is used.
func local(srv *httptest.Server) Net {
	addr := srv.Listener.Addr().String()
	return Net{
		LookupHost: func(context.Context, string) ([]string, error) { return []string{"127.0.0.1"}, nil },
		Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
	}
}

func TestHTTPAnswers(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/html", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<html>"))
	})
	mux.HandleFunc("/private", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="x"`)
		w.WriteHeader(http.StatusUnauthorized)
	})
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	n := local(srv)
	tests := []struct {
		path, want, fix string
	}{
		{"/nosuch", "DNS=passed TCP=passed HTTP=failed", "servers usually serve /mcp"},
		{"/html", "DNS=passed TCP=passed HTTP=failed", "web page"},
		{"/private", "DNS=passed TCP=passed HTTP=passed authorization metadata=failed authorization=skipped", "--bearer"},
		{"/mcp", "DNS=passed TCP=passed HTTP=passed the handshake (era probe, initialize)=passed", ""},
	}
	for _, tt := range tests {
		r := HTTP(context.Background(), "http://mcp.example"+tt.path, nil, n, nil)
		if got := statuses(r); !strings.HasPrefix(got, tt.want) {
			t.Errorf("%s: %s, want %s", tt.path, got, tt.want)
		}
		if f := r.Failed(); tt.fix != "" && (f == nil || !strings.Contains(f.Fix, tt.fix)) {
			t.Errorf("%s: the failed step %+v, want a fix saying %q", tt.path, f, tt.fix)
		}
	}
	r := HTTP(context.Background(), "http://mcp.example/mcp", nil, n, &Attempt{Err: errors.New("initialize: -32603 Invalid API key provided")})
	if f := r.Failed(); f == nil || f.Name != "the handshake (era probe, initialize)" || r.Environment == "" {
		t.Errorf("a handshake refused for the server's credential: %+v, environment %q", f, r.Environment)
	}
}

func TestTLS(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{}`))
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes are the test
	srv.StartTLS()
	defer srv.Close()
	n := local(srv)
	r := HTTP(context.Background(), "https://example.com/mcp", nil, n, nil)
	if f := r.Failed(); f == nil || f.Name != "TLS" || !strings.Contains(f.Detail, "unknown authority") {
		t.Errorf("a self-signed certificate: %s %+v", statuses(r), f)
	}
	n.RootCAs = srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	r = HTTP(context.Background(), "https://mcp.invalid/mcp", nil, n, nil)
	if f := r.Failed(); f == nil || f.Name != "TLS" || !strings.Contains(f.Detail, "not for mcp.invalid") {
		t.Errorf("a certificate for another name: %s %+v", statuses(r), f)
	}
	r = HTTP(context.Background(), "https://example.com/mcp", nil, n, nil)
	if got := statuses(r); !strings.HasPrefix(got, "DNS=passed TCP=passed TLS=passed HTTP=passed") {
		t.Errorf("a trusted certificate: %s %+v", got, r.Failed())
	}
}

// TestElapsedIsTheStepsOwn: a step judged from the command's own attempt
// to connect (a handshake that waited a minute) says the attempt's time
// where it failed, not the instant the judging took; one that passed says
// none; a step of its own (the command is found) says its own.
func TestElapsedIsTheStepsOwn(t *testing.T) {
	found := func(string) (string, error) { return "/usr/bin/x", nil }
	waited := Attempt{Err: errors.New("initialize: no answer within 1m0s (timeout)"), Took: time.Minute}
	r := Stdio([]string{"x"}, found, waited)
	got := map[string]string{}
	for _, s := range r.Steps {
		got[s.Name] = s.Elapsed
	}
	if got["the handshake"] != "1m0s" || got["the server starts and stays up"] != "" {
		t.Errorf("elapsed: %q", got)
	}
	r = HTTP(context.Background(), "ftp://x/mcp", nil, Net{}, &waited)
	if f := r.Failed(); f == nil || f.Elapsed == "1m0s" {
		t.Errorf("a step of its own took the attempt's time: %+v", f)
	}
}

// TestAPathIsNotLookedForOnPATH: a command given as a path that names no
// file says so, and what to do, not "not found on PATH … give its full
// path".
func TestAPathIsNotLookedForOnPATH(t *testing.T) {
	dir := t.TempDir()
	for path, want := range map[string]string{filepath.Join(dir, "nope-server"): "no such file", dir: "a directory"} {
		r := Stdio([]string{path}, exec.LookPath, Attempt{Err: errors.New("fork/exec: no such file or directory")})
		f := r.Failed()
		if f == nil || !strings.Contains(f.Detail, want) || strings.Contains(f.Detail, "on PATH") || strings.Contains(f.Fix, "full path") {
			t.Errorf("%s: %+v", path, f)
		}
	}
}
