package common

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcpi-dev/mcpi/internal/mcp"
)

// OpenRequestMsg asks the root to open the modal of a queued request.
type OpenRequestMsg struct{ Req *Request }

// Method is the request's method, and "(url)" for an elicitation that
// asks the user to open a page.
func (r *Request) Method() string {
	if r.Kind == Consent {
		return "App"
	}
	if r.Kind == Sampling {
		return "sampling/createMessage"
	}
	if r.Elicit != nil && r.Elicit.Mode == "url" {
		return "elicitation/create (url)"
	}
	return "elicitation/create"
}

// Summary is what the request asks, in a line: the last text of a
// sampling request's messages, an elicitation's message.
func (r *Request) Summary() string {
	switch {
	case r.Sampling != nil:
		for i := len(r.Sampling.Messages) - 1; i >= 0; i-- {
			if t := ContentText(r.Sampling.Messages[i].Content); t != "" {
				return t
			}
		}
	case r.Elicit != nil:
		return r.Elicit.Message
	case r.Kind == Consent:
		return r.Question
	}
	return ""
}

// ContentText is the text of a sampling message's content (one block or an
// array of blocks); other blocks are named.
func ContentText(raw json.RawMessage) string {
	var blocks []mcp.Content
	if len(raw) > 0 && raw[0] == '[' {
		_ = json.Unmarshal(raw, &blocks)
	} else {
		var b mcp.Content
		if json.Unmarshal(raw, &b) == nil {
			blocks = []mcp.Content{b}
		}
	}
	var parts []string
	for _, b := range blocks {
		switch b.Type {
		case "text":
			parts = append(parts, b.Text)
		case "image", "audio":
			parts = append(parts, fmt.Sprintf("[%s %s]", b.Type, b.MimeType))
		default:
			parts = append(parts, "["+b.Type+"]")
		}
	}
	return strings.Join(parts, "\n")
}
