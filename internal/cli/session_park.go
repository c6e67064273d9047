package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/bounds"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/schema"
	"github.com/mcpi-dev/mcpi/internal/session"
)

// A server request (sampling, elicitation) that no command under way can
// answer is parked in the daemon: it waits there, listed by mcpi pending,
// until mcpi answer answers it or the server withdraws it. While it waits
// the session's request clock stands still, as while a person types an
// answer (session.Client.Answering): the handler has not returned.

// parked is one server request waiting for an answer.
type parked struct {
	ID       int
	Method   string // sampling/createMessage or elicitation/create
	Sampling *mcp.CreateMessageParams
	Elicit   *mcp.ElicitParams
	Command  string // the command it belongs to, when known
	// owner is the command's slot, when known; told the slots of the
	// commands that may be waiting on it.
	owner *cmdSlot
	told  []*cmdSlot
	Since time.Time

	// params are the request's params, encoded once: what the board's
	// budget accounts, what mcpi pending --json prints and the attached
	// clients are sent.
	params json.RawMessage

	// ctx ends when the request does (answered, withdrawn, or the
	// session ended): the attached clients asked stop waiting.
	ctx context.Context

	answer chan parkAnswer // one answer, buffered
}

type parkAnswer struct {
	result any
	err    error
}

// parkBoard holds a session's parked requests, within its budget in count
// and in bytes of params (bounds.ParkedCount, bounds.ParkedBytes): a
// request past it is refused, and said so once until the board has room
// again.
type parkBoard struct {
	mu     sync.Mutex
	next   int
	byID   map[int]*parked
	budget *bounds.Budget
	// full is set by the first refusal and cleared when a request leaves:
	// one warning per time the board fills.
	full bool
}

func newParkBoard(maxCount int, maxBytes int64) *parkBoard {
	return &parkBoard{budget: bounds.NewBudget("parked requests", maxCount, maxBytes)}
}

// add parks p, or refuses it with the budget's *bounds.ExceededError;
// first reports whether this refusal is the first since the board had
// room.
func (b *parkBoard) add(p *parked) (first bool, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.budget.Take(int64(len(p.params))); err != nil {
		first = !b.full
		b.full = true
		return first, err
	}
	if b.byID == nil {
		b.byID = map[int]*parked{}
	}
	b.next++
	p.ID = b.next
	p.Since = time.Now()
	p.answer = make(chan parkAnswer, 1)
	b.byID[p.ID] = p
	return false, nil
}

func (b *parkBoard) get(id int) *parked {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.byID[id]
}

// take removes a parked request; only its taker may answer it.
func (b *parkBoard) take(id int) *parked {
	b.mu.Lock()
	defer b.mu.Unlock()
	p := b.byID[id]
	if p != nil {
		delete(b.byID, id)
		b.budget.Give(int64(len(p.params)))
		b.full = false
	}
	return p
}

