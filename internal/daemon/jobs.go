package daemon

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"sync"

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

// The jobs budget: the calls kept for mcpi result, and their output.
const (
	maxJobs      = 64
	maxJobOutput = 16 << 20
)

// Jobs are a session's calls run with --no-wait, kept until mcpi result
// fetches them.
type Jobs struct {
	mu     sync.Mutex
	next   int
	byID   map[int]*Job
	budget *bounds.Budget // jobs kept, and the bytes of their output
}

// NewJobs returns an empty table, within the jobs' budget.
func NewJobs() *Jobs {
	return &Jobs{byID: map[int]*Job{}, budget: bounds.NewBudget("jobs (call --no-wait)", maxJobs, maxJobOutput)}
}

// Add numbers j and keeps it, or refuses it past the budget.
func (t *Jobs) Add(j *Job) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.budget.Take(0); err != nil {
		return fmt.Errorf("%w (mcpi result fetches and forgets them)", err)
	}
	t.next++
	j.ID = t.next
	t.byID[j.ID] = j
	return nil
}

func (t *Jobs) Get(id int) *Job {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.byID[id]
}

func (t *Jobs) Remove(j *Job) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.byID[j.ID] == j {
		delete(t.byID, j.ID)
		t.budget.Give(j.Out.Held())
	}
}

// Output keeps what a job writes on stdout and stderr, in order,
// within the jobs' budget; what does not fit is counted and said.
// Output is what a job wrote.
type Output struct {
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

func (c *Output) Writer(stderr bool) io.Writer {
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

func (c *Output) Held() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}

// replay writes what was captured to the command's streams.
func (c *Output) Replay(out, errOut io.Writer) {
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

// Job is a call run with --no-wait.
type Job struct {
	ID   int
	Args []string
	Slot *Slot
	Out  *Output
	// Parked is poked when a request of the call is parked; Done is
	// closed when the call has ended, with Code (its exit code).
	Parked chan struct{}
	Done   chan struct{}
	Code   int
	Cancel context.CancelFunc

	// answered holds the ids of the call's parked requests that were
	// answered: the lines that said they waited are stale.
	answeredMu sync.Mutex
	answered   map[int]bool
}

// NewJob returns the job of the call args, its output held within the
// budget of the session's jobs.
func (t *Jobs) NewJob(args []string) *Job {
	j := &Job{Args: args, Parked: make(chan struct{}, 1), Done: make(chan struct{}), Out: &Output{budget: t.budget}}
	j.Slot = NewSlot(args, func() {
		select {
		case j.Parked <- struct{}{}:
		default:
		}
	})
	j.Slot.onAnswered = func(id int) {
		j.answeredMu.Lock()
		defer j.answeredMu.Unlock()
		if j.answered == nil {
			j.answered = map[int]bool{}
		}
		j.answered[id] = true
	}
	return j
}

// Replay writes the call's output to the command's streams, without the
// lines that said a server request waited for an answer it has had: mcpi
// result after mcpi answer does not ask for the answer again.
func (j *Job) Replay(out, errOut io.Writer) {
	j.answeredMu.Lock()
	answered := maps.Clone(j.answered)
	j.answeredMu.Unlock()
	if len(answered) == 0 {
		j.Out.Replay(out, errOut)
		return
	}
	f := &lineFilter{w: errOut, drop: func(line []byte) bool {
		for id := range answered {
			if bytes.Contains(line, []byte(WaitingLine(id))) {
				return true
			}
		}
		return false
	}}
	j.Out.Replay(out, f)
	f.flush()
}

// lineFilter writes to w the lines drop does not refuse.
type lineFilter struct {
	w    io.Writer
	drop func(line []byte) bool
	part []byte
}

func (f *lineFilter) Write(p []byte) (int, error) {
	f.part = append(f.part, p...)
	for {
		i := bytes.IndexByte(f.part, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := f.part[:i+1]
		if !f.drop(line) {
			if _, err := f.w.Write(line); err != nil {
				return len(p), err
			}
		}
		f.part = f.part[i+1:]
	}
}

// flush writes a last line without its newline.
func (f *lineFilter) flush() {
	if len(f.part) > 0 && !f.drop(f.part) {
		f.w.Write(f.part)
	}
	f.part = nil
}

// Waiting returns the parked requests the job's call waits on: none once
// it has ended (a legacy request of another command, parked while both
// were under way, may still name it).
func (j *Job) Waiting(b *Board) []*Parked {
	select {
	case <-j.Done:
		return nil
	default:
	}
	return b.ParkedFor(j.Slot)
}
