package llm

import (
	"context"
	"strings"

	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"
)

// responsesProvider speaks the OpenAI Responses API, streaming its typed
// events. Nothing is stored on OpenAI's side (store: false): each request
// carries the whole conversation, as with the other formats.
type responsesProvider struct {
	*conn
	svc responses.ResponseService
}

func newResponses(c *conn) *responsesProvider {
	return &responsesProvider{conn: c, svc: responses.NewResponseService(openaiOptions(c)...)}
}

func (r *responsesProvider) params(req *Request, t *turn) (responses.ResponseNewParams, error) {
	p := responses.ResponseNewParams{
		Model: shared.ResponsesModel(r.model),
		Store: param.NewOpt(false),
	}
	if req.System != "" {
		p.Instructions = param.NewOpt(req.System)
	}
	if req.MaxTokens > 0 {
		p.MaxOutputTokens = param.NewOpt(req.MaxTokens)
	}
	if req.Temperature != nil {
		p.Temperature = param.NewOpt(*req.Temperature)
	}
	if req.Seed != nil {
		t.warn("seed is not sent: the Responses API takes none")
	}
	if len(req.StopSequences) > 0 {
		t.warn("stop sequences are not sent: the Responses API takes none")
	}
	var in responses.ResponseInputParam
	for _, m := range req.Messages {
		role := responses.EasyInputMessageRoleUser
		if m.Role == RoleAssistant {
			role = responses.EasyInputMessageRoleAssistant
		}
		for _, b := range m.Content {
			switch b.Type {
			case BlockText:
				in = append(in, responses.ResponseInputItemParamOfMessage(b.Text, role))
			case BlockToolUse:
				in = append(in, responses.ResponseInputItemParamOfFunctionCall(string(rawOrEmpty(b.Input)), b.ID, b.Name))
			case BlockToolResult:
				item := responses.ResponseInputItemParamOfFunctionCallOutput(b.Text)
				item.OfFunctionCallOutput.CallID = param.NewOpt(b.ID)
				in = append(in, item)
			}
		}
	}
	p.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: in}
	for _, tool := range req.Tools {
		schema, err := schemaMap(tool.InputSchema)
		if err != nil {
			return p, newError(r.name, r.key, ErrRequest, 0, "%s: the schema of tool %q is not a JSON object: %v", r.name, clipSpec(tool.Name), err)
		}
		// strict is required by the API and defaults to true there; the
		// schema is sent as the server wrote it, so strict is false.
		ft := responses.FunctionToolParam{Name: tool.Name, Parameters: schema, Strict: param.NewOpt(false)}
		if tool.Description != "" {
			ft.Description = param.NewOpt(tool.Description)
		}
		p.Tools = append(p.Tools, responses.ToolUnionParam{OfFunction: &ft})
	}
	if len(req.Tools) > 0 && req.ToolChoice != "" {
		p.ToolChoice = responses.ResponseNewParamsToolChoiceUnion{OfToolChoiceMode: param.NewOpt(responses.ToolChoiceOptions(req.ToolChoice))}
	}
	return p, nil
}

// fnCall is a function call under way, by its item id.
type fnCall struct {
	callID, name string
	args         strings.Builder
	done         bool
}

// Stream reads the typed events: output_text deltas are text; a
// function_call item is announced by output_item.added, its arguments
// arrive as deltas and are complete at function_call_arguments.done;
// response.completed (or .incomplete) carries the usage.
func (r *responsesProvider) Stream(ctx context.Context, req *Request, on func(Event)) (*Response, error) {
	t := newTurn(r.conn, req, on)
	p, err := r.params(req, t)
	if err != nil {
		return nil, err
	}
	m := r.newMeter(ctx)
	stream := r.svc.NewStreaming(ctx, p, option.WithMiddleware(m.middleware))
	defer stream.Close()
	calls := map[string]*fnCall{}
	var order []*fnCall
	finishCall := func(c *fnCall, args string) {
		if c.done {
			return
		}
		c.done = true
		if args == "" {
			args = c.args.String()
		}
		t.toolCall(c.callID, c.name, args, nil)
	}
	var final *responses.Response
	for stream.Next() {
		ev := stream.Current()
		switch ev.Type {
		case "response.output_text.delta":
			t.addText(ev.Delta)
		case "response.output_item.added":
			if ev.Item.Type == "function_call" {
				t.firstToken()
				c := &fnCall{callID: ev.Item.CallID, name: ev.Item.Name}
				calls[ev.Item.ID] = c
				order = append(order, c)
			}
		case "response.function_call_arguments.delta":
			if c := calls[ev.ItemID]; c != nil {
				c.args.WriteString(ev.Delta)
			}
		case "response.function_call_arguments.done":
			if c := calls[ev.ItemID]; c != nil {
				finishCall(c, ev.Arguments)
			}
		case "response.completed", "response.incomplete":
			resp := ev.Response
			final = &resp
		case "error":
			return nil, newError(r.name, r.key, ErrServer, 0, "%s sent an error in the stream: %s", r.name, peerText(ev.Message))
		case "response.failed":
			return nil, newError(r.name, r.key, ErrServer, 0, "%s: the response failed: %s", r.name, peerText(ev.Response.Error.Message))
		}
		if final != nil {
			break
		}
	}
	if err := stream.Err(); err != nil {
		return nil, r.fail(ctx, m, err)
	}
	if final == nil {
		return nil, r.streamError(m, "the stream ended before response.completed")
	}
	for _, c := range order {
		finishCall(c, "")
	}
	raw := string(final.Status)
	f := FinishEndTurn
	switch {
	case final.Status == "incomplete" && final.IncompleteDetails.Reason == "max_output_tokens":
		f = FinishMaxTokens
	case final.Status == "incomplete" && final.IncompleteDetails.Reason == "content_filter":
		f = FinishRefusal
	case final.Status == "incomplete":
		f = FinishOther
	}
	if final.IncompleteDetails.Reason != "" {
		raw = string(final.IncompleteDetails.Reason)
	}
	u := Usage{
		InputTokens:     final.Usage.InputTokens,
		OutputTokens:    final.Usage.OutputTokens,
		CacheReadTokens: final.Usage.InputTokensDetails.CachedTokens,
	}
	return t.finish(m, u, []string{raw}, f, string(final.Model), final.ID), nil
}
