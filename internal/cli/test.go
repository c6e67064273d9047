package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/collection"
	"github.com/mcpi-dev/mcpi/internal/daemon"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/roots"
	"github.com/mcpi-dev/mcpi/internal/save"
	"github.com/mcpi-dev/mcpi/internal/schema"
	"github.com/mcpi-dev/mcpi/internal/session"
)

// TestOptions are the input of `mcpi test`.
type TestOptions struct {
	ConnOptions
	// Files are the collections, in the order given.
	Files []string
	// JUnit is the JUnit XML report's path; TAP prints TAP instead of the
	// text report; Update rewrites the snapshots that changed.
	JUnit  string
	TAP    bool
	Update bool
	// cliTarget says the TARGET was given on the command line (or a live
	// session), and so overrides the server each file names.
	cliTarget bool
	// env looks up ${NAME} outside the captures (the environment).
	env func(string) (string, bool)
	// now is the clock of the reports' timestamps.
	now func() time.Time
}

// NewCmdTest returns `mcpi test FILE... [TARGET]`.
func NewCmdTest(f *Factory, runF func(context.Context, *TestOptions) error) *cobra.Command {
	opts := &TestOptions{ConnOptions: f.conn(), env: os.LookupEnv, now: time.Now}
	cmd := &cobra.Command{
		Use:   "test FILE... [TARGET]",
		Short: "Run collections of calls with expectations, for CI",
		Long: "Run each collection file's steps in order on one connection, check each step's expectations, and print one line per step.\n" +
			"The server is the one the file names (server:), or the TARGET given on the command line (or --session), which overrides it.\n" +
			"Exits 1 when a step fails. The format: docs/test.md.",
		Example: "  mcpi test smoke.yaml\n  mcpi test smoke.yaml -- mcpi demo-server\n  mcpi test --junit report.xml *.yaml https://example.com/mcp\n  mcpi test --update smoke.yaml",
		RunE: func(cmd *cobra.Command, args []string) error {
			var files []string
			var err error
			if cmd.Flags().Changed("session") || opts.Target.inDaemon {
				// The session's server, whatever the files name.
				files, err = opts.Target.parseTarget(cmd, args)
				opts.cliTarget = true
			} else {
				files, opts.cliTarget, err = opts.Target.parseCollectionTarget(cmd, args)
			}
			if err != nil {
				return err
			}
			if len(files) == 0 {
				return flagErrorf("missing the collection FILE")
			}
			if opts.Record != "" && len(files) > 1 {
				return flagErrorf("--record writes one trace: give one FILE with it")
			}
			if opts.TAP && opts.JSON {
				return flagErrorf("give --tap or --json, not both: each is the whole of stdout")
			}
			opts.Files = files
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return testRun(cmd.Context(), opts)
		},
	}
	addConnFlags(cmd, &opts.ConnOptions)
	addSessionFlag(cmd, &opts.ConnOptions)
	end := flagGroup(cmd, groupOutput)
	cmd.Flags().StringVar(&opts.JUnit, "junit", "", "also write a JUnit XML report (the Ant junit schema that Jenkins and GitLab read) to this file")
	cmd.Flags().BoolVar(&opts.TAP, "tap", false, "print TAP (version 13) instead of the text report")
	cmd.Flags().BoolVar(&opts.Update, "update", false, "rewrite the snapshot expectations that changed from the actual results, keeping the rest of each file, and show what changed")
	end()
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
	// Updated says --update wrote this step's new snapshot.
	Updated bool `json:"updated,omitempty"`
	// rpcErr is the server's JSON-RPC error, when the request got one.
	rpcErr error
	// text is the result's text, for a step with a snapshot.
	text *string
}

// testFile is the report of one collection.
type testFile struct {
	File  string     `json:"file"`
	OK    bool       `json:"ok"`
	Steps []testStep `json:"steps"`
	// Error is why the file could not run to its end (its server could
	// not be reached, or went away).
	Error string `json:"error,omitempty"`
	// Updated counts the snapshots --update wrote.
	Updated int `json:"updated,omitempty"`
	// started is when the file began, for the JUnit report.
	started time.Time
	elapsed time.Duration
}

