package demoserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Input schemas are written out as JSON, not inferred from Go types, wherever
// they carry defaults, enums or bounds: the Go types cannot say those, and
// the JSON is exactly what an inspector will display.

// addTools registers the tools that need nothing from the client.
func (d *demo) addTools(icons []mcp.Icon) {
	mcp.AddTool(d.server, &mcp.Tool{
		Name:        "echo",
		Title:       "Echo",
		Description: "Returns its text argument unchanged.",
		Icons:       icons,
	}, echo)

	mcp.AddTool(d.server, &mcp.Tool{
		Name:        "add",
		Title:       "Add two numbers",
		Description: "Adds a and b. The sum comes back as structuredContent, described by the outputSchema, and as JSON text.",
	}, add)

	mcp.AddTool(d.server, &mcp.Tool{
		Name:        "get_content_types",
		Title:       "Every content type",
		Description: "Returns one content block of each type: text, image, audio, resource_link, and embedded resources with text and with a blob. `only` picks a single one.",
		InputSchema: json.RawMessage(`{
			"type": "object",
			"properties": {
				"only": {
					"type": "string",
					"description": "Return only this content type.",
					"enum": ["text", "image", "audio", "resource_link", "resource_text", "resource_blob"]
				}
			}
		}`),
	}, d.contentTypes)

	mcp.AddTool(d.server, &mcp.Tool{
		Name:        "structured",
		Title:       "Structured weather report",
		Description: "Returns a made-up weather report as structuredContent with nested objects, arrays and nulls, matching its outputSchema.",
		InputSchema: json.RawMessage(`{
			"type": "object",
			"properties": {
				"city": {"type": "string", "description": "Any city name.", "default": "Paris"}
			}
		}`),
	}, structured)

	mcp.AddTool(d.server, &mcp.Tool{
		Name:        "fail",
		Title:       "Always fail",
		Description: "Fails on purpose. kind=tool (the default) returns a result with isError:true; kind=protocol returns a JSON-RPC error instead.",
		InputSchema: json.RawMessage(`{
			"type": "object",
			"properties": {
				"message": {"type": "string", "default": "this tool always fails"},
				"kind": {"type": "string", "enum": ["tool", "protocol"], "default": "tool"}
			}
		}`),
	}, fail)

	mcp.AddTool(d.server, &mcp.Tool{
		Name:        "delete_file",
		Title:       "Delete a file (pretend)",
		Description: "Claims to delete a file. Annotated as destructive so that clients ask for confirmation; it never touches the file system.",
		Annotations: &mcp.ToolAnnotations{
			Title:           "Delete a file",
			DestructiveHint: new(true),
			IdempotentHint:  true,
			OpenWorldHint:   new(false),
		},
	}, deleteFile)

	mcp.AddTool(d.server, &mcp.Tool{
		Name:        "read_only_info",
		Title:       "Session info",
		Description: "Reports what the server knows about this client and session. Annotated read-only, idempotent and closed-world.",
		Annotations: &mcp.ToolAnnotations{
			Title:          "Session info",
			ReadOnlyHint:   true,
			IdempotentHint: true,
			OpenWorldHint:  new(false),
		},
	}, readOnlyInfo)

	mcp.AddTool(d.server, &mcp.Tool{
		Name:        "nested_args",
		Title:       "Nested arguments",
		Description: "Takes an argument of every JSON Schema shape a form has to render, and returns them as received after defaults were applied.",
		InputSchema: json.RawMessage(nestedArgsSchema),
	}, nestedArgs)

	mcp.AddTool(d.server, &mcp.Tool{
		Name:        "big_output",
		Title:       "Big output",
		Description: "Returns a text block of exactly `bytes` bytes, for testing large frames.",
		InputSchema: json.RawMessage(fmt.Sprintf(`{
			"type": "object",
			"properties": {
				"bytes": {"type": "integer", "minimum": 0, "maximum": %d, "default": 1048576}
			}
		}`, maxBigOutput)),
	}, bigOutput)

	mcp.AddTool(d.server, &mcp.Tool{
		Name:        "slow",
		Title:       "Slow",
		Description: "Waits ms milliseconds, then answers. Cancelling the request ends the wait.",
		InputSchema: json.RawMessage(`{
			"type": "object",
			"properties": {
				"ms": {"type": "integer", "minimum": 0, "maximum": 600000, "default": 1000}
			}
		}`),
	}, slow)

	mcp.AddTool(d.server, &mcp.Tool{
		Name:        "toggle_tool",
		Title:       "Toggle a feature",
		Description: "Adds or removes an extra tool (or prompt, or resource, with kind), which makes the server send the matching notifications/*/list_changed.",
		InputSchema: json.RawMessage(`{
			"type": "object",
			"properties": {
				"kind": {"type": "string", "enum": ["tool", "prompt", "resource"], "default": "tool"}
			}
		}`),
	}, d.toggle)

	mcp.AddTool(d.server, &mcp.Tool{
		Name:        "bump_counter",
		Title:       "Bump the counter",
		Description: "Increments " + counterURI + ", which sends notifications/resources/updated to its subscribers.",
	}, d.bumpCounter)
}

