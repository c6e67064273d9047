package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/iostreams"
	"github.com/mcpi-dev/mcpi/internal/load"
	"github.com/mcpi-dev/mcpi/internal/loadmcp"
	"github.com/mcpi-dev/mcpi/internal/loadreport"
	"github.com/mcpi-dev/mcpi/internal/record"
)

// runLoad runs the steps under the flags' load, with a progress line on a
// terminal, and reports.
func runLoad(ctx context.Context, opts *BenchOptions, steps []load.Step, heard *loadmcp.Heard, red *record.Redactor) error {
	cfg := load.Config{Workers: opts.Concurrency, Count: opts.Count, Duration: opts.Duration, Rate: opts.Rate, Clock: opts.clock}
	if opts.IO.StderrTTY {
		cfg.Progress = func(s load.Snapshot) {
			opts.IO.ErrOut.EraseLine()
			fmt.Fprintf(opts.IO.ErrOut, "%s calls · %s/s · %s errors · p50 %s p99 %s · %s",
				loadreport.Count(s.Completed), loadreport.Rate(s.PerSecond), loadreport.Count(s.Errors), loadreport.MS(s.P50), loadreport.MS(s.P99), s.Elapsed.Round(time.Second))
		}
	}
	res, err := load.Run(ctx, cfg, steps)
	if cfg.Progress != nil {
		opts.IO.ErrOut.EraseLine()
	}
	if err != nil {
		return err
	}
	doc := benchDocument(opts, res, heard, red)
	if opts.jsonReport {
		if err := iostreams.WriteJSON(opts.IO, doc); err != nil {
			return err
		}
	} else {
		loadreport.Print(opts.IO.Out, doc, len(steps) > 1)
	}
	heard.SayWarnings(opts.IO.ErrOut, red)
	switch {
	case res.Aborted != nil:
		what := "the run ended early: " + command.OneLine(doc.Aborted.String())
		fmt.Fprintf(opts.IO.ErrOut, "mcpi: %s\n", what)
		return command.ErrSilent{Code: command.ExitCodeFor(res.Aborted), What: what}
	case res.Interrupted:
		return command.ErrSilent{Code: command.ExitInterrupted, What: "interrupted", Kind: command.KindInterrupted}
	case res.Completed == 0:
		return command.ErrSilent{Code: command.ExitToolError, What: "no call completed"}
	case res.ErrorRate() > opts.MaxErrors:
		what := fmt.Sprintf("%s of the calls failed, more than --max-errors %s", loadreport.Pct(res.ErrorRate()), loadreport.Pct(opts.MaxErrors))
		fmt.Fprintf(opts.IO.ErrOut, "mcpi: %s\n", what)
		return command.ErrSilent{Code: command.ExitToolError, What: what}
	}
	return nil
}

// benchDocument is the report of res; what the server or the run said
// crosses red.
func benchDocument(opts *BenchOptions, res *load.Result, heard *loadmcp.Heard, red *record.Redactor) loadreport.Doc {
	what := "call " + opts.Tool
	if opts.Collection != "" {
		what = opts.Collection
	}
	run := loadreport.Run{What: what, Workers: opts.Concurrency, Connections: opts.Connections, Rate: opts.Rate, MaxErrors: opts.MaxErrors}
	return loadreport.New(run, res, heard.Notifications(), red)
}
