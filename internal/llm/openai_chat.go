package llm

import (
	"context"
	"encoding/json"

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
		call := &openai.ChatCompletionMessageFunctionToolCallParam{
			ID:       b.ID,
			Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: b.Name, Arguments: string(rawOrEmpty(b.Input))},
		}
		if json.Valid(b.Extra) {
			call.SetExtraFields(map[string]any{"extra_content": b.Extra})
		}
		a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{OfFunction: call})
	}
	return openai.ChatCompletionMessageParamUnion{OfAssistant: &a}
}

// Stream reads the chunks with the SDK's ChatCompletionAccumulator; the
// text comes from each chunk's delta, the tool calls from the accumulator
// as each finishes (parallel calls arrive by index, which calls.fix
// supplies where a compatible server leaves it out).
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
	var calls callIndex
	done := 0 // tool calls handed on, in index order
	flush := func(upTo int) {
		acalls := acc.Choices[0].Message.ToolCalls
		for ; done < upTo && done < len(acalls); done++ {
			c := acalls[done]
			t.toolCall(c.ID, c.Function.Name, c.Function.Arguments, calls.extra[done])
		}
	}
	for stream.Next() {
		chunk := stream.Current()
		calls.fix(&chunk)
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

// callIndex gives the tool call deltas of choice 0 the index the
// accumulator pairs them by, where a compatible server got it wrong, and
// keeps what a server attached to each call for the next request.
// Gemini's OpenAI-compatible endpoint sends each call whole in one delta
// with no index, parallel calls too, which the accumulator would join
// into one call of a tool named twice with two objects for arguments;
// other servers give every call index 0, or repeat a call's id on each of
// its deltas. So: a delta with an id that is not the id of the call its
// index stands for starts the next call; a delta without an id goes on
// with the call its index stands for, or with the last call when it has
// no index.
type callIndex struct {
	ids   []string // by the accumulator's index
	extra []json.RawMessage
	of    map[int64]int64 // the server's index → the accumulator's
}

func (c *callIndex) fix(chunk *openai.ChatCompletionChunk) {
	for i := range chunk.Choices {
		if chunk.Choices[i].Index != 0 {
			continue
		}
		tcs := chunk.Choices[i].Delta.ToolCalls
		for j := range tcs {
			c.place(&tcs[j])
		}
	}
}

func (c *callIndex) place(tc *openai.ChatCompletionChunkChoiceDeltaToolCall) {
	if c.of == nil {
		c.of = map[int64]int64{}
	}
	srv, has := tc.Index, tc.JSON.Index.Valid()
	ours, known := c.of[srv]
	if !has {
		ours, known = int64(len(c.ids)-1), len(c.ids) > 0
	}
	if tc.ID != "" && (!known || c.ids[ours] != tc.ID) {
		ours, known = int64(len(c.ids)), true
		c.ids = append(c.ids, tc.ID)
		c.extra = append(c.extra, nil)
	}
	if !known {
		// No id and nothing to go on with: a call of its own.
		ours = int64(len(c.ids))
		c.ids = append(c.ids, "")
		c.extra = append(c.extra, nil)
	}
	if has {
		c.of[srv] = ours
	}
	tc.Index = ours
	// An extra field is never Valid in the SDK's sense: its raw JSON is
	// what there is.
	if raw := tc.JSON.ExtraFields["extra_content"].Raw(); raw != "" && raw != "null" && json.Valid([]byte(raw)) {
		c.extra[ours] = json.RawMessage(raw)
	}
}
