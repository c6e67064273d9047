package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/mcpi-dev/mcpi/internal/intercept"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// StdioOptions say what to run and where the host is.
type StdioOptions struct {
	Command []string
	Env     []string
	Dir     string
	// Stdin, Stdout and Stderr are the host's side (mcpi's own streams).
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Tap            transport.Tap
	// Faults, when set, judges each frame (internal/intercept); Gate,
	// when set, holds the frames its breakpoints match (RunStdio binds
	// it). Without either, every byte is forwarded unchanged as it comes.
	Faults *intercept.Engine
	Gate   *intercept.Gate
	// Serve, instead of Command, is a server of this process: it reads
	// the frames sent to it from in and writes its own to out, until in
	// ends or ctx is done (mcpi replay --serve --faults).
	Serve func(ctx context.Context, in io.Reader, out io.Writer) error
}

// maxRecordedLine bounds a line kept whole for the tap; the bytes are
// forwarded whatever their length.
const maxRecordedLine = 1 << 30

// RunStdio runs the server and relays its stdio until it exits, and
// returns its exit status. Nothing of mcpi's own is written to Stdout.
// When ctx is done the server gets SIGTERM, then SIGKILL.
func RunStdio(ctx context.Context, o StdioOptions) (int, error) {
	if len(o.Command) == 0 && o.Serve == nil {
		return -1, errors.New("no server command")
	}
	emit := func(e transport.Event) {
		if o.Tap != nil {
			if e.Time.IsZero() {
				e.Time = time.Now()
			}
			o.Tap.Observe(e)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var srv *server
	var err error
	if o.Serve != nil {
		srv = serveHere(ctx, o.Serve)
	} else if srv, err = spawn(o); err != nil {
		return -1, err
	}
	stdin, stdout, stderr := srv.stdin, srv.stdout, srv.stderr
	emit(transport.Event{Kind: transport.KindLifecycle, Text: srv.started})
	toServer, toHost := relay, relay
	if o.Faults != nil || o.Gate != nil {
		// Frames are judged: each direction is written line by line by
		// its outlet, which answers in the peer's place go through too.
		up, down := &outlet{ctx: ctx, w: stdin}, &outlet{ctx: ctx, w: o.Stdout}
		closing := func() {
			emit(transport.Event{Kind: transport.KindLifecycle, Text: "proxy closed the connection (a fault)"})
			up.close()
			down.close()
			stdin.Close()
			cancel()
		}
		j := &judges{gate: o.Gate, eng: o.Faults, strays: newStrays(emit)}
		if o.Gate != nil {
			o.Gate.Bind(func(dir transport.Direction, d intercept.Delivery) {
				if dir == transport.Outgoing {
					j.deliver(d, up, down, dir, closing)
				} else {
					j.deliver(d, down, up, dir, closing)
				}
			})
			defer o.Gate.Close()
		}
		toServer = func(src io.Reader, _ io.Writer, sp *splitter) {
			judgedRelay(src, up, down, transport.Outgoing, emit, j, closing)
		}
		toHost = func(src io.Reader, _ io.Writer, sp *splitter) {
			judgedRelay(src, down, up, transport.Incoming, emit, j, closing)
		}
	}

	// Host -> server. Stdin is not closed by the copy ending early: the
	// goroutine may stay blocked on the host's read after the server is
	// gone, which is harmless for a process that is about to exit.
	go func() {
		toServer(o.Stdin, stdin, newSplitter(transport.Outgoing, emit))
		stdin.Close()
		emit(transport.Event{Kind: transport.KindLifecycle, Text: "host closed its side (stdin)"})
	}()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		toHost(stdout, o.Stdout, newSplitter(transport.Incoming, emit))
	}()
	go func() {
		defer wg.Done()
		relayStderr(stderr, o.Stderr, emit)
	}()
	stop := context.AfterFunc(ctx, srv.stop)
	defer stop()
	wg.Wait() // the pipes must be drained before Wait closes them
	code, err := srv.wait()
	emit(transport.Event{Kind: transport.KindLifecycle, Text: fmt.Sprintf("server exited with status %d", code)})
	return code, err
}

// server is the proxied server: a process, or a server of this one.
type server struct {
	stdin          io.WriteCloser
	stdout, stderr io.Reader
	started        string
	stop           func()
	wait           func() (int, error)
}

// spawn starts the server command.
func spawn(o StdioOptions) (*server, error) {
	cmd := exec.Command(o.Command[0], o.Command[1:]...)
	cmd.Dir = o.Dir
	if len(o.Env) > 0 {
		cmd.Env = append(os.Environ(), o.Env...)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", o.Command[0], err)
	}
	return &server{stdin: stdin, stdout: stdout, stderr: stderr,
		started: fmt.Sprintf("proxy spawned pid %d", cmd.Process.Pid),
		stop: func() {
			cmd.Process.Signal(syscall.SIGTERM)
			time.AfterFunc(3*time.Second, func() { cmd.Process.Kill() })
		},
		wait: func() (int, error) {
			err := cmd.Wait()
			var ee *exec.ExitError
			if err != nil && !errors.As(err, &ee) {
				return cmd.ProcessState.ExitCode(), err
			}
			return cmd.ProcessState.ExitCode(), nil
		}}, nil
}

// serveHere runs serve on pipes: its status is 0 when it returns nil,
// 1 when it fails.
func serveHere(ctx context.Context, serve func(context.Context, io.Reader, io.Writer) error) *server {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := serve(ctx, inR, outW)
		outW.Close()
		inR.Close()
		done <- err
	}()
	return &server{stdin: inW, stdout: outR, stderr: strings.NewReader(""), started: "proxy serves the server itself",
		stop: func() { inR.CloseWithError(context.Canceled) },
		wait: func() (int, error) {
			if err := <-done; err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, io.ErrClosedPipe) {
				return 1, err
			}
			return 0, nil
		}}
}

