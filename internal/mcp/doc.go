// Package mcp holds the Model Context Protocol types shared by every layer of
// mcpi: JSON-RPC messages, protocol revisions and the request, result and
// notification shapes of each revision.
//
// The types are tolerant on purpose. An inspector must show what a server
// sent even when it is wrong, so schemas, metadata and anything open-ended
// stay as raw JSON, unknown fields are ignored rather than rejected, and
// results keep the raw bytes they were decoded from.
//
// This package imports nothing else from mcpi.
package mcp
