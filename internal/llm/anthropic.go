package llm

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"
	openaisse "github.com/openai/openai-go/v3/packages/ssestream"
)

// anthropicProvider speaks the Anthropic Messages API, streaming.
type anthropicProvider struct {
	*conn
	svc anthropic.MessageService
}

func newAnthropic(c *conn) *anthropicProvider {
	// The service, not anthropic.NewClient: the client reads the
	// environment (ANTHROPIC_BASE_URL, profiles, custom headers) and mcpi
	// decides alone where its requests go. The SDK's own spans are off:
	// mcpi writes the GenAI spans, and sends no trace context to the
	// provider.
	return &anthropicProvider{conn: c, svc: anthropic.NewMessageService(
		option.WithBaseURL(c.base.String()),
		option.WithHTTPClient(c.client),
		option.WithAPIKey(string(c.key)),
		option.WithMaxRetries(c.opts.MaxRetries),
		option.WithoutOpenTelemetry(),
	)}
}

func (a *anthropicProvider) params(req *Request, t *turn) (anthropic.MessageNewParams, error) {
	p := anthropic.MessageNewParams{
		Model:         anthropic.Model(a.model),
		MaxTokens:     first64(req.MaxTokens, DefaultMaxTokens),
		StopSequences: req.StopSequences,
	}
	if req.System != "" {
		p.System = []anthropic.TextBlockParam{{Text: req.System}}
	}
	if req.Temperature != nil {
		t.warn("temperature is not sent: the Anthropic Messages API of SDK v2 takes none")
	}
	if req.Seed != nil {
		t.warn("seed is not sent: the Anthropic Messages API takes none")
	}
	for _, m := range req.Messages {
		var blocks []anthropic.ContentBlockParamUnion
		for _, b := range m.Content {
			switch b.Type {
			case BlockText:
				blocks = append(blocks, anthropic.NewTextBlock(b.Text))
			case BlockToolUse:
				blocks = append(blocks, anthropic.NewToolUseBlock(b.ID, rawOrEmpty(b.Input), b.Name))
			case BlockToolResult:
				blocks = append(blocks, anthropic.NewToolResultBlock(b.ID, b.Text, b.IsError))
			}
		}
		if m.Role == RoleAssistant {
			p.Messages = append(p.Messages, anthropic.NewAssistantMessage(blocks...))
		} else {
			p.Messages = append(p.Messages, anthropic.NewUserMessage(blocks...))
		}
	}
	for _, tool := range req.Tools {
		tp := anthropic.ToolParam{
			Name:        tool.Name,
			InputSchema: param.Override[anthropic.ToolInputSchemaParam](rawOrEmpty(tool.InputSchema)),
		}
		if tool.Description != "" {
			tp.Description = param.NewOpt(tool.Description)
		}
		p.Tools = append(p.Tools, anthropic.ToolUnionParam{OfTool: &tp})
	}
	if len(req.Tools) > 0 {
		switch req.ToolChoice {
		case ToolChoiceRequired:
			p.ToolChoice = anthropic.ToolChoiceUnionParam{OfAny: &anthropic.ToolChoiceAnyParam{}}
		case ToolChoiceNone:
			p.ToolChoice = anthropic.ToolChoiceUnionParam{OfNone: &anthropic.ToolChoiceNoneParam{}}
		}
	}
	return p, nil
}

