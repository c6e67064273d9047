package transport

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/mcpi-dev/mcpi/internal/bounds"
)

// StdioOptions says how to spawn a stdio server.
type StdioOptions struct {
	Command string
	Args    []string
	// Env is added to the current environment ("KEY=VALUE" entries; later
	// entries win).
	Env []string
	// Dir is the working directory; empty means the current one.
	Dir string
	Tap Tap
	// StderrTail is how many stderr lines to keep for error messages (default 20).
	StderrTail int
	// MaxFrameBytes bounds one stdout line (default 1 GiB). A longer line is
	// reported as a bad frame and skipped; the connection goes on.
	MaxFrameBytes int
	// ShutdownGrace is how long Close waits after closing stdin, and again
	// after SIGTERM, before escalating (default 2s).
	ShutdownGrace time.Duration
}

// Stdio is a connection to a server process that speaks newline-delimited
// JSON on its stdin and stdout.
type Stdio struct {
	tapper
	opts  StdioOptions
	cmd   *exec.Cmd
	stdin *os.File

	frames chan Frame

	// The writes (see stdio_write.go): wbusy says a sender, or a goroutine
	// finishing a write, holds the pipe; wqueue the frames waiting for it;
	// wbuf the holder's buffer. stdinRaw writes without waiting, nil where
	// stdin cannot.
	wmu      sync.Mutex
	wbusy    bool
	wqueue   []*writeReq
	wbuf     []byte
	stdinRaw syscall.RawConn
	wbatches atomic.Int64 // batches written, each in one write (tests)

	reaped  chan struct{} // closed once the process has been waited for
	exited  chan struct{} // closed once, besides, its output has been drained
	exitErr *ServerExitError

	stdoutDone chan struct{} // closed when the stdout reader returns
	stderrDone chan struct{}
	stdout     *os.File
	stderr     *os.File

	mu     sync.Mutex
	tail   []string // last stderr lines
	closed chan struct{}
	once   sync.Once
}

// maxStderrLine bounds one stderr line as kept and reported. A longer one
// is kept cut to half of what one line of a message shows (bounds.MaxLine),
// its end saying how much of the line was dropped: cut shorter than any
// later cut of the message that quotes it would make it (the rest of the
// line is room for the message's own words), that count is the one a
// person reads.
const (
	maxStderrLine = 64 << 10
	keepLongLine  = bounds.MaxLine / 2
)

// Spawn starts the server process and returns a connection to it.
func Spawn(opts StdioOptions) (*Stdio, error) {
	if opts.Command == "" {
		return nil, errors.New("no command to run")
	}
	if opts.StderrTail <= 0 {
		// A Node stack trace is a dozen lines under the line that says
		// why, and its version banner after it.
		opts.StderrTail = 40
	}
	if opts.MaxFrameBytes <= 0 {
		opts.MaxFrameBytes = 1 << 30
	}
	if opts.ShutdownGrace <= 0 {
		opts.ShutdownGrace = 2 * time.Second
	}
	cmd := exec.Command(opts.Command, opts.Args...)
	cmd.Dir = opts.Dir
	if len(opts.Env) > 0 {
		cmd.Env = append(os.Environ(), opts.Env...)
	}
	cmd.SysProcAttr = newProcAttr()
	adoptOrphans()

	// Plain pipes rather than cmd.StdoutPipe: Wait then does not close our
	// read ends, so the exit can be observed while output is still drained.
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	if err := cmd.Start(); err != nil {
		for _, f := range []*os.File{inR, inW, outR, outW, errR, errW} {
			f.Close()
		}
		return nil, fmt.Errorf("starting %s: %w", opts.Command, err)
	}
	inR.Close()
	outW.Close()
	errW.Close()

	s := &Stdio{
		tapper:     tapper{opts.Tap},
		opts:       opts,
		cmd:        cmd,
		stdin:      inW,
		stdout:     outR,
		stderr:     errR,
		frames:     make(chan Frame, 64),
		reaped:     make(chan struct{}),
		exited:     make(chan struct{}),
		stdoutDone: make(chan struct{}),
		stderrDone: make(chan struct{}),
		closed:     make(chan struct{}),
		stdinRaw:   nonBlocking(inW),
	}
	s.emit(Event{Kind: KindLifecycle, Text: fmt.Sprintf("spawned pid %d: %s", cmd.Process.Pid, commandLine(opts.Command, opts.Args))})
	go s.readStdout()
	go s.readStderr()
	go s.wait()
	return s, nil
}

