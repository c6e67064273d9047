package term

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mcpi-dev/mcpi/internal/chat"
	"github.com/mcpi-dev/mcpi/internal/iostreams"
	"github.com/mcpi-dev/mcpi/internal/llm"
	"github.com/mcpi-dev/mcpi/internal/safetext"
)

// Options are a dialogue's streams and what it says of the conversation.
type Options struct {
	IO *iostreams.IOStreams
	// Say writes a line on stderr, whatever goroutine says it.
	Say func(format string, args ...any)
	// Model is the model's spec as the person gave it.
	Model string
	// JSON: a --prompt run's end is one JSON document (Report).
	JSON bool
	// The budgets, to say which one stopped the model.
	MaxTurns  int
	MaxTokens int64
	MaxCost   float64
}

// Dialogue talks with the person at the terminal about one conversation:
// the model's text on stdout, streamed; the tool calls and results on
// stderr, each on a line of its own: a line of the model's text left open
// is ended first, once, so that on a terminal, where the two streams
// meet, no line holds both and no line is empty. Its Event and Ask may
// be called from any goroutine.
type Dialogue struct {
	o   Options
	mu  sync.Mutex
	mid bool // stdout's last line is not ended
	in  *bufio.Reader
}

// New starts a dialogue on o.IO.
func New(o Options) *Dialogue {
	return &Dialogue{o: o, in: bufio.NewReader(o.IO.In)}
}

// endLine ends stdout's open line, if any; with d.mu held.
func (d *Dialogue) endLine() {
	if d.mid {
		fmt.Fprintln(d.o.IO.Out)
		d.mid = false
	}
	d.o.IO.Out.Flush()
}

// end ends stdout's open line, if any.
func (d *Dialogue) end() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.endLine()
}

// Event shows an event of the conversation (chat.Options.OnEvent).
func (d *Dialogue) Event(e chat.Event) {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch e.Kind {
	case chat.EventText:
		if t := safetext.Sanitize(e.Text, true); t != "" {
			fmt.Fprint(d.o.IO.Out, t)
			d.mid = !strings.HasSuffix(t, "\n")
		}
		d.o.IO.Out.Flush()
	case chat.EventToolCall:
		d.endLine()
		d.o.Say("→ %s %s", safetext.OneLine(e.Call.Name), safetext.Truncate(safetext.OneLine(string(e.Call.Arguments)), 200))
	case chat.EventToolResult:
		mark := "←"
		switch {
		case e.Result.Denied:
			mark = "✗ refused"
		case e.Result.IsError:
			mark = "← error"
		}
		d.o.Say("%s %s: %s", mark, safetext.OneLine(e.Result.Tool), safetext.Truncate(safetext.OneLine(e.Result.Text), 200))
	}
}

// Ask asks the person about a tool call (chat.Options.Ask): y runs it, e
// edits its arguments (JSON), anything else refuses it.
func (d *Dialogue) Ask(ctx context.Context, p chat.Proposal) chat.Decision {
	errOut := d.o.IO.ErrOut
	d.mu.Lock()
	d.endLine()
	what := "the model calls"
	if p.Destructive {
		what = "the model calls a tool that may destroy:"
	}
	fmt.Fprintf(errOut, "%s %s %s\nrun it? [y]es, [e]dit, [N]o: ", what, safetext.OneLine(p.Call.Name), safetext.Truncate(safetext.OneLine(string(p.Call.Arguments)), 400))
	errOut.Flush()
	d.mu.Unlock()
	line, ok := d.readLine(ctx)
	switch {
	case !ok:
		return chat.Decision{Verdict: chat.Deny, Why: "the person stopped"}
	case strings.EqualFold(line, "y"), strings.EqualFold(line, "yes"):
		return chat.Decision{Verdict: chat.Allow}
	case strings.EqualFold(line, "e"), strings.EqualFold(line, "edit"):
		for {
			fmt.Fprint(errOut, "arguments (JSON): ")
			errOut.Flush()
			args, ok := d.readLine(ctx)
			if !ok {
				return chat.Decision{Verdict: chat.Deny, Why: "the person stopped"}
			}
			if json.Valid([]byte(args)) && strings.HasPrefix(strings.TrimSpace(args), "{") {
				return chat.Decision{Verdict: chat.Allow, Arguments: json.RawMessage(args)}
			}
			fmt.Fprintln(errOut, "not a JSON object: try again, or press Ctrl-D to refuse")
		}
	}
	return chat.Decision{Verdict: chat.Deny, Why: line}
}

