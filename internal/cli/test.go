package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/collection"
	"github.com/mcpi-dev/mcpi/internal/collection/report"
	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/iostreams"
	"github.com/mcpi-dev/mcpi/internal/record"
	"github.com/mcpi-dev/mcpi/internal/save"
)

// TestOptions are the input of `mcpi test`.
type TestOptions struct {
	command.ConnOptions
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
func NewCmdTest(f *command.Factory, runF func(context.Context, *TestOptions) error) *cobra.Command {
	opts := &TestOptions{ConnOptions: f.Conn(), env: os.LookupEnv, now: time.Now}
	cmd := withConnFlags(&cobra.Command{
		Use:   "test FILE... [TARGET]",
		Short: "Run collections of calls with expectations, for CI",
		Long: "Run each collection file's steps in order on one connection, check each step's expectations, and print one line per step.\n" +
			"The server is the one the file names (server:), or the TARGET given on the command line (or --session), which overrides it.\n" +
			"Exits 1 when a step fails. The format: docs/test.md.",
		Example: "  mcpi test smoke.yaml\n  mcpi test smoke.yaml -- mcpi demo-server\n  mcpi test --junit report.xml *.yaml https://example.com/mcp\n  mcpi test --update smoke.yaml",
		Args: command.CheckedArgs(func(cmd *cobra.Command, args []string) error {
			var files []string
			var err error
			if cmd.Flags().Changed("session") || opts.Target.InDaemon {
				// The session's server, whatever the files name.
				files, err = opts.Target.ParseTarget(cmd, args)
				opts.cliTarget = true
			} else {
				files, opts.cliTarget, err = opts.Target.ParseCollectionTarget(cmd, args)
			}
			if err != nil {
				return err
			}
			if len(files) == 0 {
				return command.FlagErrorf("missing the collection FILE")
			}
			if opts.Record != "" && len(files) > 1 {
				return command.FlagErrorf("--record writes one trace: give one FILE with it")
			}
			if opts.TAP && opts.JSON {
				return command.FlagErrorf("give --tap or --json, not both: each is the whole of stdout")
			}
			opts.Files = files
			return nil
		}),
		RunE: command.RunE(opts, runF, testRun),
	}, &opts.ConnOptions)
	end := command.FlagGroup(cmd, command.GroupOutput)
	cmd.Flags().StringVar(&opts.JUnit, "junit", "", "also write a JUnit XML report (the Ant junit schema that Jenkins and GitLab read) to this file")
	cmd.Flags().BoolVar(&opts.TAP, "tap", false, "print TAP (version 13) instead of the text report")
	cmd.Flags().BoolVar(&opts.Update, "update", false, "rewrite the snapshot expectations that changed from the actual results, keeping the rest of each file, and show what changed")
	end()
	return cmd
}

func testRun(ctx context.Context, opts *TestOptions) error {
	if opts.Held == nil && opts.Target.Session != "" {
		// The whole command runs in the session's daemon.
		return opts.Forward(ctx)
	}
	var reports []report.File
	var firstErr error
	firstAt := -1
	format := opts.reportFormat()
	// The report is the one document on stdout, a file that could not
	// run to its end included: the connections print no JSON error.
	opts.JSON = false
	out := report.NewWriter(opts.IO.Out, format, opts.Update)
	for _, path := range opts.Files {
		rep, err := runCollection(ctx, opts, path, out)
		out.FileEnd(rep)
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
		if format == report.Text {
			fmt.Fprintf(opts.IO.ErrOut, "mcpi: %s: %s\n", rep.File, command.OneLine(rep.Error.String()))
		}
	}
	sum := report.Summarize(reports)
	if opts.JUnit != "" {
		if err := writeJUnit(opts.IO.Path(opts.JUnit), reports); err != nil {
			return fmt.Errorf("--junit: %w", err)
		}
	}
	if format == report.JSON {
		if err := iostreams.WriteJSON(opts.IO, sum.Document(opts.Update)); err != nil {
			return err
		}
	}
	out.End(sum)
	switch {
	case firstErr != nil:
		return command.ErrSilent{Code: command.ExitCodeFor(firstErr), What: command.OneLine(reports[firstAt].Error.String()), Kind: command.ErrorKind(firstErr)}
	case sum.Failed > 0:
		return command.ErrSilent{Code: command.ExitToolError, What: fmt.Sprintf("%d step(s) failed", sum.Failed)}
	}
	return nil
}

// reportFormat is the form of the report on stdout.
func (opts *TestOptions) reportFormat() report.Format {
	switch {
	case opts.TAP:
		return report.TAP
	case opts.JSON:
		return report.JSON
	}
	return report.Text
}

// writeJUnit writes the JUnit XML report of files at path.
func writeJUnit(path string, files []report.File) error {
	host, _ := os.Hostname()
	b, err := report.JUnit(files, host)
	if err != nil {
		return err
	}
	return save.Replace(path, b)
}

// runCollection runs one file's steps on one connection; its error is
// why the file could not run to its end.
func runCollection(ctx context.Context, opts *TestOptions, path string, out *report.Writer) (rep report.File, err error) {
	var red *record.Redactor // the target's secrets, once known
	rep = report.File{File: red.Clean(path), Steps: []report.Step{}, Started: opts.now()}
	var steps []collection.StepReport
	defer func() {
		rep.Elapsed = opts.now().Sub(rep.Started)
		for _, s := range steps {
			rep.Steps = append(rep.Steps, report.NewStep(red, s))
			if opts.Update {
				// With --update a step's verdict waits for the update.
				out.Step(rep.File, rep.Steps[len(rep.Steps)-1])
			}
		}
		if err != nil {
			rep.Error = red.Clean(err.Error())
		}
		rep.OK = err == nil
		for _, s := range rep.Steps {
			rep.OK = rep.OK && s.OK
		}
	}()
	full := opts.IO.Path(path)
	data, file, err := collection.ReadWithData(full)
	if err != nil {
		rep.Unreadable = true
		return rep, &command.FlagError{Err: err}
	}
	file.Path = path
	red = opts.RedactorOf(file, opts.env)
	rep.File = red.Clean(path)
	if err := opts.fileTarget(file); err != nil {
		return rep, err
	}
	out.File(rep.File)
	o := &opts.ConnOptions
	run := o.NewRun()
	h := run.CollectionHandler()
	err = run.With(ctx, command.ConnHooks{Handler: h}, func(run *command.ConnRun) error {
		r := collection.NewRunner(run.Client, h, opts.env, red.String)
		if o.Held != nil {
			// The session answers roots/list: a step's roots are its own
			// while the step runs.
			r.Roots = o.Held
		}
		for i := range file.Steps {
			s, err := r.Step(ctx, &file.Steps[i])
			steps = append(steps, s)
			if !opts.Update {
				out.Step(rep.File, report.NewStep(red, s))
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
		rep.Updated, err = collection.UpdateSnapshots(opts.IO.ErrOut, full, data, file, steps, red)
		if err != nil {
			err = &command.FlagError{Err: fmt.Errorf("--update: %w", err)}
		}
	}
	return rep, err
}

// fileTarget sets the target to the server the file names, unless the
// command line gave one.
func (opts *TestOptions) fileTarget(file *collection.File) error {
	if opts.cliTarget {
		return nil
	}
	return opts.Target.FromCollection(file, opts.env)
}
