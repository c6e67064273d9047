// The 2026-07-28 revision deprecates sampling, roots and logging (SEP-2577),
// and the SDK marks their APIs deprecated; the demo must still exercise
// them, since legacy-era servers use them and an inspector has to show them.
//
//lint:file-ignore SA1019 the demo exercises the deprecated sampling, roots and logging features on purpose.

package demoserver

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The tools in this file ask the client for something: sampling, elicitation
// or roots, or they report progress and logs back to it.
//
// Sampling, elicitation and roots are written in the multi round-trip style
// (SEP-2322): the handler's first call returns InputRequests, and a second
// call finds the answers in InputResponses. On 2026-07-28 the client does the
// round trip; on earlier revisions the SDK's server middleware turns each
// input request into the legacy server-to-client request (sampling/
// createMessage, elicitation/create, roots/list) and calls the handler again.
// So one handler serves both eras, and a legacy client sees exactly the
// requests it expects.

// Keys of the input requests; the client echoes them in InputResponses.
const (
	sampleKey = "sample"
	elicitKey = "elicit"
	rootsKey  = "roots"
)

func (d *demo) addClientTools() {
	mcp.AddTool(d.server, &mcp.Tool{
		Name:        "long_running",
		Title:       "Long-running task",
		Description: "Works through `steps` steps, `interval_ms` apart. Sends notifications/progress when the request has a progressToken, logs each step at info, and stops when cancelled.",
		InputSchema: json.RawMessage(`{
			"type": "object",
			"properties": {
				"steps": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 5},
				"interval_ms": {"type": "integer", "minimum": 0, "maximum": 60000, "default": 500}
			}
		}`),
	}, longRunning)

	mcp.AddTool(d.server, &mcp.Tool{
		Name:        "sample",
		Title:       "Ask the client's model",
		Description: "Sends prompt to the client's LLM with sampling/createMessage and returns the reply.",
		InputSchema: json.RawMessage(`{
			"type": "object",
			"properties": {
				"prompt": {"type": "string", "description": "What to ask the model."},
				"system_prompt": {"type": "string"},
				"max_tokens": {"type": "integer", "minimum": 1, "default": 100}
			},
			"required": ["prompt"]
		}`),
	}, sample)

	mcp.AddTool(d.server, &mcp.Tool{
		Name:        "elicit",
		Title:       "Ask the user (form)",
		Description: "Asks the user to fill in a form with elicitation/create: strings, numbers, a boolean, and single and multi-select enums with and without titles. Returns the action and what the user answered.",
	}, elicit)

	mcp.AddTool(d.server, &mcp.Tool{
		Name:        "elicit_url",
		Title:       "Ask the user (URL)",
		Description: "Asks the user to visit a URL with a URL mode elicitation (2025-11-25). On accept it sends notifications/elicitation/complete, pretending the out-of-band step finished.",
	}, elicitURL)

	mcp.AddTool(d.server, &mcp.Tool{
		Name:        "list_roots",
		Title:       "List the client's roots",
		Description: "Asks the client for its roots with roots/list and returns them.",
	}, listRoots)

	mcp.AddTool(d.server, &mcp.Tool{
		Name:        "log",
		Title:       "Log at every level",
		Description: "Sends one notifications/message at each level from debug to emergency. The client sees those at or above the level it set with logging/setLevel; the SDK sends none before the client sets one.",
		InputSchema: json.RawMessage(`{
			"type": "object",
			"properties": {
				"logger": {"type": "string", "description": "The logger name to put on each message.", "default": "mcpi-demo"},
				"message": {"type": "string", "default": "hello from the demo server"}
			}
		}`),
	}, logAllLevels)
}

type longRunningArgs struct {
	Steps      int `json:"steps"`
	IntervalMS int `json:"interval_ms"`
}

func longRunning(ctx context.Context, req *mcp.CallToolRequest, args longRunningArgs) (*mcp.CallToolResult, any, error) {
	token := req.Params.GetProgressToken()
	interval := time.Duration(args.IntervalMS) * time.Millisecond
	t := time.NewTimer(interval)
	defer t.Stop()
	for step := 1; step <= args.Steps; step++ {
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-t.C:
			t.Reset(interval)
		}
		msg := fmt.Sprintf("step %d of %d", step, args.Steps)
		// Progress and logs are best effort: a client that went away
		// shows up as cancellation of ctx, which the loop handles.
		if token != nil {
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
				ProgressToken: token,
				Progress:      float64(step),
				Total:         float64(args.Steps),
				Message:       msg,
			})
		}
		_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Logger: "long_running", Data: msg})
	}
	return textResult("Finished %d steps.", args.Steps), nil, nil
}

