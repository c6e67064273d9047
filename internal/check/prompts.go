package check

import (
	"encoding/json"
	"fmt"

	"github.com/mcpi-dev/mcpi/internal/mcp"
)

func (r *run) prompts() {
	caps := r.c.ServerCapabilities()
	items, ok := r.feature("prompts", "prompts/list", "prompts", caps.Prompts != nil)
	if !ok {
		return
	}
	r.check(rulePromptsGet, rulePromptsGetWithArguments)
	var names []string
	for i, raw := range items {
		var p mcp.Prompt
		if err := json.Unmarshal(raw, &p); err != nil || p.Name == "" {
			r.report(rulePromptsGet, "prompts/list", raw, "an item is not a Prompt with a name")
			continue
		}
		names = append(names, p.Name)
		subject := fmt.Sprintf("prompt %q", p.Name)
		fields := map[string]string{"name": p.Name, "title": p.Title, "description": p.Description}
		args := map[string]string{}
		for _, a := range p.Arguments {
			fields["argument "+a.Name] = a.Name
			fields["argument "+a.Name+" description"] = a.Description
			if a.Required {
				args[a.Name] = r.completionFor(p.Name, a.Name, caps.Completions != nil)
			}
		}
		r.hiddenText(subject, nil, fields)
		r.icons(subject, p.Icons)
		if i < maxReads {
			r.getPrompt(subject, p, args)
		}
		if i == 0 && caps.Completions != nil && len(p.Arguments) > 0 {
			r.complete(p)
		}
	}
	r.duplicates("prompts/list", "prompt", names)
}

func (r *run) getPrompt(subject string, p mcp.Prompt, args map[string]string) {
	raw, err := r.probe("prompts/get", mcp.GetPromptParams{Name: p.Name, Arguments: args})
	switch code, _ := rpcCode(err); {
	case err != nil && len(args) == 0:
		r.report(rulePromptsGet, subject, nil, "prompts/get failed: %v", err)
		return
	case err != nil && code != mcp.CodeInvalidParams:
		b, _ := json.Marshal(args)
		r.report(rulePromptsGetWithArguments, subject, b, "prompts/get with arguments %s failed, and not with -32602: %v", b, err)
		return
	case err != nil:
		return // refused made-up arguments, as it should
	}
	var res mcp.GetPromptResult
	if err := json.Unmarshal(raw, &res); err != nil {
		r.report(rulePromptsGet, subject, clipRaw(raw), "the result is not a GetPromptResult: %v", err)
		return
	}
	for i, m := range res.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			r.report(rulePromptsGet, subject, nil, "message %d has role %q (user or assistant)", i, m.Role)
		}
		if m.Content.Type == "" {
			r.report(rulePromptsGet, subject, nil, "message %d has no content type", i)
		}
		r.hiddenText(subject, nil, map[string]string{fmt.Sprintf("message %d", i): m.Content.Text})
	}
}

func (r *run) complete(p mcp.Prompt) {
	r.check(ruleCompletionAnswers)
	raw, err := r.probe("completion/complete", mcp.CompleteParams{
		Ref: mcp.CompleteReference{Type: "ref/prompt", Name: p.Name}, Argument: mcp.CompleteArgument{Name: p.Arguments[0].Name, Value: ""}})
	subject := fmt.Sprintf("completion/complete %q", p.Name)
	if err != nil {
		r.report(ruleCompletionAnswers, subject, nil, "the server declares completions but completion/complete failed: %v", err)
		return
	}
	var res mcp.CompleteResult
	if err := json.Unmarshal(raw, &res); err != nil {
		r.report(ruleCompletionAnswers, subject, clipRaw(raw), "the result is not a CompleteResult: %v", err)
		return
	}
	if n := len(res.Completion.Values); n > 100 {
		r.report(ruleCompletionAnswers, subject, nil, "%d values (at most 100)", n)
	}
}

// completionFor is a value for a prompt's argument: the first the
// server's completions offer, or a made-up one.
func (r *run) completionFor(prompt, arg string, completions bool) string {
	if completions {
		raw, err := r.probe("completion/complete", mcp.CompleteParams{
			Ref: mcp.CompleteReference{Type: "ref/prompt", Name: prompt}, Argument: mcp.CompleteArgument{Name: arg}})
		var res mcp.CompleteResult
		if err == nil && json.Unmarshal(raw, &res) == nil && len(res.Completion.Values) > 0 {
			return res.Completion.Values[0]
		}
	}
	return "mcpi"
}
