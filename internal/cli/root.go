package cli

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/cmdutil"
	"github.com/mcpi-dev/mcpi/internal/daemon"
	"github.com/mcpi-dev/mcpi/internal/live"
	"github.com/mcpi-dev/mcpi/internal/shellcomp"
)

// Version is mcpi's version, set at link time.
var Version = "0.1.0-dev"

// Factory carries what every command needs.
type Factory struct {
	IO *IOStreams
	// Executable returns the path of the running mcpi binary (the demo
	// spawns it as its server).
	Executable func() (string, error)
	// Args is mcpi's command line without the program name.
	Args []string
	// RuntimeDir is where live sessions keep their sockets and records
	// ("": live.DefaultDir).
	RuntimeDir string
	// Held is the live session the command runs in, when it runs in a
	// session's daemon; Slot is the command's place there (nil outside).
	Held *daemon.Held
	Slot *daemon.Slot
	// HTTPTransport sends the HTTP requests of the commands that talk to a
	// server, under mcpi's one HTTP client and its egress policy (nil: the
	// network, through transport.DefaultHTTPTransport). A test sets one
	// that answers in-process.
	HTTPTransport http.RoundTripper
}

// conn returns the options of a command that talks to a server, with
// what the factory holds for it.
func (f *Factory) conn() ConnOptions {
	return ConnOptions{IO: f.IO, Args: f.Args, Held: f.Held, Slot: f.Slot, RuntimeDir: f.runtimeDir(),
		Target: TargetOptions{inDaemon: f.Held != nil, stderrTTY: f.IO.StderrTTY, httpTransport: f.HTTPTransport}}
}

// runtimeDir returns the directory of live sessions.
func (f *Factory) runtimeDir() string {
	if f.RuntimeDir != "" {
		return f.RuntimeDir
	}
	return live.DefaultDir()
}

// NewCmdRoot returns the mcpi command tree.
func NewCmdRoot(f *Factory) *cobra.Command {
	return newCmdRoot(f, "")
}

// subcommands lists mcpi's commands by name, each with its constructor.
func subcommands(f *Factory) []struct {
	name  string
	build func() *cobra.Command
} {
	list := func(what string) func() *cobra.Command {
		return func() *cobra.Command { return NewCmdList(f, what, nil) }
	}
	return []struct {
		name  string
		build func() *cobra.Command
	}{
		{"demo", func() *cobra.Command { return NewCmdDemo(f, nil) }},
		{"connect", func() *cobra.Command { return NewCmdConnect(f, nil) }},
		{"demo-server", func() *cobra.Command { return NewCmdDemoServer(f, nil) }},
		{"tools", list("tools")},
		{"resources", list("resources")},
		{"templates", list("templates")},
		{"prompts", list("prompts")},
		{"call", func() *cobra.Command { return NewCmdCall(f, nil) }},
		{"read", func() *cobra.Command { return NewCmdRead(f, nil) }},
		{"app-info", func() *cobra.Command { return NewCmdAppInfo(f, nil) }},
		{"app", func() *cobra.Command { return NewCmdApp(f, nil) }},
		{"chat", func() *cobra.Command { return NewCmdChat(f, nil) }},
		{"prompt", func() *cobra.Command { return NewCmdPrompt(f, nil) }},
		{"complete", func() *cobra.Command { return NewCmdComplete(f, nil) }},
		{"ping", func() *cobra.Command { return NewCmdPing(f, nil) }},
		{"test", func() *cobra.Command { return NewCmdTest(f, nil) }},
		{"bench", func() *cobra.Command { return NewCmdBench(f, nil) }},
		{"eval", func() *cobra.Command { return NewCmdEval(f, nil) }},
		{"info", func() *cobra.Command { return NewCmdInfo(f, nil) }},
		{"pending", func() *cobra.Command { return NewCmdPending(f, nil) }},
		{"answer", func() *cobra.Command { return NewCmdAnswer(f, nil) }},
		{"result", func() *cobra.Command { return NewCmdResult(f, nil) }},
		{"tail", func() *cobra.Command { return NewCmdTail(f, nil) }},
		{"log-level", func() *cobra.Command { return NewCmdLogLevel(f, nil) }},
		{"subscribe", func() *cobra.Command { return NewCmdSubscribe(f, nil) }},
		{"roots", func() *cobra.Command { return NewCmdRoots(f, nil) }},
		{"completion", func() *cobra.Command { return NewCmdCompletion(f, nil) }},
		{"servers", func() *cobra.Command { return NewCmdServers(f, nil) }},
		{"auth", func() *cobra.Command { return NewCmdAuth(f) }},
		{"replay", func() *cobra.Command { return NewCmdReplay(f, nil) }},
		{"proxy", func() *cobra.Command { return NewCmdProxy(f, nil) }},
		{"trace", func() *cobra.Command { return NewCmdTrace(f) }},
		{"check", func() *cobra.Command { return NewCmdCheck(f, nil) }},
		{"snapshot", func() *cobra.Command { return NewCmdSnapshot(f, nil) }},
		{"diff", func() *cobra.Command { return NewCmdDiff(f, nil) }},
		{"session", func() *cobra.Command { return NewCmdSession(f) }},
		{"tasks", func() *cobra.Command { return NewCmdTasks(f) }},
		{"skills", func() *cobra.Command { return NewCmdSkills(f, nil) }},
		{"skill", func() *cobra.Command { return NewCmdSkill(f, nil) }},
		{"agents", NewCmdAgents},
	}
}

