package session_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/demoserver"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
)

// TestMain lets the test binary serve as a stdio MCP server: re-executed
// with MCPI_TEST_PEER set, it runs the demo server or a hostile one.
func TestMain(m *testing.M) {
	peer := os.Getenv(mcptest.PeerEnv)
	switch {
	case peer == "":
		os.Exit(m.Run())
	case peer == "demo" || strings.HasPrefix(peer, "demo:"):
		era := strings.TrimPrefix(strings.TrimPrefix(peer, "demo"), ":")
		if era == "" {
			era = demoserver.EraLegacy
		}
		if err := demoserver.RunStdio(context.Background(), demoserver.Options{Era: era}); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	case strings.HasPrefix(peer, "hostile:"):
		mcptest.RunHostile(strings.TrimPrefix(peer, "hostile:"))
		os.Exit(0)
	}
	os.Exit(2)
}
