package collection

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/safetext"
	"github.com/mcpi-dev/mcpi/internal/schema"
	"github.com/mcpi-dev/mcpi/internal/session"
)

// StepReport is the report of one step.
type StepReport struct {
	Name string `json:"name"`
	Outcome
	Failures []Failure `json:"failures,omitempty"`
	// RPCErr is the server's JSON-RPC error, when the request got one.
	RPCErr error `json:"-"`
	// Text is the result's text, for a step with a snapshot.
	Text *string `json:"-"`
}

// Outcome is what a step's report says besides its texts.
type Outcome struct {
	Kind       string  `json:"kind"`
	Line       int     `json:"line"`
	OK         bool    `json:"ok"`
	DurationMS float64 `json:"durationMs"`
	// Updated says --update wrote this step's new snapshot.
	Updated bool `json:"updated,omitempty"`
}

// Runner runs the steps of one file on one connection: their captures
// and the tools' output schemas live as long as it does.
type Runner struct {
	Client *session.Client
	Vars   Vars
	// Handler gives the server the answers of the step under way.
	Handler *Handler
	// Redact hides the environment's secrets in the failures.
	Redact func(string) string
	// Roots, when set, takes a step's roots instead of the Handler: a
	// live session's, which answers roots/list itself.
	Roots RootsUser
	tools map[string]*listedTool // by name, once listed
}

// listedTool is what a step needs of a tool the server lists.
type listedTool struct {
	outputSchema json.RawMessage
	input        *schema.Schema // nil when the tool has none, or one that does not compile
}

// NewRunner returns a Runner of the steps of a file on c, answering the
// server with h, ${NAME}s outside the captures looked up in env.
func NewRunner(c *session.Client, h *Handler, env func(string) (string, bool), redact func(string) string) *Runner {
	return &Runner{Client: c, Handler: h, Vars: Vars{Captures: map[string]any{}, Env: env}, Redact: redact}
}

// Step runs one step and reports it; the error is one that ends the file
// (the connection failed), not a failed expectation.
func (r *Runner) Step(ctx context.Context, written *Step) (StepReport, error) {
	rep := StepReport{Name: written.Title(), Outcome: Outcome{Kind: written.Kind(), Line: written.Line}}
	s, err := written.Expand(r.Vars)
	if err != nil {
		rep.Failures = []Failure{{Message: err.Error()}}
		return rep, nil
	}
	rep.Name = s.Title()
	var res Result
	if s.Kind() == KindCall {
		tool, err := r.tool(ctx, s.Call)
		if err != nil {
			return ended(rep, err)
		}
		if f := checkArgs(s, tool); f != nil {
			rep.Failures = finish([]Failure{*f}, r.Redact)
			return rep, nil
		}
		if tool != nil {
			res.OutputSchema = tool.outputSchema
		}
	}
	r.Handler.begin(s.Answers)
	if s.Answers != nil && s.Answers.Roots != nil {
		done, fails, err := r.useRoots(ctx, s.Answers.Roots)
		defer done()
		rep.Failures = append(rep.Failures, fails...)
		if err != nil {
			r.Handler.end()
			return ended(rep, err)
		}
	}
	start := time.Now()
	res.Redact = r.Redact
	res.Raw, res.Err = r.send(ctx, s)
	d := time.Since(start)
	rep.DurationMS = float64(d.Microseconds()) / 1000
	rep.Failures = append(rep.Failures, r.Handler.end()...)
	if res.Err != nil && !IsRPCError(res.Err) {
		// The connection failed: the file ends here.
		return ended(rep, res.Err)
	}
	var re *session.RPCError
	if errors.As(res.Err, &re) {
		code := re.Code
		res.RPCCode, res.RPCMessage = &code, re.Message
	}
	rep.Failures = append(rep.Failures, Evaluate(s, res, d)...)
	rep.RPCErr = res.Err
	if res.Err == nil {
		if s.Expect.HasSnapshot {
			var v any
			if json.Unmarshal(res.Raw, &v) == nil {
				t := Snapshot(s.Kind(), v)
				rep.Text = &t
			}
		}
		captured, fails := Capture(s, res.Raw)
		rep.Failures = append(rep.Failures, fails...)
		for k, v := range captured {
			r.Vars.Captures[k] = v
		}
	}
	rep.OK = len(rep.Failures) == 0
	return rep, nil
}

// RootsUser answers roots/list with roots until done is called; asked is
// closed once the server has been answered with them.
type RootsUser interface {
	UseRoots(roots []mcp.Root) (asked <-chan struct{}, done func())
}

// rootsWait is how long a step with roots waits for a legacy server to
// ask for them once told they changed.
const rootsWait = 500 * time.Millisecond

