// Package chat is a model in the loop with an MCP server, as a host runs
// one: a person's message goes to the model with the server's tools (as
// the chosen host would present them); each tool call the model makes is
// shown before it runs, allowed, edited or denied (destructive tools are
// always asked unless every call is approved); the result goes back to the
// model, and its next turn follows, within budgets of turns, tokens and
// cost. Every turn and every tool run is a model event on the tap
// (internal/genai), so the Wire pane, the trace, replay and the OTLP export
// see them; the tools/call frames are the session's own.
//
// The Runner holds the conversation. It imports no front end: mcpi chat
// (one-shot and line mode) and the TUI's Chat tab are front ends of it.
package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcpi-dev/mcpi/internal/genai"
	"github.com/mcpi-dev/mcpi/internal/llm"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// Approval says which tool calls run without asking.
type Approval string

const (
	// ApproveNone asks before every call (the default).
	ApproveNone Approval = "none"
	// ApproveSafe runs the calls of tools not annotated destructive and
	// asks before the others (--approve destructive: destructive ones are
	// still asked).
	ApproveSafe Approval = "destructive"
	// ApproveAll runs every call without asking.
	ApproveAll Approval = "all"
)

// ParseApproval reads --approve.
func ParseApproval(s string) (Approval, error) {
	switch a := Approval(s); a {
	case ApproveNone, ApproveSafe, ApproveAll:
		return a, nil
	case "":
		return ApproveNone, nil
	}
	return "", fmt.Errorf("--approve %q: none, destructive or all", s)
}

// Verdict is the person's answer to a tool call.
type Verdict int

const (
	Deny Verdict = iota
	Allow
)

// Decision is the answer to a tool call: allow it (with Arguments, when
// the person edited them) or deny it (with why, for the model).
type Decision struct {
	Verdict   Verdict
	Arguments json.RawMessage
	Why       string
}

// Caller runs a tool on the server: the session's tools/call.
type Caller interface {
	CallToolRaw(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error)
}

// SessionServer runs the model's tools over an mcpi session.
func SessionServer(c *session.Client) Caller { return sessionCaller{c} }

type sessionCaller struct{ c *session.Client }

func (s sessionCaller) CallToolRaw(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	return s.c.CallToolRaw(ctx, mcp.CallToolParams{Name: name, Arguments: args}, nil)
}

// Options configure a Runner.
type Options struct {
	Model llm.Provider
	// Server runs the tools; Tools are the server's, Presented how the
	// chosen host shows them to the model (Present).
	Server    Caller
	Tools     []mcp.Tool
	Presented *Presented
	System    string
	// Purpose names the runs in the trace: chat (default), eval.
	Purpose string
	Approve Approval
	// Ask asks the person about a call that is not approved; nil denies
	// it ("nobody to ask").
	Ask func(ctx context.Context, c Proposal) Decision
	// Budgets: at most MaxTurns requests to the model per Send (default
	// 20), MaxTokens input and output tokens and MaxCost dollars over the
	// whole conversation (0: none).
	MaxTurns  int
	MaxTokens int64
	MaxCost   float64
	// Prices price the turns (llm.DefaultPrices when nil).
	Prices llm.Prices
	// Request tunes every request: max tokens, temperature, seed.
	MaxOutput   int64
	Temperature *float64
	Seed        *int64
	// Tap sees every model event; OnEvent streams to a front end.
	Tap     transport.Tap
	OnEvent func(Event)
	Now     func() time.Time
}

// Proposal is a tool call the model made, for the person to judge.
type Proposal struct {
	Call llm.ToolCall
	// Tool is the server's tool it names (nil when the model named none of
	// them); Destructive says the tool may destroy (its annotations say so,
	// or say nothing of it: the spec's default).
	Tool        *mcp.Tool
	Destructive bool
}

// EventKind is what a front end is told.
type EventKind int

const (
	EventText       EventKind = iota + 1 // a piece of the model's text
	EventToolCall                        // a tool call, before it is judged
	EventToolResult                      // a tool's result, as the model gets it
	EventTurn                            // a turn of the model ended (Turn)
)