// readLine reads a line, or gives up with ctx.
func (d *Dialogue) readLine(ctx context.Context) (string, bool) {
	got := make(chan string, 1)
	go func() {
		line, err := d.in.ReadString('\n')
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

// Converse talks on the terminal until the person ends it (an empty line
// after the last answer, Ctrl-D or Ctrl-C).
func (d *Dialogue) Converse(ctx context.Context, r *chat.Runner) error {
	errOut := d.o.IO.ErrOut
	d.o.Say("talking to %s: a message and enter; Ctrl-D ends", safetext.OneLine(d.o.Model))
	for {
		fmt.Fprint(errOut, "you> ")
		errOut.Flush()
		line, ok := d.readLine(ctx)
		if !ok {
			fmt.Fprintln(errOut)
			return ctx.Err()
		}
		if line == "" {
			continue
		}
		res := r.Send(ctx, line)
		d.end()
		switch res.Stop {
		case chat.StopError:
			d.o.Say("the model's provider failed: %s", safetext.OneLine(res.Err.Error()))
		case chat.StopCancelled:
			return ctx.Err()
		case chat.StopDone:
		default:
			d.o.Say("stopped: %s", d.StopWhy(res.Stop))
		}
	}
}

// StopWhy says why the model stopped, naming the budget that stopped it.
func (d *Dialogue) StopWhy(s chat.Stop) string {
	switch s {
	case chat.StopMaxTurns:
		return fmt.Sprintf("the model took %d turns (--max-turns)", d.o.MaxTurns)
	case chat.StopMaxTokens:
		return fmt.Sprintf("the conversation used %d tokens (--max-tokens)", d.o.MaxTokens)
	case chat.StopMaxCost:
		return fmt.Sprintf("the conversation cost $%.4f (--max-cost)", d.o.MaxCost)
	}
	return string(s)
}

// Report is mcpi chat --json's document.
type Report struct {
	Model    string           `json:"model"`
	Host     string           `json:"host,omitempty"`
	Stop     chat.Stop        `json:"stop"`
	Text     string           `json:"text"`
	Turns    []chat.TurnStats `json:"turns"`
	Calls    []Call           `json:"calls"`
	Usage    llm.Usage        `json:"usage"`
	CostUSD  float64          `json:"costUsd"`
	Priced   bool             `json:"priced"`
	Error    string           `json:"error,omitempty"`
	Notes    []string         `json:"hostNotes,omitempty"`
	Duration float64          `json:"durationMs"`
}

// Call is a tool call of a Report.
type Call struct {
	ID        string          `json:"id"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Result    string          `json:"result"`
	IsError   bool            `json:"isError,omitempty"`
	Denied    bool            `json:"denied,omitempty"`
}

// Outcome prints a --prompt run's end, res of r, which took took: the
// text was streamed; the summary goes on stderr (and, when a budget
// stopped the model, which), or the whole exchange is one JSON document.
func (d *Dialogue) Outcome(r *chat.Runner, res *chat.Result, p *chat.Presented, took time.Duration) error {
	if d.o.JSON {
		rep := Report{Model: d.o.Model, Host: p.Host, Stop: res.Stop, Text: res.Text, Turns: res.Turns, Usage: r.Usage,
			CostUSD: r.Cost, Priced: r.Priced(), Notes: p.Notes, Duration: float64(took.Microseconds()) / 1000, Calls: []Call{}}
		if rep.Turns == nil {
			rep.Turns = []chat.TurnStats{}
		}
		for _, c := range res.Calls {
			rep.Calls = append(rep.Calls, Call{ID: c.CallID, Tool: c.Tool, Arguments: c.Arguments, Result: c.Text, IsError: c.IsError, Denied: c.Denied})
		}
		if res.Err != nil {
			rep.Error = res.Err.Error()
		}
		return iostreams.WriteJSON(d.o.IO, rep)
	}
	d.end()
	cost := "unpriced"
	if r.Priced() {
		cost = fmt.Sprintf("$%.4f", r.Cost)
	}
	d.o.Say("%s · %d turns · %d tool calls · %d in / %d out tokens · %s · %s", res.Stop, len(res.Turns), len(res.Calls),
		r.Usage.InputTokens, r.Usage.OutputTokens, cost, took.Round(time.Millisecond))
	switch res.Stop {
	case chat.StopDone, chat.StopError, chat.StopCancelled:
	default:
		d.o.Say("stopped: %s", d.StopWhy(res.Stop))
	}
	return nil
}

// PrintPresented prints the tools as a host's model sees them, and what
// the host changed: a table on stdout, or one JSON document.
func PrintPresented(ios *iostreams.IOStreams, asJSON bool, p *chat.Presented) error {
	if asJSON {
		return iostreams.WriteJSON(ios, map[string]any{"host": p.Host, "tools": p.Tools, "notes": p.Notes})
	}
	w := ios.Out
	host := p.Host
	if host == "" {
		host = "(as listed)"
	}
	fmt.Fprintf(w, "what the model sees, host %s: %d tools\n", host, len(p.Tools))
	for _, t := range p.Tools {
		fmt.Fprintf(w, "  %-40s %s\n", safetext.OneLine(t.Name), safetext.Truncate(safetext.OneLine(t.Description), 80))
	}
	for _, n := range p.Notes {
		fmt.Fprintf(w, "  ! %s\n", safetext.OneLine(n))
	}
	return nil
}
