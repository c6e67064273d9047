package answer

import (
	"context"
	"fmt"
	"strings"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/safetext"
	"github.com/mcpi-dev/mcpi/internal/schema"
)

// Elicit answers elicitation from --elicit and --elicit-field, or the terminal.
func (h *Handler) Elicit(ctx context.Context, req *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	if req.Mode == "url" {
		return h.elicitURL(ctx, req)
	}
	s, err := schema.Compile(req.RequestedSchema, schema.AssertFormats())
	if err != nil {
		h.Say("warning: the server's elicitation schema is invalid: %s", safetext.OneLine(err.Error()))
		return nil, &mcp.RPCError{Code: mcp.CodeInvalidParams, Message: "requestedSchema is invalid: " + err.Error()}
	}
	switch action := h.opts.Flags().Elicit; action {
	case mcp.ElicitDecline, mcp.ElicitCancel:
		h.opts.Verbose("answering elicitation with %s", action)
		return &mcp.ElicitResult{Action: action}, nil
	case mcp.ElicitAccept:
		values, err := h.Fields(s)
		if err != nil {
			// The server is told (cancel) so that it is not left waiting;
			// the command fails with the mistake, as a usage error.
			h.opts.Failed(fmt.Errorf("elicitation «%s»: %v; the server was answered cancel", safetext.OneLine(req.Message), err))
			return &mcp.ElicitResult{Action: mcp.ElicitCancel}, nil
		}
		return &mcp.ElicitResult{Action: mcp.ElicitAccept, Content: values}, nil
	}
	if !h.interactive() {
		return nil, notInteractive("elicitation", "--elicit")
	}
	return h.elicitOnTerminal(ctx, req, s)
}

// Fields are the form s filled with --elicit-field's values and its
// defaults; an error says what does not fit.
func (h *Handler) Fields(s *schema.Schema) (map[string]any, error) {
	values := map[string]any{}
	for _, f := range h.opts.Flags().ElicitFields {
		k, v, isJSON := schema.SplitPair(f)
		p, ok := s.Property(k)
		if !ok {
			return nil, fmt.Errorf("the form has no field %q (fields: %s)", k, schema.FieldNames(s))
		}
		x, err := schema.PairValue(k, v, isJSON, p)
		if err != nil {
			return nil, fmt.Errorf("field %s: %v", k, err)
		}
		values[k] = x
	}
	values = s.ApplyDefaults(values)
	if ps := s.Validate(values); ps != nil {
		return nil, fmt.Errorf("%s (give fields with --elicit-field KEY=VALUE or KEY:=JSON)", ps.Fields())
	}
	return values, nil
}

func (h *Handler) elicitOnTerminal(ctx context.Context, req *mcp.ElicitParams, s *schema.Schema) (*mcp.ElicitResult, error) {
	h.askMu.Lock()
	defer h.askMu.Unlock()
	h.Say("The server asks: %s", safetext.Sanitize(req.Message, true))
	a, err := h.term.Ask(ctx, "Answer? [a]ccept, [d]ecline, [c]ancel: ")
	if err != nil {
		return nil, err
	}
	switch strings.ToLower(strings.TrimSpace(a)) {
	case "d", "decline":
		return &mcp.ElicitResult{Action: mcp.ElicitDecline}, nil
	case "a", "accept", "":
	default:
		return &mcp.ElicitResult{Action: mcp.ElicitCancel}, nil
	}
	values := map[string]any{}
	for _, p := range s.Properties() {
		v, ok, err := h.askField(ctx, p)
		if err != nil {
			return nil, err
		}
		if ok {
			values[p.Name] = v
		}
	}
	values = s.ApplyDefaults(values)
	if ps := s.Validate(values); ps != nil {
		h.Say("The answer does not fit the form (%s): cancelling.", ps.Fields())
		return &mcp.ElicitResult{Action: mcp.ElicitCancel}, nil
	}
	return &mcp.ElicitResult{Action: mcp.ElicitAccept, Content: values}, nil
}

// askField asks for a field of the form until the answer fits it; an
// empty answer gives none (ok false: the default, if any, applies).
func (h *Handler) askField(ctx context.Context, p schema.Property) (v any, ok bool, err error) {
	label := p.Name
	if p.Title != "" {
		label = p.Title + " (" + p.Name + ")"
	}
	hint := strings.Join(p.Types, "|")
	if len(p.Enum) > 0 {
		hint = fmt.Sprint(p.Enum)
	}
	if p.HasDefault {
		hint += fmt.Sprintf(", default %v", p.Default)
	}
	if p.Required {
		hint += ", required"
	}
	question := fmt.Sprintf("  %s [%s]: ", safetext.Sanitize(label, false), safetext.Sanitize(hint, false))
	for {
		text, err := h.term.Ask(ctx, question)
		if err != nil || text == "" {
			return nil, false, err
		}
		v, err := p.Coerce(text)
		if err != nil {
			h.Say("  %v", err)
			continue
		}
		if f, ok := p.Raw["format"].(string); ok {
			if msg := schema.FormatProblem(f, text); msg != "" {
				h.Say("  %s", msg)
				continue
			}
		}
		return v, true, nil
	}
}

func (h *Handler) elicitURL(ctx context.Context, req *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	switch action := h.opts.Flags().Elicit; action {
	case mcp.ElicitAccept:
		h.Say("The server asks you to open %s: %s", safetext.Sanitize(req.URL, false), safetext.Sanitize(req.Message, true))
		return &mcp.ElicitResult{Action: mcp.ElicitAccept}, nil
	case mcp.ElicitDecline, mcp.ElicitCancel:
		return &mcp.ElicitResult{Action: action}, nil
	}
	if !h.interactive() {
		return nil, notInteractive("URL elicitation", "--elicit")
	}
	h.askMu.Lock()
	defer h.askMu.Unlock()
	h.Say("The server asks you to open a URL: %s\n  %s", safetext.Sanitize(req.Message, true), safetext.Sanitize(req.URL, false))
	a, err := h.term.Ask(ctx, "Open it and continue? [y]es, [n]o: ")
	if err != nil {
		return nil, err
	}
	if strings.HasPrefix(strings.ToLower(a), "y") {
		return &mcp.ElicitResult{Action: mcp.ElicitAccept}, nil
	}
	return &mcp.ElicitResult{Action: mcp.ElicitDecline}, nil
}