// Event is what a front end is told as a Send runs.
type Event struct {
	Kind   EventKind
	Text   string
	Call   *llm.ToolCall
	Result *ToolResult
	Turn   *TurnStats
}

// ToolResult is a tool call's end: what the model is given.
type ToolResult struct {
	CallID, Tool string
	Text         string
	IsError      bool
	Denied       bool
	Arguments    json.RawMessage
	Duration     time.Duration
}

// TurnStats are one turn's figures.
type TurnStats struct {
	N                int
	Model            string
	Usage            llm.Usage
	Cost             float64
	Priced           bool
	TimeToFirstToken time.Duration
	Duration         time.Duration
	Finish           llm.FinishReason
	// Overhead is mcpi's own time in the turn: from the provider's last
	// byte to the first tool call on the wire, and from the last tool
	// result to the next request.
	Overhead time.Duration
}

// Stop is why a Send ended.
type Stop string

const (
	StopDone      Stop = "done"       // the model answered without a tool call
	StopMaxTurns  Stop = "max-turns"  // --max-turns
	StopMaxTokens Stop = "max-tokens" // --max-tokens
	StopMaxCost   Stop = "max-cost"   // --max-cost
	StopCancelled Stop = "cancelled"  // the person stopped it
	StopError     Stop = "error"      // the model's provider failed
)

// Result is what a Send did.
type Result struct {
	Stop  Stop
	Text  string // the model's last text
	Turns []TurnStats
	Calls []ToolResult
	Err   error // with StopError: the provider's error
}

// Runner holds one conversation.
type Runner struct {
	o        Options
	Messages []llm.Message
	// Usage and Cost are the conversation's so far.
	Usage  llm.Usage
	Cost   float64
	turns  int
	tools  map[string]*mcp.Tool
	costOK bool
}

// New starts a conversation.
func New(o Options) *Runner {
	if o.MaxTurns <= 0 {
		o.MaxTurns = 20
	}
	if o.Prices == nil {
		o.Prices = llm.DefaultPrices()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Purpose == "" {
		o.Purpose = "chat"
	}
	if o.Approve == "" {
		o.Approve = ApproveNone
	}
	if o.Presented == nil {
		o.Presented, _ = Present("", "", o.Tools)
	}
	r := &Runner{o: o, tools: map[string]*mcp.Tool{}, costOK: true}
	for i := range o.Tools {
		r.tools[o.Tools[i].Name] = &o.Tools[i]
	}
	return r
}

// Send gives the model the person's message and runs the model's turns
// (and the tools they call) until it answers without a tool call, a
// budget is spent, ctx ends or the provider fails. What was said stays in
// the conversation whatever the outcome.
func (r *Runner) Send(ctx context.Context, text string) *Result {
	r.Messages = append(r.Messages, llm.Message{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: text}}})
	res := &Result{}
	var resumed time.Time // when the last tool result was in: mcpi's time to the next request
	for n := 0; ; n++ {
		if stop := r.spent(n); stop != "" {
			res.Stop = stop
			return res
		}
		if ctx.Err() != nil {
			res.Stop = StopCancelled
			return res
		}
		r.turns++
		id := fmt.Sprintf("%s-%d", r.o.Purpose, r.turns)
		req := &llm.Request{System: r.o.System, Messages: r.Messages, Tools: r.o.Presented.Tools, MaxTokens: r.o.MaxOutput, Temperature: r.o.Temperature, Seed: r.o.Seed}
		sent := r.o.Now()
		var overhead time.Duration
		if !resumed.IsZero() {
			overhead = sent.Sub(resumed)
		}
		r.tap(sent, transport.Outgoing, genai.Turn{Op: genai.OpChat, ID: id, Purpose: r.o.Purpose, Provider: r.o.Model.Name(), Model: r.o.Model.Model(),
			Messages: len(req.Messages), Tools: len(req.Tools)})
		resp, err := r.o.Model.Stream(ctx, req, func(e llm.Event) {
			if e.Kind == llm.EventText {
				r.emit(Event{Kind: EventText, Text: e.Text})
			}
		})
		got := r.o.Now()
		if err != nil {
			r.tap(got, transport.Incoming, genai.Turn{Op: genai.OpChat, ID: id, Error: err.Error()})
			if ctx.Err() != nil || errors.Is(err, llm.ErrCanceled) {
				res.Stop = StopCancelled
			} else {
				res.Stop, res.Err = StopError, err
			}
			return res
		}
		ts := r.account(n, resp)
		r.tap(got, transport.Incoming, answerTurn(id, r.o.Model.Name(), resp, ts))
		r.Messages = append(r.Messages, resp.Message)
		res.Text = resp.Message.Text()
		if len(resp.ToolCalls) == 0 {
			ts.Overhead = overhead
			res.Turns = append(res.Turns, ts)
			r.emit(Event{Kind: EventTurn, Turn: &ts})
			res.Stop = StopDone
			return res
		}
		results := make([]llm.Block, 0, len(resp.ToolCalls))
		for i := range resp.ToolCalls {
			c := resp.ToolCalls[i]
			if i == 0 {
				overhead += r.o.Now().Sub(got)
			}
			tr := r.run(ctx, c)
			res.Calls = append(res.Calls, tr)
			results = append(results, llm.Block{Type: llm.BlockToolResult, ID: c.ID, Text: tr.Text, IsError: tr.IsError || tr.Denied})
		}
		ts.Overhead = overhead
		res.Turns = append(res.Turns, ts)
		r.emit(Event{Kind: EventTurn, Turn: &ts})
		r.Messages = append(r.Messages, llm.Message{Role: llm.RoleUser, Content: results})
		resumed = r.o.Now()
		if ctx.Err() != nil {
			res.Stop = StopCancelled
			return res
		}
	}
}

