package cli

import (
	"bufio"
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/apphost"
	"github.com/mcpi-dev/mcpi/internal/apps"
	"github.com/mcpi-dev/mcpi/internal/browser"
	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/iostreams"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/mcptext"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// AppInfoOptions are mcpi app-info's.
type AppInfoOptions struct {
	command.ConnOptions
	Tool string
}

// NewCmdAppInfo returns mcpi app-info.
func NewCmdAppInfo(f *command.Factory, runF func(context.Context, *AppInfoOptions) error) *cobra.Command {
	opts := &AppInfoOptions{ConnOptions: f.Conn()}
	return withConnFlags(&cobra.Command{
		Use:   "app-info TOOL TARGET",
		Short: "Show a tool's MCP App: its ui:// resource, type, size, CSP, permissions, domain and what its HTML loads",
		Long: "Show a tool's MCP App (the io.modelcontextprotocol/ui extension, which mcpi declares here):\n" +
			"the ui:// resource its _meta names, read with resources/read, and its security posture.\n" +
			"Exit 10 when the tool has no App.",
		Example: "  mcpi app-info show-chart -- node server.js\n  mcpi app-info show-chart --json https://example.com/mcp",
		Args: command.TargetArgs(&opts.Target, func(rest []string) error {
			if err := command.Exactly(1, "the tool's name")(rest); err != nil {
				return err
			}
			opts.Tool = rest[0]
			opts.Target.Apps = true
			return nil
		}),
		RunE: command.RunE(opts, runF, appInfoRun),
	}, &opts.ConnOptions)
}

func appInfoRun(ctx context.Context, opts *AppInfoOptions) error {
	return opts.With(ctx, func(c *session.Client) error {
		in, err := inspectApp(ctx, c, opts.Tool)
		if err != nil {
			return err
		}
		if opts.JSON {
			b, err := in.JSON()
			if err != nil {
				return err
			}
			fmt.Fprintln(opts.IO.Out, string(iostreams.EscapeUnsafe(b)))
			return nil
		}
		mcptext.PrintAppInfo(opts.IO.Out, in)
		return nil
	})
}

// noAppError is a tool without an App.
func noAppError(tool string) error {
	return fmt.Errorf("%w: %q names no ui:// resource in _meta.ui.resourceUri", command.ErrNoApp, tool)
}

// inspectApp finds the tool, reads its App's resource and says what it is.
func inspectApp(ctx context.Context, c *session.Client, name string) (*apps.Info, error) {
	tool, err := c.FindTool(ctx, name)
	if err != nil {
		return nil, err
	}
	if tool == nil {
		return nil, command.WithKind(command.KindToolNotFound, command.FlagErrorf("the server lists no tool named %q", name))
	}
	if !apps.ToolMeta(tool.Meta).HasApp() {
		return nil, noAppError(name)
	}
	return apphost.Read(ctx, c, tool, true)
}

// AppOptions are mcpi app's.
type AppOptions struct {
	CallOptions
	// NoOpen prints the page's URL instead of opening it.
	NoOpen bool
	// ready, when set, is given the page's URL (tests).
	ready func(url string)
}

// NewCmdApp returns mcpi app.
func NewCmdApp(f *command.Factory, runF func(context.Context, *AppOptions) error) *cobra.Command {
	opts := &AppOptions{CallOptions: CallOptions{ConnOptions: f.Conn()}}
	cmd := &cobra.Command{
		Use:   "app TOOL [KEY=VALUE | KEY:=JSON ...] TARGET",
		Short: "Run a tool's MCP App: call the tool and render its App in the browser, with mcpi as its host",
		Long: "Run a tool's MCP App (io.modelcontextprotocol/ui, which mcpi declares here): serve a host\n" +
			"page on a loopback port, open it in the browser, render the App's HTML in a sandboxed frame\n" +
			"with the CSP its resource declares, call the tool, and hand the App its input and result.\n" +
			"The App's tools/call and resources/read go through mcpi's session to the server; a tool\n" +
			"that may be destructive, and a link the App opens, are asked in the terminal first (and\n" +
			"refused without one). Every App message is on the wire (-v) and in the trace (--record).\n" +
			"Ctrl-C ends the App (ui/resource-teardown). Exit 10 when the tool has no App.",
		Example: "  mcpi app show-chart series=a -- node server.js\n  mcpi app show-chart --no-open --record app.jsonl https://example.com/mcp",
		Args: command.TargetArgs(&opts.Target, func(rest []string) error {
			if len(rest) == 0 {
				return command.FlagErrorf("give the tool's name")
			}
			if err := opts.takeToolArgs(rest); err != nil {
				return err
			}
			opts.Target.Apps = true
			return nil
		}),
		RunE: command.RunE(opts, runF, appRun),
	}
	command.AddConnFlags(cmd, &opts.ConnOptions)
	end := command.FlagGroup(cmd, command.GroupArgs)
	cmd.Flags().StringVar(&opts.Args, "args", "", "the arguments object: JSON, @FILE, or - for stdin")
	end()
	end = command.FlagGroup(cmd, command.GroupOutput)
	cmd.Flags().BoolVar(&opts.NoOpen, "no-open", false, "print the App page's URL instead of opening it in the browser")
	end()
	return cmd
}

func appRun(ctx context.Context, opts *AppOptions) error {
	return opts.WithRun(ctx, func(r *command.ConnRun) error { return runApp(ctx, r, opts) })
}

// runApp hosts the tool's App until Ctrl-C, or until the page stops
// taking what the host sends.
func runApp(ctx context.Context, r *command.ConnRun, opts *AppOptions) error {
	c := r.Client
	info, err := inspectApp(ctx, c, opts.Tool)
	if err != nil {
		return err
	}
	tools, err := c.AllTools(ctx)
	if err != nil {
		return err
	}
	var tool *mcp.Tool
	for i := range tools {
		if tools[i].Name == opts.Tool {
			tool = &tools[i]
		}
	}
	if tool == nil {
		return command.WithKind(command.KindToolNotFound, command.FlagErrorf("the server lists no tool named %q", opts.Tool))
	}
	args, err := opts.arguments(tool)
	if err != nil {
		return err
	}
	errOut := opts.IO.ErrOut
	var mu sync.Mutex
	say := func(line string) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintln(errOut, line)
	}
	bo := apphost.Options{Tool: *tool, Args: args, Tools: tools, Info: info, Say: say, Open: browser.Open, Version: command.Version}
	if r.Trace.Recorder != nil {
		bo.Tap = r.Trace.Recorder
	}
	if opts.Verbose {
		bo.Tap = transport.MultiTap(bo.Tap, transport.TapFunc(func(e transport.Event) {
			// As the Wire pane and replay have it: → to the App, ← from it.
			arrow := "→ app"
			if e.Dir == transport.Incoming {
				arrow = "← app"
			}
			say(arrow + " " + command.OneLine(string(e.Data)))
		}))
	}
	if opts.IO.StdinTTY && opts.IO.StderrTTY {
		in := bufio.NewReader(opts.IO.In)
		// One question at a time, under a lock of its own: what the App
		// says meanwhile is still printed, and Ctrl-C is not held up by
		// a question nobody answers (the read is given up with ctx).
		var ask sync.Mutex
		bo.Confirm = func(ctx context.Context, question string) bool {
			ask.Lock()
			defer ask.Unlock()
			mu.Lock()
			fmt.Fprintf(errOut, "%s [y/N] ", question)
			errOut.Flush()
			mu.Unlock()
			answer := make(chan string, 1)
			go func() {
				line, _ := in.ReadString('\n')
				answer <- strings.TrimSpace(line)
			}()
			select {
			case a := <-answer:
				return strings.EqualFold(a, "y") || strings.EqualFold(a, "yes")
			case <-ctx.Done():
				return false
			}
		}
	}
	b, host, err := apphost.Start(ctx, c, bo)
	if err != nil {
		return err
	}
	defer host.Close()
	say(fmt.Sprintf("App of %s (%s) at %s", command.OneLine(opts.Tool), command.OneLine(info.ResourceURI), host.URL()))
	if opts.ready != nil {
		opts.ready(host.URL())
	}
	if !opts.NoOpen {
		if err := browser.Open(host.URL()); err != nil {
			say("could not open the browser (" + command.OneLine(err.Error()) + "): open the URL yourself")
		}
	}
	// The tool runs while the App loads; its result goes to the App and
	// to stdout.
	done := make(chan struct{})
	go func() {
		defer close(done)
		raw, err := c.CallToolRaw(ctx, mcp.CallToolParams{Name: opts.Tool, Arguments: args}, nil)
		b.Result(raw, err)
		if err == nil {
			printToolResult(opts.IO, opts.JSON, "", tool, "tool "+opts.Tool, raw)
		} else if ctx.Err() == nil {
			say("the tool's call failed: " + command.OneLine(err.Error()))
		}
	}()
	select {
	case <-ctx.Done():
		b.Teardown("the person ended mcpi app", 2*time.Second)
		<-done
		return nil
	case <-b.Stopped():
		b.Teardown("mcpi stopped", time.Second)
		return b.Err()
	}
}
