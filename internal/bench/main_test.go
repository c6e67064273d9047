package bench_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/bench"
	"github.com/mcpi-dev/mcpi/internal/cli"
)

// TestMain lets the test binary serve as the stdio server of the
// benchmarks: re-executed with bench.PeerEnv set to a mode, it serves that
// mode (bench.ServeStdio) instead of running tests.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "session" {
		// mcpi session start and its daemon, for the mcpi-session
		// contenders.
		os.Exit(int(cli.Main()))
	}
	if mode := os.Getenv(bench.PeerEnv); mode != "" {
		if err := bench.ServeStdio(mode); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}
