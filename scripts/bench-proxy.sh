#!/usr/bin/env bash
# Measures what `mcpi proxy` adds to each frame between a host and a stdio
# server: BenchmarkStdioOverhead (internal/proxy) times sequential pings of
# a host to the demo server, directly and through the proxy (a process of
# its own, recording a trace) with no rule, with a faults file none of whose
# rules matches, and with a breakpoint that matches nothing. Each run
# reports its median round trip; the four take turns in every round so that
# they share the machine's noise. Prints a Markdown table (the one in
# docs/performance.md came from it): the median over the rounds of each
# median, and the proxy's share of one frame (half the difference from
# direct: a round trip is two frames).
#
# Then it checks the goal of docs/performance.md: the proxy adds under
# 0.2 ms a frame at the median, in each mode.
#
# Usage: scripts/bench-proxy.sh
# Environment: ROUNDS [5], CALLS [3000] round trips a run, NO_CHECK=1 (exit 0
# on a missed goal). Exit status 1 when the goal is missed. Not run in CI.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-5}
CALLS=${CALLS:-3000}

out=$(go test -run '^$' -bench 'BenchmarkStdioOverhead' -benchtime "${CALLS}x" -count "$ROUNDS" ./internal/proxy/)
echo "$out" | awk -v rounds="$ROUNDS" -v calls="$CALLS" -v check="${NO_CHECK:-}" '
/^BenchmarkStdioOverhead\// {
	split($1, p, "/"); mode = p[2]; sub(/-[0-9]+$/, "", mode)
	for (i = 2; i < NF; i++) if ($(i+1) == "µs/call-median") v[mode] = v[mode] " " $i
}
function median(s,   a, n, i, j, t) {
	n = split(s, a, " ")
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
END {
	split("direct proxy proxy-faults-idle proxy-break-idle", modes, " ")
	d = median(v["direct"])
	printf "%d rounds of %d pings each, taking turns; medians of the rounds'"'"' medians\n\n", rounds, calls
	print "| path | round trip (µs, median) | added per frame (µs) |"
	print "|---|---|---|"
	bad = 0
	for (k = 1; k <= 4; k++) {
		m = modes[k]; r = median(v[m])
		if (m == "direct") { printf "| %s | %.1f | |\n", m, r; continue }
		add = (r - d) / 2
		printf "| %s | %.1f | %.1f |\n", m, r, add
		if (add >= 200) bad = 1
	}
	if (bad && check == "") { print "\ngoal missed: the proxy adds 0.2 ms or more a frame" > "/dev/stderr"; exit 1 }
	print "\ngoal met: under 0.2 ms a frame"
}'
