// Package perf measures mcpi against its peers: the minimal client that
// only spawns, initializes and calls (the floor), a client built on the
// official Go SDK, and the official Inspector CLI. Every number it reports
// is a ratio to a peer measured in the same run, the contenders taking
// turns so that they share the noise of the machine.
//
// The package holds the servers the contenders talk to (ServeStdio), the
// `go test -bench` suite (bench_test.go) and, under cmd/, the programs of
// the one-shot comparison that scripts/bench.sh builds and runs:
// benchserver, floor, sdkcall and mcpibench. None of it is part of the mcpi
// binary; nothing outside this package imports it.
//
// docs/performance.md says what is measured, how, and what came out.
package perf
