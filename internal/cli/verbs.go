package cli

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/cmdutil"
	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/iostreams"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/mcptext"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// ReadOptions are the input of `mcpi read`.
type ReadOptions struct {
	command.ConnOptions
	URI         string
	Save        string
	Raw         bool
	RawTerminal bool
	Dir         bool
}

// NewCmdRead returns `mcpi read URI TARGET`.
func NewCmdRead(f *command.Factory, runF func(context.Context, *ReadOptions) error) *cobra.Command {
	opts := &ReadOptions{ConnOptions: f.Conn()}
	cmd := withConnFlags(&cobra.Command{
		Use:     "read URI TARGET",
		Short:   "Read a resource and print its contents",
		Example: "  mcpi read demo://text/hello -- mcpi demo-server\n  mcpi read demo://binary/logo.png --save out/ -- mcpi demo-server\n  mcpi read demo://binary/logo.png --raw -- mcpi demo-server > logo.png\n  mcpi read --dir skill://pdf-processing -- ./skills-server",
		Args: command.TargetArgs(&opts.Target, func(rest []string) error {
			if err := command.Exactly(1, "the resource URI")(rest); err != nil {
				return err
			}
			opts.URI = rest[0]
			switch {
			case opts.Dir && (opts.Raw || opts.Save != ""):
				return command.FlagErrorf("--dir lists a directory's children: it goes with neither --raw nor --save")
			case opts.Raw && (opts.JSON || opts.Save != ""):
				return command.FlagErrorf("--raw writes the contents as they are: it goes with neither --json nor --save")
			case opts.Raw && opts.IO.StdoutTTY && !opts.RawTerminal:
				return command.FlagErrorf("--raw would write the server's bytes to a terminal, which they could drive: redirect stdout to a file or a pipe, or add --raw-terminal")
			case opts.RawTerminal && !opts.Raw:
				return command.FlagErrorf("--raw-terminal goes with --raw")
			}
			return nil
		}),
		RunE: command.RunE(opts, runF, readRun),
	}, &opts.ConnOptions)
	end := command.FlagGroup(cmd, command.GroupOutput)
	cmd.Flags().StringVar(&opts.Save, "save", "", "write blob contents into this directory")
	cmd.Flags().BoolVar(&opts.Raw, "raw", false, "write the contents' exact bytes to stdout (text as sent, blobs decoded), for a file or a pipe")
	cmd.Flags().BoolVar(&opts.RawTerminal, "raw-terminal", false, "with --raw: write the bytes even when stdout is a terminal")
	cmd.Flags().BoolVar(&opts.Dir, "dir", false, "list the direct children of a directory resource (resources/directory/read, every page)")
	end()
	return cmd
}

func readRun(ctx context.Context, opts *ReadOptions) error {
	return opts.With(ctx, func(c *session.Client) error { return readResource(ctx, c, opts) })
}

// readResource prints the resource, its bytes (--raw), or a directory's
// children (--dir).
func readResource(ctx context.Context, c *session.Client, opts *ReadOptions) error {
	if opts.Dir {
		return readDirectory(ctx, c, &opts.ConnOptions, opts.URI)
	}
	var result json.RawMessage
	if err := c.Call(ctx, "resources/read", mcp.ReadResourceParams{URI: opts.URI}, &result, nil); err != nil {
		return err
	}
	if opts.JSON {
		return iostreams.WriteRawJSON(opts.IO, result)
	}
	var r mcp.ReadResourceResult
	if err := json.Unmarshal(result, &r); err != nil {
		return protocolError("resources/read", "the result is not a ReadResourceResult: "+err.Error())
	}
	if opts.Raw {
		return writeContentsRaw(opts.IO, r.Contents)
	}
	p := &iostreams.ContentPrinter{Out: opts.IO.Out, Errw: opts.IO.ErrOut, Dir: opts.IO.Path(opts.Save)}
	for i, rc := range r.Contents {
		if len(r.Contents) == 1 && rc.Text != nil {
			// One text resource prints as itself, ready for a pipe.
			text := command.Sanitize(*rc.Text, true)
			fmt.Fprint(opts.IO.Out, text)
			if !strings.HasSuffix(text, "\n") {
				fmt.Fprintln(opts.IO.Out)
			}
			continue
		}
		if err := p.Resource(i, rc, "[contents]"); err != nil {
			return err
		}
	}
	return nil
}