type sampleArgs struct {
	Prompt       string `json:"prompt"`
	SystemPrompt string `json:"system_prompt"`
	MaxTokens    int64  `json:"max_tokens"`
}

func sample(_ context.Context, req *mcp.CallToolRequest, args sampleArgs) (*mcp.CallToolResult, any, error) {
	if caps := req.ClientCapabilities(); caps == nil || caps.Sampling == nil {
		return nil, nil, fmt.Errorf("the client did not declare the sampling capability")
	}
	answer, ok := req.Params.InputResponses[sampleKey]
	if !ok {
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{
			sampleKey: &mcp.CreateMessageParams{
				Messages:     []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: args.Prompt}}},
				SystemPrompt: args.SystemPrompt,
				MaxTokens:    args.MaxTokens,
				ModelPreferences: &mcp.ModelPreferences{
					Hints:                []*mcp.ModelHint{{Name: "claude"}},
					IntelligencePriority: 0.5,
					SpeedPriority:        0.8,
				},
			},
		}}, nil, nil
	}
	reply, ok := answer.(*mcp.CreateMessageWithToolsResult)
	if !ok {
		return nil, nil, fmt.Errorf("expected a sampling result, got %T", answer)
	}
	var text []string
	for _, c := range reply.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			text = append(text, t.Text)
		} else {
			text = append(text, fmt.Sprintf("[%T content]", c))
		}
	}
	return &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.TextContent{Text: strings.Join(text, "\n")},
		&mcp.TextContent{Text: fmt.Sprintf("(model %q, role %s, stop reason %q)", reply.Model, reply.Role, reply.StopReason)},
	}}, nil, nil
}

// elicitSchema has every property kind form mode allows (2025-11-25): the
// SDK checks it against those rules before sending it.
const elicitSchema = `{
	"type": "object",
	"properties": {
		"name": {"type": "string", "title": "Name", "description": "What should we call you?", "minLength": 1, "maxLength": 50, "default": "Ada"},
		"email": {"type": "string", "title": "Email", "format": "email"},
		"age": {"type": "integer", "title": "Age", "minimum": 0, "maximum": 150, "default": 36},
		"rating": {"type": "number", "title": "Rating", "description": "From 0 to 5.", "minimum": 0, "maximum": 5, "default": 4.5},
		"subscribe": {"type": "boolean", "title": "Subscribe to the newsletter", "default": false},
		"color": {"type": "string", "title": "Favourite colour", "enum": ["red", "green", "blue"], "default": "green"},
		"size": {
			"type": "string", "title": "T-shirt size",
			"oneOf": [{"const": "s", "title": "Small"}, {"const": "m", "title": "Medium"}, {"const": "l", "title": "Large"}],
			"default": "m"
		},
		"priority": {"type": "string", "title": "Priority (legacy enumNames)", "enum": ["low", "high"], "enumNames": ["Low", "High"]},
		"toppings": {
			"type": "array", "title": "Toppings", "minItems": 0, "maxItems": 2,
			"items": {"type": "string", "enum": ["cheese", "ham", "olives"]},
			"default": ["cheese"]
		},
		"languages": {
			"type": "array", "title": "Languages you speak",
			"items": {"anyOf": [{"const": "en", "title": "English"}, {"const": "fr", "title": "French"}, {"const": "ja", "title": "Japanese"}]}
		}
	},
	"required": ["name"]
}`

type elicitOutcome struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitempty"`
}

func elicit(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
	caps := req.ClientCapabilities()
	if caps == nil || caps.Elicitation == nil {
		return nil, nil, fmt.Errorf("the client did not declare the elicitation capability")
	}
	// An empty elicitation capability means form mode, for compatibility.
	if caps.Elicitation.Form == nil && caps.Elicitation.URL != nil {
		return nil, nil, fmt.Errorf("the client does not support form mode elicitation")
	}
	answer, ok := req.Params.InputResponses[elicitKey]
	if !ok {
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{
			elicitKey: &mcp.ElicitParams{
				Mode:            "form",
				Message:         "Tell the demo server a little about yourself.",
				RequestedSchema: json.RawMessage(elicitSchema),
			},
		}}, nil, nil
	}
	res, ok := answer.(*mcp.ElicitResult)
	if !ok {
		return nil, nil, fmt.Errorf("expected an elicitation result, got %T", answer)
	}
	return outcomeResult(res)
}

func outcomeResult(res *mcp.ElicitResult) (*mcp.CallToolResult, any, error) {
	out, err := json.MarshalIndent(elicitOutcome{Action: res.Action, Content: res.Content}, "", "  ")
	if err != nil {
		return nil, nil, err
	}
	return textResult("%s", out), nil, nil
}

