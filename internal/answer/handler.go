package answer

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/mcpi-dev/mcpi/internal/chat"
	"github.com/mcpi-dev/mcpi/internal/daemon"
	"github.com/mcpi-dev/mcpi/internal/iostreams"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/safetext"
	"github.com/mcpi-dev/mcpi/internal/session"
)

// Flags are the answers a command was given.
type Flags struct {
	// Roots answer roots/list (--root).
	Roots []mcp.Root
	// Sampler answers sampling with a model (--sampling-model); else
	// SamplingReply, a text or @FILE of a CreateMessageResult
	// (--sampling-reply).
	Sampler       *chat.Sampler
	SamplingReply string
	// Elicit is the action that answers elicitation (--elicit: accept,
	// decline, cancel), and ElicitFields the form's fields with accept
	// (--elicit-field KEY=VALUE or KEY:=JSON).
	Elicit       string
	ElicitFields []string
}

// Options are what a Handler answers from and where it talks.
type Options struct {
	// IO is where the person is asked, and where @FILE paths resolve.
	IO *iostreams.IOStreams
	// Flags gives the command's answers, read at each request: a command
	// makes its model and roots when it connects, which may be after its
	// handler is made.
	Flags func() Flags
	// Say writes a line on the command's stderr; Verbose, with -v only.
	Say, Verbose func(format string, args ...any)
	// Failed records an answer the flags could not give (an
	// --elicit-field that does not fit the form): the command fails with
	// it once the server has been told.
	Failed func(error)
	// Model makes the sampler of a model a step of mcpi test names
	// (SampleWith); nil when no model can be made.
	Model func(spec string) (*chat.Sampler, error)
}

// Handler answers server->client requests for the one-shot commands: from
// the flags, else by asking on the terminal, else by declining with a
// reason. It is safe for concurrent use: one question is on the terminal
// at a time.
type Handler struct {
	opts Options

	rootsOnce  sync.Once
	rootsAsked chan struct{} // closed when the server first asks for the roots

	askMu sync.Mutex // one dialogue on the terminal at a time
	term  *Terminal

	// models answer the sampling of mcpi test's steps that name one.
	modelsMu sync.Mutex
	models   map[string]*chat.Sampler
}

var _ daemon.Answerer = (*Handler)(nil)

// New makes a handler of o; a nil Say, Verbose, Failed or Flags does
// nothing or gives nothing.
func New(o Options) *Handler {
	nop := func(string, ...any) {}
	if o.Say == nil {
		o.Say = nop
	}
	if o.Verbose == nil {
		o.Verbose = nop
	}
	if o.Failed == nil {
		o.Failed = func(error) {}
	}
	if o.Flags == nil {
		o.Flags = func() Flags { return Flags{} }
	}
	return &Handler{opts: o, rootsAsked: make(chan struct{}), term: NewTerminal(o.IO)}
}

// RootsAsked is closed when the server first asks for the roots.
func (h *Handler) RootsAsked() <-chan struct{} { return h.rootsAsked }

// Answers reports whether the command's flags answer requests of kind (a
// command in a live session is picked for a legacy server's request by
// that).
func (h *Handler) Answers(kind daemon.Kind) bool {
	f := h.opts.Flags()
	switch kind {
	case daemon.KindSampling:
		return f.SamplingReply != "" || f.Sampler != nil
	case daemon.KindElicit:
		return f.Elicit != ""
	}
	return false
}

// Say writes a line on the command's stderr.
func (h *Handler) Say(format string, args ...any) { h.opts.Say(format, args...) }

func (h *Handler) interactive() bool { return h.opts.IO.StdinTTY && h.opts.IO.StderrTTY }

func notInteractive(what, flag string) error {
	return &mcp.RPCError{Code: -1, Message: fmt.Sprintf("%s declined: mcpi is running without a terminal to ask on and no %s was given", what, flag)}
}

// ListRoots answers with the --root values.
func (h *Handler) ListRoots(context.Context) (*mcp.ListRootsResult, error) {
	roots := h.opts.Flags().Roots
	if roots == nil {
		roots = []mcp.Root{}
	}
	h.opts.Verbose("answering roots/list with %d root(s)", len(roots))
	h.rootsOnce.Do(func() { close(h.rootsAsked) })
	return &mcp.ListRootsResult{Roots: roots}, nil
}

// CreateMessage answers sampling from --sampling-reply, --sampling-model
// or the terminal.
func (h *Handler) CreateMessage(ctx context.Context, req *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	f := h.opts.Flags()
	if s := f.Sampler; s != nil {
		h.opts.Verbose("answering sampling/createMessage with %s", s.Spec())
		res, err := s.CreateMessage(ctx, req)
		if err != nil {
			h.opts.Verbose("sampling: %s", safetext.OneLine(err.Error()))
		}
		return res, err
	}
	if reply := f.SamplingReply; reply != "" {
		if file, ok := strings.CutPrefix(reply, "@"); ok {
			return readSamplingFile(h.opts.IO, file)
		}
		return TextReply(reply), nil
	}
	if !h.interactive() {
		return nil, notInteractive("sampling", "--sampling-reply or --sampling-model")
	}
	h.askMu.Lock()
	defer h.askMu.Unlock()
	h.Say("The server asks for a model reply (sampling/createMessage, max %d tokens):", req.MaxTokens)
	if req.SystemPrompt != "" {
		h.Say("  system: %s", safetext.Sanitize(req.SystemPrompt, true))
	}
	for _, m := range req.Messages {
		h.Say("  %s: %s", safetext.Sanitize(m.Role, false), safetext.Sanitize(daemon.SamplingText(m.Content), true))
	}
	answer, err := h.term.Ask(ctx, "Reply (empty to reject): ")
	if err != nil {
		return nil, err
	}
	if answer == "" {
		return nil, session.ErrRejected
	}
	return TextReply(answer), nil
}

// TextReply is a model's reply of text, as a person or --sampling-reply
// gives it.
func TextReply(text string) *mcp.CreateMessageResult {
	content, _ := json.Marshal(map[string]string{"type": "text", "text": text})
	return &mcp.CreateMessageResult{Role: "assistant", Content: content, Model: mcp.ReplyModel, StopReason: "endTurn"}
}

func readSamplingFile(ios *iostreams.IOStreams, path string) (*mcp.CreateMessageResult, error) {
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

// SampleWith answers sampling with the model a step of mcpi test names
// (answers: {sampling: {model: PROVIDER:MODEL}}): one provider per spec,
// made when first named.
func (h *Handler) SampleWith(ctx context.Context, spec string, req *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	h.modelsMu.Lock()
	s, ok := h.models[spec]
	if !ok {
		var err error
		if h.opts.Model == nil {
			err = fmt.Errorf("no model can answer here")
		} else {
			s, err = h.opts.Model(spec)
		}
		if err != nil {
			h.modelsMu.Unlock()
			return nil, &mcp.RPCError{Code: mcp.CodeInternalError, Message: "sampling: " + err.Error()}
		}
		if h.models == nil {
			h.models = map[string]*chat.Sampler{}
		}
		h.models[spec] = s
	}
	h.modelsMu.Unlock()
	h.opts.Verbose("answering sampling/createMessage with %s (the step's answers)", spec)
	return s.CreateMessage(ctx, req)
}
