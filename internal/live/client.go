package live

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
)

// Ask sends a status or stop request and returns the session's status.
func Ask(dir, name, op string) (*Status, error) {
	c, err := Dial(dir, name)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	c.c.SetDeadline(time.Now().Add(askTimeout))
	if err := c.Send(Request{Op: op}); err != nil {
		return nil, err
	}
	var f Frame
	if err := c.Recv(&f); err != nil {
		return nil, fmt.Errorf("the session's daemon did not answer: %w", err)
	}
	if f.Status == nil {
		return nil, fmt.Errorf("the session's daemon answered no status: %s", f.Error)
	}
	return f.Status, nil
}

// askTimeout bounds a status or stop request: a daemon answers at once.
const askTimeout = 5 * time.Second

// ErrLostDaemon says the daemon went away while it ran a command.
var ErrLostDaemon = errors.New("the session's daemon went away")

// cancelGrace is how long a cancelled command waits for the daemon to
// report how the command ended.
const cancelGrace = 3 * time.Second

// Run sends a command to the session's daemon, copies what it writes to
// stdout and stderr, and returns its exit code. When ctx ends the command
// is cancelled in the daemon, and Run waits a little for its last words.
func Run(ctx context.Context, dir, name string, req *Request, stdout, stderr io.Writer) (int, error) {
	req.Op = OpRun
	c, err := Dial(dir, name)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	if err := c.Send(req); err != nil {
		return 0, err
	}
	frames := make(chan Frame)
	failed := make(chan error, 1)
	quit := make(chan struct{})
	defer close(quit)
	go func() {
		for {
			var f Frame
			if err := c.Recv(&f); err != nil {
				failed <- err
				return
			}
			select {
			case frames <- f:
			case <-quit:
				return
			}
			if f.Exit != nil {
				return
			}
		}
	}()
	var grace <-chan time.Time
	done := ctx.Done()
	for {
		select {
		case f := <-frames:
			if len(f.Out) > 0 {
				if _, err := stdout.Write(f.Out); err != nil {
					return 0, err
				}
			}
			if len(f.Err) > 0 {
				stderr.Write(f.Err)
			}
			if f.Exit != nil {
				return *f.Exit, nil
			}
		case err := <-failed:
			return 0, fmt.Errorf("%w: %v", ErrLostDaemon, err)
		case <-done:
			done = nil
			c.Send(Request{Op: OpCancel})
			grace = time.After(cancelGrace)
		case <-grace:
			return 0, ctx.Err()
		}
	}
}

// Attach connects to the named session's daemon as an attached client
// (OpAttach) and returns the connection and the Attached frame's payload.
func Attach(dir, name string) (*Conn, json.RawMessage, error) {
	c, err := Dial(dir, name)
	if err != nil {
		return nil, nil, err
	}
	c.c.SetDeadline(time.Now().Add(askTimeout))
	if err := c.Send(Request{Op: OpAttach}); err != nil {
		c.Close()
		return nil, nil, err
	}
	var f Frame
	if err := c.Recv(&f); err != nil {
		c.Close()
		return nil, nil, fmt.Errorf("the session's daemon did not answer: %w", err)
	}
	if f.Attached == nil {
		c.Close()
		return nil, nil, fmt.Errorf("the session's daemon refused: %s", f.Error)
	}
	c.c.SetDeadline(time.Time{})
	return c, f.Attached, nil
}
