#!/usr/bin/env bash
# Builds Jaeger (an OpenTelemetry trace receiver with a query API), pinned
# by the tools module scripts/jaeger/go.mod (never mcpi's go.mod), into
# .cache/tools (ignored by git). internal/otlp's TestJaegerRoundTrip sends
# a session's spans to it over OTLP/HTTP and reads them back.
# Cold (empty module and build caches) the build takes about 4 minutes on
# 2 cores; with Go's build cache warm, about half a minute. Safe to run
# again: it does nothing when the pinned version is built.
set -euo pipefail
cd "$(dirname "$0")/.."
JAEGER_VERSION=v1.76.0
out=.cache/tools/jaeger-$JAEGER_VERSION
if [ -x "$out" ]; then exit 0; fi
mkdir -p .cache/tools
start=$(date +%s)
(cd scripts/jaeger && go build -o "../../$out.tmp" github.com/jaegertracing/jaeger/cmd/jaeger)
mv "$out.tmp" "$out"
echo "jaeger.sh: built Jaeger $JAEGER_VERSION in $(( $(date +%s) - start )) s" >&2
