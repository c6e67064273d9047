package cli

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/demoserver"
	"github.com/mcpi-dev/mcpi/internal/record"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// readTrace returns the header and events of a trace file.
func readTrace(t *testing.T, path string) (record.Header, []record.Event) {
	t.Helper()
	r, err := record.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var evs []record.Event
	for {
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, e)
	}
	return r.Header(), evs
}

func TestRecordStdio(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "trace.jsonl")
	args := with(peerArgs("demo"), "call", "echo", "text=recorded", "--record", path, "-e", "API_KEY=sup3r-secret")
	code, out, errOut := runCLI(t, "", args...)
	if code != 0 || !strings.Contains(out, "recorded") {
		t.Fatalf("exit %d: %s %s", code, out, errOut)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("trace mode: %v %v", fi.Mode(), err)
	}
	raw, _ := os.ReadFile(path)
	if strings.Contains(string(raw), "sup3r-secret") {
		t.Error("the -e value reached the trace")
	}
	h, evs := readTrace(t, path)
	if h.Target.Transport != record.TransportStdio || !h.Redacted || len(h.Args) == 0 {
		t.Errorf("header %+v", h)
	}
	var sent, recv, notes, lifecycle int
	var sawCall bool
	for _, e := range evs {
		switch e.Type {
		case record.TypeFrame:
			if e.Dir == transport.Outgoing {
				sent++
				sawCall = sawCall || strings.Contains(string(e.Msg), `"text":"recorded"`)
			} else {
				recv++
			}
		case record.TypeNote:
			notes++
			var n record.SessionNote
			if err := e.DecodeNote(&n); err != nil || n.ProtocolVersion != "2025-11-25" || n.ServerInfo == nil || n.Transport != "stdio" {
				t.Errorf("session note %+v %v", n, err)
			}
		case record.TypeLifecycle:
			lifecycle++
		}
	}
	if sent < 4 || recv < 3 || notes != 1 || lifecycle < 2 || !sawCall {
		t.Errorf("sent %d recv %d notes %d lifecycle %d call %v", sent, recv, notes, lifecycle, sawCall)
	}
}

func TestRecordHTTPRedactsHeaders(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(demoserver.HTTPHandler(demoserver.Options{Era: demoserver.EraLegacy}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	path := filepath.Join(dir, "http.jsonl")
	runCLIExit(t, command.ExitOK, "tools", srv.URL, "-H", "Authorization: Bearer tok-12345", "--record", path)
	raw, _ := os.ReadFile(path)
	if strings.Contains(string(raw), "tok-12345") {
		t.Error("the bearer token reached the trace")
	}
	_, evs := readTrace(t, path)
	var withHeaders int
	for _, e := range evs {
		if e.HTTP != nil && e.HTTP.RequestHeader.Get("Authorization") != "" {
			withHeaders++
			if got := e.HTTP.RequestHeader.Get("Authorization"); got != "Bearer [REDACTED]" {
				t.Errorf("Authorization recorded as %q", got)
			}
			if e.HTTP.Method == http.MethodPost && e.HTTP.RequestHeader.Get("Accept") == "" {
				t.Error("request headers incomplete")
			}
		}
	}
	if withHeaders == 0 {
		t.Error("no HTTP metadata in the trace")
	}
	// --no-redact keeps it, when asked.
	path2 := filepath.Join(dir, "plain.jsonl")
	runCLI(t, "", "ping", srv.URL, "-H", "Authorization: Bearer tok-12345", "--record", path2, "--no-redact")
	raw, _ = os.ReadFile(path2)
	if !strings.Contains(string(raw), "tok-12345") {
		t.Error("--no-redact lost the header")
	}
}

func TestRecordUnwritable(t *testing.T) {
	t.Parallel()
	code, _, errOut := runCLI(t, "", with(peerArgs("demo"), "ping", "--record", "/no/such/dir/t.jsonl")...)
	if code != command.ExitUsage || !strings.Contains(errOut, "--record") {
		t.Errorf("exit %d: %s", code, errOut)
	}
}
