package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/chat"
	"github.com/mcpi-dev/mcpi/internal/collection"
	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/config"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/transport"
	"github.com/mcpi-dev/mcpi/internal/tui"
)

// ConnectOptions are the flags of `mcpi connect`.
type ConnectOptions struct {
	command.ConnOptions
	// Save is where the TUI saves images, audio and blobs.
	Save string
	// Collection is the collection file the t key saves calls into.
	Collection string
	// NoColor forces the colourless styles (NO_COLOR does too).
	NoColor bool
	// Mouse turns the mouse on in the TUI.
	Mouse bool
	// Watch are the paths whose change restarts the stdio server
	// (--watch); WatchRun the build run first (--watch-run).
	Watch    []string
	WatchRun string
	// Pick is set when no TARGET was given: a picker over the configured
	// servers chooses one.
	Pick bool
	// ChatModel is the Chat pane's model (--model), presented as
	// ChatHost would, its calls run without asking as ChatApprove says.
	ChatModel, ChatHost, ChatApprove string
}

// NewCmdConnect returns `mcpi connect TARGET`: the TUI on one server.
func NewCmdConnect(f *command.Factory, runF func(context.Context, *ConnectOptions) error) *cobra.Command {
	opts := &ConnectOptions{ConnOptions: f.Conn()}
	cmd := &cobra.Command{
		Use:   "connect [TARGET]",
		Short: "Open the TUI on a server: tools, server requests, roots and the wire",
		Long: `Open the TUI on a server: tools, server requests, roots and the wire.
Without a TARGET, pick one of the servers configured for Claude Desktop,
Claude Code, VS Code, Cursor or Windsurf (see mcpi servers).`,
		Example: `  mcpi connect -- npx -y @modelcontextprotocol/server-everything
  mcpi connect http://127.0.0.1:8080/mcp
  mcpi connect --server github
  mcpi connect`,
		Args: command.CheckedArgs(opts.parseArgs),
		RunE: command.RunE(opts, runF, connectRun),
	}
	end := command.AddHeldConnFlags(cmd, &opts.ConnOptions, command.AddTUISamplingFlags)
	fl := cmd.Flags()
	fl.StringVar(&opts.Save, "save", "", "directory where the s key saves images, audio and blobs (default: the working directory)")
	fl.StringVar(&opts.Collection, "collection", "", "the collection file the t key saves a call into as a test step (default: "+collection.DefaultFile+" in the working directory)")
	fl.BoolVar(&opts.NoColor, "no-color", false, "no colours (also set by NO_COLOR)")
	fl.BoolVar(&opts.Mouse, "mouse", false, mouseUsage)
	end()
	end = command.FlagGroup(cmd, command.GroupArgs)
	fl.StringVar(&opts.ChatModel, "model", "", "the Chat pane's model, PROVIDER:MODEL or a name of models.yaml (docs/models.md; default $MCPI_MODEL)")
	if fl.Lookup("model-url") == nil {
		fl.StringVar(&opts.ModelURL, "model-url", "", "the model's base URL (compat: required; ollama: default http://127.0.0.1:11434/v1/)")
	}
	fl.StringVar(&opts.ChatHost, "host", "", "the Chat pane presents the tools as this host would ("+strings.Join(chat.Hosts, ", ")+")")
	fl.StringVar(&opts.ChatApprove, "approve", "none", "the Chat pane's tool calls that run without asking: none, destructive (all but destructive ones), all")
	end()
	end = command.FlagGroup(cmd, command.GroupConnection)
	fl.StringArrayVar(&opts.Watch, "watch", nil, "restart the stdio server when a file under PATH changes (a file or a directory tree; repeatable): the Diff view shows what moved")
	fl.StringVar(&opts.WatchRun, "watch-run", "", "with --watch: run this command (sh -c, in the server's directory) before each restart; when it fails the old server keeps running and its output is shown")
	end()
	end = command.FlagGroup(cmd, command.GroupSession)
	fl.StringVar(&opts.Target.Session, "session", "", "open the TUI on the live session NAME (see mcpi session start): watch what its commands do and answer its server's requests; default: $"+command.SessionEnv+" when no TARGET is given")
	end()
	return cmd
}

