package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/mcpi-dev/mcpi/internal/chat"
	"github.com/mcpi-dev/mcpi/internal/daemon"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/schema"
	"github.com/mcpi-dev/mcpi/internal/session"
)

// cliHandler answers server->client requests for the one-shot commands: from
// flags, else by asking on the terminal, else by declining with a reason.
type cliHandler struct {
	r   *connRun
	say func(format string, args ...any)

	rootsOnce  sync.Once
	rootsAsked chan struct{} // closed when the server first asks for the roots

	askMu sync.Mutex // one question on the terminal at a time
	in    *bufio.Reader

	// models answer the sampling of mcpi test's steps that name one.
	modelsMu sync.Mutex
	models   map[string]*chat.Sampler
}

var _ daemon.Answerer = (*cliHandler)(nil)

// Answers reports whether the command's flags answer requests of kind (a
// command in a live session is picked for a legacy server's request by
// that).
func (h *cliHandler) Answers(kind daemon.Kind) bool {
	switch kind {
	case daemon.KindSampling:
		return h.r.SamplingReply != "" || h.r.sampler != nil
	case daemon.KindElicit:
		return h.r.Elicit != ""
	}
	return false
}

// Say writes a line on the command's stderr.
func (h *cliHandler) Say(format string, args ...any) { h.say(format, args...) }

func (h *cliHandler) interactive() bool { return h.r.IO.StdinTTY && h.r.IO.StderrTTY }

// ask prints a question on stderr and reads one line from stdin.
func (h *cliHandler) ask(ctx context.Context, question string) (string, error) {
	if h.in == nil {
		h.in = bufio.NewReader(h.r.IO.In)
	}
	fmt.Fprint(h.r.IO.ErrOut, question)
	type answer struct {
		s   string
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		s, err := h.in.ReadString('\n')
		ch <- answer{strings.TrimRight(s, "\r\n"), err}
	}()
	select {
	case a := <-ch:
		if a.err != nil && a.s == "" {
			return "", a.err
		}
		return a.s, nil
	case <-ctx.Done():
		fmt.Fprintln(h.r.IO.ErrOut)
		return "", ctx.Err()
	}
}

func notInteractive(what, flag string) error {
	return &mcp.RPCError{Code: -1, Message: fmt.Sprintf("%s declined: mcpi is running without a terminal to ask on and no %s was given", what, flag)}
}

// ListRoots answers with the --root values.
func (h *cliHandler) ListRoots(context.Context) (*mcp.ListRootsResult, error) {
	roots := h.r.roots
	if roots == nil {
		roots = []mcp.Root{}
	}
	h.r.verbose("answering roots/list with %d root(s)", len(roots))
	if h.rootsAsked != nil {
		h.rootsOnce.Do(func() { close(h.rootsAsked) })
	}
	return &mcp.ListRootsResult{Roots: roots}, nil
}

// CreateMessage answers sampling from --sampling-reply, --sampling-model
// or the terminal.
func (h *cliHandler) CreateMessage(ctx context.Context, req *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	if s := h.r.sampler; s != nil {
		h.r.verbose("answering sampling/createMessage with %s", s.Spec())
		res, err := s.CreateMessage(ctx, req)
		if err != nil {
			h.r.verbose("sampling: %s", oneLine(err.Error()))
		}
		return res, err
	}
	if reply := h.r.SamplingReply; reply != "" {
		if file, ok := strings.CutPrefix(reply, "@"); ok {
			return readSamplingFile(h.r.IO, file)
		}
		return textReply(reply), nil
	}
	if !h.interactive() {
		return nil, notInteractive("sampling", "--sampling-reply or --sampling-model")
	}
	h.askMu.Lock()
	defer h.askMu.Unlock()
	h.say("The server asks for a model reply (sampling/createMessage, max %d tokens):", req.MaxTokens)
	if req.SystemPrompt != "" {
		h.say("  system: %s", sanitize(req.SystemPrompt, true))
	}
	for _, m := range req.Messages {
		h.say("  %s: %s", sanitize(m.Role, false), sanitize(daemon.SamplingText(m.Content), true))
	}
	answer, err := h.ask(ctx, "Reply (empty to reject): ")
	if err != nil {
		return nil, err
	}
	if answer == "" {
		return nil, session.ErrRejected
	}
	return textReply(answer), nil
}

func textReply(text string) *mcp.CreateMessageResult {
	content, _ := json.Marshal(map[string]string{"type": "text", "text": text})
	return &mcp.CreateMessageResult{Role: "assistant", Content: content, Model: mcp.ReplyModel, StopReason: "endTurn"}
}

