package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/cmdutil"
	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/shellcomp"
)

// NewCmdRoot returns the mcpi command tree.
func NewCmdRoot(f *command.Factory) *cobra.Command {
	return newCmdRoot(f, "")
}

// subcommands lists mcpi's commands by name, each with its constructor.
func subcommands(f *command.Factory) []struct {
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
func newCmdRoot(f *command.Factory, only string) *cobra.Command {
	root := &cobra.Command{
		Use:           "mcpi",
		Short:         "mcpi inspects and debugs Model Context Protocol servers",
		Long:          "mcpi inspects and debugs Model Context Protocol (MCP) servers: stdio servers it spawns, and Streamable HTTP or HTTP+SSE servers it connects to.",
		Version:       command.Version,
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.SetOut(f.IO.Out)
	root.SetErr(f.IO.ErrOut)
	root.SetIn(f.IO.In)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return &command.FlagError{Err: err} })
	root.SetUsageFunc(cmdutil.Usage)
	// -v is --verbose everywhere, as on every command; the version is
	// --version alone.
	end := command.FlagGroup(root, command.GroupHelp)
	root.Flags().Bool("version", false, "print mcpi's version")
	end()
	end = command.FlagGroup(root, command.GroupOutput)
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
			return &command.FlagError{Err: errors.New(msg)}
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
			if err == nil || errors.As(err, new(*command.FlagError)) || errors.As(err, new(command.NotUsage)) {
				return err
			}
			return &command.FlagError{Err: err}
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
func commandFor(f *command.Factory, args []string) string {
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
func Main() command.ExitCode {
	f := &command.Factory{IO: command.System(), Executable: os.Executable}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return run(ctx, f, os.Args[1:])
}

func run(ctx context.Context, f *command.Factory, args []string) command.ExitCode {
	f.Args = args
	defer f.IO.Flush()
	root := newCmdRoot(f, commandFor(f, args))
	if shellcomp.Requested(args) {
		shellcomp.Register(root, completionSources(f))
	}
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return command.ExitOK
	}
	if ctx.Err() != nil && !errors.As(err, new(command.ErrSilent)) {
		if h := f.Held; h != nil {
			if st := h.End(); st != nil {
				// In a live session that ended (stopped, idle): the
				// daemon cancelled the command, no Ctrl-C did.
				fmt.Fprintf(f.IO.ErrOut, "mcpi: session %s has ended (%s): %s\n", h.Name(), st.State, command.OneLine(st.Reason))
				return command.ExitConnect
			}
		}
		fmt.Fprintln(f.IO.ErrOut, "mcpi: interrupted")
		return command.ExitInterrupted
	}
	var fe *command.FlagError
	if errors.As(err, &fe) {
		fmt.Fprintf(f.IO.ErrOut, "mcpi: %v\n", err)
		if cmd != nil {
			fmt.Fprintf(f.IO.ErrOut, "Run '%s --help' for usage.\n", cmd.CommandPath())
		}
		return command.ExitUsage
	}
	var se command.ErrSilent
	if !errors.As(err, &se) {
		fmt.Fprintf(f.IO.ErrOut, "mcpi: %s\n", command.OneLine(err.Error()))
	}
	return command.ExitCodeFor(err)
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

// sessionOnlyVerb gives c --session and makes it a command that runs in
// a live session only.
func sessionOnlyVerb(c *cobra.Command, o *command.ConnOptions) *cobra.Command {
	addSessionFlag(c, o)
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
		if command.HTTPLike(a) == command.URLHTTP {
			server = true
		}
	}
	if server {
		return command.FlagErrorf("mcpi %s runs in a live session, not against a server: start one with mcpi session start NAME TARGET, then give --session NAME or set $%s", verb, command.SessionEnv)
	}
	if f := cmd.Flags().Lookup("session"); (f == nil || f.Value.String() == "") && os.Getenv(command.SessionEnv) == "" {
		return command.FlagErrorf("mcpi %s runs in a live session: give --session NAME or set $%s (mcpi session start NAME TARGET starts one)", verb, command.SessionEnv)
	}
	return nil
}
