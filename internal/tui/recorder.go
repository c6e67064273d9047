package tui

import (
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/mcpi-dev/mcpi/internal/record"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// recorder is the tap behind the start/stop recording key: while a trace is
// open every event goes to it, as --record would write it (redacted). It
// also knows the trace --record writes for the whole run, so that what the
// status line shows of a recording comes from one place.
type recorder struct {
	mu     sync.Mutex
	w      *record.Writer
	path   string
	flag   string // the trace of --record, written by the command
	target string
	header record.Header // what --record would write; Args from target when empty
	opts   record.Options
}

// Observe implements transport.Tap. The writer is safe for concurrent use
// and drops what comes after its Close, so it is called outside the lock.
func (r *recorder) Observe(e transport.Event) {
	r.mu.Lock()
	w := r.w
	r.mu.Unlock()
	if w != nil {
		w.Observe(e)
	}
}

// active returns the trace being written, or "": the one alt+r started,
// else the one of --record.
func (r *recorder) active() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.path != "" {
		return r.path
	}
	return r.flag
}

// toggle starts a trace in dir (named by the time) or stops the one
// running, and says what it did.
func (r *recorder) toggle(dir string, now time.Time) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.w != nil {
		err := r.w.Close()
		path := r.path
		r.w, r.path = nil, ""
		if err != nil {
			return "", fmt.Errorf("the trace %s is incomplete: %w", path, err)
		}
		return "recording stopped: " + path, nil
	}
	if dir == "" {
		dir = "." // the working directory, said in full below
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	path := filepath.Join(abs, "mcpi-"+now.Format("20060102-150405.000")+".jsonl")
	h := r.header
	if h.Mcpi == "" && len(h.Args) == 0 {
		h.Args = []string{"connect", r.target}
	}
	w, err := record.Create(path, h, r.opts)
	if err != nil {
		return "", err
	}
	r.w, r.path = w, path
	return "recording started in " + abs + " (alt+r stops it)", nil
}

// close stops a running trace.
func (r *recorder) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.w != nil {
		r.w.Close()
		r.w, r.path = nil, ""
	}
}
