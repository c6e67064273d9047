package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/chat"
	"github.com/mcpi-dev/mcpi/internal/llm"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// ChatOptions are mcpi chat's.
type ChatOptions struct {
	ConnOptions
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
func NewCmdChat(f *Factory, runF func(context.Context, *ChatOptions) error) *cobra.Command {
	opts := &ChatOptions{ConnOptions: f.conn()}
	cmd := &cobra.Command{
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
		Args: targetArgs(&opts.Target, func(rest []string) error {
			if len(rest) > 0 {
				return flagErrorf("unexpected argument %q: the message goes in --prompt", rest[0])
			}
			if opts.Model == "" {
				opts.Model = os.Getenv("MCPI_MODEL")
			}
			if opts.Model == "" && !opts.ShowTools {
				return flagErrorf("give the model: --model PROVIDER:MODEL (anthropic:, openai:, openai-responses:, ollama:, compat: with --model-url), or set MCPI_MODEL")
			}
			if _, err := chat.ParseApproval(opts.Approve); err != nil {
				return flagErrorf("%v", err)
			}
			if opts.Prompt == "" && !opts.ShowTools && !opts.IO.StdinTTY {
				return flagErrorf("give the message with --prompt TEXT (a conversation needs a terminal)")
			}
			return nil
		}),
		RunE: runE(opts, runF, chatRun),
	}
	addConnFlags(cmd, &opts.ConnOptions)
	addSessionFlag(cmd, &opts.ConnOptions)
	fl := cmd.Flags()
	end := flagGroup(cmd, groupArgs)
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
	return opts.withRun(ctx, func(r *connRun) error { return runChat(ctx, r, opts) })
}

// chatReport is mcpi chat --json's document.
type chatReport struct {
	Model    string           `json:"model"`
	Host     string           `json:"host,omitempty"`
	Stop     chat.Stop        `json:"stop"`
	Text     string           `json:"text"`
	Turns    []chat.TurnStats `json:"turns"`
	Calls    []chatCall       `json:"calls"`
	Usage    llm.Usage        `json:"usage"`
	CostUSD  float64          `json:"costUsd"`
	Priced   bool             `json:"priced"`
	Error    string           `json:"error,omitempty"`
	Notes    []string         `json:"hostNotes,omitempty"`
	Duration float64          `json:"durationMs"`
}

type chatCall struct {
	ID        string          `json:"id"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Result    string          `json:"result"`
	IsError   bool            `json:"isError,omitempty"`
	Denied    bool            `json:"denied,omitempty"`
}

func runChat(ctx context.Context, run *connRun, opts *ChatOptions) error {
	c := run.client
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
		return flagErrorf("--host: %v", err)
	}
	if opts.ShowTools {
		return printPresented(opts, presented)
	}
	model, err := openModel(opts.Model, opts.ModelURL, nil)
	if err != nil {
		return err
	}
	approve, _ := chat.ParseApproval(opts.Approve)
	say := run.sayer()
	out := &chatPrinter{opts: opts}
	ro := chat.Options{
		Model: model, Server: chat.SessionServer(c), Tools: tools, Presented: presented, System: opts.System,
		Approve: approve, MaxTurns: opts.MaxTurns, MaxTokens: opts.MaxTokens, MaxCost: opts.MaxCost,
		Tap: run.modelTap(), Prices: modelPrices(),
	}
	if !opts.JSON {
		ro.OnEvent = func(e chat.Event) { out.event(say, e) }
	}
	if opts.IO.StdinTTY && opts.IO.StderrTTY {
		ro.Ask = terminalAsk(opts, out, bufio.NewReader(opts.IO.In))
	}
	r := chat.New(ro)
	if opts.Prompt != "" {
		start := time.Now()
		res := r.Send(ctx, opts.Prompt)
		return chatOutcome(opts, out, r, res, presented, time.Since(start), say)
	}
	return chatConversation(ctx, opts, out, r, say)
}

// modelTap is where the model's events go: the connection's own tap (the
// trace of --record and --otlp-endpoint, -v).
func (r *connRun) modelTap() transport.Tap {
	tap, _ := r.connTap(connHooks{}) // the trace is started already: no error is left to give
	return tap
}

func printPresented(opts *ChatOptions, p *chat.Presented) error {
	if opts.JSON {
		return writeJSON(opts.IO, map[string]any{"host": p.Host, "tools": p.Tools, "notes": p.Notes})
	}
	w := opts.IO.Out
	host := p.Host
	if host == "" {
		host = "(as listed)"
	}
	fmt.Fprintf(w, "what the model sees, host %s: %d tools\n", host, len(p.Tools))
	for _, t := range p.Tools {
		fmt.Fprintf(w, "  %-40s %s\n", oneLine(t.Name), truncate(oneLine(t.Description), 80))
	}
	for _, n := range p.Notes {
		fmt.Fprintf(w, "  ! %s\n", oneLine(n))
	}
	return nil
}

// chatPrinter shows the exchange as it goes: the model's text on stdout,
// streamed; the tool calls and results on stderr, each on a line of its
// own: a line of the model's text left open is ended first, once, so that
// on a terminal, where the two streams meet, no line holds both and no
// line is empty.
type chatPrinter struct {
	opts *ChatOptions
	mu   sync.Mutex
	mid  bool // stdout's last line is not ended
}

// endLine ends stdout's open line, if any; with p.mu held.
func (p *chatPrinter) endLine() {
	if p.mid {
		fmt.Fprintln(p.opts.IO.Out)
		p.mid = false
	}
	p.opts.IO.Out.Flush()
}

// end ends stdout's open line, if any.
func (p *chatPrinter) end() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.endLine()
}

func (p *chatPrinter) event(say func(string, ...any), e chat.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch e.Kind {
	case chat.EventText:
		if t := sanitize(e.Text, true); t != "" {
			fmt.Fprint(p.opts.IO.Out, t)
			p.mid = !strings.HasSuffix(t, "\n")
		}
		p.opts.IO.Out.Flush()
	case chat.EventToolCall:
		p.endLine()
		say("→ %s %s", oneLine(e.Call.Name), truncate(oneLine(string(e.Call.Arguments)), 200))
	case chat.EventToolResult:
		mark := "←"
		switch {
		case e.Result.Denied:
			mark = "✗ refused"
		case e.Result.IsError:
			mark = "← error"
		}
		say("%s %s: %s", mark, oneLine(e.Result.Tool), truncate(oneLine(e.Result.Text), 200))
	}
}

// terminalAsk asks the person about a tool call on the terminal: y runs
// it, e edits its arguments (JSON), anything else refuses it.
func terminalAsk(opts *ChatOptions, out *chatPrinter, in *bufio.Reader) func(context.Context, chat.Proposal) chat.Decision {
	return func(ctx context.Context, p chat.Proposal) chat.Decision {
		out.mu.Lock()
		out.endLine()
		what := "the model calls"
		if p.Destructive {
			what = "the model calls a tool that may destroy:"
		}
		fmt.Fprintf(opts.IO.ErrOut, "%s %s %s\nrun it? [y]es, [e]dit, [N]o: ", what, oneLine(p.Call.Name), truncate(oneLine(string(p.Call.Arguments)), 400))
		opts.IO.ErrOut.Flush()
		out.mu.Unlock()
		line, ok := readLine(ctx, in)
		switch {
		case !ok:
			return chat.Decision{Verdict: chat.Deny, Why: "the person stopped"}
		case strings.EqualFold(line, "y"), strings.EqualFold(line, "yes"):
			return chat.Decision{Verdict: chat.Allow}
		case strings.EqualFold(line, "e"), strings.EqualFold(line, "edit"):
			for {
				fmt.Fprint(opts.IO.ErrOut, "arguments (JSON): ")
				opts.IO.ErrOut.Flush()
				args, ok := readLine(ctx, in)
				if !ok {
					return chat.Decision{Verdict: chat.Deny, Why: "the person stopped"}
				}
				if json.Valid([]byte(args)) && strings.HasPrefix(strings.TrimSpace(args), "{") {
					return chat.Decision{Verdict: chat.Allow, Arguments: json.RawMessage(args)}
				}
				fmt.Fprintln(opts.IO.ErrOut, "not a JSON object: try again, or press Ctrl-D to refuse")
			}
		}
		return chat.Decision{Verdict: chat.Deny, Why: line}
	}
}

// readLine reads a line, or gives up with ctx.
func readLine(ctx context.Context, in *bufio.Reader) (string, bool) {
	got := make(chan string, 1)
	go func() {
		line, err := in.ReadString('\n')
		if err != nil && line == "" {
			close(got)
			return
		}
		got <- strings.TrimSpace(line)
	}()
	select {
	case line, ok := <-got:
		return line, ok
	case <-ctx.Done():
		return "", false
	}
}

// chatConversation talks on the terminal until the person ends it (an
// empty line after the last answer, Ctrl-D or Ctrl-C).
func chatConversation(ctx context.Context, opts *ChatOptions, out *chatPrinter, r *chat.Runner, say func(string, ...any)) error {
	in := bufio.NewReader(opts.IO.In)
	say("talking to %s: a message and enter; Ctrl-D ends", oneLine(opts.Model))
	for {
		fmt.Fprint(opts.IO.ErrOut, "you> ")
		opts.IO.ErrOut.Flush()
		line, ok := readLine(ctx, in)
		if !ok {
			fmt.Fprintln(opts.IO.ErrOut)
			return ctx.Err()
		}
		if line == "" {
			continue
		}
		res := r.Send(ctx, line)
		out.end()
		switch res.Stop {
		case chat.StopError:
			say("the model's provider failed: %s", oneLine(res.Err.Error()))
		case chat.StopCancelled:
			return ctx.Err()
		case chat.StopDone:
		default:
			say("stopped: %s", stopWhy(res.Stop, opts))
		}
	}
}

func stopWhy(s chat.Stop, opts *ChatOptions) string {
	switch s {
	case chat.StopMaxTurns:
		return fmt.Sprintf("the model took %d turns (--max-turns)", opts.MaxTurns)
	case chat.StopMaxTokens:
		return fmt.Sprintf("the conversation used %d tokens (--max-tokens)", opts.MaxTokens)
	case chat.StopMaxCost:
		return fmt.Sprintf("the conversation cost $%.4f (--max-cost)", opts.MaxCost)
	}
	return string(s)
}

// chatOutcome prints a --prompt run's end and gives its exit: the text was
// streamed; the summary goes on stderr, or the whole exchange as one JSON
// document.
func chatOutcome(opts *ChatOptions, out *chatPrinter, r *chat.Runner, res *chat.Result, p *chat.Presented, took time.Duration, say func(string, ...any)) error {
	if opts.JSON {
		rep := chatReport{Model: opts.Model, Host: p.Host, Stop: res.Stop, Text: res.Text, Turns: res.Turns, Usage: r.Usage,
			CostUSD: r.Cost, Priced: r.Priced(), Notes: p.Notes, Duration: float64(took.Microseconds()) / 1000, Calls: []chatCall{}}
		if rep.Turns == nil {
			rep.Turns = []chat.TurnStats{}
		}
		for _, c := range res.Calls {
			rep.Calls = append(rep.Calls, chatCall{ID: c.CallID, Tool: c.Tool, Arguments: c.Arguments, Result: c.Text, IsError: c.IsError, Denied: c.Denied})
		}
		if res.Err != nil {
			rep.Error = res.Err.Error()
		}
		if err := writeJSON(opts.IO, rep); err != nil {
			return err
		}
	} else {
		out.end()
		cost := "unpriced"
		if r.Priced() {
			cost = fmt.Sprintf("$%.4f", r.Cost)
		}
		say("%s · %d turns · %d tool calls · %d in / %d out tokens · %s · %s", res.Stop, len(res.Turns), len(res.Calls),
			r.Usage.InputTokens, r.Usage.OutputTokens, cost, took.Round(time.Millisecond))
	}
	switch res.Stop {
	case chat.StopDone:
		return nil
	case chat.StopError:
		if opts.JSON {
			return errSilent{code: ExitModel, what: res.Err.Error(), kind: KindModel}
		}
		return res.Err
	case chat.StopCancelled:
		return context.Canceled
	}
	if !opts.JSON {
		say("stopped: %s", stopWhy(res.Stop, opts))
	}
	return errSilent{code: ExitToolError, what: stopWhy(res.Stop, opts), kind: KindBudget}
}