// useRoots makes a step's roots the answer to roots/list, tells the
// server they changed, and, when it asks (a legacy server does), waits
// until it has them: the step's request goes after the roots' round trip.
func (r *Runner) useRoots(ctx context.Context, entries []string) (done func(), fails []Failure, err error) {
	list, fails := r.Handler.parseRoots(entries)
	var user RootsUser = r.Handler
	if r.Roots != nil {
		user = r.Roots
	}
	asked, done := user.UseRoots(list)
	if r.Client.Era() == session.EraModern {
		return done, fails, nil // a modern request carries the roots it needs
	}
	if err := r.Client.Notify(ctx, "notifications/roots/list_changed", nil); err != nil {
		return done, fails, err
	}
	timer := time.NewTimer(rootsWait)
	defer timer.Stop()
	select {
	case <-asked:
		// The answer was written: a ping's answer says the server read it.
		err = r.Client.Ping(ctx)
		if IsRPCError(err) {
			err = nil
		}
	case <-timer.C:
	case <-ctx.Done():
		err = ctx.Err()
	}
	return done, fails, err
}

func ended(rep StepReport, err error) (StepReport, error) {
	msg := safetext.OneLine(err.Error())
	rep.Failures = append(rep.Failures, Failure{Path: "error", Expected: "a result", Actual: msg,
		Message: "the request failed: " + msg})
	return rep, err
}

// IsRPCError reports whether err is the server's JSON-RPC error (the
// request got an answer), not a failure of the connection.
func IsRPCError(err error) bool {
	var re *session.RPCError
	return errors.As(err, &re)
}

// send sends the step's request and returns its result.
func (r *Runner) send(ctx context.Context, s *Step) (json.RawMessage, error) {
	var raw json.RawMessage
	c := r.Client
	switch s.Kind() {
	case KindCall:
		args := json.RawMessage(`{}`)
		if s.Args != nil {
			b, err := json.Marshal(s.Args)
			if err != nil {
				return nil, &session.RPCError{Method: "tools/call", RPCError: &mcp.RPCError{Code: mcp.CodeInvalidParams, Message: "args: " + err.Error()}}
			}
			args = b
		}
		return c.CallToolRaw(ctx, mcp.CallToolParams{Name: s.Call, Arguments: args}, nil)
	case KindPrompt:
		args := map[string]string{}
		for k, v := range s.Args {
			if str, ok := v.(string); ok {
				args[k] = str
			} else {
				b, _ := json.Marshal(v)
				args[k] = string(b)
			}
		}
		err := c.Call(ctx, "prompts/get", map[string]any{"name": s.Prompt, "arguments": args}, &raw, nil)
		return raw, err
	case KindRead:
		err := c.Call(ctx, "resources/read", mcp.ReadResourceParams{URI: s.Read}, &raw, nil)
		return raw, err
	}
	if cp := s.Complete; cp != nil {
		p := mcp.CompleteParams{Argument: mcp.CompleteArgument{Name: cp.Argument, Value: cp.Value}}
		if cp.Prompt != "" {
			p.Ref = mcp.CompleteReference{Type: "ref/prompt", Name: cp.Prompt}
		} else {
			p.Ref = mcp.CompleteReference{Type: "ref/resource", URI: cp.Template}
		}
		if len(cp.Context) > 0 {
			p.Context = &mcp.CompleteContext{Arguments: cp.Context}
		}
		err := c.Call(ctx, "completion/complete", p, &raw, nil)
		return raw, err
	}
	params := s.Params
	if params == nil {
		params = struct{}{}
	}
	err := c.Call(ctx, s.Request, params, &raw, nil)
	return raw, err
}

// tool is the tool name as the server lists it (nil when it does not),
// from a listing made once per Runner. A listing refused (a server
// without tools) lists none.
func (r *Runner) tool(ctx context.Context, name string) (*listedTool, error) {
	if r.tools == nil {
		tools, err := r.Client.AllTools(ctx)
		if err != nil {
			select {
			case <-r.Client.Done():
				return nil, err // the connection is gone
			default:
			}
			tools = nil // refused: the call goes unchecked, as it would
		}
		r.tools = map[string]*listedTool{}
		for _, t := range tools {
			lt := &listedTool{outputSchema: t.OutputSchema}
			if len(t.InputSchema) > 0 {
				lt.input, _ = schema.CompileInput(t.InputSchema)
			}
			r.tools[t.Name] = lt
		}
	}
	return r.tools[name], nil
}

// checkArgs checks a call's arguments against the tool's inputSchema
// before they are sent, as mcpi call does: arguments it refuses fail the
// step unsent. A step that expects the server to refuse them (error:, or
// isError: true) sends them: that is what it tests.
func checkArgs(s *Step, tool *listedTool) *Failure {
	if tool == nil || tool.input == nil || s.Expect.Error != nil || s.Expect.IsError != nil && *s.Expect.IsError {
		return nil
	}
	args := any(map[string]any{})
	if s.Args != nil {
		// Through JSON, so that YAML's numbers are the JSON the schema checks.
		b, err := json.Marshal(s.Args)
		if err != nil {
			return nil
		}
		args = json.RawMessage(b)
	}
	ps := tool.input.Validate(args)
	if ps == nil {
		return nil
	}
	return &Failure{Path: "args", Expected: "arguments the inputSchema of " + s.Call + " accepts", Actual: ps.Error(),
		Message: fmt.Sprintf("args: do not match the inputSchema of %s: %s; not sent", s.Call, ps.Error())}
}