// newCmdRoot returns the command tree; with only set, the root and that
// one command. Building every command's flags (hundreds of them) is a
// tenth of what starting mcpi costs, and a one-shot command needs its own
// only.
func newCmdRoot(f *Factory, only string) *cobra.Command {
	root := &cobra.Command{
		Use:           "mcpi",
		Short:         "mcpi inspects and debugs Model Context Protocol servers",
		Long:          "mcpi inspects and debugs Model Context Protocol (MCP) servers: stdio servers it spawns, and Streamable HTTP or HTTP+SSE servers it connects to.",
		Version:       Version,
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.SetOut(f.IO.Out)
	root.SetErr(f.IO.ErrOut)
	root.SetIn(f.IO.In)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return &FlagError{Err: err} })
	root.SetUsageFunc(cmdutil.Usage)
	// -v is --verbose everywhere, as on every command; the version is
	// --version alone.
	end := flagGroup(root, groupHelp)
	root.Flags().Bool("version", false, "print mcpi's version")
	end()
	end = flagGroup(root, groupOutput)
	root.Flags().BoolP("verbose", "v", false, "show server stderr, notifications and transport events on stderr (on a command)")
	end()
	for _, c := range subcommands(f) {
		if only == "" || c.name == only {
			root.AddCommand(c.build())
		}
	}
	root.CompletionOptions.DisableDefaultCmd = true
	markUsageErrors(root, f.Held != nil)
	return root
}

// markUsageErrors makes cobra's argument errors usage errors where they
// arise: each command's Args validator returns a *FlagError (exit 2), and
// a command that only groups others (the root, session, auth…) refuses a
// word that names none of them, as a usage error too, with cobra's
// suggestions; given no word, it shows its help.
func markUsageErrors(c *cobra.Command, inDaemon bool) {
	for _, sub := range c.Commands() {
		markUsageErrors(sub, inDaemon)
	}
	if c.HasSubCommands() && !c.Runnable() {
		c.Args = func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return nil
			}
			msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
			if cmd.SuggestionsMinimumDistance <= 0 {
				cmd.SuggestionsMinimumDistance = 2
			}
			if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
				msg += "; did you mean " + strings.Join(s, " or ") + "?"
			}
			return &FlagError{Err: errors.New(msg)}
		}
		c.RunE = func(cmd *cobra.Command, args []string) error { return cmd.Help() }
		return
	}
	if sessionOnlyCommand(c) && !inDaemon {
		c.Args = sessionOnlyArgs(c.Args)
	}
	if orig := c.Args; orig != nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			err := orig(cmd, args)
			if err == nil || errors.As(err, new(*FlagError)) || errors.As(err, new(notUsage)) {
				return err
			}
			return &FlagError{Err: err}
		}
	}
}

