package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/collection"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/schema"
	"github.com/mcpi-dev/mcpi/internal/session"
)

// TestOptions are the input of `mcpi test`.
type TestOptions struct {
	ConnOptions
	// Files are the collections, in the order given.
	Files []string
	// cliTarget says the TARGET was given on the command line, and so
	// overrides the server each file names.
	cliTarget bool
	// env looks up ${NAME} outside the captures (the environment).
	env func(string) (string, bool)
}

// NewCmdTest returns `mcpi test FILE... [TARGET]`.
func NewCmdTest(f *Factory, runF func(context.Context, *TestOptions) error) *cobra.Command {
	opts := &TestOptions{ConnOptions: f.conn(), env: os.LookupEnv}
	cmd := &cobra.Command{
		Use:   "test FILE... [TARGET]",
		Short: "Run collections of calls with expectations, for CI",
		Long: "Run each collection file's steps in order on one connection, check each step's expectations, and print one line per step.\n" +
			"The server is the one the file names (server:), or the TARGET given on the command line, which overrides it.\n" +
			"Exits 1 when a step fails. The format: docs/test.md.",
		Example: "  mcpi test smoke.yaml\n  mcpi test smoke.yaml -- mcpi demo-server\n  mcpi test --json *.yaml https://example.com/mcp",
		RunE: func(cmd *cobra.Command, args []string) error {
			files, cliTarget, err := opts.Target.parseCollectionTarget(cmd, args)
			if err != nil {
				return err
			}
			opts.cliTarget = cliTarget
			if len(files) == 0 {
				return flagErrorf("missing the collection FILE")
			}
			if opts.Record != "" && len(files) > 1 {
				return flagErrorf("--record writes one trace: give one FILE with it")
			}
			opts.Files = files
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return testRun(cmd.Context(), opts)
		},
	}
	addConnFlags(cmd, &opts.ConnOptions)
	return cmd
}

// testStep is the report of one step.
type testStep struct {
	Name       string               `json:"name"`
	Kind       string               `json:"kind"`
	Line       int                  `json:"line"`
	OK         bool                 `json:"ok"`
	DurationMS float64              `json:"durationMs"`
	Failures   []collection.Failure `json:"failures,omitempty"`
	// rpcErr is the server's JSON-RPC error, when the request got one.
	rpcErr error
}

// testFile is the report of one collection.
type testFile struct {
	File  string     `json:"file"`
	OK    bool       `json:"ok"`
	Steps []testStep `json:"steps"`
	// Error is why the file could not run to its end (its server could
	// not be reached, or went away).
	Error string `json:"error,omitempty"`
}

func testRun(ctx context.Context, opts *TestOptions) error {
	var reports []testFile
	var firstErr error
	passed, failed := 0, 0
	for _, path := range opts.Files {
		rep, err := runCollection(ctx, opts, path)
		for _, s := range rep.Steps {
			if s.OK {
				passed++
			} else {
				failed++
			}
		}
		reports = append(reports, rep)
		if err != nil {
			var fe *FlagError
			if errors.As(err, &fe) || errors.Is(err, context.Canceled) {
				return err
			}
			if firstErr == nil {
				firstErr = err
			}
			if !opts.JSON {
				fmt.Fprintf(opts.IO.ErrOut, "mcpi: %s: %s\n", path, oneLine(err.Error()))
			}
		}
	}
	if opts.JSON {
		doc := map[string]any{"ok": failed == 0 && firstErr == nil, "passed": passed, "failed": failed, "files": reports}
		if err := writeJSON(opts.IO, doc); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(opts.IO.Out, "%d passed, %d failed\n", passed, failed)
	}
	switch {
	case firstErr != nil:
		return errSilent{code: exitCodeFor(firstErr), what: firstErr.Error()}
	case failed > 0:
		return errSilent{code: ExitToolError, what: fmt.Sprintf("%d step(s) failed", failed)}
	}
	return nil
}

