package mcptest

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/transport"
)

// JaegerVersion is the Jaeger scripts/jaeger.sh builds into .cache/tools.
const JaegerVersion = "v1.76.0"

// jaegerConfig runs Jaeger with its memory store, its OTLP/HTTP receiver
// and its query API, each on a loopback port of the test's.
const jaegerConfig = `service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  jaeger_query:
    storage:
      traces: memstore
    http:
      endpoint: 127.0.0.1:%d
    grpc:
      endpoint: 127.0.0.1:%d
  jaeger_storage:
    backends:
      memstore:
        memory:
          max_traces: 1000
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:%d
processors:
  batch:
    timeout: 100ms
exporters:
  jaeger_storage_exporter:
    trace_storage: memstore
`

// Jaeger starts the Jaeger that scripts/jaeger.sh built, with its memory
// store, and returns its OTLP/HTTP receiver's base URL and its query
// API's. It is stopped when the test ends. Without the binary the test is
// skipped, or fails under CI, where make test builds it.
func Jaeger(t testing.TB) (otlpURL, queryURL string) {
	t.Helper()
	bin := filepath.Join(RepoRoot(), ".cache", "tools", "jaeger-"+JaegerVersion)
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("Jaeger is not built (%v): scripts/jaeger.sh should have built it", err)
		}
		t.Skip("Jaeger is not built: run scripts/jaeger.sh (make test does)")
	}
	ports := freePorts(t, 3)
	cfg := filepath.Join(t.TempDir(), "jaeger.yaml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, jaegerConfig, ports[0], ports[1], ports[2]), 0o600); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	cmd := exec.Command(bin, "--config", cfg)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-done
		if t.Failed() {
			t.Logf("Jaeger's output:\n%s", logs.String())
		}
	})
	otlpURL = fmt.Sprintf("http://127.0.0.1:%d", ports[2])
	queryURL = fmt.Sprintf("http://127.0.0.1:%d", ports[0])
	deadline := time.Now().Add(60 * time.Second)
	client := transport.NewHTTPClient(nil, transport.EgressPolicy{})
	for {
		resp, err := client.Get(queryURL + "/api/services")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case <-done:
			t.Fatalf("Jaeger exited at start:\n%s", logs.String())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("Jaeger's query API did not answer within 60 s:\n%s", logs.String())
		}
	}
	return otlpURL, queryURL
}

// freePorts returns n loopback ports nobody listens on now.
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	var ls []net.Listener
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return ports
}