func testRun(ctx context.Context, opts *TestOptions) error {
	if opts.held == nil && opts.Target.Session != "" {
		// The whole command runs in the session's daemon.
		return opts.forward(ctx)
	}
	var reports []testFile
	var firstErr error
	firstAt := -1
	out := newTestOutput(opts)
	for _, path := range opts.Files {
		rep, err := runCollection(ctx, opts, path, out)
		reports = append(reports, rep)
		if err == nil {
			continue
		}
		if firstErr == nil {
			firstErr, firstAt = err, len(reports)-1
		}
		if errors.Is(err, context.Canceled) {
			// What ran is reported, the rest is not run.
			break
		}
		if !opts.JSON && !opts.TAP {
			fmt.Fprintf(opts.IO.ErrOut, "mcpi: %s: %s\n", path, oneLine(rep.Error))
		}
	}
	passed, failed := 0, 0
	for _, r := range reports {
		for _, s := range r.Steps {
			if s.OK {
				passed++
			} else {
				failed++
			}
		}
	}
	if opts.JUnit != "" {
		if err := writeJUnit(opts.IO.Path(opts.JUnit), reports); err != nil {
			return fmt.Errorf("--junit: %w", err)
		}
	}
	if err := out.end(reports, passed, failed, firstErr); err != nil {
		return err
	}
	switch {
	case firstErr != nil:
		return errSilent{code: exitCodeFor(firstErr), what: oneLine(reports[firstAt].Error), kind: errorKind(firstErr)}
	case failed > 0:
		return errSilent{code: ExitToolError, what: fmt.Sprintf("%d step(s) failed", failed)}
	}
	return nil
}