func (b *parkBoard) list() []*parked {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]*parked, 0, len(b.byID))
	for _, p := range b.byID {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// park makes a server request wait for mcpi answer, telling the commands
// that may be waiting on it how to answer it.
func (d *dispatcher) park(ctx context.Context, p *parked) (any, error) {
	owner, told := d.waiters(ctx)
	if owner != nil {
		p.Command = owner.command()
	}
	p.owner, p.told = owner, told
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	p.ctx = ctx
	var err error
	switch {
	case p.Sampling != nil:
		p.params, err = json.Marshal(p.Sampling)
	case p.Elicit != nil:
		p.params, err = json.Marshal(p.Elicit)
	}
	if err != nil {
		return nil, err
	}
	// Parked and put to the attached clients in one step, which attaching
	// takes too: a client attaching meanwhile is asked once.
	d.mu.Lock()
	first, err := d.board.add(p)
	if err != nil {
		d.mu.Unlock()
		return nil, d.refuseParked(p, told, first, err)
	}
	watchers := slices.Clone(d.watchers)
	d.mu.Unlock()
	defer d.board.take(p.ID)
	for _, w := range watchers {
		go w.ask(p)
	}
	for _, s := range told {
		if h := s.get(); h != nil {
			h.say("waiting for server request #%d (%s): answer it with `mcpi answer %d --session %s`", p.ID, p.Method, p.ID, d.name)
		}
		if s.onPark != nil {
			s.onPark()
		}
	}
	select {
	case a := <-p.answer:
		return a.result, a.err
	case <-ctx.Done():
		// Withdrawn by the server (notifications/cancelled), or the
		// command or the session ended.
		return nil, ctx.Err()
	}
}

// refuseParked answers a request the board has no room for with a
// JSON-RPC error; the first refusal since the board had room is said to
// the commands it holds up and in the daemon's log, and every refusal is
// counted in the budget (mcpi pending and the session's status show it).
func (d *dispatcher) refuseParked(p *parked, told []*cmdSlot, first bool, err error) error {
	msg := fmt.Sprintf("mcpi refused server request %s: %v; mcpi answer answers the parked ones", p.Method, err)
	if first {
		for _, s := range told {
			if h := s.get(); h != nil {
				h.say("warning: %s (said once until one is answered)", msg)
			}
		}
		if d.logf != nil {
			d.logf("warning: %s (said once until one is answered)", msg)
		}
	}
	return &mcp.RPCError{Code: mcp.CodeInternalError, Message: msg}
}

// waiters returns the command a server request belongs to, when known (a
// modern input request travels with its request; a legacy request belongs
// to the only command under way, if there is one), and the commands to
// tell that it waits: its own, else every command under way.
func (d *dispatcher) waiters(ctx context.Context) (owner *cmdSlot, told []*cmdSlot) {
	if s := slotOf(ctx); s != nil && s.get() != nil {
		return s, []*cmdSlot{s}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, s := range d.slots {
		if s.get() != nil {
			told = append(told, s)
		}
	}
	if len(told) == 1 {
		owner = told[0]
	}
	return owner, told
}

// pendingJSON is one parked request as mcpi pending --json shows it.
type pendingJSON struct {
	ID        int             `json:"id"`
	Kind      string          `json:"kind"`
	Mode      string          `json:"mode,omitempty"`
	Command   string          `json:"command,omitempty"`
	Since     time.Time       `json:"since"`
	AgeMs     int64           `json:"ageMs"`
	Summary   string          `json:"summary"`
	Message   string          `json:"message,omitempty"`
	URL       string          `json:"url,omitempty"`
	Fields    []pendingField  `json:"fields,omitempty"`
	LastText  string          `json:"lastText,omitempty"`
	MaxTokens int             `json:"maxTokens,omitempty"`
	Params    json.RawMessage `json:"params"`
}

type pendingField struct {
	Name        string   `json:"name"`
	Title       string   `json:"title,omitempty"`
	Description string   `json:"description,omitempty"`
	Types       []string `json:"types,omitempty"`
	Required    bool     `json:"required,omitempty"`
	Enum        []any    `json:"enum,omitempty"`
	Default     any      `json:"default,omitempty"`
}

// describe says what a parked request is; its params are the ones held,
// not a copy. The summary is clipped (bounds.Clip): message, lastText and
// params are the server's in full.
func (p *parked) describe(now time.Time) pendingJSON {
	j := pendingJSON{ID: p.ID, Kind: p.Method, Command: p.Command, Since: p.Since, AgeMs: now.Sub(p.Since).Milliseconds(), Params: p.params}
	switch {
	case p.Sampling != nil:
		j.MaxTokens = p.Sampling.MaxTokens
		if n := len(p.Sampling.Messages); n > 0 {
			j.LastText = samplingText(p.Sampling.Messages[n-1].Content)
		}
		j.Summary = fmt.Sprintf("%d message(s), max %d tokens: %s", len(p.Sampling.Messages), p.Sampling.MaxTokens, j.LastText)
	case p.Elicit != nil:
		j.Message = p.Elicit.Message
		j.Mode = "form"
		if p.Elicit.Mode == "url" {
			j.Mode, j.URL = "url", p.Elicit.URL
			j.Summary = fmt.Sprintf("open %s: %s", p.Elicit.URL, p.Elicit.Message)
			break
		}
		var names []string
		if s, err := schema.Compile(p.Elicit.RequestedSchema); err == nil {
			for _, f := range s.Properties() {
				j.Fields = append(j.Fields, pendingField{Name: f.Name, Title: f.Title, Description: f.Description, Types: f.Types, Required: f.Required, Enum: f.Enum, Default: f.Default})
				n := f.Name
				if len(f.Types) > 0 {
					n += " " + strings.Join(f.Types, "|")
				}
				if f.Required {
					n += ", required"
				}
				names = append(names, n)
			}
		}
		j.Summary = p.Elicit.Message
		if len(names) > 0 {
			j.Summary += " [" + strings.Join(names, "; ") + "]"
		}
	}
	j.Summary = bounds.Clip(j.Summary)
	return j
}

// sessionOnly runs fn in the daemon holding the command's session, or
// sends the command there; these commands have no meaning outside one.
func sessionOnly(cmd *cobra.Command, o *ConnOptions, args []string, fn func(*heldSession) error) error {
	ctx := cmd.Context()
	if h := heldOf(ctx); h != nil {
		return withJSONError(o.IO, o.JSON, fn(h))
	}
	if err := needsSession(cmd, args); err != nil {
		return err
	}
	if !o.Target.useSession(cmd, nil) {
		return flagErrorf("mcpi %s runs in a live session: give --session NAME or set $%s (mcpi session start NAME TARGET starts one)", strings.TrimPrefix(cmd.CommandPath(), "mcpi "), sessionEnv)
	}
	if err := o.Target.checkSession(cmd); err != nil {
		return err
	}
	return o.forward(ctx)
}

// NewCmdPending returns `mcpi pending`.
func NewCmdPending(f *Factory) *cobra.Command {
	o := &ConnOptions{IO: f.IO, Args: f.Args}
	cmd := &cobra.Command{
		Use:   "pending --session NAME",
		Short: "List the server requests waiting for an answer in a live session",
		Long: `List the server requests waiting for an answer in a live session.

A sampling or elicitation request that no command under way can answer
(it gave no --sampling-reply or --elicit) waits in the session: the command
whose call it holds up says so on stderr, and mcpi answer answers it.`,
		Example: "  mcpi pending --session demo\n  mcpi pending --session demo --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return sessionOnly(cmd, o, args, func(h *heldSession) error {
				return printPending(o, h.disp.board)
			})
		},
	}
	end := flagGroup(cmd, groupOutput)
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON")
	end()
	addSessionFlag(cmd, o)
	return markSessionOnly(cmd)
}

