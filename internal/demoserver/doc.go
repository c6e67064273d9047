// Package demoserver owns mcpi's built-in demo MCP server: the peer that
// `mcpi demo` inspects, and that tests and benchmarks talk to.
//
// It is built on the official Go SDK (github.com/modelcontextprotocol/go-sdk)
// rather than on mcpi's own protocol code, so that mcpi is always tested
// against a server nobody here wrote. For the same reason it must not import
// any other mcpi internal package.
//
// The server exists to exercise everything an inspector has to show: every
// content type, structured output, tool errors and protocol errors, tool
// annotations, progress and cancellation, sampling, form and URL
// elicitation, roots, logging at every level, list-changed and
// resource-updated notifications, pagination, resource templates and
// completions. It serves stdio ([RunStdio]), Streamable HTTP ([HTTPHandler])
// and the legacy HTTP+SSE transport ([SSEHandler]), and [Options.Era] picks
// which protocol revisions it accepts.
package demoserver
