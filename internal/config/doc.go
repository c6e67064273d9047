// Package config reads the mcpServers-style configuration files that MCP hosts
// keep, so that a user can name a server (`--server NAME [--config FILE]`)
// instead of spelling out its command or URL.
//
// It understands Claude Desktop's claude_desktop_config.json, Claude Code's
// .mcp.json and ~/.claude.json, VS Code's mcp.json ("servers" and "inputs",
// JSONC), Cursor's mcp.json, the official MCP Inspector's config file and
// Windsurf's mcp_config.json, and it tolerates the usual variations between
// them (comments and trailing commas, "serverUrl", "streamable-http").
//
// Load and Parse read one file; Search reads the usual places; Find picks a
// server by name; Server.Resolve expands the ${...} variables the host that
// owns the file would expand. Loading never expands anything, so a listing can
// show the file as written and secrets stay out of it until Resolve.
//
// The package owns reading configuration files and nothing else: it starts no
// processes, opens no connections and prints nothing. It imports nothing else
// from mcpi.
package config
