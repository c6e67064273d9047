package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/collection"
	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/load"
	"github.com/mcpi-dev/mcpi/internal/loadmcp"
	"github.com/mcpi-dev/mcpi/internal/loadreport"
	"github.com/mcpi-dev/mcpi/internal/record"
)

// BenchOptions are the input of `mcpi bench`.
type BenchOptions struct {
	CallOptions
	// Collection is the collection file whose steps make one iteration
	// (instead of one call of Tool).
	Collection string
	cliTarget  bool

	Concurrency int
	Count       int64
	Duration    time.Duration
	Rate        float64
	// Connections is "one" (every worker shares one connection) or
	// "per-worker".
	Connections string
	// MaxErrors is the share of failed iterations (0 to 1) past which the
	// command exits 1.
	MaxErrors float64

	env   func(string) (string, bool)
	clock load.Clock
	// jsonReport says the report is --json's document.
	jsonReport bool
}

// The values of --connections.
const (
	connectionsOne       = "one"
	connectionsPerWorker = loadreport.PerWorker
)

// NewCmdBench returns `mcpi bench TOOL [KEY=VALUE...] [TARGET]` and
// `mcpi bench FILE.yaml [TARGET]`.
func NewCmdBench(f *command.Factory, runF func(context.Context, *BenchOptions) error) *cobra.Command {
	opts := &BenchOptions{CallOptions: CallOptions{ConnOptions: f.Conn()}, env: os.LookupEnv}
	var maxErrors string
	cmd := &cobra.Command{
		Use:   "bench TOOL [KEY=VALUE | KEY:=JSON ...] [TARGET] | bench FILE.yaml [TARGET]",
		Short: "Put a server under load: one tool call or a collection, again and again",
		Long: `Call a tool (or run a collection's steps, docs/test.md) again and again from -c
workers, -n times or for -d, and report the calls per second, the errors by kind
and the latency's percentiles from a fixed-memory histogram.

Without --rate each worker starts its next call when its last one ends. With
--rate the calls start at that constant rate, and each one's latency is
measured from when it should have started: a server that stalls makes the
calls scheduled meanwhile late, and the percentiles show it.

Exits 1 when the share of failed calls passes --max-errors (default 0: any).`,
		Example: `  mcpi bench echo text=hi -n 10000 -c 16 -- mcpi demo-server
  mcpi bench add a=1 b=2 -d 30s --rate 500 http://127.0.0.1:8080/mcp
  mcpi bench smoke.yaml -c 8 --connections per-worker -d 1m --json`,
		Args: command.CheckedArgs(func(cmd *cobra.Command, args []string) error {
			rest, cliTarget, err := opts.Target.ParseCollectionTarget(cmd, args)
			if err != nil {
				return err
			}
			if len(rest) == 0 {
				return command.FlagErrorf("give the TOOL to call, or a collection FILE.yaml")
			}
			if isCollectionFile(rest[0]) {
				if len(rest) > 1 {
					return command.FlagErrorf("a collection takes no arguments: %q", rest[1])
				}
				if opts.Args != "" {
					return command.FlagErrorf("--args is for a TOOL, not a collection")
				}
				opts.Collection, opts.cliTarget = rest[0], cliTarget
			} else {
				if !cliTarget {
					if rest, err = opts.Target.ParseTarget(cmd, args); err != nil {
						return err
					}
				}
				if err := opts.takeToolArgs(rest); err != nil {
					return err
				}
			}
			if cmd.Flags().Changed("count") && opts.Count == 0 || cmd.Flags().Changed("duration") && opts.Duration == 0 {
				// Zero would mean "not given", and run the default 1000.
				return command.FlagErrorf("-n 0 or -d 0s runs nothing: give at least one call, or a duration")
			}
			if err := opts.checkLoad(maxErrors); err != nil {
				return err
			}
			return nil
		}),
		RunE: command.RunE(opts, runF, benchRun),
	}
	command.AddConnFlags(cmd, &opts.ConnOptions)
	fs := cmd.Flags()
	// A trace of a load run would grow with every call: refused (checkLoad).
	_ = fs.MarkHidden("record")
	_ = fs.MarkHidden("no-redact")
	_ = fs.MarkHidden("otlp-endpoint")
	end := command.FlagGroup(cmd, command.GroupArgs)
	fs.StringVar(&opts.Args, "args", "", "the arguments object: JSON, @FILE, or - for stdin")
	fs.BoolVar(&opts.NoValidate, "no-validate", false, "send the arguments even when they do not match the inputSchema")
	end()
	end = command.FlagGroup(cmd, command.GroupLoad)
	fs.IntVarP(&opts.Concurrency, "concurrency", "c", 10, "workers calling at once")
	fs.Int64VarP(&opts.Count, "count", "n", 0, "calls (iterations of a collection) to make; without -n and -d: 1000")
	fs.DurationVarP(&opts.Duration, "duration", "d", 0, "start calls for this long (with -n: whichever ends first)")
	fs.Float64Var(&opts.Rate, "rate", 0, "start this many calls a second, latency measured from each one's scheduled start (0: each worker as fast as it goes)")
	fs.StringVar(&opts.Connections, "connections", connectionsOne, "one (shared by the workers) or per-worker (a connection, a server process or HTTP session, each)")
	fs.StringVar(&maxErrors, "max-errors", "0", "the share of failed calls allowed before exit 1: a percentage (0.5%) or a fraction (0.005)")
	end()
	return cmd
}

// isCollectionFile says whether a first argument names a collection.
func isCollectionFile(a string) bool {
	return strings.HasSuffix(a, ".yaml") || strings.HasSuffix(a, ".yml")
}

