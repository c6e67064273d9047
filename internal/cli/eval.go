package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/chat"
	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/eval"
	"github.com/mcpi-dev/mcpi/internal/iostreams"
	"github.com/mcpi-dev/mcpi/internal/llm"
	"github.com/mcpi-dev/mcpi/internal/record"
	"github.com/mcpi-dev/mcpi/internal/save"
	"github.com/mcpi-dev/mcpi/internal/surface"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// EvalOptions are mcpi eval's.
type EvalOptions struct {
	command.ConnOptions
	Files       []string
	Models      []string
	Runs        int
	Concurrency int
	MaxTurns    int
	Baseline    string
	JUnit       string
	Markdown    bool
	ToolsFrom   string
	MinPassRate float64
	// Seed and Temperature are sent when given.
	Seed        *int64
	Temperature *float64
	// RecordDir is --record: a directory, a trace per run.
	RecordDir string
}

// NewCmdEval returns `mcpi eval FILE... TARGET --model A,B --runs N`.
func NewCmdEval(f *command.Factory, runF func(context.Context, *EvalOptions) error) *cobra.Command {
	opts := &EvalOptions{ConnOptions: f.Conn()}
	var seed int64
	var temperature float64
	cmd := &cobra.Command{
		Use:   "eval FILE... TARGET --model PROVIDER:MODEL[,...] [--runs N]",
		Short: "Measure how models use the server's tools: pass rates per case, against a baseline",
		Long: "Run each case of the case files (docs/models.md, \"Evals\") --runs times with each --model against\n" +
			"the server, every tool call approved, and report per case and model the pass rate with its 95%\n" +
			"Wilson interval, tokens, median latency and cost. With --baseline (a report of --json), a pass\n" +
			"rate that dropped with statistical significance fails the command; a drop within the noise does\n" +
			"not. Keys come from ANTHROPIC_API_KEY, OPENAI_API_KEY (and OPENAI_BASE_URL) or GEMINI_API_KEY.\n" +
			"Exit 0 when every gate is met, 1 on a regression or a pass rate under --min-pass-rate, 11 when\n" +
			"the model's provider failed on every run.",
		Example: "  mcpi eval cases.yaml --model anthropic:claude-haiku-4-5,openai:gpt-5.4-mini --runs 10 -- mcpi demo-server\n" +
			"  mcpi eval cases.yaml --model openai:gpt-5.4-mini --runs 20 --json -- mcpi demo-server > base.json\n" +
			"  mcpi eval cases.yaml --model openai:gpt-5.4-mini --runs 20 --baseline base.json --markdown -- mcpi demo-server",
		RunE: command.RunE(opts, runF, evalRun),
	}
	cmd.Args = command.TargetArgs(&opts.Target, func(files []string) error {
		if len(files) == 0 {
			return command.FlagErrorf("missing the case FILE")
		}
		opts.Files = files
		for _, m := range opts.Models {
			if err := command.CheckModel(m); err != nil {
				return command.FlagErrorf("--model: %v", err)
			}
		}
		if len(opts.Models) == 0 {
			if m := os.Getenv("MCPI_MODEL"); m != "" {
				opts.Models = []string{m}
			} else {
				return command.FlagErrorf("give the models: --model PROVIDER:MODEL[,PROVIDER:MODEL...], or set MCPI_MODEL")
			}
		}
		switch {
		case opts.Runs < 1:
			return command.FlagErrorf("--runs: at least 1")
		case opts.Concurrency < 1:
			return command.FlagErrorf("--concurrency: at least 1")
		case opts.MaxTurns < 1:
			return command.FlagErrorf("--max-turns: at least 1")
		case opts.MinPassRate < 0 || opts.MinPassRate > 1:
			return command.FlagErrorf("--min-pass-rate: a rate from 0 to 1")
		case opts.JSON && opts.Markdown:
			return command.FlagErrorf("give --json or --markdown, not both: each is the whole of stdout")
		}
		if cmd.Flags().Changed("seed") {
			opts.Seed = &seed
		}
		if cmd.Flags().Changed("temperature") {
			opts.Temperature = &temperature
		}
		// --record is a directory here: the connection writes no
		// trace of its own, each run writes one.
		opts.RecordDir, opts.Record = opts.Record, ""
		return nil
	})
	command.AddConnFlags(cmd, &opts.ConnOptions)
	fl := cmd.Flags()
	fl.Lookup("record").Usage = "write a trace per run into this directory (the model's turns, the judge's and the frames of the run's tool calls)"
	end := command.FlagGroup(cmd, command.GroupArgs)
	fl.StringSliceVar(&opts.Models, "model", nil, "the models to evaluate, comma-separated: PROVIDER:MODEL (anthropic:, openai:, openai-responses:, ollama:, compat:) or names of models.yaml; default $MCPI_MODEL")
	if fl.Lookup("model-url") == nil {
		fl.StringVar(&opts.ModelURL, "model-url", "", "the base URL of every model and judge (compat: requires it; give it with models of one server)")
	}
	fl.IntVar(&opts.Runs, "runs", 1, "run each case this many times per model (5 or more for a baseline comparison)")
	fl.IntVar(&opts.Concurrency, "concurrency", 4, "runs in flight at once per provider")
	fl.IntVar(&opts.MaxTurns, "max-turns", 10, "stop a run after this many turns of the model per message")
	fl.Int64Var(&seed, "seed", 0, "ask the provider for this seed (where it takes one: OpenAI's chat completions)")
	fl.Float64Var(&temperature, "temperature", 0, "ask the provider for this temperature (the provider's default when not given)")
	fl.StringVar(&opts.ToolsFrom, "tools-from", "", "show the model the tools of this snapshot file (mcpi snapshot's, an edited description or schema in it) instead of the server's; the calls still go to the server")
	end()
	end = command.FlagGroup(cmd, command.GroupOutput)
	fl.StringVar(&opts.Baseline, "baseline", "", "compare with this report (--json of an earlier run): exit 1 when a pass rate dropped with statistical significance")
	fl.Float64Var(&opts.MinPassRate, "min-pass-rate", 0, "exit 1 when a case's pass rate with a model is under this rate (0 to 1; 0: report only)")
	fl.BoolVar(&opts.Markdown, "markdown", false, "print the report as a Markdown table (for a pull request)")
	fl.StringVar(&opts.JUnit, "junit", "", "also write a JUnit XML report to this file: a test case per case and model")
	end()
	return cmd
}

