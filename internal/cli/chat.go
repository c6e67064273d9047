package cli

import (
	"context"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/chat"
	"github.com/mcpi-dev/mcpi/internal/chat/term"
	"github.com/mcpi-dev/mcpi/internal/command"
)

// ChatOptions are mcpi chat's.
type ChatOptions struct {
	command.ConnOptions
	Model     string
	Prompt    string
	System    string
	Host      string
	Approve   string
	MaxTurns  int
	MaxTokens int64
	MaxCost   float64
	ShowTools bool
}

// NewCmdChat returns mcpi chat.
func NewCmdChat(f *command.Factory, runF func(context.Context, *ChatOptions) error) *cobra.Command {
	opts := &ChatOptions{ConnOptions: f.Conn()}
	cmd := withConnFlags(&cobra.Command{
		Use:   "chat --model PROVIDER:MODEL [--prompt TEXT] TARGET",
		Short: "Talk to a model that uses the server's tools, as a host would",
		Long: "Give a model the server's tools, as the host --host names would present them, and talk to\n" +
			"it: the model answers (streamed) and calls the tools; each call is shown with its arguments\n" +
			"before it runs and allowed, edited or refused (a tool not annotated read-only or\n" +
			"non-destructive is always asked unless --approve all); the result goes back to the model.\n" +
			"With --prompt, one message and the whole exchange (--json: one document); without it, a\n" +
			"conversation on the terminal. The model's turns are on the wire (-v), in the trace\n" +
			"(--record) and in OpenTelemetry (--otlp-endpoint) as GenAI spans. Keys come from\n" +
			"ANTHROPIC_API_KEY, OPENAI_API_KEY (and OPENAI_BASE_URL) or GEMINI_API_KEY (docs/models.md).\n" +
			"Exit 0 when the model answered, 1 when a budget stopped it, 11 when its provider failed.",
		Example: "  mcpi chat --model openai:gpt-4.1 --prompt 'add 2 and 3' --approve all -- mcpi demo-server\n" +
			"  mcpi chat --model ollama:qwen3 --host claude-code --show-tools -- mcpi demo-server",
		Args: command.TargetArgs(&opts.Target, func(rest []string) error {
			if len(rest) > 0 {
				return command.FlagErrorf("unexpected argument %q: the message goes in --prompt", rest[0])
			}
			if opts.Model == "" {
				opts.Model = os.Getenv("MCPI_MODEL")
			}
			if opts.Model == "" && !opts.ShowTools {
				return command.FlagErrorf("give the model: --model PROVIDER:MODEL (anthropic:, openai:, openai-responses:, ollama:, compat: with --model-url), or set MCPI_MODEL")
			}
			if _, err := chat.ParseApproval(opts.Approve); err != nil {
				return command.FlagErrorf("%v", err)
			}
			if opts.Prompt == "" && !opts.ShowTools && !opts.IO.StdinTTY {
				return command.FlagErrorf("give the message with --prompt TEXT (a conversation needs a terminal)")
			}
			return nil
		}),
		RunE: command.RunE(opts, runF, chatRun),
	}, &opts.ConnOptions)
	fl := cmd.Flags()
	end := command.FlagGroup(cmd, command.GroupArgs)
	fl.StringVar(&opts.Model, "model", "", "the model: PROVIDER:MODEL (anthropic:, openai:, openai-responses:, ollama:, compat:) or a name of models.yaml; default $MCPI_MODEL")
	// The connection's ModelURL, which --sampling-model may declare
	// already: one flag for both.
	if fl.Lookup("model-url") == nil {
		fl.StringVar(&opts.ModelURL, "model-url", "", "the model's base URL (compat: required; ollama: default http://127.0.0.1:11434/v1/)")
	}
	fl.StringVar(&opts.Prompt, "prompt", "", "send this message, print the exchange and exit")
	fl.StringVar(&opts.System, "system", "", "the system prompt")
	fl.StringVar(&opts.Host, "host", "", "present the tools as this host would ("+strings.Join(chat.Hosts, ", ")+"; default: as listed)")
	fl.StringVar(&opts.Approve, "approve", "none", "tool calls that run without asking: none, destructive (every call but destructive ones), all")
	fl.IntVar(&opts.MaxTurns, "max-turns", 20, "stop after this many turns of the model per message")
	fl.Int64Var(&opts.MaxTokens, "max-tokens", 0, "stop once the conversation has used this many tokens (0: no bound)")
	fl.Float64Var(&opts.MaxCost, "max-cost", 0, "stop once the conversation has cost this many dollars by the price table (0: no bound)")
	fl.BoolVar(&opts.ShowTools, "show-tools", false, "print the tools as the model would see them (--host), and what the host changed; call no model")
	end()
	return cmd
}

func chatRun(ctx context.Context, opts *ChatOptions) error {
	return opts.WithRun(ctx, func(r *command.ConnRun) error { return runChat(ctx, r, opts) })
}

func runChat(ctx context.Context, run *command.ConnRun, opts *ChatOptions) error {
	c := run.Client
	tools, err := c.AllTools(ctx)
	if err != nil {
		return err
	}
	server := opts.Target.Server
	if server == "" && c.InitializeResult() != nil {
		server = c.InitializeResult().ServerInfo.Name
	}
	presented, err := chat.Present(opts.Host, server, tools)
	if err != nil {
		return command.FlagErrorf("--host: %v", err)
	}
	if opts.ShowTools {
		return term.PrintPresented(opts.IO, opts.JSON, presented)
	}
	model, err := command.OpenModel(opts.Model, opts.ModelURL, nil)
	if err != nil {
		return err
	}
	approve, _ := chat.ParseApproval(opts.Approve)
	d := term.New(term.Options{IO: opts.IO, Say: run.Sayer(), Model: opts.Model, JSON: opts.JSON,
		MaxTurns: opts.MaxTurns, MaxTokens: opts.MaxTokens, MaxCost: opts.MaxCost})
	ro := chat.Options{
		Model: model, Server: chat.SessionServer(c), Tools: tools, Presented: presented, System: opts.System,
		Approve: approve, MaxTurns: opts.MaxTurns, MaxTokens: opts.MaxTokens, MaxCost: opts.MaxCost,
		Tap: run.ModelTap(), Prices: command.ModelPrices(),
	}
	if !opts.JSON {
		ro.OnEvent = d.Event
	}
	if opts.IO.StdinTTY && opts.IO.StderrTTY {
		ro.Ask = d.Ask
	}
	r := chat.New(ro)
	if opts.Prompt == "" {
		return d.Converse(ctx, r)
	}
	start := time.Now()
	res := r.Send(ctx, opts.Prompt)
	if err := d.Outcome(r, res, presented, time.Since(start)); err != nil {
		return err
	}
	return chatExit(opts, d, res)
}

// chatExit is a --prompt run's exit: 0 when the model answered, 11 when
// its provider failed, 1 when a budget stopped it.
func chatExit(opts *ChatOptions, d *term.Dialogue, res *chat.Result) error {
	switch res.Stop {
	case chat.StopDone:
		return nil
	case chat.StopError:
		if opts.JSON {
			return command.ErrSilent{Code: command.ExitModel, What: res.Err.Error(), Kind: command.KindModel}
		}
		return res.Err
	case chat.StopCancelled:
		return context.Canceled
	}
	return command.ErrSilent{Code: command.ExitToolError, What: d.StopWhy(res.Stop), Kind: command.KindBudget}
}
