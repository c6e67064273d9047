package collection

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/mcpi-dev/mcpi/internal/daemon"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/roots"
	"github.com/mcpi-dev/mcpi/internal/safetext"
	"github.com/mcpi-dev/mcpi/internal/schema"
)

// Handler answers the server's requests during a step with the step's
// answers, and otherwise as its Fallback does (the command's flags, the
// terminal, or a refusal); what a step's answers could not give is one of
// its failures. It is safe for concurrent use.
type Handler struct {
	// Fallback answers what the step does not.
	Fallback daemon.Answerer
	// WorkDir is where a step's relative roots are.
	WorkDir string

	mu       sync.Mutex
	answers  *Answers
	problems []Failure
	// roots answer roots/list while set (UseRoots), and asked is closed
	// when the server has been answered with them.
	roots []mcp.Root
	asked chan struct{}
}

var _ daemon.Answerer = (*Handler)(nil)

// begin makes a the answers until end.
func (h *Handler) begin(a *Answers) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.answers, h.problems = a, nil
}

// end ends the step's answers and returns what they could not give.
func (h *Handler) end() []Failure {
	h.mu.Lock()
	defer h.mu.Unlock()
	p := h.problems
	h.answers, h.problems = nil, nil
	return p
}

func (h *Handler) current() *Answers {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.answers
}

func (h *Handler) problem(f Failure) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.problems = append(h.problems, f)
}

// ModelSampler is a Fallback that answers sampling with a model named by
// its spec (PROVIDER:MODEL): a step's answers: {sampling: {model: ...}}.
type ModelSampler interface {
	SampleWith(ctx context.Context, spec string, req *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error)
}

// CreateMessage answers with the step's sampling text, or its model; a
// model that fails fails the step, and the server is told.
func (h *Handler) CreateMessage(ctx context.Context, req *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	a := h.current()
	switch {
	case a != nil && a.SamplingModel != "":
		ms, ok := h.Fallback.(ModelSampler)
		if !ok {
			err := &mcp.RPCError{Code: mcp.CodeInternalError, Message: "sampling: no model can answer here (answers: sampling: model)"}
			h.problem(Failure{Path: "answers.sampling.model", Message: "answers: " + err.Message})
			return nil, err
		}
		res, err := ms.SampleWith(ctx, a.SamplingModel, req)
		if err != nil {
			h.problem(Failure{Path: "answers.sampling.model", Expected: "the model's answer", Actual: safetext.OneLine(err.Error()),
				Message: "answers: " + safetext.OneLine(err.Error())})
		}
		return res, err
	case a != nil && a.Sampling != "":
		content, _ := json.Marshal(map[string]string{"type": "text", "text": a.Sampling})
		return &mcp.CreateMessageResult{Role: "assistant", Content: content, Model: mcp.ReplyModel, StopReason: "endTurn"}, nil
	}
	return h.Fallback.CreateMessage(ctx, req)
}

// Elicit answers with the step's elicitation action and fields, checked
// against the form.
func (h *Handler) Elicit(ctx context.Context, req *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	a := h.current()
	if a == nil || a.Elicit == "" || req.Mode == "url" {
		return h.Fallback.Elicit(ctx, req)
	}
	if a.Elicit != mcp.ElicitAccept {
		return &mcp.ElicitResult{Action: a.Elicit}, nil
	}
	values := map[string]any{}
	if a.Fields != nil {
		// Through JSON, so that YAML's numbers are the JSON the form checks.
		b, err := json.Marshal(a.Fields)
		if err == nil {
			err = json.Unmarshal(b, &values)
		}
		if err != nil {
			h.problem(Failure{Path: "answers.fields", Message: "answers: fields: " + err.Error()})
			return &mcp.ElicitResult{Action: mcp.ElicitCancel}, nil
		}
	}
	if s, err := schema.Compile(req.RequestedSchema); err == nil {
		values = s.ApplyDefaults(values)
		if ps := s.Validate(values); ps != nil {
			h.problem(Failure{Path: "answers.fields", Expected: "fields the form accepts", Actual: ps.Fields(),
				Message: fmt.Sprintf("answers: the fields do not fit the form «%s»: %s; the server was answered cancel", safetext.OneLine(req.Message), ps.Fields())})
			return &mcp.ElicitResult{Action: mcp.ElicitCancel}, nil
		}
	}
	return &mcp.ElicitResult{Action: mcp.ElicitAccept, Content: values}, nil
}

// ListRoots answers with the step's roots, else as the Fallback does.
func (h *Handler) ListRoots(ctx context.Context) (*mcp.ListRootsResult, error) {
	h.mu.Lock()
	roots, asked := h.roots, h.asked
	if asked != nil {
		h.asked = nil
		defer close(asked)
	}
	h.mu.Unlock()
	if roots == nil {
		return h.Fallback.ListRoots(ctx)
	}
	return &mcp.ListRootsResult{Roots: roots}, nil
}

// UseRoots answers roots/list with roots until done is called; asked is
// closed once the server has been answered with them.
func (h *Handler) UseRoots(roots []mcp.Root) (asked <-chan struct{}, done func()) {
	ch := make(chan struct{})
	h.mu.Lock()
	h.roots, h.asked = append([]mcp.Root{}, roots...), ch
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.roots, h.asked = nil, nil
	}
}

// parseRoots reads a step's roots, relative to WorkDir; one that cannot
// be a root (a path that does not exist, a URI that is not a file's) is
// a failure of the step, and left out.
func (h *Handler) parseRoots(entries []string) ([]mcp.Root, []Failure) {
	out := []mcp.Root{}
	var fails []Failure
	for _, r := range entries {
		root, err := roots.ParseIn(r, h.WorkDir)
		if err != nil {
			// The error says what is wrong: a path that does not exist,
			// a URI that is not a file's.
			fails = append(fails, Failure{Path: "answers.roots", Expected: "an existing directory or file, as a path or a file:// URI",
				Actual: safetext.OneLine(err.Error()), Message: "answers: roots: " + safetext.OneLine(err.Error())})
			continue
		}
		out = append(out, root)
	}
	return out, fails
}

// Answers reports whether the step under way, or the Fallback, answers
// requests of kind: in a live session, the daemon gives a server's
// request to the command that answers it.
func (h *Handler) Answers(kind daemon.Kind) bool {
	if a := h.current(); a != nil {
		switch kind {
		case daemon.KindSampling:
			if a.Sampling != "" || a.SamplingModel != "" {
				return true
			}
		case daemon.KindElicit:
			if a.Elicit != "" {
				return true
			}
		}
	}
	return h.Fallback.Answers(kind)
}

// Say writes a line on the command's stderr.
func (h *Handler) Say(format string, args ...any) { h.Fallback.Say(format, args...) }
