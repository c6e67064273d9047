package transport

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// helperEnv, when set, makes the test binary act as a small stdio server
// instead of running the tests (see runHelper).
const helperEnv = "TRANSPORT_TEST_HELPER"

// waitLimit bounds every wait of these tests. It is generous: waits end as
// soon as their condition holds, and the limit only turns a hang into a
// failure.
const waitLimit = 10 * time.Second

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(runHelper(mode))
	}
	os.Exit(m.Run())
}

// runHelper is the server side of the stdio tests. It returns the exit code.
func runHelper(mode string) int {
	out, errOut := os.Stdout, os.Stderr
	switch mode {
	case "echo":
		// Every stdin line back on stdout; exit on stdin EOF.
		return echo(out)
	case "gated":
		// Says it is ready, reads nothing until SIGHUP, then echoes.
		hup := make(chan os.Signal, 1)
		signal.Notify(hup, syscall.SIGHUP)
		out.WriteString(`{"ready":true}` + "\n")
		<-hup
		return echo(out)
	case "garbage":
		out.WriteString("not json\n")
		out.Write([]byte("{\"a\":\"\xff\xfe\"}\n"))
		out.WriteString("42\n")
		out.WriteString("   \t\n") // blank: skipped, not a bad frame
		out.WriteString("\n")
		out.WriteString(`{"jsonrpc":"2.0","method":"ok"}` + "\n")
		return 0
	case "cut":
		// Dies while writing a frame, saying why on stderr.
		out.WriteString(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"te`)
		errOut.WriteString("RuntimeError: crashed mid-frame\n")
		return 1
	case "big":
		// A line of HELPER_SIZE bytes, then a small frame.
		n, _ := strconv.Atoi(os.Getenv("HELPER_SIZE"))
		w := bufio.NewWriterSize(out, 1<<20)
		w.WriteString(`{"x":"`)
		w.WriteString(strings.Repeat("a", n-len(`{"x":""}`)))
		w.WriteString("\"}\n")
		w.WriteString(`{"after":1}` + "\n")
		w.Flush()
		return 0
	case "exit3":
		out.WriteString(`{"n":1}` + "\n")
		out.WriteString(`{"n":2}` + "\n")
		errOut.WriteString("warming up\n")
		errOut.WriteString("fatal: boom\r\n")
		return 3
	case "many":
		// HELPER_COUNT (default 500) frames, padded with HELPER_PAD bytes each.
		pad, _ := strconv.Atoi(os.Getenv("HELPER_PAD"))
		count, err := strconv.Atoi(os.Getenv("HELPER_COUNT"))
		if err != nil {
			count = 500
		}
		w := bufio.NewWriter(out)
		for i := range count {
			if pad > 0 {
				fmt.Fprintf(w, `{"n":%d,"pad":"%s"}`+"\n", i, strings.Repeat("p", pad))
			} else {
				fmt.Fprintf(w, `{"n":%d}`+"\n", i)
			}
		}
		w.Flush()
		return 0
	case "nonewline":
		out.WriteString(`{"a":1}` + "\r\n" + `{"b":2}`)
		return 0
	case "stubborn":
		// Ignores stdin EOF and SIGTERM: only SIGKILL ends it.
		signal.Ignore(syscall.SIGTERM)
		out.WriteString(`{"ready":true}` + "\n")
		waitForever()
	case "deaf":
		// Ignores stdin EOF but dies of SIGTERM.
		out.WriteString(`{"ready":true}` + "\n")
		waitForever()
	case "orphan":
		// Leaves behind a child that holds stdout and stderr open until its
		// stdin closes.
		exe, _ := os.Executable()
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), helperEnv+"=echo")
		cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(errOut, err)
			return 1
		}
		out.WriteString(`{"child":true}` + "\n")
		return 0
	case "longstderr":
		errOut.WriteString(strings.Repeat("e", 100000) + "\n")
		errOut.WriteString("short\n")
		for i := range 30 {
			fmt.Fprintf(errOut, "line %d\n", i)
		}
		return 0
	case "env":
		wd, _ := os.Getwd()
		b, _ := json.Marshal(map[string]string{"foo": os.Getenv("HELPER_FOO"), "dir": wd})
		out.Write(append(b, '\n'))
		return 0
	}
	fmt.Fprintf(errOut, "unknown helper mode %q\n", mode)
	return 2
}

