package live

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// RunFunc runs one command for a client, writing its output to stdout and
// stderr, and returns its exit code. It is called concurrently.
type RunFunc func(ctx context.Context, req *Request, stdout, stderr io.Writer) int

// Server is a session daemon's side of the socket. Make it with NewServer.
type Server struct {
	Run RunFunc
	// Status describes the session (counters are filled in by the Server).
	Status func() Status
	// Attach serves an attached connection (OpAttach) until it ends; nil
	// refuses them. An attached client counts as a command under way, so
	// the idle timeout does not end a session someone watches.
	Attach func(ctx context.Context, c *Conn)
	// Idle ends Serve when no command came for that long (0: never).
	Idle time.Duration
	// OnEnd is called when Serve stops accepting, with why (as Serve
	// returns it), before the socket goes: whoever finds the socket gone
	// finds what OnEnd recorded.
	OnEnd func(why error)
	// Failed reports whether a command that exited with code failed, for
	// the count the status shows (nil: every code but 0). A command that
	// returned while its work goes on (call --no-wait) did not fail.
	Failed func(code int) bool

	commands, active, failed atomic.Int64
	lastUsed                 atomic.Int64 // unix nanoseconds
	stop                     chan struct{}
	stopOnce                 sync.Once
}

// Why Serve returned.
var (
	ErrStopped = errors.New("stopped by mcpi session stop")
	ErrIdle    = errors.New("idle timeout")
)

// NewServer returns a Server that runs commands with run.
func NewServer(run RunFunc, status func() Status, idle time.Duration) *Server {
	return &Server{Run: run, Status: status, Idle: idle, stop: make(chan struct{})}
}

// Stop makes Serve return ErrStopped. It may be called more than once.
func (s *Server) Stop() { s.stopOnce.Do(func() { close(s.stop) }) }

// Counters returns the number of commands run, running and failed.
func (s *Server) Counters() (commands, active, failed int64, lastUsed time.Time) {
	return s.commands.Load(), s.active.Load(), s.failed.Load(), time.Unix(0, s.lastUsed.Load())
}

// Serve accepts connections until ctx ends, Stop is called, the idle
// timeout passes, or done is closed (the session ended); then it closes
// the listener and waits for the commands under way (they end promptly
// once the session has ended or ctx is cancelled).
func (s *Server) Serve(ctx context.Context, ln net.Listener, done <-chan struct{}) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.lastUsed.Store(time.Now().UnixNano())
	var wg sync.WaitGroup
	// Each connection is served on a goroutine of its own, started by the
	// accepting one: no hand-over on the way of a command.
	accepted := make(chan struct{})
	go func() {
		defer close(accepted)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.serveConn(ctx, c)
			}()
		}
	}()
	var tick <-chan time.Time
	if s.Idle > 0 {
		t := time.NewTicker(min(s.Idle/4, time.Minute))
		defer t.Stop()
		tick = t.C
	}
	var why error
loop:
	for {
		select {
		case <-accepted:
			why = errors.New("the listener closed")
			break loop
		case <-tick:
			if s.active.Load() == 0 && time.Since(time.Unix(0, s.lastUsed.Load())) >= s.Idle {
				why = ErrIdle
				break loop
			}
		case <-s.stop:
			why = ErrStopped
			break loop
		case <-done:
			why = nil
			break loop
		case <-ctx.Done():
			why = ctx.Err()
			break loop
		}
	}
	if s.OnEnd != nil {
		s.OnEnd(why)
	}
	ln.Close()
	<-accepted
	if why != nil {
		// Stopped: commands under way are cancelled. Ended: they fail on
		// their own with the session's error, which they must still tell.
		cancel()
	}
	waited := make(chan struct{})
	go func() { wg.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(5 * time.Second):
	}
	return why
}