// readDirectory lists the direct children of the directory resource at
// uri: every page of resources/directory/read (SEP-2640), as a table, or
// with --json as an array of the children as the server sent them.
func readDirectory(ctx context.Context, c *session.Client, o *command.ConnOptions, uri string) error {
	children, err := c.AllDirectoryRaw(ctx, uri)
	if !listed(err) {
		return err
	}
	if o.JSON {
		return cut(iostreams.WriteJSON(o.IO, nonNil(children)), err)
	}
	tw := mcptext.Table(o.IO.Out, "URI", "NAME", "MIME TYPE", "SIZE", "DESCRIPTION")
	var bad error
	for i, raw := range children {
		var r mcp.Resource
		if jerr := json.Unmarshal(raw, &r); jerr != nil {
			// The others are printed; the command fails after them.
			if bad == nil {
				bad = protocolError(mcp.DirectoryReadMethod, fmt.Sprintf("child #%d is not a Resource: %v", i+1, jerr))
			}
			continue
		}
		size := ""
		if r.Size != nil {
			size = fmt.Sprint(*r.Size)
		}
		mcptext.Row(tw, r.URI, mcptext.DisplayName(r.Title, r.Name), r.MimeType, size, r.Description)
	}
	if ferr := tw.Flush(); ferr != nil {
		return ferr
	}
	if bad != nil {
		return bad
	}
	if len(children) == 0 && err == nil {
		fmt.Fprintf(o.IO.ErrOut, "%s is an empty directory.\n", command.Sanitize(uri, false))
	}
	return err
}

// writeContentsRaw writes each content's bytes as they are, in order, to
// the raw stdout: text as the server sent it, blobs decoded.
func writeContentsRaw(ios *command.IOStreams, contents []mcp.ResourceContents) error {
	for _, rc := range contents {
		var b []byte
		switch {
		case rc.Text != nil:
			b = []byte(*rc.Text)
		case rc.Blob != nil:
			data, err := base64.StdEncoding.DecodeString(*rc.Blob)
			if err != nil {
				return protocolError("resources/read", fmt.Sprintf("the blob of %s is not base64: %v", rc.URI, err))
			}
			b = data
		}
		if _, err := ios.Data().Write(b); err != nil {
			return err
		}
	}
	return nil
}

func protocolError(method, msg string) error {
	return &session.RPCError{Method: method, RPCError: &mcp.RPCError{Code: mcp.CodeInvalidParams, Message: msg}}
}

// PromptOptions are the input of `mcpi prompt`.
type PromptOptions struct {
	command.ConnOptions
	Name      string
	Arguments map[string]string
}

// NewCmdPrompt returns `mcpi prompt NAME [KEY=VALUE ...] TARGET`.
func NewCmdPrompt(f *command.Factory, runF func(context.Context, *PromptOptions) error) *cobra.Command {
	opts := &PromptOptions{ConnOptions: f.Conn()}
	return withConnFlags(&cobra.Command{
		Use:     "prompt NAME [KEY=VALUE ...] TARGET",
		Short:   "Get a prompt with its arguments filled in",
		Example: "  mcpi prompt greet name=Ada style=pirate -- mcpi demo-server",
		Args: command.TargetArgs(&opts.Target, func(rest []string) error {
			if len(rest) == 0 {
				return command.FlagErrorf("missing the prompt name")
			}
			opts.Name = rest[0]
			var err error
			opts.Arguments, err = command.ParsePairs(rest[1:], "argument")
			return err
		}),
		RunE: command.RunE(opts, runF, promptRun),
	}, &opts.ConnOptions)
}

func promptRun(ctx context.Context, opts *PromptOptions) error {
	return opts.With(ctx, func(c *session.Client) error { return getPrompt(ctx, c, opts) })
}

