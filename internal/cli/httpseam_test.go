package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/auth"
	"github.com/mcpi-dev/mcpi/internal/command"
)

// scriptedServer is an MCP server of the legacy era over Streamable HTTP
// that lives in a RoundTripper: it answers initialize and ping, takes
// notifications, and refuses the rest. It records what it was sent.
type scriptedServer struct {
	mu      sync.Mutex
	hosts   []string
	methods []string
}

func (s *scriptedServer) RoundTrip(req *http.Request) (*http.Response, error) {
	s.mu.Lock()
	s.hosts = append(s.hosts, req.URL.Host)
	s.mu.Unlock()
	if req.Method != http.MethodPost {
		return s.reply(req, http.StatusMethodNotAllowed, ""), nil
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"params"`
	}
	if err := json.Unmarshal(body, &msg); err != nil {
		return s.reply(req, http.StatusBadRequest, ""), nil
	}
	s.mu.Lock()
	s.methods = append(s.methods, msg.Method)
	s.mu.Unlock()
	if len(msg.ID) == 0 {
		return s.reply(req, http.StatusAccepted, ""), nil
	}
	var result string
	switch msg.Method {
	case "initialize":
		result = fmt.Sprintf(`{"protocolVersion":%q,"capabilities":{},"serverInfo":{"name":"scripted","version":"1.0"}}`, msg.Params.ProtocolVersion)
	case "ping":
		result = `{}`
	default:
		return s.reply(req, http.StatusOK, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no %s here"}}`, msg.ID, msg.Method)), nil
	}
	return s.reply(req, http.StatusOK, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, msg.ID, result)), nil
}

func (s *scriptedServer) reply(req *http.Request, code int, body string) *http.Response {
	h := http.Header{}
	if body != "" {
		h.Set("Content-Type", "application/json")
	}
	return &http.Response{
		StatusCode: code, Status: fmt.Sprintf("%d %s", code, http.StatusText(code)),
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Body: io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body)),
		Request: req,
	}
}

// TestHTTPTransportSeam runs mcpi ping against an HTTP server that only
// the Factory's HTTPTransport knows: example.invalid resolves nowhere, so
// the command succeeds only if every request went through the seam.
func TestHTTPTransportSeam(t *testing.T) {
	t.Setenv(auth.ConfigDirEnv, t.TempDir())
	for _, tc := range []struct {
		name string
		args []string
	}{
		{name: "through OAuth's transport", args: nil},
		{name: "with --bearer", args: []string{"--bearer", "t0ken"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := &scriptedServer{}
			ios, _, out, errOut := command.Test()
			args := append([]string{"ping", "https://example.invalid/mcp", "--era", "legacy", "--json"}, tc.args...)
			code := run(context.Background(), &command.Factory{IO: ios, HTTPTransport: srv}, args)
			if code != command.ExitOK {
				t.Fatalf("exit %d, stderr %s", code, errOut)
			}
			var got struct {
				OK bool `json:"ok"`
			}
			if err := json.Unmarshal(bytes.TrimSpace(out.Bytes()), &got); err != nil || !got.OK {
				t.Fatalf("stdout %q: %v", out, err)
			}
			srv.mu.Lock()
			defer srv.mu.Unlock()
			if strings.Join(srv.methods, " ") != "initialize notifications/initialized ping" {
				t.Errorf("the server was sent %v", srv.methods)
			}
			for _, h := range srv.hosts {
				if h != "example.invalid" {
					t.Errorf("a request went to %s", h)
				}
			}
		})
	}
}
