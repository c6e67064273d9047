package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcpi-dev/mcpi/internal/bounds"

	"github.com/mcpi-dev/mcpi/internal/genai"
	"github.com/mcpi-dev/mcpi/internal/llm"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// SampleOptions configure Sample.
type SampleOptions struct {
	// ID pairs the request and its answer in the trace ("sampling-1").
	ID string
	// Timeout bounds the model's answer (the request's --timeout); 0:
	// only ctx.
	Timeout time.Duration
	// Prices price the turn (llm.DefaultPrices when nil).
	Prices llm.Prices
	// Tap sees the turn's two model events (Purpose "sampling").
	Tap transport.Tap
	Now func() time.Time
}

// Sample answers a server's sampling/createMessage with model p: the
// request's messages, systemPrompt, maxTokens, temperature,
// stopSequences, and the tools and toolChoice of sampling with tools
// (2025-11-25) become one request to the model, and its turn the result,
// whose model is the model that answered. Tool calls of the model come
// back as tool_use blocks (stopReason toolUse) for the server to run: it
// sends their results in its next request.
//
// modelPreferences' hints and includeContext are recorded in the turn and
// not acted on: the model is the one the person chose, and mcpi has one
// server, whose context it does not add. Image and audio content is
// refused with an error that says so: the model is given text only, and a
// server that sends an image must not get an answer that pretends to have
// seen it.
//
// Every failure is an *mcp.RPCError for the server, saying what failed;
// nothing of the provider's key is in it (llm's errors carry none).
func Sample(ctx context.Context, p llm.Provider, params *mcp.CreateMessageParams, o SampleOptions) (*mcp.CreateMessageResult, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Prices == nil {
		o.Prices = llm.DefaultPrices()
	}
	if o.ID == "" {
		o.ID = "sampling"
	}
	spec := p.Name() + ":" + p.Model()
	req, err := SamplingRequest(params)
	if err != nil {
		return nil, &mcp.RPCError{Code: mcp.CodeInvalidParams, Message: "sampling with " + spec + ": " + err.Error()}
	}
	asked := genai.Turn{Op: genai.OpChat, ID: o.ID, Purpose: "sampling", Provider: p.Name(), Model: p.Model(),
		Messages: len(req.Messages), Tools: len(req.Tools), Hints: modelHints(params.ModelPreferences), IncludeContext: params.IncludeContext}
	tap(o.Tap, o.Now(), transport.Outgoing, asked)
	ctx, cancel := bounds.Clock{Name: "sampling model", D: o.Timeout}.Context(ctx)
	defer cancel()
	resp, err := p.Stream(ctx, req, nil)
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) && o.Timeout > 0 {
			err = fmt.Errorf("no answer within %v (the request's --timeout)", o.Timeout)
		}
		tap(o.Tap, o.Now(), transport.Incoming, genai.Turn{Op: genai.OpChat, ID: o.ID, Purpose: "sampling", Error: err.Error()})
		return nil, &mcp.RPCError{Code: mcp.CodeInternalError, Message: "sampling: the model " + spec + " failed: " + err.Error()}
	}
	cost, _ := o.Prices.Cost(p.Model(), resp.Usage)
	answer := answerTurn(o.ID, p.Name(), resp, TurnStats{Cost: cost})
	answer.Purpose = "sampling"
	tap(o.Tap, o.Now(), transport.Incoming, answer)
	res := SamplingResult(resp)
	if res.Model == "" {
		res.Model = p.Model()
	}
	return res, nil
}

// Sampler answers sampling requests with one model, numbering its turns
// in the trace (sampling-1, sampling-2...). CreateMessage may be called
// concurrently.
type Sampler struct {
	Model llm.Provider
	// Options are every request's; their ID is the Sampler's.
	Options SampleOptions
	n       atomic.Int64
}