// spent says which budget stops the next turn, or "".
func (r *Runner) spent(n int) Stop {
	switch {
	case n >= r.o.MaxTurns:
		return StopMaxTurns
	case r.o.MaxTokens > 0 && r.Usage.InputTokens+r.Usage.OutputTokens >= r.o.MaxTokens:
		return StopMaxTokens
	case r.o.MaxCost > 0 && r.Cost >= r.o.MaxCost:
		return StopMaxCost
	}
	return ""
}

// account adds a turn's usage and cost to the conversation's.
func (r *Runner) account(n int, resp *llm.Response) TurnStats {
	r.Usage = r.Usage.Add(resp.Usage)
	cost, ok := r.o.Prices.Cost(r.o.Model.Model(), resp.Usage)
	r.Cost += cost
	r.costOK = r.costOK && ok
	return TurnStats{N: n + 1, Model: resp.Model, Usage: resp.Usage, Cost: cost, Priced: ok,
		TimeToFirstToken: resp.TimeToFirstToken, Duration: resp.Duration, Finish: resp.Finish}
}

// Priced reports whether every turn so far had a price.
func (r *Runner) Priced() bool { return r.costOK }

func answerTurn(id, provider string, resp *llm.Response, ts TurnStats) genai.Turn {
	t := genai.Turn{Op: genai.OpChat, ID: id, Provider: provider, Model: resp.Model, Text: resp.Message.Text(),
		FinishReasons: resp.FinishReasons, Usage: &genai.Usage{InputTokens: resp.Usage.InputTokens, OutputTokens: resp.Usage.OutputTokens},
		TTFTMs: ms(resp.TimeToFirstToken), DurationMs: ms(resp.Duration), CostUSD: ts.Cost}
	for _, c := range resp.ToolCalls {
		t.ToolCalls = append(t.ToolCalls, genai.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
	}
	return t
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// run judges and runs one tool call; its result is what the model gets.
func (r *Runner) run(ctx context.Context, c llm.ToolCall) ToolResult {
	r.emit(Event{Kind: EventToolCall, Call: &c})
	name := r.o.Presented.Names[c.Name]
	tr := ToolResult{CallID: c.ID, Tool: name, Arguments: c.Arguments}
	start := r.o.Now()
	end := func() ToolResult {
		tr.Duration = r.o.Now().Sub(start)
		r.tap(r.o.Now(), transport.Incoming, genai.Turn{Op: genai.OpExecuteTool, ID: c.ID, Tool: tr.Tool, Denied: tr.Denied, Error: toolErr(&tr)})
		r.emit(Event{Kind: EventToolResult, Result: &tr})
		return tr
	}
	r.tap(start, transport.Outgoing, genai.Turn{Op: genai.OpExecuteTool, ID: c.ID, Purpose: r.o.Purpose, Tool: cmpOr(name, c.Name), Arguments: c.Arguments})
	tool := r.tools[name]
	switch {
	case c.Invalid != "":
		tr.Tool, tr.IsError, tr.Text = cmpOr(name, c.Name), true, c.Invalid
		return end()
	case tool == nil:
		tr.Tool, tr.IsError, tr.Text = c.Name, true, fmt.Sprintf("no tool named %q was offered", c.Name)
		return end()
	}
	p := Proposal{Call: c, Tool: tool, Destructive: tool.MayDestroy()}
	d := r.decide(ctx, p)
	if d.Verdict != Allow {
		tr.Denied = true
		tr.Text = "the person refused this tool call"
		if d.Why != "" {
			tr.Text += ": " + d.Why
		}
		return end()
	}
	args := c.Arguments
	if len(d.Arguments) > 0 {
		args, tr.Arguments = d.Arguments, d.Arguments
	}
	raw, err := r.o.Server.CallToolRaw(ctx, name, args)
	if err != nil {
		tr.IsError, tr.Text = true, "the tool call failed: "+err.Error()
		return end()
	}
	tr.Text, tr.IsError = resultText(raw)
	return end()
}

func toolErr(tr *ToolResult) string {
	if tr.IsError {
		return firstLine(tr.Text)
	}
	return ""
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// decide applies --approve, then asks.
func (r *Runner) decide(ctx context.Context, p Proposal) Decision {
	switch {
	case r.o.Approve == ApproveAll:
		return Decision{Verdict: Allow}
	case r.o.Approve == ApproveSafe && !p.Destructive:
		return Decision{Verdict: Allow}
	case r.o.Ask == nil:
		return Decision{Verdict: Deny, Why: "no one was there to allow it (--approve)"}
	}
	return r.o.Ask(ctx, p)
}

// maxResultText bounds what of a result the model is given.
const maxResultText = 64 << 10

// resultText is a tool result as the model gets it: its text blocks, its
// structured content, the others named.
func resultText(raw json.RawMessage) (string, bool) {
	var res mcp.CallToolResult
	if json.Unmarshal(raw, &res) != nil {
		return string(raw), false
	}
	var b strings.Builder
	for _, c := range res.Content {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		switch c.Type {
		case "text":
			b.WriteString(c.Text)
		case "resource_link":
			fmt.Fprintf(&b, "[resource link %s]", c.URI)
		case "resource":
			if c.Resource != nil {
				fmt.Fprintf(&b, "[resource %s]", c.Resource.URI)
				if c.Resource.Text != nil {
					b.WriteString(" " + *c.Resource.Text)
				}
			}
		default:
			fmt.Fprintf(&b, "[%s %s]", c.Type, c.MimeType)
		}
	}
	if len(res.StructuredContent) > 0 && b.Len() == 0 {
		b.Write(res.StructuredContent)
	}
	s := b.String()
	if len(s) > maxResultText {
		s = s[:maxResultText] + fmt.Sprintf("\n[… %d more bytes cut by mcpi]", len(s)-maxResultText)
	}
	return s, res.IsError
}

func (r *Runner) tap(at time.Time, dir transport.Direction, t genai.Turn) {
	if r.o.Tap != nil {
		r.o.Tap.Observe(genai.Event(at, dir, t))
	}
}

func (r *Runner) emit(e Event) {
	if r.o.OnEvent != nil {
		r.o.OnEvent(e)
	}
}