// parseArgs takes the TARGET, a live session, or none (the picker
// chooses), and checks the flags as if one was given.
func (opts *ConnectOptions) parseArgs(cmd *cobra.Command, args []string) error {
	t := &opts.Target
	if len(args) == 0 && cmd.ArgsLenAtDash() < 0 && t.URL == "" && t.Server == "" && t.Session == "" {
		t.Session = os.Getenv(command.SessionEnv)
	}
	if t.Session != "" {
		if len(args) > 0 {
			return command.FlagErrorf("give either --session or a TARGET, not both")
		}
		if err := t.CheckSession(cmd); err != nil {
			return err
		}
		return opts.checkWatch()
	}
	if len(args) == 0 && cmd.ArgsLenAtDash() < 0 && t.URL == "" && t.Server == "" {
		// No target: the picker chooses a configured server. The
		// other flags are checked as if one was given.
		opts.Pick = true
		t.Server = "(picked)"
	}
	rest, err := opts.Target.ParseTarget(cmd, args)
	if opts.Pick {
		t.Server = ""
	}
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return command.FlagErrorf("unexpected argument %q", rest[0])
	}
	return opts.checkWatch()
}

// mouseUsage describes --mouse of the TUI commands.
const mouseUsage = "turn the mouse on: the wheel scrolls, a click on a tab opens its pane (the terminal no longer selects text)"

// errNoTerminal says the TUI cannot run here.
var errNoTerminal = errors.New("the TUI needs a terminal on stdin and stdout")

func connectRun(ctx context.Context, opts *ConnectOptions) error {
	if !opts.IO.StdinTTY || !opts.IO.StdoutTTY {
		return command.FlagErrorf("%v; for scripts use the one-shot commands (mcpi tools, mcpi call, ...)", errNoTerminal)
	}
	o := &opts.ConnOptions
	r := o.NewRun()
	if err := r.Prepare(); err != nil {
		return err
	}
	noColor := opts.NoColor || !opts.IO.Color
	if name := o.Target.Session; name != "" {
		return connectSession(ctx, opts, r, name, noColor)
	}
	if opts.Pick {
		if err := pickServer(ctx, o, noColor); err != nil {
			return err
		}
	}
	if err := r.ResolveServer(ctx); err != nil {
		return err
	}
	// The TUI declares MCP Apps: it shows them and runs them.
	o.Target.Apps = true
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	reloads, err := opts.startWatch(ctx)
	if err != nil {
		return err
	}
	if o.Record != "" || o.OTLPEndpoint != "" {
		if err := r.StartTrace(); err != nil {
			return err
		}
	}
	var rec transport.Tap
	if r.Trace.Recorder != nil {
		rec = r.Trace.Recorder
	}
	// The status line shows the trace's absolute path while it is written.
	recPath := o.Record
	if o.Record != "" {
		if abs, err := filepath.Abs(opts.IO.Path(o.Record)); err == nil {
			recPath = abs
		}
	}
	chatOpts, err := opts.chatOptions()
	if err != nil {
		return err
	}
	err = tui.Run(ctx, tui.Options{
		Version:    command.Version,
		Record:     rec,
		RecordPath: recPath,
		Reloads:    reloads,
		Dial:       tuiDial(r),
		Target:     targetLabel(&o.Target),
		NoColor:    noColor,
		Roots:      r.MadeRoots,
		SaveDir:    opts.Save,
		// The t key's file, where the command was typed.
		Collection:       o.IO.Path(collectionOr(opts.Collection)),
		CollectionServer: o.CollectionServer(),
		Mouse:            opts.Mouse,
		Check:            checkFunc(o.Target),
		Sampling:         tuiSampling(r),
		Chat:             chatOpts,
		// alt+r writes what --record would.
		TraceHeader:  r.TraceHeader(),
		TraceOptions: o.TraceOptions(),
	})
	if cerr := r.Close(); cerr != nil && err == nil {
		err = cerr
	}
	return err
}

