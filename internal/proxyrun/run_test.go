package proxyrun

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	proxysock "github.com/mcpi-dev/mcpi/internal/attach"
	"github.com/mcpi-dev/mcpi/internal/intercept"
	"github.com/mcpi-dev/mcpi/internal/query"
	"github.com/mcpi-dev/mcpi/internal/record"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// exitEnv makes the test binary a server that exits at once with its
// value.
const exitEnv = "PROXYRUN_TEST_EXIT"

func TestMain(m *testing.M) {
	if code, ok := os.LookupEnv(exitEnv); ok {
		n, _ := strconv.Atoi(code)
		os.Exit(n)
	}
	os.Exit(m.Run())
}

// answerAll is a server of this process: it answers every request with
// an empty result, until its input ends.
func answerAll(_ context.Context, in io.Reader, out io.Writer) error {
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(sc.Bytes(), &req) == nil && req.ID != nil {
			io.WriteString(out, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"result":{}}`+"\n")
		}
	}
	return sc.Err()
}

// A stdio run relays the host's frames to its server and back, judges
// them by its faults, writes its trace and says what the faults did.
func TestRunStdioFaults(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "t.jsonl")
	faults, err := intercept.ParseFaults([]byte("faults:\n  - name: busy\n    match: method:ping dir:out\n    error: {code: -32001, message: busy}\n"))
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	err = Run(context.Background(), Options{
		Version: "test", Record: trace, Command: []string{"answer-all"}, Serve: answerAll,
		Faults: faults, Seed: 9,
		In:  strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n" + `{"jsonrpc":"2.0","id":2,"method":"tools/list"}` + "\n"),
		Out: &out, ErrOut: &errOut,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"busy"}}`, `{"jsonrpc":"2.0","id":2,"result":{}}`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the host got %q, without %s", out.String(), want)
		}
	}
	if !strings.Contains(errOut.String(), "seed 9 (--seed 9 repeats the run)") {
		t.Errorf("no summary on stderr: %q", errOut.String())
	}
	r, err := record.Open(trace)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if h := r.Header(); h.Role != record.RoleProxy || h.Mcpi != "test" || h.Target.Transport != record.TransportStdio {
		t.Errorf("the trace's header: %+v", h)
	}
	var intercepts int
	if err := r.Each(func(ev record.Event) {
		if ev.Type == record.TypeIntercept {
			intercepts++
		}
	}); err != nil {
		t.Fatal(err)
	}
	if intercepts != 1 {
		t.Errorf("%d intercept events in the trace, want 1", intercepts)
	}
}

// A run's errors say whose fault they are: the options', or the
// server's exit status.
func TestRunErrors(t *testing.T) {
	opts := Options{Command: []string{"x"}, In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard}
	opts.Record = filepath.Join(t.TempDir(), "no", "t.jsonl")
	var ue *UsageError
	if err := Run(context.Background(), opts); !errors.As(err, &ue) || !strings.HasPrefix(err.Error(), "--record: ") {
		t.Errorf("a trace that cannot be made: %v (%T)", err, err)
	}
	opts.Record = ""
	opts.Command, opts.Env = []string{os.Args[0], "-test.run=^$"}, []string{exitEnv + "=3"}
	var ee *ExitError
	if err := Run(context.Background(), opts); !errors.As(err, &ee) || ee.Code != 3 {
		t.Errorf("a server that exits 3: %v (%T)", err, err)
	}
	opts.Command, opts.Env = nil, nil
	opts.Serve = func(context.Context, io.Reader, io.Writer) error { return errors.New("broken") }
	var ce *ConnectError
	if err := Run(context.Background(), opts); !errors.As(err, &ce) || ce.Error() != "broken" {
		t.Errorf("a server that fails: %v (%T), want a ConnectError", err, err)
	}
}

// events is a tap that keeps what it is given.
type events struct {
	mu   sync.Mutex
	seen []transport.Event
}

func (e *events) Observe(ev transport.Event) {
	e.mu.Lock()
	e.seen = append(e.seen, ev)
	e.mu.Unlock()
}

func (e *events) text() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var b strings.Builder
	for _, ev := range e.seen {
		b.WriteString(ev.Text)
		b.Write(ev.Data)
		b.WriteByte('\n')
	}
	return b.String()
}

// With UI on a terminal, the TUI runs the proxy: it is given the
// banner, the gate of the breakpoints and every event of the proxy.
func TestRunHTTPInTheTUI(t *testing.T) {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	}))
	defer upstream.Close()
	up, _ := url.Parse(upstream.URL + "/mcp")
	brk, err := query.Parse("method:nothing")
	if err != nil {
		t.Fatal(err)
	}
	var answer *httptest.ResponseRecorder
	var shown Screen
	seen := &events{}
	opts := Options{
		URL: up.String(), Upstream: up, Breaks: []query.Query{brk}, HoldTimeout: time.Minute, UI: true,
		Listen: func() (net.Listener, error) { return net.Listen("tcp", "127.0.0.1:0") },
		ServeHTTP: func(_ context.Context, _ net.Listener, h http.Handler) error {
			answer = httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			h.ServeHTTP(answer, req)
			return nil
		},
		TUI: func(ctx context.Context, s Screen) error {
			shown = s
			return s.Run(ctx, seen)
		},
		ErrOut: io.Discard,
	}
	if err := Run(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(shown.Title, "http://127.0.0.1:") || !strings.HasSuffix(shown.Title, "/ -> "+up.String()) || shown.Gate == nil {
		t.Errorf("the TUI was given %q, gate %v", shown.Title, shown.Gate)
	}
	if answer == nil || !strings.Contains(answer.Body.String(), `"result":{}`) {
		t.Fatalf("the host's answer: %+v", answer)
	}
	if got := seen.text(); !strings.Contains(got, `"method":"ping"`) || !strings.Contains(got, `"result":{}`) {
		t.Errorf("the TUI saw:\n%s", got)
	}
}

// With UI and Attach, a stdio run serves its conversation on a socket
// and says on stderr how to attach; the socket goes with the run.
func TestRunStdioAttach(t *testing.T) {
	dir, err := os.MkdirTemp("", "mcpi-rt")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	hostIn, host := io.Pipe()
	errR, errW := io.Pipe()
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(errR)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	done := make(chan error, 1)
	go func() {
		done <- Run(context.Background(), Options{
			Command: []string{"answer", "all"}, Serve: answerAll, UI: true, Attach: true, Name: "t", RuntimeDir: dir,
			TUI: func(context.Context, Screen) error { return errors.New("no TUI with Attach") },
			In:  hostIn, Out: io.Discard, ErrOut: errW,
		})
	}()
	deadline := time.After(20 * time.Second)
	for said := ""; !strings.Contains(said, "mcpi proxy: attach it from a terminal with: mcpi proxy attach t (socket "); {
		select {
		case said = <-lines:
		case <-deadline:
			t.Fatal("no word on stderr of how to attach")
		}
	}
	info, err := proxysock.Status(dir, "t")
	if err != nil || info.Title != "answer all" || info.PID != os.Getpid() {
		t.Errorf("the proxy's status: %+v, %v", info, err)
	}
	host.Close()
	if err := <-done; err != nil {
		t.Errorf("the run ended with %v", err)
	}
	errW.Close()
	if _, err := os.Stat(filepath.Join(proxysock.Dir(dir), "t.sock")); !os.IsNotExist(err) {
		t.Errorf("the socket is left: %v", err)
	}
}
