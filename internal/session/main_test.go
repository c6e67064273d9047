package session_test

import (
	"os"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/mcptest"
)

// TestMain lets the test binary serve as a stdio MCP server: re-executed
// with MCPI_TEST_PEER set, it runs the demo server or a hostile one.
func TestMain(m *testing.M) {
	mcptest.ServePeer()
	os.Exit(m.Run())
}