func evalRun(ctx context.Context, opts *EvalOptions) error {
	var files []*eval.File
	judges := map[string]llm.Provider{}
	for _, p := range opts.Files {
		f, err := eval.ReadFile(opts.IO.Path(p))
		if err != nil {
			return &command.FlagError{Err: err}
		}
		f.Path = p
		files = append(files, f)
		if f.Judge != "" {
			judges[f.Judge] = nil
		}
	}
	var base *eval.Report
	if opts.Baseline != "" {
		b, err := eval.ReadReport(opts.IO.Path(opts.Baseline))
		if err != nil {
			return command.FlagErrorf("--baseline: %v", err)
		}
		base = b
	}
	var snap *surface.Snapshot
	if opts.ToolsFrom != "" {
		fh, err := os.Open(opts.IO.Path(opts.ToolsFrom))
		if err == nil {
			snap, err = surface.Read(fh)
			fh.Close()
		}
		if err != nil {
			return command.FlagErrorf("--tools-from: %v", err)
		}
	}
	// The models before the server: a missing key fails at once.
	provider := func(spec string) (llm.Provider, error) { return command.OpenModel(spec, opts.ModelURL, nil) }
	var models []eval.Model
	for _, spec := range opts.Models {
		p, err := provider(spec)
		if err != nil {
			return err
		}
		models = append(models, eval.Model{Spec: spec, Provider: p})
	}
	for spec := range judges {
		p, err := provider(spec)
		if err != nil {
			return fmt.Errorf("judge: %w", err)
		}
		judges[spec] = p
	}
	router := eval.NewRouter()
	return opts.NewRun().With(ctx, command.ConnHooks{Tap: router}, func(r *command.ConnRun) error {
		c := r.Client
		tools, err := c.AllTools(ctx)
		if err != nil {
			return err
		}
		if snap != nil {
			var notes []string
			if tools, notes, err = eval.ToolsFrom(snap, tools); err != nil {
				return command.FlagErrorf("--tools-from: %v", err)
			}
			for _, n := range notes {
				fmt.Fprintf(opts.IO.ErrOut, "--tools-from: %s\n", n)
			}
		}
		ro := eval.Options{Models: models, Judges: judges, Server: chat.SessionServer(c), Tools: tools, Runs: opts.Runs,
			Concurrency: opts.Concurrency, MaxTurns: opts.MaxTurns, Seed: opts.Seed, Temperature: opts.Temperature, Tap: r.ModelTap(), Prices: command.ModelPrices()}
		if opts.RecordDir != "" {
			trace, err := opts.runTraces(r)
			if err != nil {
				return err
			}
			ro.Trace, ro.Frames = trace, router
		}
		if opts.IO.StderrTTY {
			ro.Progress = func(done, total, failed int) {
				opts.IO.ErrOut.EraseLine()
				fmt.Fprintf(opts.IO.ErrOut, "%d/%d runs · %d failed", done, total, failed)
			}
		}
		rep := eval.Run(ctx, files, ro)
		if ro.Progress != nil {
			opts.IO.ErrOut.EraseLine()
		}
		red := record.NewRedactor(opts.SecretValues())
		rep.Redact(red.Text)
		if base != nil {
			rep.Compare(base, opts.Baseline)
		}
		err = opts.report(rep)
		if ctx.Err() != nil {
			// Interrupted: what ran is reported; the runs cut short are
			// no verdict on the provider or the server.
			return ctx.Err()
		}
		return err
	})
}

