package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/mcptest"
)

// TestMain lets the test binary serve as a stdio MCP server when
// re-executed with MCPI_TEST_PEER set: the demo server or a hostile one.
func TestMain(m *testing.M) {
	mcptest.ServePeer()
	if len(os.Args) > 2 && os.Args[1] == "session" && os.Args[2] == "daemon" {
		// A live session's daemon, started by session start from a test.
		os.Exit(int(Main()))
	}
	// A CI job's trace context would put _meta.traceparent in every frame
	// the tests look at: TestTraceContext sets its own.
	os.Unsetenv("TRACEPARENT")
	os.Unsetenv("TRACESTATE")
	// The go command that builds mcpi for the end-to-end tests keeps the
	// user's build cache, which is under XDG_CACHE_HOME unless GOCACHE says.
	if os.Getenv("GOCACHE") == "" {
		if out, err := exec.Command("go", "env", "GOCACHE").Output(); err == nil {
			os.Setenv("GOCACHE", strings.TrimSpace(string(out)))
		}
	}
	// In-process commands detect the era every time (tests in parallel must
	// not see each other's memory), and remember it in a cache of their own.
	cache, err := os.MkdirTemp("", "mcpi-cache-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_CACHE_HOME", cache)
	os.Setenv("MCPI_ERA", "auto")
	code := m.Run()
	os.RemoveAll(cache)
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// peerArgs returns the TARGET arguments that run this test binary as the
// given peer.
func peerArgs(kind string) []string {
	return []string{"-e", mcptest.PeerEnv + "=" + kind, "--", os.Args[0], "-test.run=^$"}
}

var (
	binOnce sync.Once
	binDir  string
	binPath string
	binErr  error
)

// mcpiBinary builds the real mcpi binary once for the end-to-end tests.
func mcpiBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "mcpi-e2e-")
		if binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "mcpi")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/mcpi-dev/mcpi/cmd/mcpi").CombinedOutput()
		if err != nil {
			binErr = err
			binPath = string(out)
		}
	})
	if binErr != nil {
		t.Fatalf("building mcpi: %v\n%s", binErr, binPath)
	}
	return binPath
}