// getPrompt checks the prompt's required arguments (unless --force), gets
// it and prints its messages.
func getPrompt(ctx context.Context, c *session.Client, opts *PromptOptions) error {
	name, args := opts.Name, opts.Arguments
	prompts, err := c.AllPrompts(ctx)
	if err != nil {
		return err
	}
	for _, p := range prompts {
		if p.Name != name {
			continue
		}
		var missing, names []string
		for _, a := range p.Arguments {
			names = append(names, a.Name)
			if _, ok := args[a.Name]; a.Required && !ok {
				missing = append(missing, a.Name)
			}
		}
		if opts.Target.Force {
			break
		}
		// An argument the prompt does not declare, a typo most often,
		// would be sent and ignored: refused, as call refuses one.
		for _, k := range slices.Sorted(maps.Keys(args)) {
			if !slices.Contains(names, k) {
				return command.FlagErrorf("prompt %s has no argument %q (it takes: %s)", name, k, cmp.Or(strings.Join(names, ", "), "none"))
			}
		}
		if len(missing) > 0 {
			return command.FlagErrorf("prompt %s needs argument(s) %s", name, strings.Join(missing, ", "))
		}
	}
	var raw json.RawMessage
	if err := c.Call(ctx, "prompts/get", mcp.GetPromptParams{Name: name, Arguments: args}, &raw, nil); err != nil {
		return err
	}
	if opts.JSON {
		return iostreams.WriteRawJSON(opts.IO, raw)
	}
	var r mcp.GetPromptResult
	if err := json.Unmarshal(raw, &r); err != nil {
		return protocolError("prompts/get", "the result is not a GetPromptResult: "+err.Error())
	}
	if r.Description != "" {
		fmt.Fprintf(opts.IO.Out, "# %s\n\n", command.OneLine(r.Description))
	}
	p := &iostreams.ContentPrinter{Out: opts.IO.Out, Errw: opts.IO.ErrOut}
	for i, m := range r.Messages {
		fmt.Fprintf(opts.IO.Out, "[%s]\n", command.Sanitize(m.Role, false))
		if err := p.Block(i, m.Content); err != nil {
			return err
		}
		if i < len(r.Messages)-1 {
			fmt.Fprintln(opts.IO.Out)
		}
	}
	return nil
}

// CompleteOptions are the input of `mcpi complete`.
type CompleteOptions struct {
	command.ConnOptions
	Prompt   string
	Template string
	// ContextPairs are the --context flags, parsed into Context.
	ContextPairs []string
	Argument     mcp.CompleteArgument
	Context      map[string]string
}

// NewCmdComplete returns `mcpi complete`.
func NewCmdComplete(f *command.Factory, runF func(context.Context, *CompleteOptions) error) *cobra.Command {
	opts := &CompleteOptions{ConnOptions: f.Conn()}
	cmd := withConnFlags(&cobra.Command{
		Use:     "complete (--prompt NAME | --template URI_TEMPLATE) ARG=PARTIAL TARGET",
		Short:   "Ask the server to complete an argument of a prompt or a resource template",
		Example: "  mcpi complete --prompt greet style=p -- mcpi demo-server\n  mcpi complete --template 'demo://greeting/{lang}/{name}' lang=f -- mcpi demo-server",
		Args: command.TargetArgs(&opts.Target, func(rest []string) error {
			if (opts.Prompt == "") == (opts.Template == "") {
				return command.FlagErrorf("give exactly one of --prompt and --template")
			}
			if err := command.Exactly(1, "the argument to complete, ARG=PARTIAL")(rest); err != nil {
				return err
			}
			pairs, err := command.ParsePairs(rest, "argument")
			if err != nil {
				return err
			}
			for k, v := range pairs {
				opts.Argument = mcp.CompleteArgument{Name: k, Value: v}
			}
			if opts.Context, err = command.ParsePairs(opts.ContextPairs, "--context"); err != nil {
				return err
			}
			return nil
		}),
		RunE: command.RunE(opts, runF, completeRun),
	}, &opts.ConnOptions)
	end := command.FlagGroup(cmd, command.GroupArgs)
	cmd.Flags().StringVar(&opts.Prompt, "prompt", "", "complete an argument of this prompt")
	cmd.Flags().StringVar(&opts.Template, "template", "", "complete a variable of this resource template")
	cmd.Flags().StringArrayVar(&opts.ContextPairs, "context", nil, "an argument already chosen, KEY=VALUE (repeatable)")
	end()
	return cmd
}