// commandFor returns the command a command line runs when its first word
// names one, so that only that command is built; "" when the whole tree is
// needed (help, completion scripts, shell completion, a flag first, a
// mistyped command that deserves suggestions).
//
// --version alone needs no command (noCommand); a shell's TAB after a
// command's name (`__complete call ...`) needs that command's words and
// flags, not the tree's: every TAB is a process of its own.
func commandFor(f *Factory, args []string) string {
	if len(args) == 1 && args[0] == "--version" {
		return noCommand
	}
	if shellcomp.Requested(args) && len(args) > 2 {
		return commandFor(f, args[1:])
	}
	if len(args) == 0 || args[0] == "completion" {
		return ""
	}
	for _, c := range subcommands(f) {
		if c.name == args[0] {
			return c.name
		}
	}
	return ""
}

// noCommand is the name of no command: the root alone is built.
const noCommand = " "

// Main runs mcpi with the process's arguments and returns its exit code.
func Main() ExitCode {
	f := &Factory{IO: System(), Executable: os.Executable}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return run(ctx, f, os.Args[1:])
}

func run(ctx context.Context, f *Factory, args []string) ExitCode {
	f.Args = args
	defer f.IO.Flush()
	root := newCmdRoot(f, commandFor(f, args))
	if shellcomp.Requested(args) {
		shellcomp.Register(root, f.completionSources())
	}
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return ExitOK
	}
	if ctx.Err() != nil && !errors.As(err, new(errSilent)) {
		if h := f.Held; h != nil {
			if st := h.End(); st != nil {
				// In a live session that ended (stopped, idle): the
				// daemon cancelled the command, no Ctrl-C did.
				fmt.Fprintf(f.IO.ErrOut, "mcpi: session %s has ended (%s): %s\n", h.Name(), st.State, oneLine(st.Reason))
				return ExitConnect
			}
		}
		fmt.Fprintln(f.IO.ErrOut, "mcpi: interrupted")
		return ExitInterrupted
	}
	var fe *FlagError
	if errors.As(err, &fe) {
		fmt.Fprintf(f.IO.ErrOut, "mcpi: %v\n", err)
		if cmd != nil {
			fmt.Fprintf(f.IO.ErrOut, "Run '%s --help' for usage.\n", cmd.CommandPath())
		}
		return ExitUsage
	}
	var se errSilent
	if !errors.As(err, &se) {
		fmt.Fprintf(f.IO.ErrOut, "mcpi: %s\n", oneLine(err.Error()))
	}
	return exitCodeFor(err)
}

// sessionOnlyKey annotates a command that runs in a live session only
// (tail, pending, answer, subscribe, log-level, roots): given a server
// instead, or no session, it says so before anything else.
const sessionOnlyKey = "mcpi/session-only"

func sessionOnlyCommand(c *cobra.Command) bool {
	for ; c != nil; c = c.Parent() {
		if c.Annotations[sessionOnlyKey] != "" {
			return true
		}
	}
	return false
}

func markSessionOnly(c *cobra.Command) *cobra.Command {
	if c.Annotations == nil {
		c.Annotations = map[string]string{}
	}
	c.Annotations[sessionOnlyKey] = "true"
	return c
}

// sessionOnlyArgs checks that a session-only command was given a session,
// not a server, then its own arguments (outside a session's daemon).
func sessionOnlyArgs(orig cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := needsSession(cmd, args); err != nil {
			return err
		}
		if orig != nil {
			return orig(cmd, args)
		}
		return nil
	}
}

// needsSession is the error of a session-only command given a server, or
// no session.
func needsSession(cmd *cobra.Command, args []string) error {
	verb := strings.TrimPrefix(cmd.CommandPath(), "mcpi ")
	server := cmd.ArgsLenAtDash() >= 0
	for _, a := range args {
		if httpLike(a) == urlHTTP {
			server = true
		}
	}
	if server {
		return flagErrorf("mcpi %s runs in a live session, not against a server: start one with mcpi session start NAME TARGET, then give --session NAME or set $%s", verb, sessionEnv)
	}
	if f := cmd.Flags().Lookup("session"); (f == nil || f.Value.String() == "") && os.Getenv(sessionEnv) == "" {
		return flagErrorf("mcpi %s runs in a live session: give --session NAME or set $%s (mcpi session start NAME TARGET starts one)", verb, sessionEnv)
	}
	return nil
}

// runE is a command's RunE: its options go to runF when one is given (a
// test, session start's daemon), else to run.
func runE[T any](opts T, runF, run func(context.Context, T) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, _ []string) error {
		if runF != nil {
			return runF(cmd.Context(), opts)
		}
		return run(cmd.Context(), opts)
	}
}
