#!/usr/bin/env bash
# Measures what every mcpi process pays before its work, against the build
# of an earlier commit (BASE), and checks the goals of docs/performance.md:
#
#   version           `mcpi --version`: wall time within 10% of BASE's, peak RSS
#                     at most 16 MiB
#   complete          a TAB on the first word (`mcpi __complete ca`, the whole
#                     command tree): within 10% of BASE's, at most 16 MiB
#   complete-flag     a TAB on a command's flag (`mcpi __complete call --js`)
#   complete-session  a TAB on a tool's name in a live session: median at most
#                     50 ms
#   echo              a one-shot `mcpi call` at most 2.0x the floor client,
#                     peak RSS at most 16 MiB
#
# Both builds take turns in every round (internal/perf/cmd/mcpibench); the
# tables quote medians and the median of the per-round ratios. Before them:
# each build's size and its package inits (GODEBUG=inittrace=1: how many,
# their time and allocations, the median of 5 starts).
#
# Usage: scripts/bench-startup.sh [-o FILE]
# Environment: BASE [101763e], N [30] rounds, NO_CHECK=1 to exit 0 on a
# missed goal. Exit status 1 when a goal is missed.
set -euo pipefail

. "$(dirname "$0")/bench-common.sh"
BASE=${BASE:-101763e}
N=${N:-30}

tmp=$(mktemp -d)
wt=$tmp/base-tree
cleanup() {
  git worktree remove --force "$wt" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
export XDG_CACHE_HOME="$tmp/cache"
unset MCPI_ERA
bin=$tmp/bin
mkdir -p "$bin"
export CGO_ENABLED=0

echo "building this tree and $BASE..." >&2
go build -o "$bin/mcpi" ./cmd/mcpi
for c in floor sdkcall benchserver mcpibench; do
  go build -o "$bin/$c" "./internal/perf/cmd/$c"
done
git worktree add --detach -q "$wt" "$BASE"
(cd "$wt" && go build -o "$tmp/mcpi-base" ./cmd/mcpi)
git worktree remove --force "$wt"

# inits BIN: "packages ms bytes" of its package inits, the median of 5 starts.
inits() {
  for _ in 1 2 3 4 5; do
    GODEBUG=inittrace=1 "$1" --version 2>&1 >/dev/null |
      awk '/^init /{n++; ms+=$5; b+=$8} END{printf "%d %.2f %d\n", n, ms, b}'
  done | sort -k2 -n | sed -n 3p
}

{
  echo "## Start-up, $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . 2>/dev/null || echo ' (with uncommitted changes)') against $BASE"
  echo
  "$bin/mcpibench" machine
  echo
  echo "Reproduce: \`BASE=$BASE N=$N scripts/bench-startup.sh\`"
  echo
  echo "| build | binary | package inits | their time | their allocations |"
  echo "|---|---:|---:|---:|---:|"
  for b in "this tree:$bin/mcpi" "$BASE:$tmp/mcpi-base"; do
    read -r n ms bytes < <(inits "${b#*:}")
    size=$(stat -c %s "${b#*:}")
    echo "| ${b%%:*} | $(awk -v s="$size" 'BEGIN{printf "%.1f MB", s/1e6}') | $n | $ms ms | $(awk -v s="$bytes" 'BEGIN{printf "%.2f MB", s/1e6}') |"
  done
  "$bin/mcpibench" oneshot -bin "$bin" -n "$N" -scenarios version,complete,complete-flag,complete-session,echo \
    -other-mcpi "mcpi $BASE=$tmp/mcpi-base" -summary "$tmp/summary.jsonl"
} >"$out"

# The goals, checked on this run's medians.
python3 - "$tmp/summary.jsonl" "$BASE" >>"$out" <<'EOF' || status=$?
import json, sys
sys.path.insert(0, "scripts")
from bench_goals import report
rows = [json.loads(l) for l in open(sys.argv[1])]
base = sys.argv[2]
def get(sc, who):
    for r in rows:
        if r["scenario"] == sc and r["contender"] == who:
            return r
    return None
goals = []
def goal(what, value, limit, unit, fmt="%.2f"):
    if value is None:
        goals.append((what, "not measured", f"at most {fmt % limit}{unit}", False))
    else:
        goals.append((what, f"{fmt % value}{unit}", f"at most {fmt % limit}{unit}", value <= limit))
for sc, label in (("version", "`mcpi --version`"), ("complete", "`mcpi __complete ca`")):
    r = get(sc, "mcpi")
    goal(f"{label}, wall time to {base}'s (median of the per-round ratios)", r and r["ratio"], 1.10, "×")
    goal(f"{label}, peak RSS", r and r["rssMiB"], 16, " MiB", "%.1f")
r = get("echo", "mcpi")
goal("one-shot `mcpi call`, wall time to the floor client's", r and r["ratio"], 2.0, "×")
goal("one-shot `mcpi call`, peak RSS", r and r["rssMiB"], 16, " MiB", "%.1f")
r = get("complete-session", "mcpi __complete (session)")
goal("a TAB on a tool's name in a live session, median", r and r["medianMs"], 50, " ms", "%.1f")
report(goals)
EOF
if [ "${status:-0}" != 0 ]; then
  echo "bench-startup.sh: a goal was missed (see the Goals table)" >&2
  [ -n "${NO_CHECK:-}" ] || exit 1
fi
echo "done" >&2
