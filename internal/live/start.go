package live

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
)

// Session start and its daemon speak once, before the socket exists: start
// writes a StartConfig on the daemon's standard input (never in its argv,
// which every user can read) and reads its reports on a pipe (file 3 of
// the daemon; file 4 is the name's lock): the daemon's stderr while it
// connects, then whether it is ready or why it failed.

// StartConfig is what session start tells the daemon.
type StartConfig struct {
	Args []string `json:"args"` // session start's arguments
	Name string   `json:"name"`
	Dir  string   `json:"dir"`
}

// startReport is one line from the daemon to session start.
type startReport struct {
	Err     []byte `json:"err,omitempty"`
	Ready   bool   `json:"ready,omitempty"`
	Fail    int    `json:"fail,omitempty"`
	Message string `json:"message,omitempty"`
}

// StartFailed is a daemon's failure to start, with the exit code and the
// message it gave; its session's files are removed.
type StartFailed struct {
	Code    int
	Message string
}

func (e *StartFailed) Error() string { return e.Message }

// ErrEndedEarly says the daemon ended before it said how connecting went.
var ErrEndedEarly = errors.New("the session's daemon ended before it connected")

// SpawnError is a daemon that could not be run.
type SpawnError struct{ Err error }

func (e *SpawnError) Error() string { return "starting the session's daemon: " + e.Err.Error() }
func (e *SpawnError) Unwrap() error { return e.Err }

// Spawn starts exe's `session daemon` for cfg, detached, its output going
// to the session's log, holding a copy of lock: it reads cfg on stdin and
// reports on the pipe returned.
func Spawn(exe string, cfg StartConfig, lock *os.File) (*exec.Cmd, *os.File, error) {
	b, _ := json.Marshal(cfg)
	logf, err := os.OpenFile(LogPath(cfg.Dir, cfg.Name), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, nil, err
	}
	defer logf.Close()
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	defer pw.Close()
	cmd := exec.Command(exe, "session", "daemon")
	cmd.Stdin = bytes.NewReader(b)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.ExtraFiles = []*os.File{pw, lock}
	Detach(cmd)
	if err := cmd.Start(); err != nil {
		pr.Close()
		return nil, nil, &SpawnError{err}
	}
	return cmd, pr, nil
}

// Await relays what the daemon cmd reports on pr until it says how
// connecting went: its stderr to errOut meanwhile, then nil when it is
// ready, a *StartFailed, or ErrEndedEarly; interrupted, it kills the
// daemon. A session that did not start leaves no file.
func Await(ctx context.Context, cmd *exec.Cmd, pr *os.File, dir, name string, errOut io.Writer) error {
	waited := make(chan struct{})
	go func() { cmd.Wait(); close(waited) }()
	reports := make(chan startReport)
	go func() {
		defer close(reports)
		sc := bufio.NewScanner(pr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var r startReport
			if json.Unmarshal(sc.Bytes(), &r) == nil {
				reports <- r
			}
		}
	}()
	for {
		select {
		case r, ok := <-reports:
			switch {
			case !ok:
				return fmt.Errorf("%w (see %s)", ErrEndedEarly, LogPath(dir, name))
			case len(r.Err) > 0:
				errOut.Write(r.Err)
			case r.Ready:
				return nil
			case r.Fail != 0:
				<-waited
				Remove(dir, name)
				return &StartFailed{Code: r.Fail, Message: r.Message}
			}
		case <-ctx.Done():
			cmd.Process.Kill()
			<-waited
			Remove(dir, name)
			return ctx.Err()
		}
	}
}

// Reporter is the daemon's side of the start: what it writes goes to
// session start while it connects, and to its log once it is Ready.
// Write may be called concurrently.
type Reporter struct {
	mu     sync.Mutex
	f      *os.File
	enc    *json.Encoder
	log    io.Writer
	closed bool
}

// NewReporter reports on f, the pipe session start gave.
func NewReporter(f *os.File) *Reporter { return &Reporter{f: f, enc: json.NewEncoder(f)} }

func (r *Reporter) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.log != nil {
		return r.log.Write(p)
	}
	if err := r.enc.Encode(startReport{Err: p}); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Ready tells session start the session is up; what is written from now
// on goes to log.
func (r *Reporter) Ready(log io.Writer) { r.end(startReport{Ready: true}, log) }

// Fail tells session start the session could not start, with the exit
// code and message start is to give.
func (r *Reporter) Fail(code int, message string) {
	r.end(startReport{Fail: code, Message: message}, io.Discard)
}

func (r *Reporter) end(last startReport, log io.Writer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	r.enc.Encode(last)
	r.f.Close()
	r.closed = true
	r.log = log
}
