#!/bin/sh
# The client command the official conformance suite runs:
#   conformance client --command scripts/conformance-client.sh --scenario NAME
# The suite appends the mock server's URL as the last argument, names the
# scenario in MCP_CONFORMANCE_SCENARIO and, for scenarios tied to a
# revision, the revision in MCP_CONFORMANCE_PROTOCOL_VERSION. Each scenario
# maps to the ordinary mcpi commands a user would run. MCPI names the binary
# (default: mcpi on PATH) and NODE a node binary for the steps that reshape
# JSON.
set -eu
for url; do :; done
MCPI=${MCPI:-mcpi}
NODE=${NODE:-node}
export MCPI
T="--timeout ${MCPI_CONFORMANCE_TIMEOUT:-20s}"
P=""
if [ -n "${MCP_CONFORMANCE_PROTOCOL_VERSION:-}" ]; then
  P="--protocol-version $MCP_CONFORMANCE_PROTOCOL_VERSION"
fi
status=0
case "${MCP_CONFORMANCE_SCENARIO:?MCP_CONFORMANCE_SCENARIO is not set}" in
initialize)
  exec "$MCPI" info --json $T $P "$url" ;;
tools_call)
  exec "$MCPI" call add_numbers a=5 b=3 --json $T $P "$url" ;;
elicitation-sep1034-client-defaults)
  # Accept with nothing typed: every field takes the schema's default.
  exec "$MCPI" call test_client_elicitation_defaults --elicit accept --json $T $P "$url" ;;
sse-retry)
  exec "$MCPI" call test_reconnection --json $T $P "$url" ;;
json-schema-2020-12-preservation)
  # Echo the tool's inputSchema back exactly as it was listed.
  "$MCPI" tools --json $T $P "$url" |
    "$NODE" -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const t=JSON.parse(s).find(t=>t.name==="json_schema_2020_12_tool");process.stdout.write(JSON.stringify({schema:t.inputSchema}))})' |
    exec "$MCPI" call json_schema_echo --args - --json $T $P "$url" ;;
json-schema-ref-no-deref)
  exec "$MCPI" tools --json $T $P "$url" ;;
request-metadata)
  # The server refuses the first request with -32022; mcpi retries with a
  # revision from data.supported.
  exec "$MCPI" info --json --era modern $T "$url" ;;
sep-2322-client-request-state)
  "$MCPI" call test_mrtr_echo_state --elicit accept --elicit-field confirmed=true --json $T $P "$url" || status=1
  "$MCPI" call test_mrtr_no_state --elicit accept --elicit-field confirmed=true --json $T $P "$url" || status=1
  "$MCPI" call test_mrtr_unrelated --json $T $P "$url" || status=1
  "$MCPI" call test_mrtr_no_result_type --json $T $P "$url" || status=1
  exit $status ;;
http-standard-headers)
  "$MCPI" tools $T $P "$url" || status=1
  "$MCPI" call test_headers --json --no-validate $T $P "$url" || status=1
  "$MCPI" call my-hyphenated-tool --json --no-validate $T $P "$url" || status=1
  "$MCPI" resources $T $P "$url" || status=1
  "$MCPI" read 'file:///path/to/file%20name.txt' --json $T $P "$url" || status=1
  "$MCPI" read 'https://example.com/resource?id=123' --json $T $P "$url" || status=1
  "$MCPI" prompts $T $P "$url" || status=1
  "$MCPI" prompt test_prompt --json --force $T $P "$url" || status=1
  exit $status ;;
http-custom-headers)
  # The calls to make come in MCP_CONFORMANCE_CONTEXT.toolCalls.
  exec "$NODE" -e '
    const {execFileSync} = require("child_process");
    const ctx = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT || "{}");
    let failed = false;
    for (const t of ctx.toolCalls || []) {
      try {
        execFileSync(process.env.MCPI, ["call", t.name, "--args", JSON.stringify(t.arguments || {}),
          "--no-validate", "--json", ...process.argv.slice(1)], {stdio: "inherit"});
      } catch (e) { failed = true; }
    }
    process.exit(failed ? 1 : 0);' -- $T $P "$url" ;;
