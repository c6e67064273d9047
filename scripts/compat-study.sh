#!/usr/bin/env bash
# Host-compatibility study: installs each MCP server of scripts/compat-sample.tsv (pinned)
# from npm into a cache directory, runs `mcpi check --json` against it over stdio with dummy
# credentials, one at a time, and prints the per-host summary (scripts/compat-summary.py).
# Not part of CI: it needs the npm registry and takes about half an hour. @azure-devops/mcp
# builds keytar, which needs libsecret's headers (Debian: apt-get install libsecret-1-dev).
#
#   scripts/compat-study.sh [--force] [--dir DIR] [--only PKG] [--timeout SECONDS] [--markdown]
#
# --dir      cache directory (default .cache/compat): DIR/pkgs/NAME holds each install,
#            DIR/reports/NAME.{json,stderr,exit} each report, NAME.trace.jsonl the wire (with
#            the tools/list answer), DIR/work/NAME each scratch dir
# --force    reinstall and check again even what is already there
# --only     one package of the sample (repeatable)
# --timeout  bound of one check, whole (default 120)
# --markdown print the summary as the tables of docs/compatibility.md
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dir=$root/.cache/compat
force=0
limit=120
only=()
summary_args=()
while [ $# -gt 0 ]; do
	case $1 in
	--force) force=1 ;;
	--dir) dir=$2; shift ;;
	--only) only+=("$2"); shift ;;
	--timeout) limit=$2; shift ;;
	--markdown) summary_args+=(--markdown) ;;
	*) echo "usage: $0 [--force] [--dir DIR] [--only PKG] [--timeout SECONDS] [--markdown]" >&2; exit 2 ;;
	esac
	shift
done
mkdir -p "$dir/pkgs" "$dir/reports" "$dir/work" "$dir/home"
dir=$(cd "$dir" && pwd)

mcpi=$dir/mcpi
if [ $force = 1 ] || [ ! -x "$mcpi" ] || [ "$(cat "$dir/mcpi.commit" 2>/dev/null)" != "$(git -C "$root" rev-parse HEAD)" ]; then
	(cd "$root" && go build -o "$mcpi" ./cmd/mcpi)
	git -C "$root" rev-parse HEAD > "$dir/mcpi.commit"
fi

# name of a package as a file name: @scope/pkg -> scope__pkg
slug() { local s=${1#@}; echo "${s//\//__}"; }

# the executable of an installed package: its only bin, or the one named like the package
# (without scope), or else one whose name has "mcp" in it, or else the first
find_bin() {
	local prefix=$1 pkg=$2
	node -e '
		const [prefix, pkg] = process.argv.slice(1);
		const p = require(prefix + "/node_modules/" + pkg + "/package.json");
		let names = typeof p.bin === "string" ? [p.name.replace(/^@[^/]*\//, "")] : Object.keys(p.bin || {});
		if (!names.length) process.exit(1);
		const base = pkg.replace(/^@[^/]*\//, "");
		const name = names.length === 1 ? names[0] : (names.find(n => n === base) || names.find(n => /mcp/.test(n)) || names[0]);
		console.log(prefix + "/node_modules/.bin/" + name);
	' "$prefix" "$pkg"
}

# files some servers of the sample read at start (see the sample's notes)
seed_work() {
	local work=$1
	mkdir -p "$work"
	cat > "$work/openapi.json" <<'JSON'
{"openapi":"3.0.0","info":{"title":"dummy","version":"1"},"paths":{"/items":{"get":{"operationId":"listItems","summary":"List items","parameters":[{"name":"limit","in":"query","schema":{"type":"integer"}}],"responses":{"200":{"description":"ok"}}},"post":{"operationId":"createItem","summary":"Create an item","requestBody":{"content":{"application/json":{"schema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}}},"responses":{"201":{"description":"created"}}}}}}
JSON
	echo '{"servers":[]}' > "$work/cclsp.json"
	echo '{"installed":{"client_id":"DUMMY.apps.googleusercontent.com","client_secret":"DUMMY_SECRET","redirect_uris":["http://localhost"]}}' > "$work/gcp-oauth.keys.json"
}

while IFS=$'\t' read -r -u 3 pkg version downloads command envs note; do
	case $pkg in '#'*|'') continue ;; esac
	if [ ${#only[@]} -gt 0 ]; then
		hit=0; for o in "${only[@]}"; do [ "$o" = "$pkg" ] && hit=1; done
		[ $hit = 1 ] || continue
	fi
	s=$(slug "$pkg")
	prefix=$dir/pkgs/$s
	report=$dir/reports/$s
	work=$dir/work/$s

	if [ $force = 1 ] || [ ! -f "$prefix/.installed" ] || [ "$(cat "$prefix/.installed")" != "$version" ]; then
		echo "install $pkg@$version" >&2
		rm -rf "$prefix" "$report".*
		mkdir -p "$prefix"
		if ! PUPPETEER_SKIP_DOWNLOAD=1 PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 \
			npm install --prefix "$prefix" --no-audit --no-fund --no-save --loglevel=error \
			"$pkg@$version" > "$prefix/install.log" 2>&1; then
			echo "  install failed: see $prefix/install.log" >&2
			echo install-failed > "$report.exit"
			continue
		fi
		echo "$version" > "$prefix/.installed"
	fi

	if [ $force = 0 ] && [ -f "$report.exit" ]; then
		continue
	fi
	seed_work "$work"
	if ! bin=$(find_bin "$prefix" "$pkg"); then
		echo "  $pkg has no bin" >&2
		echo no-bin > "$report.exit"
		continue
	fi
	command=${command//\$BIN/$bin}
	command=${command//\$WORK/$work}
	envs=${envs//\$WORK/$work}
	args=()
	if [ "$envs" != - ]; then
		for kv in $envs; do args+=(-e "$kv"); done
	fi
	read -r -a argv <<< "$command"
	echo "check $pkg" >&2
	rc=0
	# HOME is a directory of the study's own, so that no server reads the user's credentials
	# and mcpi remembers no era from an earlier run
	HOME=$dir/home timeout -k 10 "$limit" "$mcpi" check --json --timeout 30s --max-time 60s \
		--record "$report.trace.jsonl" --cwd "$work" "${args[@]}" -- "${argv[@]}" \
		> "$report.json" 2> "$report.stderr" || rc=$?
	echo "$rc" > "$report.exit"
	echo "  exit $rc" >&2
done 3< "$root/scripts/compat-sample.tsv"

python3 "$root/scripts/compat-summary.py" "${summary_args[@]}" "$root/scripts/compat-sample.tsv" "$dir/reports"
