// Package replay turns a recorded trace back into behaviour: a mock MCP
// server that answers with the recorded responses (Server), a verifier that
// re-sends the recorded requests to a live server and diffs the answers
// (Verify), and the structural JSON diff they share.
//
// It imports record (to read traces), session (to drive a live server), mcp
// and transport. Front ends import it.
package replay
