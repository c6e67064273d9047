package proxy

import (
	"context"
	"io"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/intercept"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
	"github.com/mcpi-dev/mcpi/internal/query"
	"github.com/mcpi-dev/mcpi/internal/record"
)

// BenchmarkStdioOverhead is what the stdio proxy adds to a round trip:
// sequential pings of a host to the demo server, directly and through the
// proxy recording a trace as `mcpi proxy --record` does, with no rule,
// with a faults file none of whose rules matches, and with a breakpoint
// that matches nothing. Each reports the median round trip
// (µs/call-median); the proxy's share of a frame is half the difference
// from direct (a round trip is two frames). scripts/bench-proxy.sh runs it
// and prints the figures.
func BenchmarkStdioOverhead(b *testing.B) {
	for _, mode := range []string{"direct", "proxy", "proxy-faults-idle", "proxy-break-idle"} {
		b.Run(mode, func(b *testing.B) {
			h := benchHost(b, mode)
			h.Initialize(b)
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				start := time.Now()
				h.Call(b, "ping", nil)
				lat = append(lat, time.Since(start))
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1e3, "µs/call-median")
		})
	}
}

// benchHost starts the demo server, directly or behind the proxy (the
// test binary as a process of its own, as a host starts `mcpi proxy`), and
// returns the host's end.
func benchHost(b *testing.B, mode string) *mcptest.Host {
	b.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), peerEnv("demo"))
	if mode != "direct" {
		cmd.Env = append(cmd.Env, benchProxyEnv+"="+mode)
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		in.Close()
		cmd.Wait()
	})
	return mcptest.NewHost(in, out)
}

// benchProxyEnv makes the test binary the proxy of a benchmark, in the
// mode it names, in front of the server its environment names.
const benchProxyEnv = "MCPI_PROXY_BENCH"

// serveBenchProxy runs the proxy of BenchmarkStdioOverhead on the
// process's own stdio when benchProxyEnv asks for it.
func serveBenchProxy() {
	mode := os.Getenv(benchProxyEnv)
	if mode == "" {
		return
	}
	os.Unsetenv(benchProxyEnv)
	w := record.NewWriter(io.Discard, record.Header{Role: "proxy"}, record.Options{})
	o := StdioOptions{Command: []string{os.Args[0]}, Stdin: os.Stdin, Stdout: os.Stdout, Stderr: io.Discard, Tap: w}
	switch mode {
	case "proxy-faults-idle":
		fs, err := intercept.ParseFaults([]byte("faults:\n  - match: method:never/sent\n    drop: true\n"))
		if err != nil {
			panic(err)
		}
		o.Faults = intercept.NewEngine(intercept.Options{Faults: fs, Seed: 1, Tap: w})
	case "proxy-break-idle":
		q, err := query.Parse("method:never/sent")
		if err != nil {
			panic(err)
		}
		o.Gate = intercept.NewGate(intercept.GateOptions{Breaks: []query.Query{q}, Tap: w})
	}
	code, err := RunStdio(context.Background(), o)
	if err != nil {
		panic(err)
	}
	os.Exit(code)
}
