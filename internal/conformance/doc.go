// Package conformance holds no code: its test drives the real mcpi binary
// through the official MCP conformance suite (npm
// @modelcontextprotocol/conformance, installed pinned by scripts/deps.sh)
// and checks the suite's checks.json itself.
package conformance
