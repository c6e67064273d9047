#!/usr/bin/env bash
# Measures the load generator of `mcpi bench` against the official
# Inspector CLI's --load and against a floor (internal/perf/cmd/floorload:
# the least a load generator can do), all three against the same stdio
# server that is not the bottleneck (benchserver -mode fast), same tool,
# same concurrency, taking turns in each round so that they share the
# machine's noise. Prints a Markdown report (the one in docs/performance.md
# came from it): medians over the rounds, and ratios.
#
#   closed loop: -c C workers for each C of CS, N calls, as fast as each
#                goes: calls per second, and CPU per call (user + system,
#                the client and the server it spawned together: the server
#                is the same)
#   constant rate: RATE calls a second for DUR seconds, -c 8: the latency
#                percentiles each generator reports (mcpi bench and the
#                floor measure from each call's scheduled start)
#
# Then it checks the goals of docs/performance.md at every C: mcpi bench
# makes at least 0.70 of the floor's calls per second, for at most 1.5x its
# CPU per call, and at least 5x the Inspector's calls per second.
#
# Usage: scripts/bench-load.sh [-o FILE]
# Environment: ROUNDS [5], CS ["1 8 32"], N [50000], RATE [2000], DUR [5],
# NO_INSPECTOR=1 (leave the Inspector out), NO_RATE=1 (no constant-rate
# runs), NO_CHECK=1 (exit 0 on a missed goal), MCPI=PATH (measure that
# build of mcpi instead of this tree's). Exit status 1 when a goal is
# missed. The Inspector comes from scripts/deps.sh (npm). Not run in CI.
set -euo pipefail

. "$(dirname "$0")/bench-common.sh"
ROUNDS=${ROUNDS:-5}
CS=${CS:-${C:-1 8 32}}
N=${N:-50000}
RATE=${RATE:-2000}
DUR=${DUR:-5}

node=$PWD/.cache/node/bin/node
[ -x "$node" ] || node=$(command -v node)
launcher=.cache/npm/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js
if [ -z "${NO_INSPECTOR:-}" ] && [ ! -f "$launcher" ]; then
  echo "the Inspector is not installed: run scripts/deps.sh, or set NO_INSPECTOR=1" >&2
  exit 2
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME="$tmp/cache"
bin=$tmp/bin
mkdir -p "$bin"
echo "building..." >&2
if [ -n "${MCPI:-}" ]; then
  cp "$MCPI" "$bin/mcpi" # a build of mcpi to measure instead of this tree's
else
  CGO_ENABLED=0 go build -o "$bin/mcpi" ./cmd/mcpi
fi
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
  for c in $CS; do
    run mcpi "closed$c" "$r" "$bin/mcpi" bench echo -n "$N" -c "$c" --json -- "${server[@]}"
    [ -n "${NO_INSPECTOR:-}" ] || run inspector "closed$c" "$r" "$node" "$launcher" --cli --method tools/call --tool-name echo --load \
      --load-requests "$N" --load-concurrency "$c" "${server[@]}"
    run floor "closed$c" "$r" "$bin/floorload" -c "$c" -n "$N" -- "${server[@]}"
  done
  [ -z "${NO_RATE:-}" ] || continue
  run mcpi rate "$r" "$bin/mcpi" bench echo -d "${DUR}s" --rate "$RATE" -c 8 --json -- "${server[@]}"
  [ -n "${NO_INSPECTOR:-}" ] || run inspector rate "$r" "$node" "$launcher" --cli --method tools/call --tool-name echo --load \
    --load-rate "$RATE" --load-duration "$DUR" --load-concurrency 8 "${server[@]}"
  run floor rate "$r" "$bin/floorload" -c 8 -rate "$RATE" -d "${DUR}s" -- "${server[@]}"
done

