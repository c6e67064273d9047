#!/bin/sh
# The client command the official conformance suite runs:
#   conformance client --command scripts/conformance-client.sh --scenario NAME
# The suite appends the mock server's URL as the last argument and names the
# scenario in MCP_CONFORMANCE_SCENARIO. Each scenario maps to the ordinary
# mcpi commands a user would run; MCPI names the binary (default: mcpi on
# PATH) and NODE a node binary for the one step that reshapes JSON.
set -eu
for url; do :; done
MCPI=${MCPI:-mcpi}
NODE=${NODE:-node}
T="--timeout ${MCPI_CONFORMANCE_TIMEOUT:-20s}"
case "${MCP_CONFORMANCE_SCENARIO:?MCP_CONFORMANCE_SCENARIO is not set}" in
initialize)
  exec "$MCPI" info --json $T "$url" ;;
tools_call)
  exec "$MCPI" call add_numbers a=5 b=3 --json $T "$url" ;;
elicitation-sep1034-client-defaults)
  # Accept with nothing typed: every field takes the schema's default.
  exec "$MCPI" call test_client_elicitation_defaults --elicit accept --json $T "$url" ;;
sse-retry)
  exec "$MCPI" call test_reconnection --json $T "$url" ;;
json-schema-2020-12-preservation)
  # Echo the tool's inputSchema back exactly as it was listed.
  "$MCPI" tools --json $T "$url" |
    "$NODE" -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const t=JSON.parse(s).find(t=>t.name==="json_schema_2020_12_tool");process.stdout.write(JSON.stringify({schema:t.inputSchema}))})' |
    exec "$MCPI" call json_schema_echo --args - --json $T "$url" ;;
json-schema-ref-no-deref)
  exec "$MCPI" tools --json $T "$url" ;;
*)
  echo "conformance-client: no mapping for scenario $MCP_CONFORMANCE_SCENARIO" >&2
  exit 2 ;;
esac
