package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/iostreams"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/mcptext"
	"github.com/mcpi-dev/mcpi/internal/schema"
	"github.com/mcpi-dev/mcpi/internal/session"
)

// CallOptions are the flags of `mcpi call`.
type CallOptions struct {
	command.ConnOptions
	Tool       string
	Pairs      []string
	Args       string
	NoValidate bool
	Save       string
	Task       bool
	NoWait     bool
}

// NewCmdCall returns `mcpi call TOOL [KEY=VALUE ...] TARGET`.
func NewCmdCall(f *command.Factory, runF func(context.Context, *CallOptions) error) *cobra.Command {
	opts := &CallOptions{ConnOptions: f.Conn()}
	cmd := withConnFlags(&cobra.Command{
		Use:   "call TOOL [KEY=VALUE | KEY:=JSON ...] TARGET",
		Short: "Call a tool and print its result",
		Long: `Call a tool and print its result.

Arguments are KEY=VALUE pairs, coerced by the tool's inputSchema: a string
property stays a string even when it looks like a number; numbers, booleans,
arrays and objects parse as JSON. KEY:=JSON always parses the value as JSON.
--args gives the whole arguments object instead (JSON, @FILE, or - for stdin).
Arguments are validated against the inputSchema before sending.`,
		Example: `  mcpi call add a=2 b=3 -- mcpi demo-server
  mcpi call echo text=hello http://127.0.0.1:8080/mcp --json
  mcpi call get_content_types --save out/ -- mcpi demo-server`,
		Args: command.TargetArgs(&opts.Target, func(rest []string) error {
			if len(rest) == 0 {
				return command.FlagErrorf("no tool name given")
			}
			if err := opts.takeToolArgs(rest); err != nil {
				return err
			}
			opts.ReadsStdin = opts.Args == "-"
			if opts.NoWait && opts.Target.Session == "" {
				return command.FlagErrorf("--no-wait runs the call in a live session: give --session NAME or set $%s (mcpi session start NAME TARGET starts one)", command.SessionEnv)
			}
			return nil
		}),
		RunE: command.RunE(opts, runF, callRun),
	}, &opts.ConnOptions)
	end := command.FlagGroup(cmd, command.GroupArgs)
	cmd.Flags().StringVar(&opts.Args, "args", "", "the arguments object: JSON, @FILE, or - for stdin")
	cmd.Flags().BoolVar(&opts.NoValidate, "no-validate", false, "send the arguments even when they do not match the inputSchema")
	end()
	end = command.FlagGroup(cmd, command.GroupOutput)
	cmd.Flags().StringVar(&opts.Save, "save", "", "write images, audio and blobs of the result into this directory")
	end()
	end = command.FlagGroup(cmd, command.GroupArgs)
	cmd.Flags().BoolVar(&opts.NoWait, "no-wait", false, "in a live session: return at once (exit 8) when the server asks something the flags do not answer, with the request and how to answer it; mcpi result fetches the outcome")
	cmd.Flags().BoolVar(&opts.Task, "task", false, "run the tool as a task (2025-11-25 tasks); a tool whose execution.taskSupport is required always runs as one")
	end()
	return cmd
}

// takeToolArgs takes the tool's name and its KEY=VALUE pairs from the
// arguments (mcpi call, mcpi bench).
func (opts *CallOptions) takeToolArgs(rest []string) error {
	opts.Tool, opts.Pairs = rest[0], rest[1:]
	if opts.Args != "" && len(opts.Pairs) > 0 {
		return command.FlagErrorf("give arguments either as KEY=VALUE pairs or with --args, not both")
	}
	for _, p := range opts.Pairs {
		if k, _, ok := strings.Cut(p, "="); !ok || strings.TrimSuffix(k, ":") == "" {
			return command.FlagErrorf("invalid argument %q: want KEY=VALUE or KEY:=JSON", p)
		}
	}
	return nil
}

func callRun(ctx context.Context, opts *CallOptions) error {
	return opts.WithRun(ctx, func(r *command.ConnRun) error { return callTool(ctx, r, opts) })
}

func callTool(ctx context.Context, r *command.ConnRun, opts *CallOptions) error {
	c := r.Client
	tool, err := opts.FindTool(ctx, c, opts.Tool)
	if err != nil {
		return err
	}
	args, err := opts.arguments(tool)
	if err != nil {
		return err
	}
	asTask := false
	if c.Era() == session.EraModern {
		// The tasks extension has no per-request opt-in: the server decides,
		// and a task it creates is followed whatever the flags say.
		if opts.Task {
			fmt.Fprintln(opts.IO.ErrOut, "warning: --task has no effect in 2026-07-28: the server decides whether a call becomes a task (io.modelcontextprotocol/tasks), and mcpi follows any it creates")
		}
	} else if asTask, err = opts.asTask(c, tool); err != nil {
		return err
	}
	progress, endProgress := mcptext.ProgressReporter(opts.IO, r.SayVerbose)
	onStatus, endStatus := mcptext.TaskReporter(opts.IO)
	params := mcp.CallToolParams{Name: opts.Tool, Arguments: args}
	var raw json.RawMessage
	if asTask {
		raw, err = c.CallToolAsTask(ctx, params, &session.CallOptions{OnProgress: progress}, onStatus)
	} else {
		raw, err = c.CallToolFollow(ctx, params, &session.CallOptions{OnProgress: progress}, onStatus)
	}
	endProgress()
	endStatus()
	if err == nil {
		err = printToolResult(opts.IO, opts.JSON, opts.Save, tool, "tool "+opts.Tool, raw)
	}
	if tool == nil && (errors.As(err, new(*session.RPCError)) || command.ExitCodeFor(err) == command.ExitToolError) {
		// The server does not list the tool, and refused the call.
		return command.WithKind(command.KindToolNotFound, err)
	}
	return err
}

