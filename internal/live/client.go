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
	// Status and stop are answered whatever the protocol: they are the way
	// out of a mismatch.
	if err := c.Send(Request{Op: op, Proto: ProtocolVersion(), Build: Build()}); err != nil {
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
// The frames are read on the caller's goroutine: a command's output costs
// no hand-over between goroutines.
func Run(ctx context.Context, dir, name string, req *Request, stdout, stderr io.Writer) (int, error) {
	req.Op, req.Proto, req.Build = OpRun, ProtocolVersion(), Build()
	if err := checkDaemon(dir, name); err != nil {
		return 0, err
	}
	c, err := Dial(dir, name)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	if err := c.Send(req); err != nil {
		return 0, err
	}
	stop := context.AfterFunc(ctx, func() {
		c.Send(Request{Op: OpCancel})
		c.SetDeadline(time.Now().Add(cancelGrace))
	})
	defer stop()
	for {
		var f Frame
		if err := c.Recv(&f); err != nil {
			if ctx.Err() != nil {
				return 0, ctx.Err()
			}
			return 0, fmt.Errorf("%w: %v", ErrLostDaemon, err)
		}
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
	}
}

// Attach connects to the named session's daemon as an attached client
// (OpAttach) and returns the connection and the Attached frame's payload.
func Attach(dir, name string) (*Conn, json.RawMessage, error) {
	if err := checkDaemon(dir, name); err != nil {
		return nil, nil, err
	}
	c, err := Dial(dir, name)
	if err != nil {
		return nil, nil, err
	}
	c.c.SetDeadline(time.Now().Add(askTimeout))
	if err := c.Send(Request{Op: OpAttach, Proto: ProtocolVersion(), Build: Build()}); err != nil {
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

// checkDaemon refuses, before anything is sent, a running session whose
// record says its daemon speaks another protocol: a daemon of before the
// version would run the command with its own command tree.
func checkDaemon(dir, name string) error {
	rec, err := ReadRecord(dir, name)
	if err != nil || !rec.Live() {
		return nil // none, or ended: dialling says what there is to say
	}
	return CheckRecord(name, rec)
}