// CreateMessage answers one sampling request with the model.
func (s *Sampler) CreateMessage(ctx context.Context, params *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	o := s.Options
	o.ID = fmt.Sprintf("sampling-%d", s.n.Add(1))
	return Sample(ctx, s.Model, params, o)
}

// Spec is the model's PROVIDER:MODEL as the person named it.
func (s *Sampler) Spec() string { return s.Model.Name() + ":" + s.Model.Model() }

// SamplingRequest makes the model request of a sampling request.
func SamplingRequest(params *mcp.CreateMessageParams) (*llm.Request, error) {
	req := &llm.Request{System: params.SystemPrompt, MaxTokens: int64(params.MaxTokens), Temperature: params.Temperature,
		StopSequences: params.StopSequences}
	for i, m := range params.Messages {
		var role llm.Role
		switch m.Role {
		case "user":
			role = llm.RoleUser
		case "assistant":
			role = llm.RoleAssistant
		default:
			return nil, fmt.Errorf("message %d has role %q (user or assistant)", i+1, clip(m.Role))
		}
		blocks, err := samplingBlocks(m.Content)
		if err != nil {
			return nil, fmt.Errorf("message %d: %v", i+1, err)
		}
		req.Messages = append(req.Messages, llm.Message{Role: role, Content: blocks})
	}
	if len(req.Messages) == 0 {
		return nil, errors.New("the request has no messages")
	}
	if len(params.Tools) > 0 && string(params.Tools) != "null" {
		var tools []mcp.Tool
		if err := json.Unmarshal(params.Tools, &tools); err != nil {
			return nil, fmt.Errorf("tools is not an array of tools: %v", err)
		}
		for _, t := range tools {
			req.Tools = append(req.Tools, llm.Tool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema})
		}
	}
	if len(params.ToolChoice) > 0 && string(params.ToolChoice) != "null" {
		var tc struct {
			Mode string `json:"mode"`
		}
		if err := json.Unmarshal(params.ToolChoice, &tc); err != nil {
			return nil, fmt.Errorf("toolChoice is not an object: %v", err)
		}
		switch tc.Mode {
		case "", "auto":
			req.ToolChoice = llm.ToolChoiceAuto
		case "required":
			req.ToolChoice = llm.ToolChoiceRequired
		case "none":
			req.ToolChoice = llm.ToolChoiceNone
		default:
			return nil, fmt.Errorf("toolChoice mode %q (auto, required or none)", clip(tc.Mode))
		}
	}
	return req, nil
}

// samplingBlock is a content block of a sampling message: text, image,
// audio, tool_use (an assistant's call) or tool_result (the server's
// result of one, whose content is blocks again).
type samplingBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	MimeType  string          `json:"mimeType,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"toolUseId,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"`
	// Structured is a tool_result's structuredContent.
	Structured json.RawMessage `json:"structuredContent,omitempty"`
	IsError    bool            `json:"isError,omitempty"`
}

// oneOrMany reads a content that is one block or an array of blocks.
func oneOrMany(raw json.RawMessage) ([]samplingBlock, error) {
	if t := strings.TrimSpace(string(raw)); strings.HasPrefix(t, "[") {
		var bs []samplingBlock
		err := json.Unmarshal(raw, &bs)
		return bs, err
	}
	var b samplingBlock
	if err := json.Unmarshal(raw, &b); err != nil {
		return nil, err
	}
	return []samplingBlock{b}, nil
}

