package llm

import (
	"context"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/shared"
)

// chatProvider speaks OpenAI Chat Completions, streaming: OpenAI itself
// and any compatible server (Ollama, llama.cpp, vLLM, LM Studio, Gemini).
type chatProvider struct {
	*conn
	official bool // OpenAI itself: max_completion_tokens; others know max_tokens
	svc      openai.ChatCompletionService
}

func newChat(c *conn, official bool) *chatProvider {
	return &chatProvider{conn: c, official: official, svc: openai.NewChatCompletionService(openaiOptions(c)...)}
}

// openaiOptions are the options of both OpenAI services. The services, not
// openai.NewClient, which reads OPENAI_API_KEY and others from the
// environment: a compatible server must not get OpenAI's key.
func openaiOptions(c *conn) []option.RequestOption {
	opts := []option.RequestOption{
		option.WithBaseURL(c.base.String()),
		option.WithHTTPClient(c.client),
		option.WithMaxRetries(c.opts.MaxRetries),
	}
	if c.key != "" {
		opts = append(opts, option.WithAPIKey(string(c.key)))
	}
	return opts
}

func (o *chatProvider) params(req *Request) (openai.ChatCompletionNewParams, error) {
	p := openai.ChatCompletionNewParams{
		Model:         shared.ChatModel(o.model),
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: param.NewOpt(true)},
	}
	if req.MaxTokens > 0 {
		if o.official {
			p.MaxCompletionTokens = param.NewOpt(req.MaxTokens)
		} else {
			p.MaxTokens = param.NewOpt(req.MaxTokens)
		}
	}
	if req.Temperature != nil {
		p.Temperature = param.NewOpt(*req.Temperature)
	}
	if req.Seed != nil {
		p.Seed = param.NewOpt(*req.Seed)
	}
	if len(req.StopSequences) > 0 {
		p.Stop = openai.ChatCompletionNewParamsStopUnion{OfStringArray: req.StopSequences}
	}
	if req.System != "" {
		p.Messages = append(p.Messages, openai.SystemMessage(req.System))
	}
	for _, m := range req.Messages {
		if m.Role == RoleAssistant {
			p.Messages = append(p.Messages, chatAssistant(m))
			continue
		}
		for _, b := range m.Content {
			switch b.Type {
			case BlockText:
				p.Messages = append(p.Messages, openai.UserMessage(b.Text))
			case BlockToolResult:
				p.Messages = append(p.Messages, openai.ToolMessage(b.Text, b.ID))
			}
		}
	}
	for _, t := range req.Tools {
		schema, err := schemaMap(t.InputSchema)
		if err != nil {
			return p, newError(o.name, o.key, ErrRequest, 0, "%s: the schema of tool %q is not a JSON object: %v", o.name, clipSpec(t.Name), err)
		}
		fd := shared.FunctionDefinitionParam{Name: t.Name, Parameters: shared.FunctionParameters(schema)}
		if t.Description != "" {
			fd.Description = param.NewOpt(t.Description)
		}
		p.Tools = append(p.Tools, openai.ChatCompletionFunctionTool(fd))
	}
	if len(req.Tools) > 0 && req.ToolChoice != "" {
		p.ToolChoice = openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: param.NewOpt(string(req.ToolChoice))}
	}
	return p, nil
}

func chatAssistant(m Message) openai.ChatCompletionMessageParamUnion {
	var a openai.ChatCompletionAssistantMessageParam
	text := m.Text()
	if text != "" {
		a.Content.OfString = param.NewOpt(text)
	}
	for _, b := range m.Content {
		if b.Type != BlockToolUse {
			continue
		}
		a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
			OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
				ID:       b.ID,
				Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: b.Name, Arguments: string(rawOrEmpty(b.Input))},
			},
		})
	}
	return openai.ChatCompletionMessageParamUnion{OfAssistant: &a}
}

// Stream reads the chunks with the SDK's ChatCompletionAccumulator; the
// text comes from each chunk's delta, the tool calls from the accumulator
// as each finishes (parallel calls arrive by index).
func (o *chatProvider) Stream(ctx context.Context, req *Request, on func(Event)) (*Response, error) {
	t := newTurn(o.conn, req, on)
	p, err := o.params(req)
	if err != nil {
		return nil, err
	}
	m := o.newMeter(ctx)
	stream := o.svc.NewStreaming(ctx, p, option.WithMiddleware(m.middleware))
	defer stream.Close()
	var acc openai.ChatCompletionAccumulator
	done := 0 // tool calls handed on, in index order
	flush := func(upTo int) {
		calls := acc.Choices[0].Message.ToolCalls
		for ; done < upTo && done < len(calls); done++ {
			c := calls[done]
			t.toolCall(c.ID, c.Function.Name, c.Function.Arguments)
		}
	}
	for stream.Next() {
		chunk := stream.Current()
		if !acc.AddChunk(chunk) {
			return nil, o.streamError(m, "a chunk the accumulator refused (another id, or a choice or tool call index out of order)")
		}
		if len(chunk.Choices) > 0 && chunk.Choices[0].Index == 0 {
			if len(chunk.Choices[0].Delta.ToolCalls) > 0 {
				t.firstToken()
			}
			t.addText(chunk.Choices[0].Delta.Content)
		}
		if tc, ok := acc.JustFinishedToolCall(); ok {
			flush(tc.Index + 1)
		}
	}
	if err := stream.Err(); err != nil {
		return nil, o.fail(ctx, m, err)
	}
	if len(acc.Choices) == 0 || acc.Choices[0].FinishReason == "" {
		return nil, o.streamError(m, "the stream ended before a finish reason")
	}
	flush(len(acc.Choices[0].Message.ToolCalls))
	u := Usage{
		InputTokens:     acc.Usage.PromptTokens,
		OutputTokens:    acc.Usage.CompletionTokens,
		CacheReadTokens: acc.Usage.PromptTokensDetails.CachedTokens,
	}
	raw := acc.Choices[0].FinishReason
	return t.finish(m, u, []string{raw}, chatFinish(raw), acc.Model, acc.ID), nil
}

func chatFinish(r string) FinishReason {
	switch r {
	case "stop":
		return FinishEndTurn
	case "tool_calls", "function_call":
		return FinishToolUse
	case "length":
		return FinishMaxTokens
	case "content_filter":
		return FinishRefusal
	}
	return FinishOther
}