// runCollection runs one file's steps on one connection; its error is
// why the file could not run to its end.
func runCollection(ctx context.Context, opts *TestOptions, path string, out *testOutput) (rep testFile, err error) {
	rep = testFile{File: path, Steps: []testStep{}, started: opts.now()}
	var red secrets
	defer func() {
		rep.elapsed = opts.now().Sub(rep.started)
		if err != nil {
			rep.Error = red.text(err.Error())
		}
	}()
	full := opts.IO.Path(path)
	data, file, err := readCollection(full)
	if err != nil {
		return rep, &FlagError{Err: err}
	}
	file.Path = path
	red = opts.secretsOf(file)
	if err := opts.fileTarget(file); err != nil {
		return rep, err
	}
	out.file(path)
	o := &opts.ConnOptions
	o.roots = nil
	h := &testHandler{fallback: &cliHandler{o: o, say: o.sayer(), rootsAsked: make(chan struct{})}, workDir: o.IO.WorkDir()}
	err = o.withHooks(ctx, connHooks{handler: h}, func(c *session.Client) error {
		r := &stepRunner{c: c, vars: collection.Vars{Captures: map[string]any{}, Env: opts.env}, h: h, redact: red.text}
		for i := range file.Steps {
			s, err := r.run(ctx, &file.Steps[i])
			rep.Steps = append(rep.Steps, s)
			if !opts.Update {
				// With --update a step's verdict waits for the update.
				out.step(path, red.step(s))
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil && opts.Update {
		// A snapshot that cannot be written is the file's error; its
		// steps are still reported.
		rep.Updated, err = updateSnapshots(opts, full, data, file, rep.Steps, red)
	}
	for i := range rep.Steps {
		rep.Steps[i] = red.step(rep.Steps[i])
		if opts.Update {
			out.step(path, rep.Steps[i])
		}
	}
	rep.OK = err == nil
	for _, s := range rep.Steps {
		rep.OK = rep.OK && s.OK
	}
	return rep, err
}

// readCollection reads a collection file, keeping its text for --update.
func readCollection(path string) ([]byte, *collection.File, error) {
	data, err := collection.ReadData(path)
	if err != nil {
		return nil, nil, err
	}
	file, err := collection.Parse(data)
	if err != nil {
		// The report names the file.
		return nil, nil, err
	}
	return data, file, nil
}

// updateSnapshots writes the snapshots that changed into the file (in
// place, atomically) and says what changed; it marks those steps passed
// when the snapshot was their only failure.
func updateSnapshots(opts *TestOptions, path string, data []byte, file *collection.File, steps []testStep, red secrets) (int, error) {
	texts := map[int]string{}
	for i := range steps {
		s := &steps[i]
		if s.text == nil || !snapshotFailed(s.Failures) {
			continue
		}
		if red.holds(*s.text) {
			s.Failures = append(s.Failures, collection.Failure{Path: "snapshot",
				Message: "snapshot: the result's text holds a secret of the environment: not written into the file"})
			continue
		}
		texts[i] = *s.text
	}
	if len(texts) == 0 {
		return 0, nil
	}
	out, err := collection.Update(data, file, texts)
	if err != nil {
		return 0, &FlagError{Err: fmt.Errorf("--update: %s: %w", file.Path, err)}
	}
	if err := save.Replace(path, out); err != nil {
		return 0, &FlagError{Err: fmt.Errorf("--update: %s: %w", file.Path, err)}
	}
	for i := range texts {
		s := &steps[i]
		old := file.Steps[i].Expect.Snapshot
		fmt.Fprintf(opts.IO.ErrOut, "%s:%d: snapshot of %s updated\n", file.Path, file.Steps[i].Line, sanitize(s.Name, false))
		for _, l := range snapshotDiff(old, texts[i]) {
			fmt.Fprintf(opts.IO.ErrOut, "    %s\n", l)
		}
		var rest []collection.Failure
		for _, f := range s.Failures {
			if f.Path != "snapshot" {
				rest = append(rest, f)
			}
		}
		s.Failures, s.Updated, s.OK = rest, true, len(rest) == 0
	}
	return len(texts), nil
}

func snapshotFailed(fs []collection.Failure) bool {
	for _, f := range fs {
		if f.Path == "snapshot" {
			return true
		}
	}
	return false
}

// snapshotDiff shows the lines that went (-) and came (+), at most 20.
func snapshotDiff(old *string, now string) []string {
	var before []string
	if old != nil {
		before = strings.Split(*old, "\n")
	}
	after := strings.Split(now, "\n")
	common := 0
	for common < len(before) && common < len(after) && before[common] == after[common] {
		common++
	}
	var out []string
	for _, l := range before[common:] {
		out = append(out, "- "+oneLine(l))
	}
	for _, l := range after[common:] {
		out = append(out, "+ "+oneLine(l))
	}
	if len(out) > 20 {
		out = append(out[:20], fmt.Sprintf("… %d more line(s)", len(out)-20))
	}
	return out
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
	// redact hides the environment's secrets in the failures.
	redact func(string) string
	c      *session.Client
	vars   collection.Vars
	h      *testHandler
	tools  map[string]json.RawMessage // name -> outputSchema, once listed
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
	if s.Answers != nil && s.Answers.Roots != nil {
		// A legacy server asks for the roots when told they changed.
		if err := r.c.Notify(ctx, "notifications/roots/list_changed", nil); err != nil {
			r.h.end()
			return r.ended(rep, err)
		}
	}
	start := time.Now()
	res.Redact = r.redact
	res.Raw, res.Err = r.send(ctx, s)
	d := time.Since(start)
	rep.DurationMS = float64(d.Microseconds()) / 1000
	rep.Failures = append(rep.Failures, r.h.end()...)
	if res.Err != nil && !isRPCError(res.Err) {
		// The connection failed: the file ends here.
		return r.ended(rep, res.Err)
	}
	var re *session.RPCError
	if errors.As(res.Err, &re) {
		code := re.Code
		res.RPCCode, res.RPCMessage = &code, re.Message
	}
	rep.Failures = append(rep.Failures, collection.Evaluate(s, res, d)...)
	rep.rpcErr = res.Err
	if res.Err == nil {
		if s.Expect.HasSnapshot {
			var v any
			if json.Unmarshal(res.Raw, &v) == nil {
				t := collection.Text(s.Kind(), v)
				rep.text = &t
			}
		}
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
	if c := s.Complete; c != nil {
		p := mcp.CompleteParams{Argument: mcp.CompleteArgument{Name: c.Argument, Value: c.Value}}
		if c.Prompt != "" {
			p.Ref = mcp.CompleteReference{Type: "ref/prompt", Name: c.Prompt}
		} else {
			p.Ref = mcp.CompleteReference{Type: "ref/resource", URI: c.Template}
		}
		if len(c.Context) > 0 {
			p.Context = &mcp.CompleteContext{Arguments: c.Context}
		}
		err := r.c.Call(ctx, "completion/complete", p, &raw, nil)
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
	// workDir is where a step's relative roots are.
	workDir string

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

// ListRoots answers with the step's roots, else as the CLI does, with
// --root.
func (h *testHandler) ListRoots(ctx context.Context) (*mcp.ListRootsResult, error) {
	a := h.current()
	if a == nil || a.Roots == nil {
		return h.fallback.ListRoots(ctx)
	}
	out := &mcp.ListRootsResult{Roots: []mcp.Root{}}
	for _, r := range a.Roots {
		root, err := roots.ParseIn(r, h.workDir)
		if err != nil {
			h.problem(collection.Failure{Path: "answers.roots", Expected: "a directory or a file:// URI", Actual: oneLine(r),
				Message: "answers: roots: " + oneLine(err.Error())})
			continue
		}
		out.Roots = append(out.Roots, root)
	}
	return out, nil
}

// Answers reports whether the step under way, or the flags, answer
// requests of kind: in a live session, the daemon gives a server's
// request to the command that answers it.
func (h *testHandler) Answers(kind daemon.Kind) bool {
	if a := h.current(); a != nil {
		switch kind {
		case daemon.KindSampling:
			if a.Sampling != "" {
				return true
			}
		case daemon.KindElicit:
			if a.Elicit != "" {
				return true
			}
		}
	}
	return h.fallback.Answers(kind)
}

// Say writes a line on the command's stderr.
func (h *testHandler) Say(format string, args ...any) { h.fallback.Say(format, args...) }

var _ daemon.Answerer = (*testHandler)(nil)