func (s *Server) serveConn(ctx context.Context, nc net.Conn) {
	defer nc.Close()
	if err := checkPeer(nc); err != nil {
		return
	}
	c := newConn(nc)
	var req Request
	if err := c.Recv(&req); err != nil {
		return
	}
	switch req.Op {
	case OpStatus:
		st := s.status()
		c.Send(Frame{Status: &st})
	case OpStop:
		st := s.status()
		c.Send(Frame{Status: &st})
		s.Stop()
	case OpRun:
		if err := s.checkProto(&req); err != nil {
			code := 3
			c.Send(Frame{Err: []byte("mcpi: " + err.Error() + "\n"), Exit: &code})
			return
		}
		s.run(ctx, c, &req)
	case OpAttach:
		if err := s.checkProto(&req); err != nil {
			c.Send(Frame{Error: err.Error()})
			return
		}
		if s.Attach == nil {
			c.Send(Frame{Error: "this session cannot be attached to"})
			return
		}
		s.active.Add(1)
		s.Attach(ctx, c)
		s.lastUsed.Store(time.Now().UnixNano())
		s.active.Add(-1)
	default:
		c.Send(Frame{Error: "unknown operation " + req.Op})
	}
}

// checkProto refuses a request of another socket protocol.
func (s *Server) checkProto(req *Request) error {
	if req.Proto == ProtocolVersion() {
		return nil
	}
	theirs := req.Proto
	if theirs == 0 {
		theirs = 1
	}
	return &MismatchError{Name: s.status().Name, Daemon: ProtocolVersion(), Client: theirs}
}

func (s *Server) status() Status {
	var st Status
	if s.Status != nil {
		st = s.Status()
	}
	st.Proto, st.Build = ProtocolVersion(), Build()
	st.Commands, st.Active, st.Failed, st.LastUsed = s.Counters()
	return st
}

func (s *Server) run(ctx context.Context, c *Conn, req *Request) {
	s.commands.Add(1)
	s.active.Add(1)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Whatever comes next on the connection (a cancel, or its end: the
	// command is gone) cancels the command.
	go func() {
		var next Request
		c.Recv(&next)
		cancel()
	}()
	out := &frameBatch{c: c}
	if w := buildWarning(s.status().Name, req.Build, Build()); w != "" {
		out.write(true, []byte(w))
	}
	code := s.Run(ctx, req, frameWriter{out, false}, frameWriter{out, true})
	out.Flush()
	if failed := s.Failed; failed == nil && code != 0 || failed != nil && failed(code) {
		s.failed.Add(1)
	}
	// Counted out before the command learns it ended, so that what it
	// asks next sees it ended.
	s.lastUsed.Store(time.Now().UnixNano())
	s.active.Add(-1)
	c.Send(Frame{Exit: &code})
}

// frameBatch sends what a command writes on stdout and stderr as frames:
// the writes of a moment go together (a command's output is many small
// writes, and a frame each would cost a system call each), at most
// flushDelay after the first, at once past frameMax bytes or when the
// other stream is written (so the two keep their order), and at the end
// of the command. A failed send (the command's caller is gone) fails the
// next write.
type frameBatch struct {
	c *Conn

	mu    sync.Mutex
	buf   []byte
	isErr bool // which stream buf holds
	timer *time.Timer
	err   error
}

const (
	flushDelay = 10 * time.Millisecond
	frameMax   = 32 << 10
)

// frameWriter is one stream of a frameBatch.
type frameWriter struct {
	b     *frameBatch
	isErr bool
}

func (w frameWriter) Write(p []byte) (int, error) { return w.b.write(w.isErr, p) }

func (b *frameBatch) write(isErr bool, p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.buf) > 0 && b.isErr != isErr {
		b.flushLocked()
	}
	if b.err != nil {
		return 0, b.err
	}
	b.isErr = isErr
	b.buf = append(b.buf, p...)
	if len(b.buf) >= frameMax {
		if err := b.flushLocked(); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	if b.timer == nil {
		b.timer = time.AfterFunc(flushDelay, func() { b.Flush() })
	}
	return len(p), nil
}

// Flush sends what is buffered.
func (b *frameBatch) Flush() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.flushLocked()
}

func (b *frameBatch) flushLocked() error {
	if b.timer != nil {
		b.timer.Stop()
		b.timer = nil
	}
	if len(b.buf) == 0 || b.err != nil {
		return b.err
	}
	f := Frame{Out: b.buf}
	if b.isErr {
		f = Frame{Err: b.buf}
	}
	b.buf = nil
	b.err = b.c.Send(f)
	return b.err
}
