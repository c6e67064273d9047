// Package proxy puts mcpi between a real MCP host (a desktop app, an IDE)
// and a real server, forwarding every byte unchanged in both directions
// while a transport.Tap (a trace writer) sees each frame: over stdio
// (RunStdio) and over Streamable HTTP (Handler).
//
// It imports transport and mcp only.
package proxy
