// Package session is mcpi's MCP client core: a JSON-RPC engine over a
// transport.Conn, the protocol lifecycle, a typed API for every
// client->server method, and the dispatch of server->client requests to one
// Handler that a front end implements.
//
// It knows MCP and nothing about terminals: the TUI and the CLI are two front
// ends of the same Client. It imports internal/mcp and internal/transport.
package session