func textResult(format string, args ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, args...)}}}
}

type echoArgs struct {
	Text string `json:"text" jsonschema:"the text to send back"`
}

func echo(_ context.Context, _ *mcp.CallToolRequest, args echoArgs) (*mcp.CallToolResult, any, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: args.Text}}}, nil, nil
}

type addArgs struct {
	A float64 `json:"a" jsonschema:"the first addend"`
	B float64 `json:"b" jsonschema:"the second addend"`
}

type addResult struct {
	Sum float64 `json:"sum" jsonschema:"a + b"`
}

func add(_ context.Context, _ *mcp.CallToolRequest, args addArgs) (*mcp.CallToolResult, addResult, error) {
	// A nil result lets the SDK fill content with the JSON of the output.
	return nil, addResult{Sum: args.A + args.B}, nil
}

type contentTypesArgs struct {
	Only string `json:"only"`
}

func (d *demo) contentTypes(_ context.Context, _ *mcp.CallToolRequest, args contentTypesArgs) (*mcp.CallToolResult, any, error) {
	blocks := []struct {
		kind    string
		content mcp.Content
	}{
		{"text", &mcp.TextContent{
			Text: "Plain text, with annotations saying who it is for and how much it matters.",
			Annotations: &mcp.Annotations{
				Audience:     []mcp.Role{"user", "assistant"},
				Priority:     0.8,
				LastModified: "2025-11-25T00:00:00Z",
			},
		}},
		{"image", &mcp.ImageContent{Data: d.logo, MIMEType: "image/png"}},
		{"audio", &mcp.AudioContent{Data: d.tone, MIMEType: "audio/wav"}},
		{"resource_link", &mcp.ResourceLink{
			URI:         helloURI,
			Name:        "hello",
			Title:       "Hello, world",
			Description: "A link the client can resolve with resources/read.",
			MIMEType:    "text/plain",
			Size:        new(int64(len(helloText))),
		}},
		{"resource_text", &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
			URI:      configURI,
			MIMEType: "application/json",
			Text:     configJSON,
		}}},
		{"resource_blob", &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
			URI:      logoURI,
			MIMEType: "image/png",
			Blob:     d.logo,
		}}},
	}
	res := &mcp.CallToolResult{}
	for _, b := range blocks {
		if args.Only == "" || args.Only == b.kind {
			res.Content = append(res.Content, b.content)
		}
	}
	return res, nil, nil
}

type structuredArgs struct {
	City string `json:"city"`
}

type weather struct {
	City        string       `json:"city"`
	Temperature temperature  `json:"temperature"`
	Conditions  []string     `json:"conditions"`
	Wind        *wind        `json:"wind" jsonschema:"null when calm"`
	Forecast    []forecast   `json:"forecast"`
	Alerts      []string     `json:"alerts" jsonschema:"empty when there are none"`
	Station     stationStamp `json:"station"`
}

type temperature struct {
	Celsius    float64 `json:"celsius"`
	Fahrenheit float64 `json:"fahrenheit"`
}

type wind struct {
	SpeedKPH  float64 `json:"speedKph"`
	Direction string  `json:"direction"`
}

type forecast struct {
	Day  string  `json:"day"`
	High float64 `json:"high"`
	Low  float64 `json:"low"`
	Rain bool    `json:"rain"`
}