// printPending prints the parked requests one at a time: the output is as
// large as the board's budget lets the requests be, and never built whole.
func printPending(o *ConnOptions, board *parkBoard) error {
	now := time.Now()
	list := board.list()
	if u := board.budget.Usage(); u.Refused > 0 {
		fmt.Fprintf(o.IO.ErrOut, "warning: %d server request(s) were refused: the session parks at most %d requests and %s of params\n",
			u.Refused, u.MaxCount, bounds.Size(u.MaxBytes))
	}
	if o.JSON {
		return writeJSONArray(o.IO, len(list), func(i int) any { return list[i].describe(now) })
	}
	if len(list) == 0 {
		fmt.Fprintln(o.IO.ErrOut, "No server request is waiting.")
		return nil
	}
	tw := tabwriter.NewWriter(o.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKIND\tCOMMAND\tAGE\tSUMMARY")
	for _, p := range list {
		j := p.describe(now)
		kind := j.Kind
		if j.Mode == "url" {
			kind += " (url)"
		}
		command := j.Command
		if command == "" {
			command = "-"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", j.ID, kind, clip(oneLine(command), 40),
			time.Duration(j.AgeMs*int64(time.Millisecond)).Round(time.Second), clip(oneLine(j.Summary), 100))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// Then each in full: a form's every field, with its type, whether it
	// is required, its values, default and description.
	for _, p := range list {
		fmt.Fprintln(o.IO.Out)
		printParkedDetail(o.IO.Out, p.describe(now))
	}
	return nil
}

// clip cuts s to n runes.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// NewCmdAnswer returns `mcpi answer ID`.
func NewCmdAnswer(f *Factory) *cobra.Command {
	o := &ConnOptions{IO: f.IO, Args: f.Args}
	var decline, cancel bool
	cmd := &cobra.Command{
		Use:   "answer ID --session NAME",
		Short: "Answer a server request waiting in a live session",
		Long: `Answer a server request waiting in a live session (see mcpi pending).

A sampling request takes --sampling-reply, an elicitation --elicit and
--elicit-field, as when a command answers them itself, with the same checks
of the form's fields; --decline and --cancel refuse either (a refused
sampling request gets the error "user rejected the request").`,
		Example: "  mcpi answer 1 --sampling-reply 'Paris' --session demo\n  mcpi answer 2 --elicit-field name=Ada --session demo\n  mcpi answer 3 --decline --session demo",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return flagErrorf("give one ID (mcpi pending lists them)")
			}
			id, err := strconv.Atoi(strings.TrimPrefix(args[0], "#"))
			if err != nil || id <= 0 {
				return flagErrorf("invalid ID %q: want the number mcpi pending shows", args[0])
			}
			if err := o.validate(); err != nil {
				return err
			}
			given := 0
			for _, b := range []bool{decline, cancel, o.SamplingReply != "", o.Elicit != ""} {
				if b {
					given++
				}
			}
			switch {
			case given == 0:
				return flagErrorf("give the answer: --sampling-reply, --elicit, --elicit-field, --decline or --cancel")
			case given > 1:
				return flagErrorf("give one answer: --sampling-reply, --elicit (with --elicit-field), --decline or --cancel")
			}
			return sessionOnly(cmd, o, args, func(h *heldSession) error {
				return answerParked(cmd.Context(), o, h, id, decline, cancel)
			})
		},
	}
	fl := cmd.Flags()
	end := flagGroup(cmd, groupArgs)
	fl.StringVar(&o.SamplingReply, "sampling-reply", "", "answer a sampling request with this text, or @FILE holding a CreateMessageResult")
	fl.StringVar(&o.Elicit, "elicit", "", "answer an elicitation: accept, decline or cancel")
	fl.StringArrayVar(&o.ElicitFields, "elicit-field", nil, "a field of an accepted elicitation, KEY=VALUE (repeatable)")
	fl.BoolVar(&decline, "decline", false, "decline the request")
	fl.BoolVar(&cancel, "cancel", false, "cancel the request (an elicitation's cancel; sampling: as --decline)")
	end()
	end = flagGroup(cmd, groupOutput)
	fl.BoolVar(&o.JSON, "json", false, "print JSON")
	end()
	addSessionFlag(cmd, o)
	return markSessionOnly(cmd)
}