// printToolResult prints a CallToolResult as `mcpi call` does, and ends
// with exit 1 when it is an error (isError); what names it in that message.
// tool, when known, has its outputSchema checked.
func printToolResult(ios *command.IOStreams, asJSON bool, save string, tool *mcp.Tool, what string, raw json.RawMessage) error {
	var result mcp.CallToolResult
	if err := json.Unmarshal(raw, &result); err != nil {
		return &session.RPCError{Method: "tools/call", RPCError: &mcp.RPCError{Code: mcp.CodeInvalidParams, Message: "the result is not a CallToolResult: " + err.Error()}}
	}
	if tool != nil && len(tool.OutputSchema) > 0 && !result.IsError {
		mcptext.CheckStructured(ios.ErrOut, tool, result.StructuredContent)
	}
	if asJSON {
		if err := iostreams.WriteRawJSON(ios, raw); err != nil {
			return err
		}
	} else {
		p := &iostreams.ContentPrinter{Out: ios.Out, Errw: ios.ErrOut, Dir: ios.Path(save)}
		if err := p.Blocks(result.Content); err != nil {
			return err
		}
		if len(result.StructuredContent) > 0 && !mcptext.TextRepeats(result.Content, result.StructuredContent) {
			fmt.Fprintln(ios.Out, iostreams.PrettyJSON(result.StructuredContent))
		}
	}
	if result.IsError {
		what := fmt.Sprintf("%s returned an error (isError)", what)
		fmt.Fprintf(ios.ErrOut, "mcpi: %s\n", what)
		return command.ErrSilent{Code: command.ExitToolError, What: what}
	}
	return nil
}

func (opts *CallOptions) arguments(tool *mcp.Tool) (json.RawMessage, error) {
	var s *schema.Schema
	if tool == nil {
		fmt.Fprintf(opts.IO.ErrOut, "warning: the server does not list a tool named %s; calling it anyway\n", command.Sanitize(opts.Tool, false))
	} else if len(tool.InputSchema) > 0 {
		var err error
		if s, err = schema.CompileInput(tool.InputSchema); err != nil {
			fmt.Fprintf(opts.IO.ErrOut, "warning: tool %s has an invalid inputSchema (%s); arguments are not checked\n", command.Sanitize(opts.Tool, false), command.OneLine(err.Error()))
		}
	}
	var args json.RawMessage
	switch {
	case opts.Args != "":
		data, err := readArg(opts.Args, opts.IO)
		if err != nil {
			return nil, err
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(data, &obj); err != nil {
			return nil, command.FlagErrorf("--args must be a JSON object: %v", err)
		}
		args = data
	default:
		obj := map[string]any{}
		for _, pair := range opts.Pairs {
			k, v, isJSON := schema.SplitPair(pair)
			if isJSON {
				x, err := schema.PairValue(k, v, true, schema.Property{})
				if err != nil {
					return nil, command.FlagErrorf("argument %s: %v", k, err)
				}
				obj[k] = x
				continue
			}
			prop := schema.Property{Name: k}
			if s != nil {
				if p, ok := s.Property(k); ok {
					prop = p
				} else if !opts.NoValidate {
					return nil, command.FlagErrorf("tool %s has no argument %q (it takes: %s)", opts.Tool, k, schema.FieldNames(s))
				}
			}
			x, err := schema.PairValue(k, v, false, prop)
			if err != nil {
				if !opts.NoValidate {
					return nil, command.FlagErrorf("argument %s: %v (--no-validate sends it as the string typed)", k, err)
				}
				// The point of --no-validate: see what the server does with
				// what the schema refuses.
				x = v
			}
			obj[k] = x
		}
		b, err := json.Marshal(obj)
		if err != nil {
			return nil, err
		}
		args = b
	}
	if s != nil && !opts.NoValidate {
		if ps := s.Validate(args); ps != nil {
			return nil, command.FlagErrorf("arguments do not match the inputSchema of %s: %v (--no-validate sends them anyway)", opts.Tool, ps)
		}
	}
	return args, nil
}

// readArg reads a flag value that may be literal, @FILE or - for stdin.
func readArg(v string, ios *command.IOStreams) ([]byte, error) {
	switch {
	case v == "-":
		b, err := io.ReadAll(ios.In)
		if err != nil {
			return nil, fmt.Errorf("reading stdin: %w", err)
		}
		return b, nil
	case strings.HasPrefix(v, "@"):
		b, err := os.ReadFile(ios.Path(v[1:]))
		if err != nil {
			return nil, &command.FlagError{Err: err}
		}
		return b, nil
	}
	return []byte(v), nil
}