func samplingBlocks(raw json.RawMessage) ([]llm.Block, error) {
	bs, err := oneOrMany(raw)
	if err != nil {
		return nil, fmt.Errorf("content is not a content block or an array of them: %v", err)
	}
	out := make([]llm.Block, 0, len(bs))
	for _, b := range bs {
		switch b.Type {
		case "text":
			out = append(out, llm.Block{Type: llm.BlockText, Text: b.Text})
		case "tool_use":
			input := b.Input
			if len(input) == 0 {
				input = json.RawMessage("{}")
			}
			out = append(out, llm.Block{Type: llm.BlockToolUse, ID: b.ID, Name: b.Name, Input: input})
		case "tool_result":
			text, err := toolResultText(b)
			if err != nil {
				return nil, err
			}
			out = append(out, llm.Block{Type: llm.BlockToolResult, ID: b.ToolUseID, Text: text, IsError: b.IsError})
		case "image", "audio":
			return nil, fmt.Errorf("%s content (%s) is not sent to a model by mcpi, which gives it text only; answer this request by hand or with --sampling-reply", b.Type, clip(b.MimeType))
		default:
			return nil, fmt.Errorf("content of type %q is not one of text, image, audio, tool_use, tool_result", clip(b.Type))
		}
	}
	return out, nil
}

// toolResultText is a tool_result as the model is given it: its text
// blocks, else its structured content.
func toolResultText(b samplingBlock) (string, error) {
	var parts []string
	if len(b.Content) > 0 {
		inner, err := oneOrMany(b.Content)
		if err != nil {
			return "", fmt.Errorf("the tool_result of %q has content that is not blocks: %v", clip(b.ToolUseID), err)
		}
		for _, c := range inner {
			switch c.Type {
			case "text":
				parts = append(parts, c.Text)
			case "image", "audio":
				return "", fmt.Errorf("the tool_result of %q holds %s content, which mcpi does not send to a model (text only)", clip(b.ToolUseID), c.Type)
			default:
				parts = append(parts, "["+clip(c.Type)+"]")
			}
		}
	}
	if len(parts) == 0 && len(b.Structured) > 0 {
		parts = append(parts, string(b.Structured))
	}
	return strings.Join(parts, "\n"), nil
}

// SamplingResult is the model's turn as a CreateMessageResult: one text
// block when it only wrote text (what every revision takes), else an
// array of its text and tool_use blocks (sampling with tools,
// 2025-11-25), with stopReason in MCP's words (endTurn, stopSequence,
// maxTokens, toolUse; the others as llm names them).
func SamplingResult(resp *llm.Response) *mcp.CreateMessageResult {
	type block struct {
		Type  string          `json:"type"`
		Text  *string         `json:"text,omitempty"`
		ID    string          `json:"id,omitempty"`
		Name  string          `json:"name,omitempty"`
		Input json.RawMessage `json:"input,omitempty"`
	}
	var blocks []block
	for _, b := range resp.Message.Content {
		switch b.Type {
		case llm.BlockText:
			blocks = append(blocks, block{Type: "text", Text: &b.Text})
		case llm.BlockToolUse:
			blocks = append(blocks, block{Type: "tool_use", ID: b.ID, Name: b.Name, Input: b.Input})
		}
	}
	var content []byte
	switch {
	case len(resp.ToolCalls) > 0:
		content, _ = json.Marshal(blocks)
	case len(blocks) == 1:
		content, _ = json.Marshal(blocks[0])
	default:
		text := resp.Message.Text()
		content, _ = json.Marshal(block{Type: "text", Text: &text})
	}
	stop := string(resp.Finish)
	if stop == "" {
		stop = string(llm.FinishEndTurn)
	}
	return &mcp.CreateMessageResult{Role: "assistant", Content: content, Model: resp.Model, StopReason: stop}
}

// modelHints are the names of modelPreferences' hints.
func modelHints(prefs json.RawMessage) []string {
	var p struct {
		Hints []struct {
			Name string `json:"name"`
		} `json:"hints"`
	}
	if json.Unmarshal(prefs, &p) != nil {
		return nil
	}
	var names []string
	for _, h := range p.Hints {
		if h.Name != "" {
			names = append(names, clip(h.Name))
		}
	}
	return names
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

func tap(t transport.Tap, at time.Time, dir transport.Direction, turn genai.Turn) {
	if t != nil {
		t.Observe(genai.Event(at, dir, turn))
	}
}
