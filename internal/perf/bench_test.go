package perf_test

// The benchmarks run mcpi's session (internal/session over
// internal/transport, what every mcpi command uses) and a client built on
// the official Go SDK against the same server; each benchmark has one
// sub-benchmark per contender. `go test -count` would repeat a benchmark
// before moving to the next, so scripts/bench.sh runs the compiled test
// binary in rounds instead, one process per contender (-test.bench
// '^BenchmarkCall//^mcpi$'), the contenders taking turns, and takes
// medians over the rounds: contenders that take turns share the noise of
// the machine, and none inherits another's goroutines or heap.
//
// Stdio servers are this test binary re-executed (TestMain); the HTTP
// server is the demo server in-process (httptest), so over HTTP the
// allocations the benchmarks report include the server's.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpi-dev/mcpi/internal/demoserver"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/perf"
	"github.com/mcpi-dev/mcpi/internal/record"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

const (
	legacyRevision = "2025-11-25"
	concurrency    = 32
	callTimeout    = 60 * time.Second
)

// contender is one client under test. Its setup (spawning, connecting,
// initializing) happens before the timer starts.
type contender struct {
	name string
	run  func(b *testing.B)
}

// runContenders runs each contender as a sub-benchmark.
func runContenders(b *testing.B, cs ...contender) {
	for _, c := range cs {
		b.Run(c.name, c.run)
	}
}

// caller makes one tools/call of echo and checks the answer.
type caller func(context.Context) error

// --- mcpi -------------------------------------------------------------------

// mcpiStdio spawns the server in mode and starts an mcpi session with it.
func mcpiStdio(b *testing.B, mode string, opts session.Options, tap transport.Tap) *session.Client {
	b.Helper()
	conn, err := transport.Spawn(transport.StdioOptions{
		Command: os.Args[0],
		Env:     []string{perf.PeerEnv + "=" + mode},
		Tap:     tap,
	})
	if err != nil {
		b.Fatal(err)
	}
	return mcpiConnect(b, conn, opts)
}

func mcpiHTTP(b *testing.B, url string, opts session.Options) *session.Client {
	b.Helper()
	conn, err := transport.DialHTTP(context.Background(), transport.ModeAuto, transport.HTTPOptions{URL: url})
	if err != nil {
		b.Fatal(err)
	}
	return mcpiConnect(b, conn, opts)
}

func mcpiConnect(b *testing.B, conn transport.Conn, opts session.Options) *session.Client {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	c, err := session.Connect(ctx, conn, opts)
	if err != nil {
		b.Fatal(err)
	}
	return c
}

func mcpiOptions(era string) session.Options {
	o := session.Options{ClientInfo: mcp.Implementation{Name: "bench", Version: "1"}}
	if era == session.EraLegacy {
		o.Era = session.EraLegacy
	}
	return o
}

var echoArgs = json.RawMessage(`{"text":"hi"}`)

func mcpiEcho(c *session.Client) caller {
	return func(ctx context.Context) error {
		r, err := c.CallTool(ctx, "echo", echoArgs, nil)
		if err != nil {
			return err
		}
		if len(r.Content) != 1 || r.Content[0].Text != "hi" {
			return fmt.Errorf("unexpected echo result %+v", r)
		}
		return nil
	}
}

// --- the Go SDK -------------------------------------------------------------

// sdkConn is a Go SDK client session and, over stdio, its server process.
type sdkConn struct {
	*sdk.ClientSession
	cmd *exec.Cmd
}

func (s *sdkConn) Close() {
	s.ClientSession.Close()
	if s.cmd != nil {
		s.cmd.Wait()
	}
}

// sdkStdio spawns the server in mode and connects a Go SDK client to it
// with the SDK's CommandTransport. unlimited replaces it with an
// IOTransport over the process's pipes without a line-length cap:
// CommandTransport has no such option and stops at 16 MiB
// (sdk.DefaultMaxLineLength), so it cannot read a 50 MB result.
func sdkStdio(b *testing.B, mode string, copts *sdk.ClientOptions, sopts *sdk.ClientSessionOptions, unlimited bool, log io.Writer) *sdkConn {
	b.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), perf.PeerEnv+"="+mode)
	var t sdk.Transport = &sdk.CommandTransport{Command: cmd}
	owned := false
	if unlimited {
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		stdin, err := cmd.StdinPipe()
		if err != nil {
			b.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		owned = true
		t = &sdk.IOTransport{Reader: stdout, Writer: stdin, MaxLineLength: -1}
	}
	if log != nil {
		t = &sdk.LoggingTransport{Transport: t, Writer: log}
	}
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, copts).Connect(ctx, t, sopts)
	if err != nil {
		b.Fatal(err)
	}
	s := &sdkConn{ClientSession: cs}
	if owned {
		s.cmd = cmd
	}
	return s
}

