package daemon

import (
	"context"
	"fmt"
	"io"
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
	return j
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
