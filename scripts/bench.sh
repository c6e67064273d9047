#!/usr/bin/env bash
# Benchmarks mcpi against its peers and prints a Markdown report (the one
# in docs/performance.md came from it):
#
#   1. one-shot tool calls, each a process of its own, against the same
#      stdio server: the floor (a minimal client), `mcpi call`, a Go SDK
#      client and the official Inspector CLI (internal/perf/cmd/mcpibench);
#      then calls against a connection held open, over stdio and Streamable
#      HTTP: `mcpi call --session` against the Inspector's mcpdo;
#   2. the `go test -bench` suite of internal/perf (round trips per second
#      over stdio and Streamable HTTP, one at a time and 32 at once; a flood
#      of 100,000 notifications; a 50 MB result), mcpi against the Go SDK
#      client, each contender in a test process of its own, in rounds whose
#      medians and per-round ratios are reported.
#
# Contenders take turns in every round, so that they share the noise of the
# machine: quote medians and ratios, not single numbers. The machine's
# description, the command that reproduces the run and the tables go to
# stdout, or to FILE with -o; progress goes to stderr.
#
# Usage: scripts/bench.sh [-o FILE]
# Environment (defaults in brackets):
#   N [30]            rounds of the one-shot start-up and echo runs
#   HEAVY_N [3]       rounds of the one-shot flood and 50 MB calls
#   ROUNDS [5]        rounds of the round-trip benchmarks
#   HEAVY_ROUNDS [3]  rounds of the flood and 50 MB benchmarks
#   BENCHTIME [300ms] -test.benchtime of the round-trip benchmarks
#   NO_INSPECTOR=1    leave the Inspector out (no npm, no Node needed)
#   ONLY=oneshot|gotest  run one half only
#   SCENARIOS [startup,echo,flood,huge,session,session-http]  the one-shot scenarios to run
# With the defaults it takes about two and a half minutes on two cores, a
# third of it the Go SDK client taking in the flood; N=15 HEAVY_N=1 ROUNDS=3
# HEAVY_ROUNDS=1 takes about a minute.
set -euo pipefail

. "$(dirname "$0")/bench-common.sh"
N=${N:-30}
HEAVY_N=${HEAVY_N:-3}
ROUNDS=${ROUNDS:-5}
HEAVY_ROUNDS=${HEAVY_ROUNDS:-3}
BENCHTIME=${BENCHTIME:-300ms}
ONLY=${ONLY:-}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# mcpi remembers the era of each server in a cache of the run's own: the
# first one-shot round detects it, the others use it, as a user's do.
export XDG_CACHE_HOME="$tmp/cache"
unset MCPI_ERA
bin=$tmp/bin
mkdir -p "$bin"

echo "building..." >&2
# Every contender is built the same way, static as `make build` builds mcpi:
# without cgo a Go program does not load libc, which saves about half a
# millisecond at every start.
export CGO_ENABLED=0
go build -o "$bin/mcpi" ./cmd/mcpi
for c in floor sdkcall benchserver mcpibench; do
  go build -o "$bin/$c" "./internal/perf/cmd/$c"
done
go test -c -o "$bin/bench.test" ./internal/perf

inspector_flags=()
node=.cache/npm/node_modules/.bin/node
launcher=.cache/npm/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js
if [ -z "${NO_INSPECTOR:-}" ]; then
  scripts/deps.sh
  inspector_flags=(-node "$PWD/$node" -inspector "$PWD/$launcher" -mcpdo "$(readlink -f .cache/npm/node_modules/.bin/mcpdo)")
fi

{
  echo "## Run of $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . 2>/dev/null || echo ' (with uncommitted changes)')"
  echo
  "$bin/mcpibench" machine "${inspector_flags[@]}"
  echo "- official Go SDK: $(go list -m -f '{{.Version}}' github.com/modelcontextprotocol/go-sdk)"
  echo
  echo "Reproduce: \`N=$N HEAVY_N=$HEAVY_N ROUNDS=$ROUNDS HEAVY_ROUNDS=$HEAVY_ROUNDS BENCHTIME=$BENCHTIME${NO_INSPECTOR:+ NO_INSPECTOR=1}${ONLY:+ ONLY=$ONLY}${SCENARIOS:+ SCENARIOS=$SCENARIOS} scripts/bench.sh\`"
} >"$out"

if [ "$ONLY" != gotest ]; then
  {
    echo
    echo "### One-shot calls (separate processes)"
    "$bin/mcpibench" oneshot -bin "$bin" -n "$N" -heavy-n "$HEAVY_N" ${SCENARIOS:+-scenarios "$SCENARIOS"} "${inspector_flags[@]}"
  } >>"$out"
fi

if [ "$ONLY" != oneshot ]; then
  # Each contender runs in a test binary process of its own, so that none
  # inherits another's goroutines, connections or heap; in each round the
  # contenders take turns, the first one rotating.
  raw=$tmp/gotest.txt
  : >"$raw"
  run_rounds() { # ROUNDS BENCHTIME PATTERN CONTENDER...
    local rounds=$1 benchtime=$2 pattern=$3
    shift 3
    local cs=("$@")
    for r in $(seq 0 $((rounds - 1))); do
      echo "go test -bench $pattern: round $((r + 1))/$rounds" >&2
      for i in $(seq 0 $((${#cs[@]} - 1))); do
        c=${cs[$(((r + i) % ${#cs[@]}))]}
        (cd internal/perf && "$bin/bench.test" -test.run '^$' -test.bench "$pattern/^$c\$" \
          -test.benchtime "$benchtime" -test.count 1 -test.benchmem) >>"$raw"
      done
    done
  }
  run_rounds "$ROUNDS" "$BENCHTIME" '^BenchmarkCall/' mcpi gosdk mcpi-session
  run_rounds "$HEAVY_ROUNDS" 1x '^Benchmark(Flood100k|Huge50MB)$' mcpi mcpi-recorded gosdk gosdk-logged
  {
    echo
    echo "### go test -bench (one session each, setup not timed)"
    echo
    echo "Round trips: -test.benchtime $BENCHTIME, $ROUNDS rounds; flood and 50 MB: one operation, $HEAVY_ROUNDS rounds."
    "$bin/mcpibench" summarize -baseline gosdk <"$raw"
  } >>"$out"
fi
echo "done" >&2
