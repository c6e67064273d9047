package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/collection"
	"github.com/mcpi-dev/mcpi/internal/collection/report"
	"github.com/mcpi-dev/mcpi/internal/daemon"
	"github.com/mcpi-dev/mcpi/internal/iostreams"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/record"
	"github.com/mcpi-dev/mcpi/internal/save"
	"github.com/mcpi-dev/mcpi/internal/transport"
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
		Args: checkedArgs(func(cmd *cobra.Command, args []string) error {
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
			return nil
		}),
		RunE: runE(opts, runF, testRun),
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

func testRun(ctx context.Context, opts *TestOptions) error {
	if opts.Held == nil && opts.Target.Session != "" {
		// The whole command runs in the session's daemon.
		return opts.forward(ctx)
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
			fmt.Fprintf(opts.IO.ErrOut, "mcpi: %s: %s\n", rep.File, oneLine(rep.Error.String()))
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
		return errSilent{code: exitCodeFor(firstErr), what: oneLine(reports[firstAt].Error.String()), kind: errorKind(firstErr)}
	case sum.Failed > 0:
		return errSilent{code: ExitToolError, what: fmt.Sprintf("%d step(s) failed", sum.Failed)}
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
	data, file, err := readCollection(full)
	if err != nil {
		rep.Unreadable = true
		return rep, &FlagError{Err: err}
	}
	file.Path = path
	red = opts.redactorOf(file, opts.env)
	rep.File = red.Clean(path)
	if err := opts.fileTarget(file); err != nil {
		return rep, err
	}
	out.File(rep.File)
	o := &opts.ConnOptions
	run := o.newRun()
	h := run.collectionHandler()
	err = run.with(ctx, connHooks{handler: h}, func(run *connRun) error {
		r := collection.NewRunner(run.client, h, opts.env, red.String)
		if o.Held != nil {
			// The session answers roots/list: a step's roots are its own
			// while the step runs.
			r.Roots = sessionRoots{o.Held}
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
		rep.Updated, err = updateSnapshots(opts, full, data, file, steps, red)
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
func updateSnapshots(opts *TestOptions, path string, data []byte, file *collection.File, steps []collection.StepReport, red *record.Redactor) (int, error) {
	texts := map[int]string{}
	for i := range steps {
		s := &steps[i]
		if s.Text == nil || !collection.SnapshotFailed(s.Failures) {
			continue
		}
		if red.Holds(*s.Text) {
			s.Failures = append(s.Failures, collection.Failure{Path: "snapshot",
				Message: "snapshot: the result's text holds a secret of the environment: not written into the file"})
			continue
		}
		texts[i] = *s.Text
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
		fmt.Fprintf(opts.IO.ErrOut, "%s:%d: snapshot of %s updated\n", red.Clean(file.Path), file.Steps[i].Line, sanitize(red.String(s.Name), false))
		for _, l := range collection.SnapshotDiff(old, texts[i]) {
			fmt.Fprintf(opts.IO.ErrOut, "    %s\n", red.Clean(l))
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

// fileTarget sets the target to the server the file names, unless the
// command line gave one.
func (opts *TestOptions) fileTarget(file *collection.File) error {
	if opts.cliTarget {
		return nil
	}
	return opts.Target.fromCollection(file, opts.env)
}

// sessionRoots makes a step's roots a live session's while it runs, and
// sees, on the session's wire, the server answered with them.
type sessionRoots struct{ h *daemon.Held }

func (s sessionRoots) UseRoots(roots []mcp.Root) (<-chan struct{}, func()) {
	old := s.h.Roots()
	tail := s.h.Hub().Subscribe(true)
	s.h.SetRoots(roots)
	asked, stop := make(chan struct{}), make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-tail.Ready():
			}
			for e, ok := tail.TryPop(); ok; e, ok = tail.TryPop() {
				if e.Kind == "frame" && e.Dir == transport.Outgoing.String() && answersRoots(e.Frame) {
					close(asked)
					return
				}
			}
		}
	}()
	return asked, func() {
		close(stop)
		s.h.Hub().Unsubscribe(tail)
		s.h.SetRoots(old)
	}
}

// answersRoots says whether a frame mcpi sent answers roots/list.
func answersRoots(frame []byte) bool {
	var m struct {
		Result *struct {
			Roots json.RawMessage `json:"roots"`
		} `json:"result"`
	}
	return json.Unmarshal(frame, &m) == nil && m.Result != nil && m.Result.Roots != nil
}
