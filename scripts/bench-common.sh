# Sourced by scripts/bench*.sh with their arguments: -o FILE sends the
# report to FILE (stdout otherwise), in $out; the working directory becomes
# the repository's root.
out=/dev/stdout
if [ "${1:-}" = "-o" ]; then
  out=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
fi
cd "$(dirname "${BASH_SOURCE[0]}")/.."