func elicitURL(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
	caps := req.ClientCapabilities()
	if caps == nil || caps.Elicitation == nil || caps.Elicitation.URL == nil {
		return nil, nil, fmt.Errorf("the client did not declare the elicitation.url capability")
	}
	// 2025-11-25 identifies URL elicitations with an elicitationId, which the
	// completion notification refers to; 2026-07-28 removed both, leaving
	// correlation to requestState.
	legacy := req.ProtocolVersion() < firstModernVersion
	answer, ok := req.Params.InputResponses[elicitKey]
	if !ok {
		// The id travels in requestState, which comes back with the answer.
		// A real server must sign or encrypt requestState; the demo only
		// uses it to name the notification it sends.
		id := rand.Text()
		params := &mcp.ElicitParams{
			Mode:    "url",
			Message: "Open this page to connect the demo server to a (pretend) third-party account.",
			URL:     "https://example.com/mcpi-demo/connect?session=" + id,
		}
		if legacy {
			params.ElicitationID = id
		}
		return &mcp.CallToolResult{
			InputRequests: mcp.InputRequestMap{elicitKey: params},
			RequestState:  id,
		}, nil, nil
	}
	res, ok := answer.(*mcp.ElicitResult)
	if !ok {
		return nil, nil, fmt.Errorf("expected an elicitation result, got %T", answer)
	}
	if res.Action == "accept" && legacy && req.Params.RequestState != "" {
		// Accepting only means the user agreed to go; the interaction
		// happens out of band. The demo pretends it finished at once.
		if err := req.Session.NotifyElicitationComplete(ctx, &mcp.ElicitationCompleteParams{ElicitationID: req.Params.RequestState}); err != nil {
			return nil, nil, fmt.Errorf("sending notifications/elicitation/complete: %w", err)
		}
	}
	return outcomeResult(res)
}

func listRoots(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
	if caps := req.ClientCapabilities(); caps == nil || caps.RootsV2 == nil {
		return nil, nil, fmt.Errorf("the client did not declare the roots capability")
	}
	answer, ok := req.Params.InputResponses[rootsKey]
	if !ok {
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{rootsKey: &mcp.ListRootsParams{}}}, nil, nil
	}
	res, ok := answer.(*mcp.ListRootsResult)
	if !ok {
		return nil, nil, fmt.Errorf("expected a roots/list result, got %T", answer)
	}
	if len(res.Roots) == 0 {
		return textResult("The client has no roots."), nil, nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "The client has %d root(s):", len(res.Roots))
	for _, r := range res.Roots {
		fmt.Fprintf(&b, "\n%s", r.URI)
		if r.Name != "" {
			fmt.Fprintf(&b, " (%s)", r.Name)
		}
	}
	return textResult("%s", b.String()), nil, nil
}

type logArgs struct {
	Logger  string `json:"logger"`
	Message string `json:"message"`
}

// logLevels are the syslog severities MCP uses, least severe first.
var logLevels = []mcp.LoggingLevel{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

func logAllLevels(ctx context.Context, req *mcp.CallToolRequest, args logArgs) (*mcp.CallToolResult, any, error) {
	for i, level := range logLevels {
		// data may be any JSON value; alternate strings and objects so an
		// inspector shows both.
		var data any = fmt.Sprintf("%s (%s)", args.Message, level)
		if i%2 == 1 {
			data = map[string]any{"message": args.Message, "level": level, "seq": i + 1}
		}
		if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: level, Logger: args.Logger, Data: data}); err != nil {
			return nil, nil, fmt.Errorf("sending the %s message: %w", level, err)
		}
	}
	return textResult("Sent %d log messages, debug to emergency, from logger %q. Only those at or above the client's logging/setLevel level are delivered, and none if it never set one.", len(logLevels), args.Logger), nil, nil
}

// declaredCapabilities names the capabilities in caps, for read_only_info.
func declaredCapabilities(caps *mcp.ClientCapabilities) []string {
	names := []string{}
	if caps == nil {
		return names
	}
	if caps.RootsV2 != nil {
		names = append(names, "roots")
	}
	if caps.Sampling != nil {
		names = append(names, "sampling")
	}
	if e := caps.Elicitation; e != nil {
		switch {
		case e.Form != nil && e.URL != nil:
			names = append(names, "elicitation (form, url)")
		case e.URL != nil:
			names = append(names, "elicitation (url)")
		default:
			names = append(names, "elicitation (form)")
		}
	}
	for _, name := range slices.Sorted(maps.Keys(caps.Extensions)) {
		names = append(names, "extension "+name)
	}
	for _, name := range slices.Sorted(maps.Keys(caps.Experimental)) {
		names = append(names, "experimental "+name)
	}
	return names
}
