package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/iostreams"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/record"
	"github.com/mcpi-dev/mcpi/internal/replay"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/timeline"
	"github.com/mcpi-dev/mcpi/internal/transport"
	"github.com/mcpi-dev/mcpi/internal/tui"
)

// ReplayOptions are the flags of `mcpi replay`.
type ReplayOptions struct {
	command.ConnOptions
	Trace string
	Serve bool
	HTTP  string
	// Faults, with --serve, puts the proxy's faults (internal/intercept)
	// between the host and the trace served: Seed their draws' seed.
	Faults  string
	Seed    uint64
	seedSet bool
	Verify  bool
	Ignore  []string
	Print   bool
	Follow  bool
	Mouse   bool
	// Filter shows only what matches (the search language of the Wire
	// pane); filter is it parsed.
	Filter string
	filter *timeline.Filter
	// Latency prints the latencies by method instead of the timeline.
	Latency bool
}

// NewCmdReplay returns `mcpi replay TRACE`.
func NewCmdReplay(f *command.Factory, runF func(context.Context, *ReplayOptions) error) *cobra.Command {
	opts := &ReplayOptions{ConnOptions: f.Conn()}
	cmd := &cobra.Command{
		Use:   "replay TRACE [--serve [--http ADDR] | --verify TARGET]",
		Short: "Show a recorded trace, serve it as a mock server, or verify a live server against it",
		Long: `Work with a trace recorded by --record or mcpi proxy.

  mcpi replay TRACE                  the trace as a timeline: every frame with time,
                                     direction, method, id, size; responses joined to
                                     their requests with their latency
  mcpi replay TRACE --serve          a mock MCP server on stdio that answers each request
                                     with the recorded response (method and params
                                     compared as canonical JSON, recorded order for
                                     repeats), replaying the server's messages around it
  mcpi replay TRACE --serve --http 127.0.0.1:8080
                                     the same over Streamable HTTP at /mcp
  mcpi replay TRACE --serve --faults FILE [--seed N] [--record OUT]
                                     the same behind the faults of FILE, as mcpi proxy
                                     --faults puts them (docs/intercept.md): a hostile
                                     mock server of your own traffic, the same each run
  mcpi replay TRACE --verify TARGET  re-send the recorded requests to a live server,
                                     answer its requests from the trace, and diff each
                                     answer with the recorded one; exit 0 when equal,
                                     1 when not`,
		Example: `  mcpi call add a=1 b=2 --record t.jsonl -- mcpi demo-server
  mcpi call add a=1 b=2 -- mcpi replay t.jsonl --serve
  mcpi replay t.jsonl --verify --ignore 'result._meta' -- ./my-server`,
		RunE: command.CheckedRunE(opts.parse, opts, runF, replayRun),
	}
	command.AddConnFlags(cmd, &opts.ConnOptions)
	addReplayFlags(cmd, opts)
	return cmd
}

// addReplayFlags adds the flags of replay's own: what to do with the trace.
func addReplayFlags(cmd *cobra.Command, opts *ReplayOptions) {
	f2 := cmd.Flags()
	end := command.FlagGroup(cmd, command.GroupServe)
	f2.BoolVar(&opts.Serve, "serve", false, "serve the trace as a mock MCP server (stdio, or HTTP with --http)")
	f2.StringVar(&opts.HTTP, "http", "", "with --serve: listen on this address (loopback) and serve Streamable HTTP at /mcp")
	f2.StringVar(&opts.Faults, "faults", "", "with --serve: change what is served by the rules of this YAML file, as mcpi proxy --faults (docs/intercept.md)")
	f2.Uint64Var(&opts.Seed, "seed", 0, "the seed of --faults' draws: the same seed repeats a run (default: a new one, printed)")
	end()
	end = command.FlagGroup(cmd, command.GroupArgs)
	f2.BoolVar(&opts.Verify, "verify", false, "re-send the recorded requests to TARGET and compare the answers")
	f2.StringArrayVar(&opts.Ignore, "ignore", nil, "with --verify: a path not to compare, e.g. result._meta or result.content[*].text (repeatable)")
	end()
	end = command.FlagGroup(cmd, command.GroupOutput)
	f2.BoolVar(&opts.Print, "print", false, "print the timeline instead of opening the TUI (the default when not on a terminal)")
	f2.BoolVarP(&opts.Follow, "follow", "f", false, "keep reading a trace that is still being written, like tail -f")
	f2.BoolVar(&opts.Mouse, "mouse", false, "in the TUI: the mouse wheel scrolls (the terminal no longer selects text)")
	f2.BoolVar(&opts.Latency, "latency", false, "print the latencies by method (and by tool): count, errors, p50, p90, p99, max; with --filter, of what matches")
	f2.StringVar(&opts.Filter, "filter", "", `show only what matches, e.g. "method:tools/call status:error dur:>500ms" (the Wire pane's search language, docs/cli.md)`)
	end()
}

