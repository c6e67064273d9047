// Command benchserver is the stdio server of the one-shot comparison
// (scripts/bench.sh): the demo server, or the flood and huge servers of
// package bench. A program of its own rather than `mcpi demo-server`, so
// that the server starts as fast as a small Go program does and the
// clients' differences are not lost in its start-up.
//
// Usage: benchserver [-mode demo|demo-legacy|flood|huge|fast]
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/mcpi-dev/mcpi/internal/perf"
)

func main() {
	mode := flag.String("mode", perf.ModeDemo, "what to serve: demo, demo-legacy, flood, huge or fast")
	flag.Parse()
	if err := perf.ServeStdio(*mode); err != nil {
		fmt.Fprintln(os.Stderr, "benchserver:", err)
		os.Exit(1)
	}
}