// runTraces makes --record's directory and returns what opens a run's
// trace in it: the command's header, its redaction, a file per run.
func (opts *EvalOptions) runTraces(r *command.ConnRun) (func(eval.RunID) (transport.Tap, func() error, error), error) {
	if err := os.MkdirAll(opts.IO.Path(opts.RecordDir), 0o700); err != nil {
		return nil, &command.FlagError{Err: fmt.Errorf("--record: %w", err)}
	}
	var seq atomic.Int64
	return func(id eval.RunID) (transport.Tap, func() error, error) {
		name := fmt.Sprintf("%03d-%s-%s-%s-%d.jsonl", seq.Add(1), slug(strings.TrimSuffix(filepath.Base(id.File), filepath.Ext(id.File))), slug(id.Case), slug(id.Model), id.N)
		w, err := record.Create(opts.IO.Path(filepath.Join(opts.RecordDir, name)), r.TraceHeader(), opts.TraceOptions())
		if err != nil {
			return nil, nil, err
		}
		return w, w.Close, nil
	}, nil
}

var notSlug = regexp.MustCompile(`[^a-zA-Z0-9._]+`)

// slug makes a name safe in a file name.
func slug(s string) string {
	s = strings.Trim(notSlug.ReplaceAllString(s, "-"), "-")
	if len(s) > 40 {
		s = s[:40]
	}
	if s == "" {
		s = "x"
	}
	return s
}

// report writes the report (text, Markdown or JSON; JUnit beside) and
// returns the command's outcome.
func (opts *EvalOptions) report(rep *eval.Report) error {
	if opts.JUnit != "" {
		b, err := rep.JUnit()
		if err == nil {
			err = save.Replace(opts.IO.Path(opts.JUnit), b)
		}
		if err != nil {
			return fmt.Errorf("--junit: %w", err)
		}
	}
	switch {
	case opts.JSON:
		if err := iostreams.WriteJSON(opts.IO, rep); err != nil {
			return err
		}
	case opts.Markdown:
		rep.Markdown(opts.IO.Out)
	default:
		rep.Text(opts.IO.Out)
	}
	if rep.AllModelErrors() {
		what := "the model's provider failed on every run: " + command.OneLine(rep.FirstError())
		if !opts.JSON {
			fmt.Fprintf(opts.IO.ErrOut, "mcpi: %s\n", what)
		}
		return command.ErrSilent{Code: command.ExitModel, What: what, Kind: command.KindModel}
	}
	var why []string
	for _, r := range rep.Regressions() {
		why = append(why, fmt.Sprintf("%s with %s regressed (%d/%d, was %d/%d; p = %.3g)", r.Case, r.Model, r.Passed, r.Runs, r.Against.Passed, r.Against.Runs, r.Against.P))
	}
	if opts.MinPassRate > 0 {
		for _, r := range rep.Below(opts.MinPassRate) {
			why = append(why, fmt.Sprintf("%s with %s passed %d/%d, under --min-pass-rate %g", r.Case, r.Model, r.Passed, r.Runs, opts.MinPassRate))
		}
	}
	if len(why) == 0 {
		return nil
	}
	if !opts.JSON {
		for _, w := range why {
			fmt.Fprintf(opts.IO.ErrOut, "mcpi: %s\n", w)
		}
	}
	return command.ErrSilent{Code: command.ExitToolError, What: strings.Join(why, "; ")}
}
