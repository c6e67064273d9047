// Package transport moves raw JSON-RPC frames between mcpi and an MCP server:
// spawned processes over stdio, Streamable HTTP (2025-03-26 and later) and the
// legacy HTTP+SSE transport (2024-11-05).
//
// It knows bytes, frames and HTTP, and of MCP only what a transport must: the
// session id, the protocol-version header, SSE resumption and which message
// opened a stream. Every frame in both directions, every stderr line and every
// lifecycle change is reported to a Tap, which front ends and the recorder
// consume.
//
// A Streamable HTTP server that no longer knows the session a request
// carried (404, or 400 with a JSON-RPC error about the session) makes the
// request fail with a *SessionExpiredError; IsUnreachable tells an endpoint
// that cannot be reached from one that answered; WatchStream reports the
// standalone GET stream opening, failing to reopen, or refused. The session
// above turns these into its health.
//
// This package imports only internal/mcp and internal/bounds from mcpi.
package transport