// parse takes the trace file, and with --verify the TARGET, and checks
// that the flags go together.
func (opts *ReplayOptions) parse(cmd *cobra.Command, args []string) error {
	dash := cmd.ArgsLenAtDash()
	pos := args
	if dash >= 0 {
		pos = args[:dash]
	}
	if len(pos) == 0 {
		return command.FlagErrorf("no trace file given")
	}
	opts.Trace = pos[0]
	opts.seedSet = cmd.Flags().Changed("seed")
	switch {
	case opts.Serve && opts.Verify:
		return command.FlagErrorf("give either --serve or --verify")
	case opts.HTTP != "" && !opts.Serve:
		return command.FlagErrorf("--http needs --serve")
	case opts.Faults != "" && !opts.Serve:
		return command.FlagErrorf("--faults needs --serve")
	case cmd.Flags().Changed("seed") && opts.Faults == "":
		return command.FlagErrorf("--seed goes with --faults")
	case len(opts.Ignore) > 0 && !opts.Verify:
		return command.FlagErrorf("--ignore needs --verify")
	case opts.Filter != "" && (opts.Serve || opts.Verify):
		return command.FlagErrorf("--filter goes with showing the trace, not --serve or --verify")
	case opts.JSON && !opts.Verify && !opts.Latency:
		return command.FlagErrorf("--json goes with --verify or --latency (a trace is JSON Lines already)")
	case opts.Latency && (opts.Serve || opts.Verify || opts.Follow):
		return command.FlagErrorf("--latency sums up a trace: not with --serve, --verify or --follow")
	}
	var err error
	if opts.filter, err = newFrameFilter(opts.Filter); err != nil {
		return err
	}
	if err := replay.CheckIgnore(opts.Ignore); err != nil {
		return &command.FlagError{Err: err}
	}
	if !opts.Verify {
		if len(args) > 1 {
			return command.FlagErrorf("unexpected argument %q (a TARGET goes with --verify)", args[1])
		}
		return nil
	}
	rest, err := opts.Target.ParseTarget(cmd, args)
	if err != nil {
		return err
	}
	if len(rest) > 1 {
		return command.FlagErrorf("unexpected argument %q", rest[1])
	}
	return nil
}

// replayRun verifies a server against the trace, serves the trace, or
// shows it: in the TUI on a terminal, else as a printed timeline.
func replayRun(ctx context.Context, opts *ReplayOptions) error {
	switch {
	case opts.Verify:
		return replayVerify(ctx, opts)
	case opts.Serve:
		return replayServe(ctx, opts)
	case opts.Latency:
		return replayLatency(opts)
	case !opts.Print && opts.IO.StdinTTY && opts.IO.StdoutTTY:
		return replayTUI(ctx, opts)
	}
	return replayPrint(ctx, opts)
}