// Stream sends the request and reads the events with the SDK's
// Message.Accumulate, but for text deltas: Accumulate appends each to a
// string, copying the whole text at every delta, so the text is kept in
// the turn's builder instead.
func (a *anthropicProvider) Stream(ctx context.Context, req *Request, on func(Event)) (*Response, error) {
	t := newTurn(a.conn, req, on)
	p, err := a.params(req, t)
	if err != nil {
		return nil, err
	}
	m := a.newMeter(ctx)
	stream := a.svc.NewStreaming(ctx, p, option.WithMiddleware(m.middleware))
	defer stream.Close()
	var acc anthropic.Message
	stopped := false
	for stream.Next() {
		ev := stream.Current()
		switch ev.Type {
		case "content_block_delta":
			if ev.Delta.Type == "text_delta" {
				if ev.Index < 0 || ev.Index >= int64(len(acc.Content)) {
					return nil, a.streamError(m, "a text delta for block %d, which did not start", ev.Index)
				}
				t.addText(ev.Delta.Text)
				continue
			}
		case "content_block_stop":
			// Accumulate empties input that is not JSON: take it first.
			if ev.Index >= 0 && ev.Index < int64(len(acc.Content)) {
				if b := acc.Content[ev.Index]; b.Type == "tool_use" {
					t.toolCall(b.ID, b.Name, string(b.Input), nil)
				}
			}
		case "message_stop":
			stopped = true
		}
		if err := acc.Accumulate(ev); err != nil {
			return nil, a.streamError(m, "%v", err)
		}
	}
	if err := stream.Err(); err != nil {
		return nil, a.fail(ctx, m, err)
	}
	if !stopped {
		return nil, a.streamError(m, "the stream ended before message_stop")
	}
	u := Usage{
		InputTokens:      acc.Usage.InputTokens + acc.Usage.CacheReadInputTokens + acc.Usage.CacheCreationInputTokens,
		OutputTokens:     acc.Usage.OutputTokens,
		CacheReadTokens:  acc.Usage.CacheReadInputTokens,
		CacheWriteTokens: acc.Usage.CacheCreationInputTokens,
	}
	raw := string(acc.StopReason)
	return t.finish(m, u, []string{raw}, anthropicFinish(raw), string(acc.Model), acc.ID), nil
}

func anthropicFinish(r string) FinishReason {
	switch r {
	case "end_turn":
		return FinishEndTurn
	case "tool_use":
		return FinishToolUse
	case "max_tokens", "model_context_window_exceeded":
		return FinishMaxTokens
	case "stop_sequence":
		return FinishStopSequence
	case "refusal":
		return FinishRefusal
	}
	return FinishOther
}

// streamError is a stream that broke the format.
func (c *conn) streamError(m *meter, format string, args ...any) *Error {
	if f := m.failure(); f != nil {
		return f
	}
	return newError(c.name, c.key, ErrStream, 0, "%s: malformed stream: "+format, append([]any{c.name}, args...)...)
}

// fail classifies what a stream or request ended with. An error event
// inside a stream (the APIs send one with a 200) is read for its message.
func (c *conn) fail(ctx context.Context, m *meter, err error) *Error {
	if f := m.failure(); f != nil {
		return f
	}
	status, header, body := m.errorStatus()
	if status != 0 {
		return c.classify(ctx, m, status, body, header, err)
	}
	raw := ""
	var api interface{ RawJSON() string }
	var oaiStream *openaisse.StreamError
	switch {
	case errors.As(err, &api):
		raw = api.RawJSON()
	case errors.As(err, &oaiStream):
		raw = string(oaiStream.Event.Data)
	}
	if raw != "" {
		var v struct {
			Type  string `json:"type"`
			Error struct {
				Type string `json:"type"`
				Code any    `json:"code"`
			} `json:"error"`
		}
		_ = json.Unmarshal([]byte(raw), &v)
		switch v.Error.Type {
		case "overloaded_error":
			return newError(c.name, c.key, ErrOverloaded, 0, "%s is overloaded (an error event in the stream): %s", c.name, providerMessage(raw))
		case "rate_limit_error":
			return newError(c.name, c.key, ErrRateLimited, 0, "%s is rate limited (an error event in the stream): %s", c.name, providerMessage(raw))
		}
		return newError(c.name, c.key, ErrServer, 0, "%s sent an error in the stream: %s", c.name, providerMessage(raw))
	}
	return c.classify(ctx, m, 0, "", nil, err)
}

func first64(v, d int64) int64 {
	if v > 0 {
		return v
	}
	return d
}

func rawOrEmpty(r json.RawMessage) json.RawMessage {
	if len(r) == 0 {
		return json.RawMessage("{}")
	}
	return r
}