// pickServer lets the user choose one of the configured servers.
func pickServer(ctx context.Context, o *command.ConnOptions, noColor bool) error {
	// The files that could not be read are shown in the picker, not
	// printed under it where nobody sees them until it is gone.
	var problems []tui.PickProblem
	var servers []config.Server
	if o.Target.Config != "" {
		var err error
		if servers, err = command.LoadServers(o.Target.Config, nil); err != nil {
			return err
		}
	} else {
		var ps []config.Problem
		servers, ps = config.Search(command.SearchOptions())
		for _, p := range ps {
			problems = append(problems, tui.PickProblem{Path: p.Path, Err: p.Err.Error()})
		}
	}
	if len(servers) == 0 {
		for _, p := range problems {
			fmt.Fprintln(o.IO.ErrOut, "warning: "+command.OneLine(p.Err))
		}
		return command.FlagErrorf("no server given, and none is configured (see mcpi servers): add \"-- COMMAND [ARGS...]\", a URL or --server NAME")
	}
	items := make([]tui.PickItem, len(servers))
	for i, s := range servers {
		it := tui.PickItem{Title: s.Name, Transport: s.Transport, Source: s.Source}
		if it.Transport == "" {
			it.Transport = "auto"
		}
		switch {
		case s.URL != "":
			it.Detail = s.URL
		default:
			it.Detail = strings.Join(append([]string{s.Command}, s.Args...), " ")
		}
		switch {
		case s.Err != nil:
			it.Note = "unusable: " + s.Err.Error()
		case s.Disabled:
			it.Note = "disabled"
		}
		items[i] = it
	}
	i, err := tui.Pick(ctx, fmt.Sprintf("Choose a server (%d configured)", len(servers)), items, problems, tui.Options{NoColor: noColor})
	if err != nil {
		if errors.Is(err, tui.ErrNoChoice) {
			return command.ErrSilent{Code: command.ExitOK}
		}
		return err
	}
	o.Target.Server, o.Target.Config = servers[i].Name, servers[i].Source
	return nil
}

// tuiDial connects with the TUI's hooks; the TUI calls it again to
// reconnect. With --record every session of the TUI goes to one trace.
func tuiDial(r *command.ConnRun) func(context.Context, tui.Hooks) (*session.Client, error) {
	return func(ctx context.Context, h tui.Hooks) (*session.Client, error) {
		var taps []transport.Tap
		if r.Trace.Recorder != nil {
			taps = append(taps, r.Trace.Recorder)
		}
		taps = append(taps, h.Tap)
		r.TapSampling(transport.MultiTap(taps...))
		// TRACEPARENT reaches the TUI's requests as it does a command's, so
		// that the wire and the timeline show their trace id.
		sopts := session.Options{Handler: h.Handler, OnNotification: h.OnNotification, OnWarning: h.OnWarning,
			OnHealth: h.OnHealth, KeepAlive: h.KeepAlive, TraceContext: r.TraceContext()}
		c, err := r.Target.Connect(ctx, sopts, transport.MultiTap(taps...))
		if err != nil {
			return nil, err
		}
		r.NoteSession(c)
		return c, nil
	}
}

// targetLabel names the target in the TUI's header until the server has
// said who it is.
func targetLabel(t *command.TargetOptions) string {
	switch {
	case t.Server != "" && t.Command == nil && t.URL == "":
		return "server " + t.Server
	case t.Command != nil:
		return "stdio: " + strings.Join(t.Command, " ")
	case t.URL != "":
		return t.URL
	}
	return ""
}

// collectionOr is the collection file the TUI saves calls into.
func collectionOr(path string) string {
	if path == "" {
		return collection.DefaultFile
	}
	return path
}

// chatOptions makes the Chat pane's model from --model (or $MCPI_MODEL):
// none when neither is given; a wrong spec or a missing key is a usage
// error before the TUI starts.
func (opts *ConnectOptions) chatOptions() (tui.ChatOptions, error) {
	spec := cmp.Or(opts.ChatModel, os.Getenv("MCPI_MODEL"))
	approve, err := chat.ParseApproval(opts.ChatApprove)
	if err != nil {
		return tui.ChatOptions{}, command.FlagErrorf("%v", err)
	}
	if opts.ChatHost != "" && !slices.Contains(chat.Hosts, opts.ChatHost) {
		return tui.ChatOptions{}, command.FlagErrorf("--host %q: one of %s", opts.ChatHost, strings.Join(chat.Hosts, ", "))
	}
	o := tui.ChatOptions{Host: opts.ChatHost, Approve: approve, Prices: command.ModelPrices()}
	if spec == "" {
		return o, nil
	}
	if o.Model, err = command.OpenModel(spec, opts.ModelURL, nil); err != nil {
		return o, command.FlagErrorf("--model: %v", err)
	}
	return o, nil
}

// tuiSampling is the TUI's sampling model (nil without --sampling-model).
func tuiSampling(r *command.ConnRun) *tui.SamplingModel {
	if r.Sampler == nil {
		return nil
	}
	return &tui.SamplingModel{Name: r.SamplingModel, Draft: r.Sampler.CreateMessage, Auto: r.SamplingApprove == "auto"}
}
