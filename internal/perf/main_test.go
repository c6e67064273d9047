package perf_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/cli"
	"github.com/mcpi-dev/mcpi/internal/perf"
)

// TestMain lets the test binary serve as the stdio server of the
// benchmarks: re-executed with perf.PeerEnv set to a mode, it serves that
// mode (perf.ServeStdio) instead of running tests.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "session" {
		// mcpi session start and its daemon, for the mcpi-session
		// contenders.
		os.Exit(int(cli.Main()))
	}
	if os.Getenv(initOnlyEnv) != "" {
		// TestInitAllocations: the package inits have run; nothing else.
		os.Exit(0)
	}
	if mode := os.Getenv(perf.PeerEnv); mode != "" {
		if err := perf.ServeStdio(mode); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}