// spawnHelper starts the test binary as a stdio server in the given mode.
// echo writes every stdin line back on out, and returns 0 on stdin EOF.
func echo(out *os.File) int {
	r := bufio.NewReaderSize(os.Stdin, 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			out.Write(line)
		}
		if err != nil {
			return 0
		}
	}
}

func spawnHelper(t *testing.T, mode string, opts StdioOptions) *Stdio {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	opts.Command = exe
	opts.Args = append([]string{"-test.run=^$"}, opts.Args...)
	// Under -race a process that exits with status 0 sleeps a second first
	// (atexit_sleep_ms) unless told not to.
	gorace := strings.TrimSpace(os.Getenv("GORACE") + " atexit_sleep_ms=0")
	opts.Env = append([]string{helperEnv + "=" + mode, "GORACE=" + gorace}, opts.Env...)
	s, err := Spawn(opts)
	if err != nil {
		t.Fatalf("Spawn: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// recorder is a Tap that keeps every event and lets a test wait for one.
type recorder struct {
	mu      sync.Mutex
	events  []Event
	changed chan struct{} // closed and replaced on every event
}

func newRecorder() *recorder { return &recorder{changed: make(chan struct{})} }

func (r *recorder) Observe(e Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
	close(r.changed)
	r.changed = make(chan struct{})
}

func (r *recorder) all() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.events...)
}

func (r *recorder) find(match func(Event) bool) []Event {
	var out []Event
	for _, e := range r.all() {
		if match(e) {
			out = append(out, e)
		}
	}
	return out
}

// waitFor waits until an event matches and returns the first that does.
func (r *recorder) waitFor(t *testing.T, what string, match func(Event) bool) Event {
	t.Helper()
	deadline := time.NewTimer(waitLimit)
	defer deadline.Stop()
	for {
		r.mu.Lock()
		for _, e := range r.events {
			if match(e) {
				r.mu.Unlock()
				return e
			}
		}
		changed := r.changed
		r.mu.Unlock()
		select {
		case <-changed:
		case <-deadline.C:
			t.Fatalf("no %s event after %v; events:\n%s", what, waitLimit, r.dump())
		}
	}
}

func (r *recorder) dump() string {
	var b strings.Builder
	for _, e := range r.all() {
		fmt.Fprintf(&b, "  %s %s text=%q err=%q data=%.80q", e.Kind, e.Dir, e.Text, e.Err, e.Data)
		if e.HTTP != nil {
			fmt.Fprintf(&b, " http=%s %d sse-id=%q", e.HTTP.Method, e.HTTP.StatusCode, e.HTTP.SSEEventID)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func lifecycleContaining(s string) func(Event) bool {
	return func(e Event) bool { return e.Kind == KindLifecycle && strings.Contains(e.Text, s) }
}

type recvResult struct {
	f   Frame
	err error
}

// recv calls c.Recv, failing the test if it does not return in time.
func recv(t *testing.T, c Conn) (Frame, error) {
	t.Helper()
	ch := make(chan recvResult, 1)
	go func() {
		f, err := c.Recv()
		ch <- recvResult{f, err}
	}()
	select {
	case r := <-ch:
		return r.f, r.err
	case <-time.After(waitLimit):
		t.Fatalf("Recv did not return within %v", waitLimit)
		return Frame{}, nil
	}
}

// recvFrame receives one frame and fails the test on a Recv error.
func recvFrame(t *testing.T, c Conn) Frame {
	t.Helper()
	f, err := recv(t, c)
	if err != nil {
		t.Fatalf("Recv: %v", err)
	}
	return f
}

// recvData receives one well-formed frame and returns its data.
func recvData(t *testing.T, c Conn) string {
	t.Helper()
	f := recvFrame(t, c)
	if f.Err != nil {
		t.Fatalf("Recv: frame %q has error %v", f.Data, f.Err)
	}
	return string(f.Data)
}

// wait waits for ch to be closed or to yield a value.
func wait[T any](t *testing.T, what string, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitLimit):
		t.Fatalf("timed out waiting for %s", what)
		var zero T
		return zero
	}
}

// errorContains reports whether err's text contains s.
func errorContains(err error, s string) bool {
	return err != nil && strings.Contains(err.Error(), s)
}

// waitForever blocks until the process is killed: on a read of a pipe
// whose write end it holds, which the runtime does not take for a
// deadlock.
func waitForever() {
	r, w, err := os.Pipe()
	if err != nil {
		panic(err)
	}
	r.Read(make([]byte, 1))
	runtime.KeepAlive(w)
}