func answerParked(ctx context.Context, o *ConnOptions, h *heldSession, id int, decline, cancel bool) error {
	p := h.disp.board.get(id)
	if p == nil {
		return flagErrorf("no server request #%d is waiting in session %s (mcpi pending --session %s lists them)", id, h.name, h.name)
	}
	var errOut sync.Mutex
	ch := &cliHandler{o: o, say: func(format string, args ...any) {
		errOut.Lock()
		defer errOut.Unlock()
		fmt.Fprintf(o.IO.ErrOut, format+"\n", args...)
	}}
	o.verbose = func(string, ...any) {}
	var a parkAnswer
	switch {
	case p.Sampling != nil:
		switch {
		case o.Elicit != "":
			return flagErrorf("server request #%d is %s: answer it with --sampling-reply, --decline or --cancel", id, p.Method)
		case decline, cancel:
			a.err = session.ErrRejected
		default:
			a.result, a.err = ch.CreateMessage(ctx, p.Sampling)
			if a.err != nil {
				// @FILE unreadable or not a CreateMessageResult: the
				// request keeps waiting for a good answer.
				return flagErrorf("--sampling-reply: %v", a.err)
			}
		}
	case p.Elicit != nil:
		switch {
		case o.SamplingReply != "":
			return flagErrorf("server request #%d is %s: answer it with --elicit, --elicit-field, --decline or --cancel", id, p.Method)
		case decline:
			a.result = &mcp.ElicitResult{Action: mcp.ElicitDecline}
		case cancel:
			a.result = &mcp.ElicitResult{Action: mcp.ElicitCancel}
		case o.Elicit == mcp.ElicitAccept && p.Elicit.Mode != "url":
			s, err := schema.Compile(p.Elicit.RequestedSchema, schema.AssertFormats())
			if err != nil {
				a.result, a.err = ch.Elicit(ctx, p.Elicit)
				break
			}
			values, err := ch.fieldsFromFlags(s)
			if err != nil {
				return flagErrorf("server request #%d: %v", id, err)
			}
			a.result = &mcp.ElicitResult{Action: mcp.ElicitAccept, Content: values}
		default:
			a.result, a.err = ch.Elicit(ctx, p.Elicit)
		}
	}
	if h.disp.board.take(id) == nil {
		return fmt.Errorf("%w: server request #%d was answered or withdrawn meanwhile", errConnect, id)
	}
	p.answer <- a
	if o.JSON {
		return writeJSON(o.IO, map[string]any{"id": id, "kind": p.Method, "answered": true})
	}
	fmt.Fprintf(o.IO.ErrOut, "Answered server request #%d (%s).\n", id, p.Method)
	return nil
}