// relay copies src to dst as it arrives, and hands the same bytes to the
// splitter for the tap just before.
func relay(src io.Reader, dst io.Writer, sp *splitter) {
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			// Record first: the answer to a frame must not reach the tap
			// before the frame itself.
			sp.write(buf[:n])
			if _, werr := dst.Write(buf[:n]); werr != nil {
				sp.flush()
				return
			}
		}
		if err != nil {
			sp.flush()
			return
		}
	}
}

func relayStderr(src io.Reader, dst io.Writer, emit func(transport.Event)) {
	sp := &splitter{emitLine: func(line []byte) {
		emit(transport.Event{Kind: transport.KindStderr, Dir: transport.Incoming, Data: line})
	}}
	relay(src, dst, sp)
}

// splitter cuts a byte stream into lines for the tap.
type splitter struct {
	buf      []byte
	over     int // bytes of the current line past maxRecordedLine
	emitLine func([]byte)
}

func newSplitter(dir transport.Direction, emit func(transport.Event)) *splitter {
	return &splitter{emitLine: func(line []byte) {
		line = bytes.TrimRight(line, "\r")
		if len(bytes.TrimSpace(line)) == 0 {
			return
		}
		if err := frameError(line); err != nil {
			emit(transport.Event{Kind: transport.KindBadFrame, Dir: dir, Data: line, Err: err.Error()})
			return
		}
		emit(transport.Event{Kind: transport.KindFrame, Dir: dir, Data: line})
	}}
}

func (s *splitter) write(p []byte) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			s.add(p)
			return
		}
		s.add(p[:i])
		s.line()
		p = p[i+1:]
	}
}

func (s *splitter) add(p []byte) {
	if len(s.buf)+len(p) > maxRecordedLine {
		s.over += len(p)
		return
	}
	s.buf = append(s.buf, p...)
}

func (s *splitter) line() {
	line := s.buf
	if s.over > 0 {
		line = append(line[:min(len(line), 4096):min(len(line), 4096)], fmt.Sprintf("… (%d bytes not recorded)", len(s.buf)+s.over-4096)...)
	}
	s.emitLine(line)
	s.buf, s.over = nil, 0
}

func (s *splitter) flush() {
	if len(s.buf) > 0 {
		s.line()
	}
}

func frameError(line []byte) error {
	if !utf8.Valid(line) {
		return errors.New("not valid UTF-8")
	}
	if !json.Valid(line) {
		return errors.New("not JSON")
	}
	return nil
}