// checkLoad checks the load flags.
func (opts *BenchOptions) checkLoad(maxErrors string) error {
	if opts.Concurrency < 1 || opts.Concurrency > 10_000 {
		return command.FlagErrorf("-c %d: give 1 to 10000 workers", opts.Concurrency)
	}
	if opts.Count < 0 || opts.Duration < 0 || opts.Rate < 0 {
		return command.FlagErrorf("-n, -d and --rate cannot be negative")
	}
	if opts.Count == 0 && opts.Duration == 0 {
		opts.Count = 1000
	}
	if opts.Count > 0 {
		// No more workers (nor connections) than calls: the report says
		// how many ran.
		opts.Concurrency = min(opts.Concurrency, int(opts.Count))
	}
	switch opts.Connections {
	case connectionsOne, connectionsPerWorker:
	default:
		return command.FlagErrorf("invalid --connections %q: want one or per-worker", opts.Connections)
	}
	if opts.Connections == connectionsPerWorker && opts.Concurrency > 256 {
		return command.FlagErrorf("--connections per-worker opens a connection per worker: at most 256 (-c %d)", opts.Concurrency)
	}
	if opts.Record != "" {
		return command.FlagErrorf("--record is not for load (its trace would grow with every call): record one call with mcpi call or mcpi test")
	}
	if opts.OTLPEndpoint != "" {
		return command.FlagErrorf("--otlp-endpoint is not for load (a span for every call): export one call's spans with mcpi call or mcpi test")
	}
	v, err := parseShare(maxErrors)
	if err != nil {
		return command.FlagErrorf("invalid --max-errors %q: %v", maxErrors, err)
	}
	opts.MaxErrors = v
	return nil
}

// parseShare reads "0.5%" as 0.005 and "0.005" as itself.
func parseShare(s string) (float64, error) {
	pct := strings.HasSuffix(s, "%")
	v, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	if err != nil {
		return 0, errors.New("want a percentage (1%) or a fraction (0.01)")
	}
	if pct {
		v /= 100
	}
	if v < 0 || v > 1 {
		return 0, errors.New("want 0% to 100%")
	}
	return v, nil
}

// benchRun runs the load and reports, and says an error that stopped it
// redacted: with --json, as the one document.
func benchRun(ctx context.Context, opts *BenchOptions) error {
	asJSON := opts.JSON
	// The connection prints no JSON error of its own: this one is
	// redacted first.
	opts.JSON, opts.jsonReport = false, asJSON
	red := record.NewRedactor(opts.SecretValues())
	err := benchLoad(ctx, opts, &red)
	return command.WithJSONError(opts.IO, asJSON, command.RedactErr(red, err))
}

// benchLoad connects, builds the iteration, runs the load and reports; red
// becomes the redactor of the collection's secrets too.
func benchLoad(ctx context.Context, opts *BenchOptions, redp **record.Redactor) error {
	var file *collection.File
	red := *redp
	if opts.Collection != "" {
		var err error
		if file, err = collection.ReadFile(opts.IO.Path(opts.Collection)); err != nil {
			return &command.FlagError{Err: err}
		}
		// The environment's secrets the file uses: never in the report.
		red = opts.RedactorOf(file, opts.env)
		*redp = red
		if !opts.cliTarget {
			if err := opts.Target.FromCollection(file, opts.env); err != nil {
				return err
			}
		}
		if opts.Connections == connectionsOne && opts.Concurrency > 1 && loadmcp.Answers(file) {
			return command.FlagErrorf("%s answers the server's requests (answers:): with more than one worker, give --connections per-worker, so that each answer goes to the worker whose step was asked", opts.Collection)
		}
	}
	heard := &loadmcp.Heard{}
	run := opts.NewRun()
	hooks := func() (command.ConnHooks, *collection.Handler) {
		h := run.CollectionHandler()
		hk := command.ConnHooks{Notified: heard.Notified, Warned: heard.Warned}
		if file != nil {
			hk.Handler = h
		}
		return hk, h
	}
	hk, h := hooks()
	return run.With(ctx, hk, func(run *command.ConnRun) error {
		conns := []loadmcp.Conn{{Client: run.Client, Answers: h}}
		defer func() {
			for _, bc := range conns[1:] {
				bc.Client.Close()
			}
		}()
		if opts.Connections == connectionsPerWorker {
			for len(conns) < opts.Concurrency {
				hk, h := hooks()
				c, err := run.Open(ctx, hk)
				if err != nil {
					return fmt.Errorf("connection %d of %d: %w", len(conns)+1, opts.Concurrency, err)
				}
				conns = append(conns, loadmcp.Conn{Client: c, Answers: h})
			}
		}
		var steps []load.Step
		var err error
		if file != nil {
			steps = loadmcp.CollectionSteps(file, opts.Concurrency, conns, opts.env, red)
		} else if steps, err = toolSteps(ctx, opts, conns); err != nil {
			return err
		}
		return runLoad(ctx, opts, steps, heard, red)
	})
}

// toolSteps is the iteration of one tool call: its arguments coerced and
// checked once, as mcpi call does.
func toolSteps(ctx context.Context, opts *BenchOptions, conns []loadmcp.Conn) ([]load.Step, error) {
	tool, err := opts.FindTool(ctx, conns[0].Client, opts.Tool)
	if err != nil {
		return nil, err
	}
	args, err := opts.arguments(tool)
	if err != nil {
		return nil, err
	}
	return loadmcp.ToolSteps(opts.Tool, args, conns), nil
}
