package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/bounds"
)

// An agent has one blocking shell: a call in a live session that makes the
// server ask something (sampling, elicitation) would wait for an answer
// the agent can only give from another shell. With --no-wait the call runs
// in the daemon as a job: if the server asks something that the call's
// flags cannot answer, the command returns at once, exit 8, with the
// request in full, the command that answers it and the one that fetches
// the call's outcome (mcpi result); the call goes on in the daemon, its
// output kept within the jobs' budget, under its own clocks.

// ExitWaiting: call --no-wait, or result, returned while the call waits on
// a server request.
const ExitWaiting ExitCode = 8

// The jobs budget: the calls kept for mcpi result, and their output.
const (
	maxJobs      = 64
	maxJobOutput = 16 << 20
)

// job is a call run with --no-wait.
type job struct {
	id   int
	args []string
	slot *cmdSlot
	out  *capturedOutput
	// parked is poked when a request of the call is parked; done is
	// closed when the call has ended, with code.
	parked chan struct{}
	done   chan struct{}
	code   ExitCode
	cancel context.CancelFunc
}

type jobTable struct {
	mu     sync.Mutex
	next   int
	byID   map[int]*job
	budget *bounds.Budget // jobs kept, and the bytes of their output
}

func newJobTable() *jobTable {
	return &jobTable{byID: map[int]*job{}, budget: bounds.NewBudget("jobs (call --no-wait)", maxJobs, maxJobOutput)}
}

func (t *jobTable) add(j *job) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.budget.Take(0); err != nil {
		return fmt.Errorf("%w (mcpi result fetches and forgets them)", err)
	}
	t.next++
	j.id = t.next
	t.byID[j.id] = j
	return nil
}

func (t *jobTable) get(id int) *job {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.byID[id]
}

func (t *jobTable) remove(j *job) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.byID[j.id] == j {
		delete(t.byID, j.id)
		t.budget.Give(j.out.held())
	}
}

// capturedOutput keeps what a job writes on stdout and stderr, in order,
// within the jobs' budget; what does not fit is counted and said.
type capturedOutput struct {
	budget *bounds.Budget
	mu     sync.Mutex
	chunks []chunk
	bytes  int64
	cut    int64
}

type chunk struct {
	stderr bool
	data   []byte
}

func (c *capturedOutput) writer(stderr bool) io.Writer {
	return writerFunc(func(p []byte) (int, error) {
		c.mu.Lock()
		defer c.mu.Unlock()
		// The job is one item of the budget; what it holds grows.
		if c.budget.Grow(int64(len(p))) != nil {
			c.cut += int64(len(p))
			return len(p), nil
		}
		c.bytes += int64(len(p))
		c.chunks = append(c.chunks, chunk{stderr, append([]byte(nil), p...)})
		return len(p), nil
	})
}

func (c *capturedOutput) held() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}