type stationStamp struct {
	ID       string `json:"id"`
	Observed string `json:"observed"`
}

func structured(_ context.Context, _ *mcp.CallToolRequest, args structuredArgs) (*mcp.CallToolResult, weather, error) {
	// Made up, but deterministic, so that tests and recordings are stable.
	w := weather{
		City:        args.City,
		Temperature: temperature{Celsius: 21.5, Fahrenheit: 70.7},
		Conditions:  []string{"sunny", "light breeze"},
		Forecast: []forecast{
			{Day: "tomorrow", High: 23, Low: 14, Rain: false},
			{Day: "the day after", High: 19, Low: 12, Rain: true},
		},
		Alerts:  []string{},
		Station: stationStamp{ID: "DEMO-01", Observed: "2025-11-25T12:00:00Z"},
	}
	// Some cities are calm, so that both an object and a null show up.
	if len(args.City)%2 == 0 {
		w.Wind = &wind{SpeedKPH: 12, Direction: "NW"}
	}
	return nil, w, nil
}

type failArgs struct {
	Message string `json:"message"`
	Kind    string `json:"kind"`
}

func fail(_ context.Context, _ *mcp.CallToolRequest, args failArgs) (*mcp.CallToolResult, any, error) {
	if args.Kind == "protocol" {
		return nil, nil, &jsonrpc.Error{
			Code:    jsonrpc.CodeInternalError,
			Message: args.Message,
			Data:    json.RawMessage(`{"tool":"fail","kind":"protocol"}`),
		}
	}
	// Any other error becomes a result with isError:true and the message as text.
	return nil, nil, errors.New(args.Message)
}

type deleteFileArgs struct {
	Path string `json:"path" jsonschema:"the file to (pretend to) delete"`
}

func deleteFile(_ context.Context, _ *mcp.CallToolRequest, args deleteFileArgs) (*mcp.CallToolResult, any, error) {
	return textResult("Pretended to delete %s. Nothing was deleted: this is a demo.", args.Path), nil, nil
}

type sessionInfo struct {
	Server          string   `json:"server"`
	ServerVersion   string   `json:"serverVersion"`
	ProtocolVersion string   `json:"protocolVersion" jsonschema:"the revision this request was made under"`
	SessionID       string   `json:"sessionId,omitempty" jsonschema:"the transport session id, if the transport has one"`
	Client          string   `json:"client,omitempty"`
	ClientVersion   string   `json:"clientVersion,omitempty"`
	Capabilities    []string `json:"clientCapabilities" jsonschema:"the capabilities the client declared"`
}

func readOnlyInfo(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, sessionInfo, error) {
	info := sessionInfo{
		Server:          serverName,
		ServerVersion:   serverVersion,
		ProtocolVersion: req.ProtocolVersion(),
		SessionID:       req.Session.ID(),
		Capabilities:    declaredCapabilities(req.ClientCapabilities()),
	}
	if c := req.ClientInfo(); c != nil {
		info.Client, info.ClientVersion = c.Name, c.Version
	}
	return nil, info, nil
}

// nestedArgsSchema has one property of each shape: nested object, array of
// strings, array of objects, enum, integer with bounds, number, boolean,
// nullable, formatted string, defaults and required properties.
const nestedArgsSchema = `{
	"type": "object",
	"properties": {
		"name": {"type": "string", "title": "Name", "description": "Required, at least one character.", "minLength": 1},
		"count": {"type": "integer", "description": "Between 0 and 100.", "minimum": 0, "maximum": 100, "default": 3},
		"ratio": {"type": "number", "minimum": 0, "maximum": 1, "default": 0.5},
		"enabled": {"type": "boolean", "default": true},
		"color": {"type": "string", "enum": ["red", "green", "blue"], "default": "green"},
		"nickname": {"type": ["string", "null"], "description": "Nullable: send null to clear it.", "default": null},
		"when": {"type": "string", "format": "date-time", "description": "An RFC 3339 timestamp."},
		"tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true, "default": []},
		"address": {
			"type": "object",
			"description": "A nested object with its own required property and a nested object inside.",
			"properties": {
				"street": {"type": "string"},
				"city": {"type": "string"},
				"zip": {"type": "string", "pattern": "^[0-9]{5}$"},
				"geo": {
					"type": "object",
					"properties": {
						"lat": {"type": "number", "minimum": -90, "maximum": 90},
						"lon": {"type": "number", "minimum": -180, "maximum": 180}
					},
					"required": ["lat", "lon"]
				}
			},
			"required": ["city"]
		},
		"items": {
			"type": "array",
			"description": "An array of objects.",
			"items": {
				"type": "object",
				"properties": {
					"sku": {"type": "string"},
					"qty": {"type": "integer", "minimum": 1, "default": 1}
				},
				"required": ["sku"]
			},
			"maxItems": 10
		}
	},
	"required": ["name", "address"]
}`