func readSamplingFile(ios *IOStreams, path string) (*mcp.CreateMessageResult, error) {
	data, err := os.ReadFile(ios.Path(path))
	if err != nil {
		return nil, &mcp.RPCError{Code: mcp.CodeInternalError, Message: "mcpi could not read its sampling reply: " + err.Error()}
	}
	var r mcp.CreateMessageResult
	if err := json.Unmarshal(data, &r); err != nil || r.Role == "" || len(r.Content) == 0 {
		if err == nil {
			err = fmt.Errorf("role and content are required")
		}
		return nil, &mcp.RPCError{Code: mcp.CodeInternalError, Message: fmt.Sprintf("mcpi's sampling reply %s is not a CreateMessageResult: %v", path, err)}
	}
	if r.Model == "" {
		r.Model = "mcpi"
	}
	return &r, nil
}

// Elicit answers elicitation from --elicit and --elicit-field, or the terminal.
func (h *cliHandler) Elicit(ctx context.Context, req *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	if req.Mode == "url" {
		return h.elicitURL(ctx, req)
	}
	s, err := schema.Compile(req.RequestedSchema, schema.AssertFormats())
	if err != nil {
		h.say("warning: the server's elicitation schema is invalid: %s", oneLine(err.Error()))
		return nil, &mcp.RPCError{Code: mcp.CodeInvalidParams, Message: "requestedSchema is invalid: " + err.Error()}
	}
	switch h.r.Elicit {
	case mcp.ElicitDecline, mcp.ElicitCancel:
		h.r.verbose("answering elicitation with %s", h.r.Elicit)
		return &mcp.ElicitResult{Action: h.r.Elicit}, nil
	case mcp.ElicitAccept:
		values, err := h.fieldsFromFlags(s)
		if err != nil {
			// The server is told (cancel) so that it is not left waiting;
			// the command fails with the mistake, as a usage error.
			h.r.answerFailed(fmt.Errorf("elicitation «%s»: %v; the server was answered cancel", oneLine(req.Message), err))
			return &mcp.ElicitResult{Action: mcp.ElicitCancel}, nil
		}
		return &mcp.ElicitResult{Action: mcp.ElicitAccept, Content: values}, nil
	}
	if !h.interactive() {
		return nil, notInteractive("elicitation", "--elicit")
	}
	return h.elicitOnTerminal(ctx, req, s)
}

func (h *cliHandler) fieldsFromFlags(s *schema.Schema) (map[string]any, error) {
	values := map[string]any{}
	for _, f := range h.r.ElicitFields {
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

func (h *cliHandler) elicitOnTerminal(ctx context.Context, req *mcp.ElicitParams, s *schema.Schema) (*mcp.ElicitResult, error) {
	h.askMu.Lock()
	defer h.askMu.Unlock()
	h.say("The server asks: %s", sanitize(req.Message, true))
	a, err := h.ask(ctx, "Answer? [a]ccept, [d]ecline, [c]ancel: ")
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
		for {
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
			text, err := h.ask(ctx, fmt.Sprintf("  %s [%s]: ", sanitize(label, false), sanitize(hint, false)))
			if err != nil {
				return nil, err
			}
			if text == "" {
				break // the default, if any, applies below
			}
			v, err := p.Coerce(text)
			if err != nil {
				h.say("  %v", err)
				continue
			}
			if f, ok := p.Raw["format"].(string); ok {
				if msg := schema.FormatProblem(f, text); msg != "" {
					h.say("  %s", msg)
					continue
				}
			}
			values[p.Name] = v
			break
		}
	}
	values = s.ApplyDefaults(values)
	if ps := s.Validate(values); ps != nil {
		h.say("The answer does not fit the form (%s): cancelling.", ps.Fields())
		return &mcp.ElicitResult{Action: mcp.ElicitCancel}, nil
	}
	return &mcp.ElicitResult{Action: mcp.ElicitAccept, Content: values}, nil
}

func (h *cliHandler) elicitURL(ctx context.Context, req *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	switch h.r.Elicit {
	case mcp.ElicitAccept:
		h.say("The server asks you to open %s: %s", sanitize(req.URL, false), sanitize(req.Message, true))
		return &mcp.ElicitResult{Action: mcp.ElicitAccept}, nil
	case mcp.ElicitDecline, mcp.ElicitCancel:
		return &mcp.ElicitResult{Action: h.r.Elicit}, nil
	}
	if !h.interactive() {
		return nil, notInteractive("URL elicitation", "--elicit")
	}
	h.askMu.Lock()
	defer h.askMu.Unlock()
	h.say("The server asks you to open a URL: %s\n  %s", sanitize(req.Message, true), sanitize(req.URL, false))
	a, err := h.ask(ctx, "Open it and continue? [y]es, [n]o: ")
	if err != nil {
		return nil, err
	}
	if strings.HasPrefix(strings.ToLower(a), "y") {
		return &mcp.ElicitResult{Action: mcp.ElicitAccept}, nil
	}
	return &mcp.ElicitResult{Action: mcp.ElicitDecline}, nil
}