http-invalid-tool-headers)
  # Call every tool mcpi keeps: the ones with invalid x-mcp-header
  # annotations are dropped from the list, so they are never called.
  "$MCPI" tools --json $T $P "$url" | exec "$NODE" -e '
    const {execFileSync} = require("child_process");
    let s = "";
    process.stdin.on("data", d => s += d).on("end", () => {
      let failed = false;
      for (const t of JSON.parse(s)) {
        try {
          execFileSync(process.env.MCPI, ["call", t.name, "region=us-west1", "--no-validate", "--json",
            ...process.argv.slice(1)], {stdio: ["ignore", "inherit", "inherit"]});
        } catch (e) { failed = true; }
      }
      process.exit(failed ? 1 : 0);
    });' -- $T $P "$url" ;;
sep-2640-client-no-prefetch)
  # List the skills: nothing of them is read before one is loaded.
  exec "$MCPI" skills $T $P "$url" ;;
sep-2640-client-verify-*)
  # Load the skill: its SKILL.md fails verification (digest, size or
  # frontmatter), so mcpi shows none of it, reads no other file of it, and
  # exits 7.
  exec "$MCPI" skill pdf-processing $T $P "$url" ;;
auth/*)
  # OAuth as a user in CI runs it: no browser (--oauth-headless reads the
  # code from the mock authorization server's redirect), a token store of
  # this run only, mcpi's client ID metadata document URL for servers that
  # support them, and pre-registered credentials when the context has some.
  # Secrets, keys and assertions go by environment variable or by a file of
  # mode 0600, never on the command line. The machine-to-machine grants,
  # DPoP and enterprise-managed authorization are flags of their own.
  # Calling test-tool lists the tools first: two authorized requests, as
  # step-up and authorization server migration need.
  MCPI_CONFIG_DIR=$(mktemp -d)
  export MCPI_CONFIG_DIR
  ctx() {
    "$NODE" -e 'const c = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT || "{}"); process.stdout.write(String(c[process.argv[1]] || ""))' "$1"
  }
  client_id=$(ctx client_id)
  MCPI_CLIENT_SECRET=$(ctx client_secret)
  export MCPI_CLIENT_SECRET
  set -- --oauth-headless --client-metadata-url https://conformance-test.local/client-metadata.json
  case "$MCP_CONFORMANCE_SCENARIO" in
  auth/client-credentials-basic)
    set -- --grant client_credentials ;;
  auth/client-credentials-jwt)
    ctx private_key_pem >"$MCPI_CONFIG_DIR/client-key.pem"
    chmod 600 "$MCPI_CONFIG_DIR/client-key.pem"
    set -- --grant client_credentials --client-assertion-key "$MCPI_CONFIG_DIR/client-key.pem" ;;
  auth/wif-jwt-bearer)
    MCPI_OAUTH_ASSERTION=$(ctx valid_jwt)
    export MCPI_OAUTH_ASSERTION
    set -- --grant jwt-bearer ;;
  auth/enterprise-managed-authorization)
    MCPI_OAUTH_ID_TOKEN=$(ctx idp_id_token)
    export MCPI_OAUTH_ID_TOKEN
    set -- --grant id-jag --idp-issuer "$(ctx idp_issuer)" --idp-client-id "$(ctx idp_client_id)" ;;
  auth/dpop|auth/dpop-nonce)
    set -- "$@" --dpop ;;
  esac
  "$MCPI" call test-tool --json "$@" ${client_id:+--client-id "$client_id"} $T $P "$url" || status=$?
  rm -rf "$MCPI_CONFIG_DIR"
  exit $status ;;
*)
  echo "conformance-client: no mapping for scenario $MCP_CONFORMANCE_SCENARIO" >&2
  exit 2 ;;
esac