func nestedArgs(_ context.Context, _ *mcp.CallToolRequest, args map[string]any) (*mcp.CallToolResult, any, error) {
	out, err := json.MarshalIndent(args, "", "  ")
	if err != nil {
		return nil, nil, err
	}
	return textResult("Arguments as received, after defaults:\n%s", out), nil, nil
}

// maxBigOutput bounds big_output so a typo cannot make the server allocate
// gigabytes; it is still well above the 50 MB result mcpi must handle.
const maxBigOutput = 128 << 20

type bigOutputArgs struct {
	Bytes int `json:"bytes"`
}

func bigOutput(_ context.Context, _ *mcp.CallToolRequest, args bigOutputArgs) (*mcp.CallToolResult, any, error) {
	// Printable ASCII, so the size in bytes is the size in characters and
	// nothing is escaped on the wire beyond the JSON string itself; the
	// repeating alphabet makes truncation visible.
	const pattern = "abcdefghijklmnopqrstuvwxyz0123456789\n"
	text := strings.Repeat(pattern, args.Bytes/len(pattern)+1)[:args.Bytes]
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
}

type slowArgs struct {
	MS int `json:"ms"`
}

func slow(ctx context.Context, _ *mcp.CallToolRequest, args slowArgs) (*mcp.CallToolResult, any, error) {
	d := time.Duration(args.MS) * time.Millisecond
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	case <-t.C:
		return textResult("Waited %v.", d), nil, nil
	}
}

type toggleArgs struct {
	Kind string `json:"kind"`
}

// The features toggle_tool adds and removes.
const (
	extraToolName    = "extra_tool"
	extraPromptName  = "extra_prompt"
	extraResourceURI = "demo://extra"
)

func (d *demo) toggle(_ context.Context, _ *mcp.CallToolRequest, args toggleArgs) (*mcp.CallToolResult, any, error) {
	d.toggleMu.Lock()
	defer d.toggleMu.Unlock()
	present := !d.toggled[args.Kind]
	d.toggled[args.Kind] = present

	// The SDK sends the list_changed notification itself, debounced, to
	// every session (and to modern sessions that subscribed to it).
	var name string
	switch args.Kind {
	case "prompt":
		name = extraPromptName
		if present {
			d.server.AddPrompt(&mcp.Prompt{Name: extraPromptName, Description: "Added by toggle_tool."},
				func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
					return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{
						{Role: "user", Content: &mcp.TextContent{Text: "This prompt comes and goes."}},
					}}, nil
				})
		} else {
			d.server.RemovePrompts(extraPromptName)
		}
	case "resource":
		name = extraResourceURI
		if present {
			d.server.AddResource(&mcp.Resource{URI: extraResourceURI, Name: "extra", MIMEType: "text/plain", Description: "Added by toggle_tool."},
				func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
					return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
						{URI: req.Params.URI, MIMEType: "text/plain", Text: "This resource comes and goes."},
					}}, nil
				})
		} else {
			d.server.RemoveResources(extraResourceURI)
		}
	default:
		name = extraToolName
		if present {
			mcp.AddTool(d.server, &mcp.Tool{Name: extraToolName, Title: "Extra tool", Description: "Added by toggle_tool."},
				func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
					return textResult("This tool comes and goes."), nil, nil
				})
		} else {
			d.server.RemoveTools(extraToolName)
		}
	}
	if present {
		return textResult("Added %s %s.", args.Kind, name), nil, nil
	}
	return textResult("Removed %s %s.", args.Kind, name), nil, nil
}

func (d *demo) bumpCounter(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
	return textResult("%s is now %d.", counterURI, d.bump(ctx)), nil, nil
}