func completeRun(ctx context.Context, opts *CompleteOptions) error {
	return opts.With(ctx, func(c *session.Client) error { return completeArgument(ctx, c, opts) })
}

// completeArgument asks for the completions of the argument and prints
// them, with how many more the server has.
func completeArgument(ctx context.Context, c *session.Client, opts *CompleteOptions) error {
	if err := checkCompletable(ctx, c, opts.Prompt, opts.Template, opts.Argument.Name, opts.Context); err != nil {
		return err
	}
	p := mcp.CompleteParams{Argument: opts.Argument}
	if opts.Prompt != "" {
		p.Ref = mcp.CompleteReference{Type: "ref/prompt", Name: opts.Prompt}
	} else {
		p.Ref = mcp.CompleteReference{Type: "ref/resource", URI: opts.Template}
	}
	if len(opts.Context) > 0 {
		p.Context = &mcp.CompleteContext{Arguments: opts.Context}
	}
	r, err := c.Complete(ctx, p)
	if err != nil {
		return err
	}
	if opts.JSON {
		return iostreams.WriteJSON(opts.IO, r.Completion)
	}
	for _, v := range r.Completion.Values {
		fmt.Fprintln(opts.IO.Out, command.Sanitize(v, false))
	}
	if r.Completion.HasMore || (r.Completion.Total != nil && *r.Completion.Total > len(r.Completion.Values)) {
		total := "more"
		if r.Completion.Total != nil {
			total = fmt.Sprint(*r.Completion.Total)
		}
		fmt.Fprintf(opts.IO.ErrOut, "(%d shown of %s)\n", len(r.Completion.Values), total)
	}
	return nil
}

// PingOptions are the input of `mcpi ping`.
type PingOptions struct {
	command.ConnOptions
}

// NewCmdPing returns `mcpi ping TARGET`.
func NewCmdPing(f *command.Factory, runF func(context.Context, *PingOptions) error) *cobra.Command {
	opts := &PingOptions{ConnOptions: f.Conn()}
	return withConnFlags(&cobra.Command{
		Use:     "ping TARGET",
		Short:   "Check that the server answers, and how fast",
		Example: "  mcpi ping -- mcpi demo-server",
		Args:    command.TargetArgs(&opts.Target, command.None),
		RunE:    command.RunE(opts, runF, pingRun),
	}, &opts.ConnOptions)
}

func pingRun(ctx context.Context, opts *PingOptions) error {
	return opts.With(ctx, func(c *session.Client) error {
		start := time.Now()
		if err := c.Ping(ctx); err != nil {
			return err
		}
		d := time.Since(start)
		if opts.JSON {
			return iostreams.WriteJSON(opts.IO, map[string]any{"ok": true, "ms": float64(d.Microseconds()) / 1000})
		}
		if c.Era() == session.EraModern {
			fmt.Fprintf(opts.IO.Out, "answered in %s (server/discover: the modern era has no ping)\n", d.Round(10*time.Microsecond))
			return nil
		}
		fmt.Fprintf(opts.IO.Out, "pong in %s\n", d.Round(10*time.Microsecond))
		return nil
	})
}

// InfoOptions are the input of `mcpi info`.
type InfoOptions struct {
	command.ConnOptions
}

// NewCmdInfo returns `mcpi info TARGET`.
func NewCmdInfo(f *command.Factory, runF func(context.Context, *InfoOptions) error) *cobra.Command {
	opts := &InfoOptions{ConnOptions: f.Conn()}
	return withConnFlags(&cobra.Command{
		Use:     "info TARGET",
		Short:   "Show the negotiated revision, server info, capabilities and instructions",
		Example: "  mcpi info -- mcpi demo-server",
		Args:    command.TargetArgs(&opts.Target, command.None),
		RunE:    command.RunE(opts, runF, infoRun),
	}, &opts.ConnOptions)
}

