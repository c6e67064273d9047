package session

import "encoding/json"

// HeaderAnnotationError says why the x-mcp-header annotations of a tool's
// inputSchema make the tool invalid (2026-07-28 server/tools § x-mcp-header:
// a Streamable HTTP client must drop it), or returns nil.
func HeaderAnnotationError(inputSchema json.RawMessage) error {
	_, err := toolHeaderParams(inputSchema)
	return err
}
