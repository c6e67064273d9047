package demoserver

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Completion values for prompt arguments and template variables.
var (
	greetStyles = []string{"casual", "formal", "pirate"}
	languages   = []string{"c", "cpp", "csharp", "go", "haskell", "java", "javascript", "kotlin", "python", "ruby", "rust", "swift", "typescript", "zig"}
)

func (d *demo) addPrompts() {
	d.server.AddPrompt(&mcp.Prompt{
		Name:        "greet",
		Title:       "Greet someone",
		Description: "A one-message prompt asking for a greeting. style completes.",
		Arguments: []*mcp.PromptArgument{
			{Name: "name", Title: "Name", Description: "Who to greet.", Required: true},
			{Name: "style", Title: "Style", Description: "casual (the default), formal or pirate."},
		},
	}, greet)

	d.server.AddPrompt(&mcp.Prompt{
		Name:        "code_review",
		Title:       "Review code",
		Description: "Asks for a review of a piece of code. language completes.",
		Arguments: []*mcp.PromptArgument{
			{Name: "code", Title: "Code", Description: "The code to review.", Required: true},
			{Name: "language", Title: "Language", Description: "The programming language of the code."},
		},
	}, codeReview)

	d.server.AddPrompt(&mcp.Prompt{
		Name:        "showcase",
		Title:       "Multi-message showcase",
		Description: "Several messages from both roles, carrying text, an embedded text resource, an embedded blob, an image, audio and a resource link.",
	}, d.showcase)
}

func invalidArgument(format string, args ...any) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

func userText(text string) *mcp.PromptMessage {
	return &mcp.PromptMessage{Role: "user", Content: &mcp.TextContent{Text: text}}
}

func greet(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	// The SDK does not check prompt arguments against their declarations.
	name := req.Params.Arguments["name"]
	if name == "" {
		return nil, invalidArgument(`missing required argument "name"`)
	}
	var ask string
	switch style := req.Params.Arguments["style"]; style {
	case "", "casual":
		ask = "Say a quick, friendly hi to %s."
	case "formal":
		ask = "Write a formal greeting addressed to %s."
	case "pirate":
		ask = "Greet %s the way a pirate would."
	default:
		return nil, invalidArgument("unknown style %q (want casual, formal or pirate)", style)
	}
	return &mcp.GetPromptResult{
		Description: "A greeting for " + name,
		Messages:    []*mcp.PromptMessage{userText(fmt.Sprintf(ask, name))},
	}, nil
}

func codeReview(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	code := req.Params.Arguments["code"]
	if code == "" {
		return nil, invalidArgument(`missing required argument "code"`)
	}
	lang := req.Params.Arguments["language"]
	what := "this code"
	if lang != "" {
		what = "this " + lang + " code"
	}
	return &mcp.GetPromptResult{
		Description: "A code review request",
		Messages: []*mcp.PromptMessage{
			userText(fmt.Sprintf("Please review %s. Point out bugs first, then style.\n\n```%s\n%s\n```", what, lang, code)),
		},
	}, nil
}

func (d *demo) showcase(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	return &mcp.GetPromptResult{
		Description: "Every kind of content a prompt message can carry",
		Messages: []*mcp.PromptMessage{
			userText("I'm going to show you a few things. First, a text file:"),
			{Role: "user", Content: &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
				URI: helloURI, MIMEType: "text/plain", Text: helloText,
			}}},
			{Role: "assistant", Content: &mcp.TextContent{Text: "Got it. What else?"}},
			{Role: "user", Content: &mcp.ImageContent{Data: d.logo, MIMEType: "image/png"}},
			{Role: "user", Content: &mcp.AudioContent{Data: d.tone, MIMEType: "audio/wav"}},
			{Role: "user", Content: &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
				URI: logoURI, MIMEType: "image/png", Blob: d.logo,
			}}},
			{Role: "assistant", Content: &mcp.ResourceLink{
				URI: configURI, Name: "config", MIMEType: "application/json",
				Description: "The rest is in the configuration.",
			}},
		},
	}, nil
}
