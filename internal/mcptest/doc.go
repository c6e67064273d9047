// Package mcptest supports tests of mcpi against real MCP peers: it checks
// the frames mcpi sends against the JSON Schema of the revision in force,
// finds the repository's test data, and locates the npm reference server.
//
// Only tests import it.
package mcptest