func infoRun(ctx context.Context, opts *InfoOptions) error {
	return opts.With(ctx, func(c *session.Client) error { return printInfo(c, &opts.ConnOptions) })
}

// printInfo shows what the handshake settled.
func printInfo(c *session.Client, o *command.ConnOptions) error {
	transportName := cmp.Or(transport.Describe(c.Conn()).Transport, "?")
	if o.JSON {
		var raw map[string]json.RawMessage
		json.Unmarshal(c.InitializeResultRaw(), &raw)
		t, _ := json.Marshal(transportName)
		raw["transport"] = t
		raw["era"], _ = json.Marshal(c.Era())
		raw["eraReason"], _ = json.Marshal(c.EraReason())
		raw["protocolVersion"], _ = json.Marshal(c.ProtocolVersion())
		raw["appsDeclared"], _ = json.Marshal(o.Target.Apps)
		b, _ := json.Marshal(raw)
		return iostreams.WriteRawJSON(o.IO, b)
	}
	return mcptext.PrintInfo(o.IO.Out, c, o.Target.Apps)
}

// CompletionOptions are the input of `mcpi completion`.
type CompletionOptions struct {
	IO    *command.IOStreams
	Shell string
	// Root is the command tree the script completes.
	Root *cobra.Command
}

// NewCmdCompletion returns `mcpi completion SHELL`.
func NewCmdCompletion(f *command.Factory, runF func(context.Context, *CompletionOptions) error) *cobra.Command {
	opts := &CompletionOptions{IO: f.IO}
	return &cobra.Command{
		Use:       "completion bash|zsh|fish|powershell",
		Short:     "Print a shell completion script",
		Args:      cobra.ExactArgs(1),
		ValidArgs: []string{"bash", "zsh", "fish", "powershell"},
		RunE: command.CheckedRunE(func(cmd *cobra.Command, args []string) error {
			if !slices.Contains(cmd.ValidArgs, args[0]) {
				return command.FlagErrorf("unknown shell %q: want bash, zsh, fish or powershell", args[0])
			}
			opts.Shell, opts.Root = args[0], cmd.Root()
			return nil
		}, opts, runF, completionRun),
	}
}

func completionRun(_ context.Context, opts *CompletionOptions) error {
	out := opts.IO.Out
	switch opts.Shell {
	case "bash":
		return cmdutil.GenBashCompletion(opts.Root, out)
	case "zsh":
		return opts.Root.GenZshCompletion(out)
	case "fish":
		return opts.Root.GenFishCompletion(out, true)
	}
	return opts.Root.GenPowerShellCompletionWithDesc(out)
}

// checkCompletable refuses, as a usage error, an argument that the prompt
// or the template does not have: the prompt's arguments as the server
// lists them, the template's variables as its URI template names them. A
// server that cannot list its prompts is left to answer for itself.
func checkCompletable(ctx context.Context, c *session.Client, prompt, template, name string, context map[string]string) error {
	var names []string
	what := ""
	if prompt != "" {
		prompts, err := c.AllPrompts(ctx)
		if err != nil {
			return nil
		}
		i := slices.IndexFunc(prompts, func(p mcp.Prompt) bool { return p.Name == prompt })
		if i < 0 {
			var all []string
			for _, p := range prompts {
				all = append(all, p.Name)
			}
			return command.FlagErrorf("the server lists no prompt %q (prompts: %s)", prompt, strings.Join(all, ", "))
		}
		for _, a := range prompts[i].Arguments {
			names = append(names, a.Name)
		}
		what = "prompt " + prompt
	} else {
		names = mcptext.TemplateVariables(template)
		what = "template " + template
	}
	check := func(n, role string) error {
		if slices.Contains(names, n) {
			return nil
		}
		takes := strings.Join(names, ", ")
		if takes == "" {
			takes = "none"
		}
		return command.FlagErrorf("%s has no argument %q%s (it takes: %s)", what, n, role, takes)
	}
	if err := check(name, ""); err != nil {
		return err
	}
	for k := range context {
		if err := check(k, " (--context)"); err != nil {
			return err
		}
	}
	return nil
}