// replay writes what was captured to the command's streams.
func (c *capturedOutput) replay(out, errOut io.Writer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, ch := range c.chunks {
		if ch.stderr {
			errOut.Write(ch.data)
		} else {
			out.Write(ch.data)
		}
	}
	if c.cut > 0 {
		fmt.Fprintf(errOut, "mcpi: %s of the call's output were cut: the jobs of a session keep at most %s\n", bounds.Size(c.cut), bounds.Size(maxJobOutput))
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// stripNoWait returns args without --no-wait, and whether it was there
// (before a "--").
func stripNoWait(args []string) ([]string, bool) {
	out := make([]string, 0, len(args))
	found := false
	for i, a := range args {
		if a == "--" {
			out = append(out, args[i:]...)
			break
		}
		if a == "--no-wait" || a == "--no-wait=true" {
			found = true
			continue
		}
		out = append(out, a)
	}
	return out, found
}

// startJob runs a call given --no-wait as a job of the session, and waits
// for it as mcpi result does.
func (h *heldSession) startJob(rctx context.Context, f *Factory, args []string, cios *IOStreams, asJSON bool) ExitCode {
	j := &job{args: args, parked: make(chan struct{}, 1), done: make(chan struct{}),
		out: &capturedOutput{budget: h.jobs.budget}}
	if err := h.jobs.add(j); err != nil {
		fmt.Fprintf(cios.ErrOut, "mcpi: call --no-wait refused: %v\n", err)
		return ExitUsage
	}
	jios := NewIOStreams(strings.NewReader(""), j.out.writer(false), j.out.writer(true))
	jios.Dir = cios.Dir
	j.slot = &cmdSlot{args: args, onPark: func() {
		select {
		case j.parked <- struct{}{}:
		default:
		}
	}}
	// The call outlives the command that started it: it ends with the
	// session, by its own clocks, or when cancelled before it waits.
	jctx, cancel := context.WithCancel(context.WithoutCancel(rctx))
	j.cancel = cancel
	jctx = context.WithValue(jctx, slotKey{}, j.slot)
	h.disp.add(j.slot)
	go func() {
		defer close(j.done)
		defer h.disp.remove(j.slot)
		defer cancel()
		go func() {
			select {
			case <-h.ended:
				cancel()
			case <-jctx.Done():
			}
		}()
		j.code = run(jctx, &Factory{IO: jios, Executable: f.Executable, RuntimeDir: f.RuntimeDir}, args)
		jios.Flush()
	}()
	return h.awaitJob(rctx, j, cios, asJSON, true)
}

// awaitJob waits for a job to end, or to wait on a server request of its
// own: then it prints the request in full, how to answer it and how to
// fetch the outcome, and returns ExitWaiting. Interrupted before the call
// waits on anything, a call started here is cancelled.
func (h *heldSession) awaitJob(ctx context.Context, j *job, cios *IOStreams, asJSON, started bool) ExitCode {
	for {
		select {
		case <-j.done:
			// Ended: what it printed, whatever is parked meanwhile.
			j.out.replay(cios.Out, cios.ErrOut)
			h.jobs.remove(j)
			return j.code
		default:
		}
		if list := h.jobParked(j); len(list) > 0 {
			h.printWaiting(cios, j, list, asJSON)
			return ExitWaiting
		}
		select {
		case <-j.done:
			j.out.replay(cios.Out, cios.ErrOut)
			h.jobs.remove(j)
			return j.code
		case <-j.parked:
		case <-ctx.Done():
			if started {
				j.cancel()
				<-j.done
				h.jobs.remove(j)
			}
			fmt.Fprintln(cios.ErrOut, "mcpi: interrupted")
			return ExitInterrupted
		}
	}
}

// jobParked returns the parked requests of the job's call.
func (h *heldSession) jobParked(j *job) []*parked {
	var out []*parked
	for _, p := range h.disp.board.list() {
		// Its own, or one of a legacy server that several commands under
		// way, this one among them, may be waiting on.
		if p.owner == j.slot || p.owner == nil && slices.Contains(p.told, j.slot) {
			out = append(out, p)
		}
	}
	return out
}

// waitingJSON is what call --no-wait and result print while the call waits.
type waitingJSON struct {
	Status  string        `json:"status"` // "waiting"
	Job     int           `json:"job"`
	Command string        `json:"command"`
	Pending []pendingJSON `json:"pending"`
	Answer  []string      `json:"answer"`
	Result  string        `json:"result"`
}

func (h *heldSession) printWaiting(cios *IOStreams, j *job, list []*parked, asJSON bool) {
	now := time.Now()
	w := waitingJSON{Status: "waiting", Job: j.id, Command: strings.Join(j.slot.displayArgs(), " "),
		Result: fmt.Sprintf("mcpi result %d --session %s", j.id, h.name)}
	for _, p := range list {
		d := p.describe(now)
		w.Pending = append(w.Pending, d)
		w.Answer = append(w.Answer, answerHint(p, h.name))
	}
	if asJSON {
		writeJSON(cios, w)
		return
	}
	out := cios.Out
	fmt.Fprintf(out, "%s is waiting: the server asks something the call's flags do not answer.\n", sanitize(w.Command, false))
	for i, d := range w.Pending {
		printParkedDetail(out, d)
		fmt.Fprintf(out, "  answer: %s\n", w.Answer[i])
	}
	fmt.Fprintf(out, "then:     %s\n", w.Result)
}

// answerHint is the command that answers a parked request.
func answerHint(p *parked, session string) string {
	base := fmt.Sprintf("mcpi answer %d --session %s", p.ID, session)
	switch {
	case p.Sampling != nil:
		return base + " --sampling-reply TEXT   (or --decline)"
	case p.Elicit != nil && p.Elicit.Mode == "url":
		return base + " --elicit accept   (once the URL is done; or --decline, --cancel)"
	}
	return base + " --elicit-field NAME=VALUE ...   (or --decline, --cancel)"
}

// printParkedDetail prints one parked request in full: its kind, message
// and, for a form, each field with its type, whether it is required, its
// allowed values, default and description.
func printParkedDetail(w io.Writer, d pendingJSON) {
	kind := d.Kind
	if d.Mode == "url" {
		kind += " (url)"
	}
	fmt.Fprintf(w, "#%d %s", d.ID, kind)
	if d.Command != "" {
		fmt.Fprintf(w, " for: %s", sanitize(d.Command, false))
	}
	fmt.Fprintln(w)
	switch {
	case d.URL != "":
		fmt.Fprintf(w, "  open: %s\n  message: %s\n", sanitize(d.URL, false), sanitize(d.Message, true))
	case d.Kind == "sampling/createMessage":
		fmt.Fprintf(w, "  max tokens: %d\n  last message: %s\n", d.MaxTokens, sanitize(bounds.Clip(d.LastText), true))
	default:
		fmt.Fprintf(w, "  message: %s\n", sanitize(d.Message, true))
		for _, f := range d.Fields {
			line := "  field " + sanitize(f.Name, false)
			var attrs []string
			if len(f.Types) > 0 {
				attrs = append(attrs, strings.Join(f.Types, "|"))
			}
			if f.Required {
				attrs = append(attrs, "required")
			}
			if len(f.Enum) > 0 {
				vals := make([]string, len(f.Enum))
				for i, v := range f.Enum {
					b, _ := json.Marshal(v)
					vals[i] = string(b)
				}
				attrs = append(attrs, "one of "+strings.Join(vals, ", "))
			}
			if f.Default != nil {
				b, _ := json.Marshal(f.Default)
				attrs = append(attrs, "default "+string(b))
			}
			if len(attrs) > 0 {
				line += " (" + sanitize(strings.Join(attrs, "; "), false) + ")"
			}
			if f.Title != "" {
				line += " " + sanitize(f.Title, false)
			}
			if f.Description != "" {
				line += ": " + sanitize(bounds.Clip(f.Description), false)
			}
			fmt.Fprintln(w, line)
		}
	}
}

// NewCmdResult returns `mcpi result JOB`.
func NewCmdResult(f *Factory) *cobra.Command {
	o := &ConnOptions{IO: f.IO, Args: f.Args}
	cmd := &cobra.Command{
		Use:   "result JOB --session NAME",
		Short: "Wait for a call started with --no-wait and print its outcome",
		Long: `Wait for a call started with mcpi call --no-wait in a live session and
print its outcome, with its exit code, as the call would have: once it ends,
its output is printed and the job is forgotten. While it waits on another
server request of its own, result returns at once, exit 8, with that request
and how to answer it, as call --no-wait did.`,
		Example: "  mcpi call confirm --no-wait --session demo\n  mcpi answer 1 --elicit-field ok=true --session demo\n  mcpi result 1 --session demo",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var id int
			if _, err := fmt.Sscanf(args[0], "%d", &id); err != nil || id <= 0 {
				return flagErrorf("give a job number, as call --no-wait printed it")
			}
			return sessionOnly(cmd, o, args, func(h *heldSession) error {
				j := h.jobs.get(id)
				if j == nil {
					return flagErrorf("session %s has no job %d (a job is forgotten once its result was printed)", h.name, id)
				}
				code := h.awaitJob(cmd.Context(), j, o.IO, o.JSON, false)
				// What was printed is the call's, or the waiting document:
				// no error document follows it.
				o.IO.jsonWritten.Store(true)
				if code != ExitOK {
					return errSilent{code: code, kind: jobKind(code), what: fmt.Sprintf("job %d ended with exit %d", id, code)}
				}
				return nil
			})
		},
	}
	end := flagGroup(cmd, groupOutput)
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON while the call waits (its own output is as the call printed it)")
	end()
	addSessionFlag(cmd, o)
	return markSessionOnly(cmd)
}

func jobKind(code ExitCode) string {
	if code == ExitWaiting {
		return KindServerRequest
	}
	return ""
}

// displayArgs is the slot's command line for a person, without --session.
func (s *cmdSlot) displayArgs() []string { return strings.Fields(s.command()) }