// runCollection runs one file's steps on one connection; its error is
// why the file could not run to its end.
func runCollection(ctx context.Context, opts *TestOptions, path string) (testFile, error) {
	rep := testFile{File: path, Steps: []testStep{}}
	file, err := collection.ReadFile(opts.IO.Path(path))
	if err != nil {
		return rep, &FlagError{Err: err}
	}
	if err := opts.fileTarget(file); err != nil {
		return rep, err
	}
	if !opts.JSON {
		fmt.Fprintln(opts.IO.Out, sanitize(path, false))
	}
	o := &opts.ConnOptions
	o.roots = nil
	h := &testHandler{fallback: &cliHandler{o: o, say: o.sayer(), rootsAsked: make(chan struct{})}}
	err = o.withHooks(ctx, connHooks{handler: h}, func(c *session.Client) error {
		r := &stepRunner{c: c, vars: collection.Vars{Captures: map[string]any{}, Env: opts.env}, h: h}
		for i := range file.Steps {
			s, err := r.run(ctx, &file.Steps[i])
			rep.Steps = append(rep.Steps, s)
			if !opts.JSON {
				printStep(opts.IO, s)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	rep.OK = err == nil
	for _, s := range rep.Steps {
		rep.OK = rep.OK && s.OK
	}
	if err != nil {
		rep.Error = err.Error()
	}
	return rep, err
}

// fileTarget sets the target to the server the file names, unless the
// command line gave one.
func (opts *TestOptions) fileTarget(file *collection.File) error {
	if opts.cliTarget {
		return nil
	}
	return opts.Target.fromCollection(file, opts.env)
}

// parseCollectionTarget parses the arguments of a command that takes
// collection files and, optionally, a TARGET that overrides the server
// each file names: it returns the other arguments and whether a TARGET
// was given.
func (t *TargetOptions) parseCollectionTarget(cmd *cobra.Command, args []string) (rest []string, cliTarget bool, err error) {
	rest = args
	if dash := cmd.ArgsLenAtDash(); dash >= 0 {
		rest = args[:dash]
	}
	cliTarget = cmd.ArgsLenAtDash() >= 0 || t.Server != "" || t.URL != ""
	for _, a := range rest {
		if httpLike(a) != urlNot {
			cliTarget = true
		}
	}
	if cliTarget {
		if rest, err = t.parseTarget(cmd, args); err != nil {
			return nil, false, err
		}
	}
	return rest, cliTarget, nil
}

// fromCollection sets the target to the server a collection file names.
func (t *TargetOptions) fromCollection(file *collection.File, env func(string) (string, bool)) error {
	if file.Server == nil {
		return flagErrorf("%s names no server (server:) and no TARGET was given", file.Path)
	}
	s, err := file.Server.Expand(collection.Vars{Env: env})
	if err != nil {
		return &FlagError{Err: fmt.Errorf("%s: %w", file.Path, err)}
	}
	t.Command, t.URL, t.Server = s.Command, s.URL, s.Config
	if err := t.checkTarget(""); err != nil {
		return err
	}
	return t.checkFlags()
}

func printStep(ios *IOStreams, s testStep) {
	status := "ok  "
	if !s.OK {
		status = "FAIL"
	}
	d := time.Duration(s.DurationMS * float64(time.Millisecond)).Round(10 * time.Microsecond)
	fmt.Fprintf(ios.Out, "  %s %s (%s)\n", status, sanitize(s.Name, false), d)
	for _, f := range s.Failures {
		fmt.Fprintf(ios.Out, "       %s\n", oneLine(f.Message))
		if f.Expected != "" || f.Actual != "" {
			fmt.Fprintf(ios.Out, "         expected: %s\n", oneLine(f.Expected))
			fmt.Fprintf(ios.Out, "         actual:   %s\n", oneLine(f.Actual))
		}
	}
}

// stepRunner runs the steps of one file: their captures and the tools'
// output schemas live as long as its connection.
type stepRunner struct {
	c     *session.Client
	vars  collection.Vars
	h     *testHandler
	tools map[string]json.RawMessage // name -> outputSchema, once listed
}

// run runs one step and reports it; the error is one that ends the file
// (the connection failed), not a failed expectation.
func (r *stepRunner) run(ctx context.Context, written *collection.Step) (testStep, error) {
	rep := testStep{Name: written.Title(), Kind: written.Kind(), Line: written.Line}
	s, err := written.Expand(r.vars)
	if err != nil {
		rep.Failures = []collection.Failure{{Message: err.Error()}}
		return rep, nil
	}
	rep.Name = s.Title()
	var res collection.Result
	if s.Expect.OutputSchema {
		schema, err := r.outputSchema(ctx, s.Call)
		if err != nil {
			return r.ended(rep, err)
		}
		res.OutputSchema = schema
	}
	r.h.begin(s.Answers)
	start := time.Now()
	res.Raw, res.Err = r.send(ctx, s)
	d := time.Since(start)
	rep.DurationMS = float64(d.Microseconds()) / 1000
	rep.Failures = append(rep.Failures, r.h.end()...)
	if res.Err != nil && !isRPCError(res.Err) {
		// The connection failed: the file ends here.
		return r.ended(rep, res.Err)
	}
	rep.Failures = append(rep.Failures, collection.Evaluate(s, res, d)...)
	rep.rpcErr = res.Err
	if res.Err == nil {
		captured, fails := collection.Capture(s, res.Raw)
		rep.Failures = append(rep.Failures, fails...)
		for k, v := range captured {
			r.vars.Captures[k] = v
		}
	}
	rep.OK = len(rep.Failures) == 0
	return rep, nil
}

func (r *stepRunner) ended(rep testStep, err error) (testStep, error) {
	rep.Failures = append(rep.Failures, collection.Failure{Path: "error", Expected: "a result", Actual: oneLine(err.Error()),
		Message: "the request failed: " + oneLine(err.Error())})
	return rep, err
}

func isRPCError(err error) bool {
	var re *session.RPCError
	return errors.As(err, &re)
}

// send sends the step's request and returns its result.
func (r *stepRunner) send(ctx context.Context, s *collection.Step) (json.RawMessage, error) {
	var raw json.RawMessage
	switch s.Kind() {
	case collection.KindCall:
		args := json.RawMessage(`{}`)
		if s.Args != nil {
			b, err := json.Marshal(s.Args)
			if err != nil {
				return nil, &session.RPCError{Method: "tools/call", RPCError: &mcp.RPCError{Code: mcp.CodeInvalidParams, Message: "args: " + err.Error()}}
			}
			args = b
		}
		return r.c.CallToolRaw(ctx, mcp.CallToolParams{Name: s.Call, Arguments: args}, nil)
	case collection.KindPrompt:
		args := map[string]string{}
		for k, v := range s.Args {
			if str, ok := v.(string); ok {
				args[k] = str
			} else {
				b, _ := json.Marshal(v)
				args[k] = string(b)
			}
		}
		err := r.c.Call(ctx, "prompts/get", map[string]any{"name": s.Prompt, "arguments": args}, &raw, nil)
		return raw, err
	case collection.KindRead:
		err := r.c.Call(ctx, "resources/read", mcp.ReadResourceParams{URI: s.Read}, &raw, nil)
		return raw, err
	}
	params := s.Params
	if params == nil {
		params = struct{}{}
	}
	err := r.c.Call(ctx, s.Request, params, &raw, nil)
	return raw, err
}

// outputSchema is the outputSchema of the tool name (nil when it has none),
// from a listing made once per file.
func (r *stepRunner) outputSchema(ctx context.Context, name string) (json.RawMessage, error) {
	if r.tools == nil {
		tools, err := r.c.AllTools(ctx)
		if err != nil {
			return nil, err
		}
		r.tools = map[string]json.RawMessage{}
		for _, t := range tools {
			r.tools[t.Name] = t.OutputSchema
		}
	}
	return r.tools[name], nil
}

// testHandler answers the server's requests during a step with the step's
// answers, and otherwise as the CLI does (its flags, the terminal, or a
// refusal); what a step's answers could not give is one of its failures.
type testHandler struct {
	fallback *cliHandler

	mu       sync.Mutex
	answers  *collection.Answers
	problems []collection.Failure
}

func (h *testHandler) begin(a *collection.Answers) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.answers, h.problems = a, nil
}

func (h *testHandler) end() []collection.Failure {
	h.mu.Lock()
	defer h.mu.Unlock()
	p := h.problems
	h.answers, h.problems = nil, nil
	return p
}

func (h *testHandler) current() *collection.Answers {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.answers
}

func (h *testHandler) problem(f collection.Failure) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.problems = append(h.problems, f)
}

// CreateMessage answers with the step's sampling text.
func (h *testHandler) CreateMessage(ctx context.Context, req *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	if a := h.current(); a != nil && a.Sampling != "" {
		return textReply(a.Sampling), nil
	}
	return h.fallback.CreateMessage(ctx, req)
}

// Elicit answers with the step's elicitation action and fields, checked
// against the form.
func (h *testHandler) Elicit(ctx context.Context, req *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	a := h.current()
	if a == nil || a.Elicit == "" || req.Mode == "url" {
		return h.fallback.Elicit(ctx, req)
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
			h.problem(collection.Failure{Path: "answers.fields", Message: "answers: fields: " + err.Error()})
			return &mcp.ElicitResult{Action: mcp.ElicitCancel}, nil
		}
	}
	if s, err := schema.Compile(req.RequestedSchema); err == nil {
		values = s.ApplyDefaults(values)
		if ps := s.Validate(values); ps != nil {
			h.problem(collection.Failure{Path: "answers.fields", Expected: "fields the form accepts", Actual: fieldProblems(ps),
				Message: fmt.Sprintf("answers: the fields do not fit the form «%s»: %s; the server was answered cancel", oneLine(req.Message), fieldProblems(ps))})
			return &mcp.ElicitResult{Action: mcp.ElicitCancel}, nil
		}
	}
	return &mcp.ElicitResult{Action: mcp.ElicitAccept, Content: values}, nil
}

// ListRoots answers as the CLI does, with --root.
func (h *testHandler) ListRoots(ctx context.Context) (*mcp.ListRootsResult, error) {
	return h.fallback.ListRoots(ctx)
}

var _ session.Handler = (*testHandler)(nil)