func commandLine(cmd string, args []string) string {
	parts := append([]string{cmd}, args...)
	for i, p := range parts {
		if p == "" || strings.ContainsAny(p, " \t\"'\\$") {
			parts[i] = fmt.Sprintf("%q", p)
		}
	}
	return strings.Join(parts, " ")
}

// Pid returns the server's process id.
func (s *Stdio) Pid() int { return s.cmd.Process.Pid }

func (s *Stdio) readStdout() {
	defer close(s.stdoutDone)
	defer close(s.frames)
	r := bufio.NewReaderSize(drainReader{s.stdout, s.reaped}, 256<<10)
	for {
		line, tooLong, err := readLine(r, s.opts.MaxFrameBytes, 4096)
		if tooLong > 0 {
			e := fmt.Errorf("line of %d bytes exceeds the %d-byte frame limit; skipped", tooLong, s.opts.MaxFrameBytes)
			s.deliver(Frame{Data: line, Err: e})
		} else if len(line) > 0 {
			cut := line[len(line)-1] != '\n' // the stream ended inside it
			line = TrimEOL(line)
			if !IsBlank(line) {
				ferr := checkFrame(line)
				if ferr != nil && cut {
					ferr = fmt.Errorf("%w (%v)", ErrCutFrame, ferr)
				}
				s.deliver(Frame{Data: line, Err: ferr})
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrClosed) && !errors.Is(err, os.ErrDeadlineExceeded) {
				s.emit(Event{Kind: KindLifecycle, Text: "stdout read failed", Err: err.Error()})
			}
			return
		}
	}
}

func (s *Stdio) deliver(f Frame) {
	if f.Err != nil {
		s.emit(Event{Kind: KindBadFrame, Dir: Incoming, Data: f.Data, Err: f.Err.Error()})
	} else {
		s.emit(Event{Kind: KindFrame, Dir: Incoming, Data: f.Data})
	}
	select {
	case s.frames <- f:
		return
	default:
	}
	select {
	case s.frames <- f:
	case <-s.closed:
	}
}

// readLine reads up to and including the next newline, however long. A line
// longer than max is not kept whole: readLine returns its first keep bytes,
// skips the rest and reports the line's full length in tooLong.
func readLine(r *bufio.Reader, max, keep int) (line []byte, tooLong int, err error) {
	chunk, err := r.ReadSlice('\n')
	total := len(chunk)
	if err != bufio.ErrBufferFull && total <= max {
		return append([]byte(nil), chunk...), 0, err
	}
	// A line longer than the reader's buffer comes in pieces. They are kept
	// apart and joined once, at the end: appending them to one slice would
	// copy a 50 MB line over and over, as append grows a large slice by a
	// quarter at a time.
	over := total > max
	var pieces [][]byte
	if over {
		pieces = [][]byte{append([]byte(nil), chunk[:min(len(chunk), keep)]...)}
	} else {
		pieces = [][]byte{append([]byte(nil), chunk...)}
	}
	for err == bufio.ErrBufferFull {
		chunk, err = r.ReadSlice('\n')
		total += len(chunk)
		switch {
		case over:
		case total > max:
			over = true
			pieces = [][]byte{join(pieces, keep)}
		default:
			pieces = append(pieces, append([]byte(nil), chunk...))
		}
	}
	buf := join(pieces, total)
	if over {
		return buf, total, err
	}
	return buf, 0, err
}