func loadTrace(ios *command.IOStreams, path string) (*replay.Trace, error) {
	t, err := replay.Load(path)
	if err != nil {
		var ve *record.VersionError
		if errors.As(err, &ve) || errors.Is(err, record.ErrNotTrace) || errors.Is(err, os.ErrNotExist) {
			return nil, &command.FlagError{Err: fmt.Errorf("%s: %w", path, err)}
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for _, ce := range t.Skipped {
		fmt.Fprintf(ios.ErrOut, "warning: %s\n", ce.Skipped(path))
	}
	if t.Damage != nil {
		fmt.Fprintf(ios.ErrOut, "warning: %s ends inside an event; using what comes before: %v\n", path, t.Damage)
	}
	return t, nil
}

func replayServe(ctx context.Context, opts *ReplayOptions) error {
	t, err := loadTrace(opts.IO, opts.Trace)
	if err != nil {
		return err
	}
	srv := replay.NewServer(t)
	if opts.Faults != "" {
		return replayServeFaults(ctx, opts, t, srv)
	}
	if opts.HTTP == "" {
		// stdout carries the protocol: everything else goes to stderr.
		return srv.ServeStdio(ctx, opts.IO.In, opts.IO.Data())
	}
	ln, err := listen(opts.HTTP, "--http", true)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", srv.HTTPHandler())
	fmt.Fprintf(opts.IO.ErrOut, "replaying %s (%d exchanges) at http://%s/mcp\n", opts.Trace, len(t.Exchanges), ln.Addr())
	return serveHTTP(ctx, ln, mux)
}

// replayServeFaults serves the trace behind the proxy's faults: over
// stdio the proxy's server is the trace served in this process; over
// HTTP the trace is served on a loopback port of its own, the proxy on
// --http.
func replayServeFaults(ctx context.Context, opts *ReplayOptions, t *replay.Trace, srv *replay.Server) error {
	po := &ProxyOptions{IO: opts.IO, Args: opts.Args, Record: opts.Record, NoRedact: opts.NoRedact,
		Faults: opts.Faults, Seed: opts.Seed, SeedSet: opts.seedSet}
	if opts.HTTP == "" {
		po.Command, po.serve = []string{"mcpi", "replay", opts.Trace, "--serve"}, srv.ServeStdio
		return proxyRun(ctx, po)
	}
	ln, err := listen(opts.HTTP, "--http", true)
	if err != nil {
		return err
	}
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		ln.Close()
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	mux := http.NewServeMux()
	mux.Handle("/mcp", srv.HTTPHandler())
	served := make(chan error, 1)
	go func() { served <- serveHTTP(ctx, inner, mux) }()
	po.Listen, po.URL, po.ln = opts.HTTP, "http://"+inner.Addr().String()+"/mcp", ln
	fmt.Fprintf(opts.IO.ErrOut, "replaying %s (%d exchanges) at http://%s/mcp behind the faults of %s\n", opts.Trace, len(t.Exchanges), ln.Addr(), opts.Faults)
	err = proxyRun(ctx, po)
	cancel()
	<-served
	return err
}

func replayVerify(ctx context.Context, opts *ReplayOptions) error {
	t, err := loadTrace(opts.IO, opts.Trace)
	if err != nil {
		return err
	}
	if opts.Target.Protocol == "" && t.Header.ProtocolVersion != "" && mcp.IsKnownRevision(t.Header.ProtocolVersion) {
		opts.Target.Protocol = t.Header.ProtocolVersion
	}
	if replay.Comparable(t) == 0 {
		what := fmt.Sprintf("the trace %s has no answer to compare (a header only, or damaged before the first answer): nothing was verified", opts.Trace)
		fmt.Fprintf(opts.IO.ErrOut, "mcpi: %s\n", what)
		return command.ErrSilent{Code: command.ExitToolError, Kind: command.KindNothingVerified, What: what}
	}
	// Speak to the server as the recorded host did: its name and
	// capabilities shape what a server answers.
	hk := command.ConnHooks{Handler: replay.NewHandler(t)}
	if info, caps, ok := replay.RecordedClient(t); ok {
		hk.Client, hk.Caps = info, caps
	}
	var equal bool
	var results []replay.Result
	var out io.Writer = opts.IO.Out
	if opts.JSON {
		out = io.Discard // the report is the one document
	}
	err = opts.WithHooks(ctx, hk, func(c *session.Client) error {
		equal, results = replay.Verify(ctx, c, t, replay.VerifyOptions{Ignore: opts.Ignore, Out: out})
		return nil
	})
	if err != nil {
		return err
	}
	if opts.JSON {
		if err := iostreams.WriteJSON(opts.IO, replay.NewReport(results)); err != nil {
			return err
		}
	}
	fmt.Fprintln(opts.IO.ErrOut, replay.Summary(results))
	if !equal {
		return command.ErrSilent{Code: command.ExitToolError, Kind: command.KindReplayDiffers, What: replay.Summary(results)}
	}
	return nil
}

// replayTUI shows the trace in the TUI's wire pane, read-only; with
// --follow it keeps appending what the writer adds.
func replayTUI(ctx context.Context, opts *ReplayOptions) error {
	r, err := record.Open(opts.Trace)
	if err != nil {
		return &command.FlagError{Err: fmt.Errorf("%s: %w", opts.Trace, err)}
	}
	defer r.Close()
	follow := opts.Follow
	feed := func(ctx context.Context, tap transport.Tap) error {
		for {
			ev, err := r.Next()
			if errors.Is(err, io.EOF) || (follow && errors.Is(err, record.ErrTruncated)) {
				if !follow {
					return nil
				}
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(100 * time.Millisecond):
					continue
				}
			}
			var ce *record.CorruptError
			if errors.As(err, &ce) {
				// The wire pane shows it where the line was.
				tap.Observe(transport.Event{Time: time.Now(), Kind: transport.KindLifecycle, Text: "warning: " + ce.Skipped(opts.Trace)})
				continue
			}
			if err != nil {
				return err
			}
			if te, ok := ev.TransportEvent(); ok {
				tap.Observe(te)
			}
		}
	}
	title := opts.Trace
	if h := r.Header(); h.Target.Transport != "" {
		title += " (" + h.Target.Transport + ")"
	}
	err = tui.RunReplay(ctx, tui.ReplayOptions{Title: title, Filter: opts.Filter, Feed: feed, NoColor: !opts.IO.Color, Mouse: opts.Mouse})
	if ctx.Err() != nil {
		return command.ErrSilent{Code: command.ExitOK}
	}
	return err
}

// replayPrint prints the trace as a timeline; with --follow it goes on
// printing what is appended until interrupted.
func replayPrint(ctx context.Context, opts *ReplayOptions) error {
	r, err := record.Open(opts.Trace)
	if err != nil {
		return &command.FlagError{Err: fmt.Errorf("%s: %w", opts.Trace, err)}
	}
	defer r.Close()
	var wait func() bool
	if opts.Follow {
		wait = func() bool {
			select {
			case <-ctx.Done():
				return false
			case <-time.After(100 * time.Millisecond):
				return true
			}
		}
	}
	if opts.filter.NeedsAnswers() && !opts.Follow {
		// status: asks which requests were ever answered: read the
		// trace once for that.
		if first, err := record.Open(opts.Trace); err == nil {
			opts.filter.LearnAnswers(first)
			first.Close()
		}
	}
	err = timeline.Print(opts.IO.Out, opts.IO.ErrOut, opts.Trace, r, wait, opts.filter)
	if ctx.Err() != nil {
		return command.ErrSilent{Code: command.ExitOK}
	}
	return err
}