func sdkHTTP(b *testing.B, url string, sopts *sdk.ClientSessionOptions) *sdkConn {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url}, sopts)
	if err != nil {
		b.Fatal(err)
	}
	return &sdkConn{ClientSession: cs}
}

func sdkSessionOptions(era string) *sdk.ClientSessionOptions {
	if era == session.EraLegacy {
		return &sdk.ClientSessionOptions{ProtocolVersion: legacyRevision}
	}
	return nil
}

func sdkEcho(cs *sdkConn) caller {
	return func(ctx context.Context) error {
		r, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
		if err != nil {
			return err
		}
		if len(r.Content) != 1 {
			return fmt.Errorf("unexpected echo result %+v", r)
		}
		if t, ok := r.Content[0].(*sdk.TextContent); !ok || t.Text != "hi" {
			return fmt.Errorf("unexpected echo content %+v", r.Content[0])
		}
		return nil
	}
}

// --- measuring --------------------------------------------------------------

// runCalls times b.N calls spread over workers goroutines and reports
// calls per second.
func runCalls(b *testing.B, workers int, call caller) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	b.ReportAllocs()
	b.ResetTimer()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Go(func() {
			for next.Add(1) <= int64(b.N) {
				if err := call(ctx); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
}

// heapPeak samples the bytes of live and not yet collected heap objects
// while a benchmark runs, to report the peak above what was there before.
type heapPeak struct {
	stop, done chan struct{}
	base, peak uint64
}

const heapMetric = "/memory/classes/heap/objects:bytes"

func startHeapPeak() *heapPeak {
	runtime.GC()
	s := []metrics.Sample{{Name: heapMetric}}
	metrics.Read(s)
	h := &heapPeak{stop: make(chan struct{}), done: make(chan struct{}), base: s[0].Value.Uint64()}
	h.peak = h.base
	go func() {
		defer close(h.done)
		t := time.NewTicker(500 * time.Microsecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			h.peak = max(h.peak, s[0].Value.Uint64())
			select {
			case <-h.stop:
				return
			case <-t.C:
			}
		}
	}()
	return h
}

func (h *heapPeak) report(b *testing.B) {
	close(h.stop)
	<-h.done
	b.ReportMetric(float64(h.peak-h.base)/(1<<20), "peak-heap-MiB")
}

// --- one call at a time and 32 at once ----------------------------------------

var eras = []string{session.EraModern, session.EraLegacy}

func stdioContenders(era string, workers int) []contender {
	return []contender{
		{"mcpi", func(b *testing.B) {
			c := mcpiStdio(b, perf.ModeDemo, mcpiOptions(era), nil)
			defer c.Close()
			if got := c.Era(); got != era {
				b.Fatalf("era %s, want %s", got, era)
			}
			runCalls(b, workers, mcpiEcho(c))
		}},
		{"gosdk", func(b *testing.B) {
			cs := sdkStdio(b, perf.ModeDemo, nil, sdkSessionOptions(era), false, nil)
			defer cs.Close()
			runCalls(b, workers, sdkEcho(cs))
		}},
		{"mcpi-session", func(b *testing.B) {
			runCalls(b, workers, mcpiSession(b, era, stdioTarget()...))
		}},
	}
}

// demoHTTP serves the demo server over Streamable HTTP for one benchmark.
func demoHTTP(b *testing.B) string {
	srv := httptest.NewServer(demoserver.HTTPHandler(demoserver.Options{}))
	b.Cleanup(func() {
		srv.Close()
		http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	})
	return srv.URL
}

func httpContenders(era string, workers int) []contender {
	return []contender{
		{"mcpi", func(b *testing.B) {
			c := mcpiHTTP(b, demoHTTP(b), mcpiOptions(era))
			defer c.Close()
			if got := c.Era(); got != era {
				b.Fatalf("era %s, want %s", got, era)
			}
			runCalls(b, workers, mcpiEcho(c))
		}},
		{"gosdk", func(b *testing.B) {
			cs := sdkHTTP(b, demoHTTP(b), sdkSessionOptions(era))
			defer cs.Close()
			runCalls(b, workers, sdkEcho(cs))
		}},
		{"mcpi-session", func(b *testing.B) {
			runCalls(b, workers, mcpiSession(b, era, demoHTTP(b)))
		}},
	}
}

// BenchmarkCallStdio is sequential tools/call round trips to the demo
// server over stdio, in each era.
func BenchmarkCallStdio(b *testing.B) {
	for _, era := range eras {
		b.Run(era, func(b *testing.B) { runContenders(b, stdioContenders(era, 1)...) })
	}
}

// BenchmarkCallHTTP is sequential tools/call round trips to the demo
// server over Streamable HTTP, in each era: stateless POSTs answered with
// JSON (modern), or a session whose answers come as SSE streams (legacy).
func BenchmarkCallHTTP(b *testing.B) {
	for _, era := range eras {
		b.Run(era, func(b *testing.B) { runContenders(b, httpContenders(era, 1)...) })
	}
}

// BenchmarkCallConcurrent32 is tools/call round trips made by 32
// goroutines at once over one session.
func BenchmarkCallConcurrent32(b *testing.B) {
	for _, era := range eras {
		b.Run("stdio-"+era, func(b *testing.B) { runContenders(b, stdioContenders(era, concurrency)...) })
		b.Run("http-"+era, func(b *testing.B) { runContenders(b, httpContenders(era, concurrency)...) })
	}
}

// --- a flood of notifications -------------------------------------------------

// floodCounter counts notifications/message and signals each time another
// perf.FloodCount of them arrived.
type floodCounter struct {
	n       atomic.Int64
	reached chan struct{}
}

func newFloodCounter() *floodCounter { return &floodCounter{reached: make(chan struct{}, 1)} }

func (f *floodCounter) inc() {
	if f.n.Add(1)%perf.FloodCount == 0 {
		f.reached <- struct{}{}
	}
}

// runFlood times b.N tools/call that each bring perf.FloodCount
// notifications before their answer; an operation ends once the answer and
// every notification have been handled.
func runFlood(b *testing.B, call caller, f *floodCounter) {
	b.Helper()
	ctx := context.Background()
	b.ReportAllocs()
	peak := startHeapPeak()
	b.ResetTimer()
	for range b.N {
		if err := call(ctx); err != nil {
			b.Fatal(err)
		}
		select {
		case <-f.reached:
		case <-time.After(callTimeout):
			b.Fatalf("%d notifications after %v", f.n.Load(), callTimeout)
		}
	}
	b.StopTimer()
	peak.report(b)
	b.ReportMetric(float64(b.N)*perf.FloodCount/b.Elapsed().Seconds(), "notifications/s")
}

func okCall(name string, call func(context.Context) (string, error)) caller {
	return func(ctx context.Context) error {
		text, err := call(ctx)
		if err != nil {
			return err
		}
		if text != "ok" {
			return fmt.Errorf("%s: unexpected answer %.40q", name, text)
		}
		return nil
	}
}

func mcpiText(c *session.Client) func(context.Context) (string, error) {
	return func(ctx context.Context) (string, error) {
		r, err := c.CallTool(ctx, "echo", nil, nil)
		if err != nil {
			return "", err
		}
		if len(r.Content) != 1 {
			return "", fmt.Errorf("%d content blocks", len(r.Content))
		}
		return r.Content[0].Text, nil
	}
}

func sdkText(cs *sdkConn) func(context.Context) (string, error) {
	return func(ctx context.Context) (string, error) {
		r, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo"})
		if err != nil {
			return "", err
		}
		if len(r.Content) != 1 {
			return "", fmt.Errorf("%d content blocks", len(r.Content))
		}
		t, ok := r.Content[0].(*sdk.TextContent)
		if !ok {
			return "", fmt.Errorf("content %T", r.Content[0])
		}
		return t.Text, nil
	}
}

// BenchmarkFlood100k is one tools/call answered after 100,000
// notifications/message, per operation, over stdio: ingested by mcpi's
// session, by mcpi recording a trace as --record does, by the Go SDK
// client, and by the Go SDK client logging every message through its
// LoggingTransport into a buffered file (the nearest it has to a trace).
func BenchmarkFlood100k(b *testing.B) {
	mcpiRun := func(recorded bool) func(*testing.B) {
		return func(b *testing.B) {
			f := newFloodCounter()
			opts := mcpiOptions("")
			opts.OnNotification = func(n session.Notification) {
				if n.Method == "notifications/message" {
					f.inc()
				}
			}
			var w *record.Writer
			var tap transport.Tap
			if recorded {
				var err error
				w, err = record.Create(filepath.Join(b.TempDir(), "trace.jsonl"), record.Header{Mcpi: "bench", Target: record.Target{Transport: record.TransportStdio}}, record.Options{})
				if err != nil {
					b.Fatal(err)
				}
				tap = w
			}
			c := mcpiStdio(b, perf.ModeFlood, opts, tap)
			runFlood(b, okCall("mcpi", mcpiText(c)), f)
			c.Close()
			if w != nil {
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	sdkRun := func(logged bool) func(*testing.B) {
		return func(b *testing.B) {
			f := newFloodCounter()
			copts := &sdk.ClientOptions{
				//lint:ignore SA1019 the flood is of notifications/message, which the client must take in.
				LoggingMessageHandler: func(context.Context, *sdk.LoggingMessageRequest) { f.inc() },
			}
			var file *os.File
			var buf *bufio.Writer
			var log io.Writer
			if logged {
				var err error
				file, err = os.Create(filepath.Join(b.TempDir(), "log.txt"))
				if err != nil {
					b.Fatal(err)
				}
				buf = bufio.NewWriterSize(file, 64<<10)
				log = buf
			}
			cs := sdkStdio(b, perf.ModeFlood, copts, nil, false, log)
			runFlood(b, okCall("gosdk", sdkText(cs)), f)
			cs.Close()
			if file != nil {
				buf.Flush()
				file.Close()
			}
		}
	}
	runContenders(b,
		contender{"mcpi", mcpiRun(false)},
		contender{"mcpi-recorded", mcpiRun(true)},
		contender{"gosdk", sdkRun(false)},
		contender{"gosdk-logged", sdkRun(true)},
	)
}

// --- a 50 MB result ----------------------------------------------------------

func hugeCall(b *testing.B, text func(context.Context) (string, error)) {
	b.Helper()
	ctx := context.Background()
	b.ReportAllocs()
	b.SetBytes(perf.HugeSize)
	peak := startHeapPeak()
	b.ResetTimer()
	for range b.N {
		t, err := text(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if len(t) != perf.HugeSize {
			b.Fatalf("text of %d bytes, want %d", len(t), perf.HugeSize)
		}
	}
	b.StopTimer()
	peak.report(b)
}

// BenchmarkHuge50MB is one tools/call answered with a 50 MB text on one
// line, per operation, over stdio. The Go SDK client reads it through an
// IOTransport without a line cap (see sdkStdio).
func BenchmarkHuge50MB(b *testing.B) {
	runContenders(b,
		contender{"mcpi", func(b *testing.B) {
			c := mcpiStdio(b, perf.ModeHuge, mcpiOptions(""), nil)
			defer c.Close()
			hugeCall(b, mcpiText(c))
		}},
		contender{"gosdk", func(b *testing.B) {
			cs := sdkStdio(b, perf.ModeHuge, nil, nil, true, nil)
			defer cs.Close()
			hugeCall(b, sdkText(cs))
		}},
	)
}

// TestSDKCommandTransportLineCap documents why BenchmarkHuge50MB gives the
// Go SDK client an IOTransport: its CommandTransport, which has no
// line-length option, fails on the 50 MB line.
func TestSDKCommandTransportLineCap(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a server that writes 50 MB")
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), perf.PeerEnv+"="+perf.ModeHuge)
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd, TerminateDuration: 100 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo"}); err == nil {
		t.Fatal("the SDK's CommandTransport read a 50 MB line: BenchmarkHuge50MB could use it")
	} else {
		t.Logf("as expected, CommandTransport fails: %v", err)
	}
}