// join returns the first limit bytes of the pieces, in one new slice.
func join(pieces [][]byte, limit int) []byte {
	n := 0
	for _, p := range pieces {
		n += len(p)
	}
	buf := make([]byte, 0, min(n, limit))
	for _, p := range pieces {
		buf = append(buf, p[:min(len(p), limit-len(buf))]...)
	}
	return buf
}

func (s *Stdio) readStderr() {
	defer close(s.stderrDone)
	r := bufio.NewReaderSize(drainReader{s.stderr, s.reaped}, 16<<10)
	for {
		line, tooLong, err := readLine(r, maxStderrLine, keepLongLine)
		text := string(TrimEOL(line))
		if tooLong > 0 {
			text = cutStderrLine(line, tooLong, err == nil)
		}
		if len(line) > 0 {
			s.mu.Lock()
			s.tail = append(s.tail, text)
			if len(s.tail) > s.opts.StderrTail {
				s.tail = s.tail[len(s.tail)-s.opts.StderrTail:]
			}
			s.mu.Unlock()
			s.emit(Event{Kind: KindStderr, Dir: Incoming, Data: []byte(text)})
		}
		if err != nil {
			return
		}
	}
}

// cutStderrLine is the kept start of a stderr line of total bytes (its
// newline included, when it had one), without a rune cut in two, and how
// many bytes of the line were dropped, in the words of bounds.ClipTo.
func cutStderrLine(kept []byte, total int, newline bool) string {
	cut := len(kept)
	for i := len(kept) - 1; i >= 0 && i >= len(kept)-utf8.UTFMax; i-- {
		if utf8.RuneStart(kept[i]) {
			if !utf8.FullRune(kept[i:]) {
				cut = i
			}
			break
		}
	}
	dropped := total - cut
	if newline {
		dropped--
	}
	return string(kept[:cut]) + "… (" + bounds.Size(int64(dropped)) + " more)"
}

func (s *Stdio) wait() {
	err := s.cmd.Wait()
	st := s.cmd.ProcessState
	e := &ServerExitError{ExitCode: -1}
	if st != nil {
		e.ExitCode = st.ExitCode()
		e.Signal = signalName(st)
	} else if err != nil {
		e.Signal = err.Error()
	}
	// Drain what the process wrote last. A grandchild that inherited the
	// pipes may hold them open: the readers stop once the pipes have been
	// quiet for drainQuiet. Where pipes take no deadlines, close them after
	// that long instead, at the risk of losing output a slow consumer has
	// not taken yet.
	close(s.reaped)
	deadline := time.Now().Add(drainQuiet)
	if s.stdout.SetReadDeadline(deadline) == nil && s.stderr.SetReadDeadline(deadline) == nil {
		<-s.stdoutDone
		<-s.stderrDone
	} else {
		drained := make(chan struct{})
		go func() {
			<-s.stdoutDone
			<-s.stderrDone
			close(drained)
		}()
		select {
		case <-drained:
		case <-time.After(drainQuiet):
			s.stdout.Close()
			s.stderr.Close()
			<-drained
		}
	}
	s.stdout.Close()
	s.stderr.Close()
	s.mu.Lock()
	e.StderrTail = append([]string(nil), s.tail...)
	s.mu.Unlock()
	s.exitErr = e
	text := "exited with status " + fmt.Sprint(e.ExitCode)
	if e.Signal != "" {
		text = "killed by signal " + e.Signal
	}
	s.emit(Event{Kind: KindLifecycle, Text: text})
	close(s.exited)
}

// drainQuiet is how long the output pipes of an ended server may stay quiet
// before they are taken as held open by a grandchild.
const drainQuiet = time.Second

// drainReader reads a pipe of the server. Once the server has been reaped,
// each read must bring data within drainQuiet: a reader that was busy
// handing frames to a slow consumer still gets everything.
type drainReader struct {
	f      *os.File
	reaped <-chan struct{}
}

