#!/usr/bin/env bash
# Measures the load generator of `mcpi bench` against the official
# Inspector CLI's --load and against a floor (internal/perf/cmd/floorload:
# the least a load generator can do), all three against the same stdio
# server that is not the bottleneck (benchserver -mode fast), same tool,
# same concurrency, taking turns in each round so that they share the
# machine's noise. Prints a Markdown report (the one in docs/performance.md
# came from it): medians over the rounds, and ratios.
#
#   closed loop: -c C workers, N calls, as fast as each goes: calls per
#                second, and CPU per call (user + system, the client and
#                the server it spawned together: the server is the same)
#   constant rate: RATE calls a second for DUR seconds, -c C: the latency
#                percentiles each generator reports (mcpi bench and the
#                floor measure from each call's scheduled start)
#
# Usage: scripts/bench-load.sh [-o FILE]
# Environment: ROUNDS [5], C [8], N [50000], RATE [2000], DUR [5]
# Needs the Inspector installed by scripts/deps.sh (npm). Not run in CI.
set -euo pipefail

out=/dev/stdout
if [ "${1:-}" = "-o" ]; then
  out=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
fi
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-5}
C=${C:-8}
N=${N:-50000}
RATE=${RATE:-2000}
DUR=${DUR:-5}

node=$PWD/.cache/node/bin/node
[ -x "$node" ] || node=$(command -v node)
launcher=.cache/npm/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js
if [ ! -f "$launcher" ]; then
  echo "the Inspector is not installed: run scripts/deps.sh" >&2
  exit 2
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME="$tmp/cache"
bin=$tmp/bin
mkdir -p "$bin"
echo "building..." >&2
CGO_ENABLED=0 go build -o "$bin/mcpi" ./cmd/mcpi
CGO_ENABLED=0 go build -o "$bin/benchserver" ./internal/perf/cmd/benchserver
CGO_ENABLED=0 go build -o "$bin/floorload" ./internal/perf/cmd/floorload
server=("$bin/benchserver" -mode fast)

# run NAME MODE ROUND CMD...: times CMD, keeps its stdout and CPU.
run() {
  local name=$1 mode=$2 round=$3
  shift 3
  /usr/bin/time -f "%U %S" -o "$tmp/$name-$mode-$round.time" "$@" >"$tmp/$name-$mode-$round.json" 2>"$tmp/$name-$mode-$round.err" || {
    echo "$name $mode round $round failed:" >&2
    cat "$tmp/$name-$mode-$round.err" >&2
    exit 1
  }
}

for r in $(seq 1 "$ROUNDS"); do
  echo "round $r of $ROUNDS..." >&2
  run mcpi closed "$r" "$bin/mcpi" bench echo -n "$N" -c "$C" --json -- "${server[@]}"
  run inspector closed "$r" "$node" "$launcher" --cli --method tools/call --tool-name echo --load \
    --load-requests "$N" --load-concurrency "$C" "${server[@]}"
  run floor closed "$r" "$bin/floorload" -c "$C" -n "$N" -- "${server[@]}"
  run mcpi rate "$r" "$bin/mcpi" bench echo -d "${DUR}s" --rate "$RATE" -c "$C" --json -- "${server[@]}"
  run inspector rate "$r" "$node" "$launcher" --cli --method tools/call --tool-name echo --load \
    --load-rate "$RATE" --load-duration "$DUR" --load-concurrency "$C" "${server[@]}"
  run floor rate "$r" "$bin/floorload" -c "$C" -rate "$RATE" -d "${DUR}s" -- "${server[@]}"
done

{
  echo "Machine: $(nproc) cores, $(uname -sr), Go $(go env GOVERSION), Node $("$node" --version)," \
    "Inspector $(cd .cache/npm/node_modules/@modelcontextprotocol/inspector && "$node" -p 'require("./package.json").version')"
  echo
  echo "Reproduce: ROUNDS=$ROUNDS C=$C N=$N RATE=$RATE DUR=$DUR scripts/bench-load.sh"
  echo
  python3 - "$tmp" "$ROUNDS" "$N" <<'EOF'
import json, statistics, sys
tmp, rounds, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def doc(name, mode, r):
    return json.load(open(f"{tmp}/{name}-{mode}-{r}.json"))
def cpu(name, mode, r):
    u, s = open(f"{tmp}/{name}-{mode}-{r}.time").read().split()[-2:]
    return float(u) + float(s)
def tput(name, d):
    return d["callsPerSecond"] if name == "mcpi" else d["throughput"]
def calls(name, d):
    return d["completed"] if name == "mcpi" else (d["requests"] if name == "inspector" else d["calls"])
def lat(name, d, q):
    l = d["latencyMs"]
    return l[q]
med = statistics.median
names = ["mcpi", "inspector", "floor"]
label = {"mcpi": "mcpi bench", "inspector": "Inspector --load", "floor": "floor (floorload)"}
print("Closed loop: calls per second and CPU per call (median of %d rounds)" % rounds)
print()
print("| generator | calls/s | CPU µs/call (client + server) | calls/s vs Inspector | calls/s vs floor |")
print("|---|---|---|---|---|")
t = {k: [tput(k, doc(k, "closed", r)) for r in range(1, rounds + 1)] for k in names}
c = {k: [cpu(k, "closed", r) / calls(k, doc(k, "closed", r)) * 1e6 for r in range(1, rounds + 1)] for k in names}
for k in names:
    ri = med([a / b for a, b in zip(t[k], t["inspector"])])
    rf = med([a / b for a, b in zip(t[k], t["floor"])])
    print(f"| {label[k]} | {med(t[k]):,.0f} | {med(c[k]):.1f} | {ri:.2f}× | {rf:.2f}× |")
print()
print("Constant rate: latency in ms as each generator reports it (median of %d rounds)" % rounds)
print()
print("| generator | calls/s kept | p50 | p90 | p99 | max |")
print("|---|---|---|---|---|---|")
for k in names:
    ds = [doc(k, "rate", r) for r in range(1, rounds + 1)]
    kept = med([tput(k, d) for d in ds])
    row = [med([lat(k, d, q) for d in ds]) for q in ("p50", "p90", "p99", "max")]
    print(f"| {label[k]} | {kept:,.0f} | " + " | ".join(f"{v:.3f}" for v in row) + " |")
EOF
} >"$out"