status=0
{
  echo "## The load generator, $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . 2>/dev/null || echo ' (with uncommitted changes)')"
  echo
  echo "Machine: $(nproc) cores, $(uname -sr), Go $(go env GOVERSION), load average at the end $(cut -d' ' -f1-3 /proc/loadavg)${NO_INSPECTOR:+, without the Inspector}${NO_INSPECTOR:-, Node $("$node" --version), Inspector $(cd .cache/npm/node_modules/@modelcontextprotocol/inspector && "$node" -p 'require("./package.json").version')}"
  echo
  echo "Reproduce: \`${MCPI:+MCPI=$MCPI }ROUNDS=$ROUNDS CS=\"$CS\" N=$N RATE=$RATE DUR=$DUR${NO_INSPECTOR:+ NO_INSPECTOR=1}${NO_RATE:+ NO_RATE=1} scripts/bench-load.sh\`"
  echo
  python3 - "$tmp" "$ROUNDS" "$N" "$CS" "${NO_INSPECTOR:-}" "${NO_RATE:-}" <<'EOF' || status=$?
import json, statistics, sys
sys.path.insert(0, "scripts")
from bench_goals import report
tmp, rounds, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
cs, no_inspector, no_rate = sys.argv[4].split(), sys.argv[5] != "", sys.argv[6] != ""
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
names = ["mcpi", "floor"] if no_inspector else ["mcpi", "inspector", "floor"]
label = {"mcpi": "mcpi bench", "inspector": "Inspector --load", "floor": "floor (floorload)"}
R = range(1, rounds + 1)
print("Closed loop: calls per second and CPU per call (median of %d rounds; ratios: the median of the per-round ratios)" % rounds)
print()
print("| -c | generator | calls/s | CPU µs/call (client + server) | calls/s vs floor | CPU/call vs floor | calls/s vs Inspector |")
print("|---|---|---|---|---|---|---|")
goals = []
for cc in cs:
    mode = "closed" + cc
    t = {k: [tput(k, doc(k, mode, r)) for r in R] for k in names}
    c = {k: [cpu(k, mode, r) / calls(k, doc(k, mode, r)) * 1e6 for r in R] for k in names}
    ratio = lambda k, d, o: med([a / b for a, b in zip(d[k], d[o])])
    for k in names:
        ri = "—" if no_inspector else f"{ratio(k, t, 'inspector'):.2f}×"
        print(f"| {cc} | {label[k]} | {med(t[k]):,.0f} | {med(c[k]):.1f} | {ratio(k, t, 'floor'):.2f}× | {ratio(k, c, 'floor'):.2f}× | {ri} |")
    goals.append((f"-c {cc}: mcpi bench calls/s to the floor's", ratio("mcpi", t, "floor"), "at least 0.70×", ratio("mcpi", t, "floor") >= 0.70))
    goals.append((f"-c {cc}: mcpi bench CPU per call to the floor's", ratio("mcpi", c, "floor"), "at most 1.50×", ratio("mcpi", c, "floor") <= 1.50))
    if not no_inspector:
        goals.append((f"-c {cc}: mcpi bench calls/s to the Inspector's", ratio("mcpi", t, "inspector"), "at least 5.00×", ratio("mcpi", t, "inspector") >= 5.0))
if not no_rate:
    print()
    print("Constant rate, -c 8: latency in ms as each generator reports it (median of %d rounds)" % rounds)
    print()
    print("| generator | calls/s kept | p50 | p90 | p99 | max |")
    print("|---|---|---|---|---|---|")
    for k in names:
        ds = [doc(k, "rate", r) for r in R]
        kept = med([tput(k, d) for d in ds])
        row = [med([lat(k, d, q) for d in ds]) for q in ("p50", "p90", "p99", "max")]
        print(f"| {label[k]} | {kept:,.0f} | " + " | ".join(f"{v:.3f}" for v in row) + " |")
report([(w, f"{g:.2f}×", l, ok) for w, g, l, ok in goals], "Goals:")
EOF
} >"$out"
if [ "$status" != 0 ]; then
  echo "bench-load.sh: a goal was missed (see the Goals table)" >&2
  [ -n "${NO_CHECK:-}" ] || exit 1
fi