func (r drainReader) Read(p []byte) (int, error) {
	select {
	case <-r.reaped:
		r.f.SetReadDeadline(time.Now().Add(drainQuiet))
	default:
	}
	return r.f.Read(p)
}

func (s *Stdio) exitError() error {
	<-s.exited
	return s.exitErr
}

// StderrTail returns the last lines the server wrote on stderr.
func (s *Stdio) StderrTail() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.tail...)
}

// Exited is closed once the server process has ended.
func (s *Stdio) Exited() <-chan struct{} { return s.exited }

// Recv returns the next frame. After the process's stdout ends it returns
// ErrClosed if Close was called, or a *ServerExitError.
func (s *Stdio) Recv() (Frame, error) {
	f, ok := <-s.frames
	if ok {
		return f, nil
	}
	select {
	case <-s.closed:
		return Frame{}, ErrClosed
	default:
	}
	select {
	case <-s.exited:
		return Frame{}, s.exitErr
	case <-s.closed:
		return Frame{}, ErrClosed
	case <-time.After(2 * time.Second):
		return Frame{}, errors.New("server closed its stdout but is still running")
	}
}

// Close shuts the server down in order: close its stdin, wait, SIGTERM to
// its process group, wait, SIGKILL to the group. Once the server has
// ended, what is left of its group (a child it forked and did not stop)
// gets the same: SIGTERM, wait, SIGKILL. It returns, to every caller,
// only once the process has ended and its group is gone: a one-shot
// command that exits right after Close leaves nothing of the server
// running, however long the last signal takes to land.
func (s *Stdio) Close() error {
	// A second caller waits in Do until the first caller's shutdown,
	// the group's end included, is over.
	s.once.Do(func() {
		close(s.closed)
		s.stdin.Close()
		killed := false
		defer func() { s.endGroup(killed) }()
		select {
		case <-s.exited:
			return
		case <-time.After(s.opts.ShutdownGrace):
		}
		s.emit(Event{Kind: KindLifecycle, Text: "server still running after stdin closed: sending SIGTERM"})
		terminate(s.cmd.Process)
		select {
		case <-s.exited:
			return
		case <-time.After(s.opts.ShutdownGrace):
		}
		s.emit(Event{Kind: KindLifecycle, Text: "server ignored SIGTERM: sending SIGKILL"})
		kill(s.cmd.Process)
		killed = true
		<-s.exited
	})
	return nil
}

// groupKillWait bounds the wait for a process group to be gone once it
// was sent SIGKILL: a killed process ends as soon as it is scheduled.
const groupKillWait = 2 * time.Second

// endGroup stops the processes left in the server's process group after
// the server itself ended, and returns once none is left (or, which should
// not happen, groupKillWait after SIGKILL). killed says the group was sent
// SIGKILL already. The processes the server left behind were adopted by
// mcpi (see adoptOrphans) and are reaped here, so that the group is gone,
// not a zombie waiting for init.
func (s *Stdio) endGroup(killed bool) {
	pgid := s.cmd.Process.Pid
	gone := func(d time.Duration) bool {
		deadline := time.Now().Add(d)
		for {
			reapGroup(pgid)
			if !groupAlive(pgid) {
				return true
			}
			if !time.Now().Before(deadline) {
				return false
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if gone(0) {
		return
	}
	if !killed {
		s.emit(Event{Kind: KindLifecycle, Text: "processes of the server's group still running after it ended: sending SIGTERM to the group"})
		signalPgid(pgid, syscall.SIGTERM)
		if gone(s.opts.ShutdownGrace) {
			return
		}
		s.emit(Event{Kind: KindLifecycle, Text: "the server's group ignored SIGTERM: sending SIGKILL to the group"})
	}
	signalPgid(pgid, syscall.SIGKILL)
	if !gone(groupKillWait) {
		s.emit(Event{Kind: KindLifecycle, Text: fmt.Sprintf("processes of the server's group remain %v after SIGKILL", groupKillWait)})
	}
}

// Name names the transport.
func (s *Stdio) Name() string { return "stdio" }
