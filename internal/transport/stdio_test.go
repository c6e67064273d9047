package transport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/bounds"
)

func TestStdioEcho(t *testing.T) {
	rec := newRecorder()
	s := spawnHelper(t, "echo", StdioOptions{Tap: rec})
	if s.Name() != "stdio" {
		t.Errorf("Name() = %q", s.Name())
	}
	if s.Pid() <= 0 {
		t.Errorf("Pid() = %d", s.Pid())
	}
	ctx := context.Background()
	var want []string
	for i := range 50 {
		frame := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i)
		want = append(want, frame)
		if err := s.Send(ctx, []byte(frame)); err != nil {
			t.Fatalf("Send %d: %v", i, err)
		}
	}
	for i, w := range want {
		if got := recvData(t, s); got != w {
			t.Fatalf("frame %d = %q, want %q", i, got, w)
		}
	}

	spawned := rec.find(lifecycleContaining("spawned pid"))
	if len(spawned) != 1 || !strings.Contains(spawned[0].Text, fmt.Sprint(s.Pid())) {
		t.Errorf("spawn events = %v, want one naming pid %d", spawned, s.Pid())
	}
	out := rec.find(func(e Event) bool { return e.Kind == KindFrame && e.Dir == Outgoing })
	in := rec.find(func(e Event) bool { return e.Kind == KindFrame && e.Dir == Incoming })
	if len(out) != len(want) || len(in) != len(want) {
		t.Fatalf("tap saw %d outgoing and %d incoming frames, want %d each", len(out), len(in), len(want))
	}
	for i, w := range want {
		if string(out[i].Data) != w || string(in[i].Data) != w {
			t.Errorf("tap frame %d: out %q, in %q, want %q", i, out[i].Data, in[i].Data, w)
		}
		if out[i].Time.IsZero() || out[i].HTTP != nil {
			t.Errorf("tap frame %d: time %v, http %v", i, out[i].Time, out[i].HTTP)
		}
	}

	// The server exits on stdin EOF: Close needs no signal.
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if got := rec.find(lifecycleContaining("SIG")); len(got) != 0 {
		t.Errorf("Close of a server that exits on stdin EOF sent signals: %v", got)
	}
	rec.waitFor(t, "exit", lifecycleContaining("exited with status 0"))
	if _, err := recv(t, s); !errors.Is(err, ErrClosed) {
		t.Errorf("Recv after Close = %v, want ErrClosed", err)
	}
	if err := s.Send(ctx, []byte(`{}`)); err == nil {
		t.Error("Send after Close succeeded")
	}
}

func TestStdioConcurrentSend(t *testing.T) {
	s := spawnHelper(t, "echo", StdioOptions{})
	const n = 40
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			errs <- s.Send(context.Background(), fmt.Appendf(nil, `{"id":%d,"pad":%q}`, i, strings.Repeat("p", 10000)))
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("Send: %v", err)
		}
	}
	// Frames may be interleaved in any order, but never mixed with each other.
	seen := map[int]bool{}
	for range n {
		var m struct{ ID int }
		if err := json.Unmarshal([]byte(recvData(t, s)), &m); err != nil {
			t.Fatal(err)
		}
		seen[m.ID] = true
	}
	if len(seen) != n {
		t.Errorf("got %d distinct frames, want %d", len(seen), n)
	}
}

func TestStdioManyFramesInOrder(t *testing.T) {
	s := spawnHelper(t, "many", StdioOptions{})
	for i := range 500 {
		if got, want := recvData(t, s), fmt.Sprintf(`{"n":%d}`, i); got != want {
			t.Fatalf("frame %d = %q, want %q", i, got, want)
		}
	}
	_, err := recv(t, s)
	var exit *ServerExitError
	if !errors.As(err, &exit) || exit.ExitCode != 0 {
		t.Fatalf("Recv at the end = %v, want a *ServerExitError with status 0", err)
	}
}

func TestStdioBadFrames(t *testing.T) {
	rec := newRecorder()
	s := spawnHelper(t, "garbage", StdioOptions{Tap: rec})
	want := []struct {
		data  string
		isErr error
	}{
		{"not json", ErrNotJSON},
		{"{\"a\":\"\xff\xfe\"}", ErrNotUTF8},
		{"42", ErrNotJSON},
		{`{"jsonrpc":"2.0","method":"ok"}`, nil},
	}
	for i, w := range want {
		f := recvFrame(t, s)
		if string(f.Data) != w.data {
			t.Fatalf("frame %d = %q, want %q", i, f.Data, w.data)
		}
		if w.isErr == nil && f.Err != nil || w.isErr != nil && !errors.Is(f.Err, w.isErr) {
			t.Fatalf("frame %d error = %v, want %v", i, f.Err, w.isErr)
		}
	}
	// The connection went on past the bad frames until the server exited.
	var exit *ServerExitError
	if _, err := recv(t, s); !errors.As(err, &exit) || exit.ExitCode != 0 {
		t.Fatalf("Recv at the end = %v, want exit status 0", err)
	}
	bad := rec.find(func(e Event) bool { return e.Kind == KindBadFrame })
	if len(bad) != 3 {
		t.Fatalf("tap saw %d bad frames, want 3:\n%s", len(bad), rec.dump())
	}
	for i, e := range bad {
		if string(e.Data) != want[i].data || e.Err == "" || e.Dir != Incoming {
			t.Errorf("bad frame event %d = %q (err %q, dir %v)", i, e.Data, e.Err, e.Dir)
		}
	}
	if !strings.Contains(bad[1].Err, "offset 6") {
		t.Errorf("UTF-8 error %q does not give the offset of the bad byte", bad[1].Err)
	}
}

func TestStdioLongLines(t *testing.T) {
	t.Run("frame longer than the read buffer is whole", func(t *testing.T) {
		const size = 3 << 20
		s := spawnHelper(t, "big", StdioOptions{Env: []string{fmt.Sprintf("HELPER_SIZE=%d", size)}})
		f := recvFrame(t, s)
		if f.Err != nil || len(f.Data) != size {
			t.Fatalf("got a frame of %d bytes with error %v, want %d bytes", len(f.Data), f.Err, size)
		}
		if got := recvData(t, s); got != `{"after":1}` {
			t.Fatalf("next frame = %q", got)
		}
	})
	t.Run("frame over the limit is reported and skipped", func(t *testing.T) {
		const size = 2 << 20
		rec := newRecorder()
		s := spawnHelper(t, "big", StdioOptions{
			Tap:           rec,
			MaxFrameBytes: 1 << 20,
			Env:           []string{fmt.Sprintf("HELPER_SIZE=%d", size)},
		})
		f := recvFrame(t, s)
		if f.Err == nil || !strings.Contains(f.Err.Error(), "exceeds the 1048576-byte frame limit") {
			t.Fatalf("frame error = %v, want the frame limit", f.Err)
		}
		if len(f.Data) != 4096 || !strings.HasPrefix(string(f.Data), `{"x":"aaaa`) {
			t.Fatalf("kept %d bytes starting %.20q, want the first 4096 bytes of the line", len(f.Data), f.Data)
		}
		if got := recvData(t, s); got != `{"after":1}` {
			t.Fatalf("next frame = %q", got)
		}
		if bad := rec.find(func(e Event) bool { return e.Kind == KindBadFrame }); len(bad) != 1 {
			t.Errorf("tap saw %d bad frames, want 1", len(bad))
		}
	})
	t.Run("final line without newline", func(t *testing.T) {
		s := spawnHelper(t, "nonewline", StdioOptions{})
		for _, want := range []string{`{"a":1}`, `{"b":2}`} {
			if got := recvData(t, s); got != want {
				t.Fatalf("frame = %q, want %q", got, want)
			}
		}
	})
}

func TestStdioExitStatus(t *testing.T) {
	rec := newRecorder()
	s := spawnHelper(t, "exit3", StdioOptions{Tap: rec})
	// Frames written before the exit come first, then the exit.
	for _, want := range []string{`{"n":1}`, `{"n":2}`} {
		if got := recvData(t, s); got != want {
			t.Fatalf("frame = %q, want %q", got, want)
		}
	}
	_, err := recv(t, s)
	var exit *ServerExitError
	if !errors.As(err, &exit) {
		t.Fatalf("Recv = %v, want a *ServerExitError", err)
	}
	wantTail := []string{"warming up", "fatal: boom"}
	if exit.ExitCode != 3 || exit.Signal != "" || strings.Join(exit.StderrTail, "|") != strings.Join(wantTail, "|") {
		t.Errorf("exit = %+v, want status 3 and stderr %q", exit, wantTail)
	}
	if got := err.Error(); got != "server exited with status 3; stderr: fatal: boom" {
		t.Errorf("error text = %q", got)
	}
	if got := s.StderrTail(); strings.Join(got, "|") != strings.Join(wantTail, "|") {
		t.Errorf("StderrTail() = %q", got)
	}
	// Recv keeps saying why the connection ended.
	if _, err2 := recv(t, s); !errors.As(err2, &exit) {
		t.Errorf("second Recv = %v", err2)
	}
	wait(t, "Exited", s.Exited())

	stderr := rec.find(func(e Event) bool { return e.Kind == KindStderr })
	if len(stderr) != 2 || string(stderr[0].Data) != "warming up" || string(stderr[1].Data) != "fatal: boom" {
		t.Errorf("stderr events = %v", stderr)
	}
	rec.waitFor(t, "exit", lifecycleContaining("exited with status 3"))

	// Send after the exit fails and says why.
	err = s.Send(context.Background(), []byte(`{"jsonrpc":"2.0","method":"x"}`))
	if !errors.As(err, &exit) || exit.ExitCode != 3 {
		t.Errorf("Send after exit = %v, want the exit error", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close after exit = %v", err)
	}
}

func TestStdioStderrLimits(t *testing.T) {
	rec := newRecorder()
	s := spawnHelper(t, "longstderr", StdioOptions{Tap: rec, StderrTail: 5})
	if _, err := recv(t, s); err == nil {
		t.Fatal("Recv returned a frame")
	}
	tail := s.StderrTail()
	want := []string{"line 25", "line 26", "line 27", "line 28", "line 29"}
	if strings.Join(tail, "|") != strings.Join(want, "|") {
		t.Errorf("StderrTail() = %q, want %q", tail, want)
	}
	events := rec.find(func(e Event) bool { return e.Kind == KindStderr })
	if len(events) != 32 {
		t.Fatalf("tap saw %d stderr lines, want 32", len(events))
	}
	// Cut to what one line of a message shows, saying how much of the
	// line was dropped: a later cut to bounds.MaxLine keeps that count.
	long := string(events[0].Data)
	wantLong := strings.Repeat("e", keepLongLine) + "… (" + bounds.Size(100000-keepLongLine) + " more)"
	msg := strings.Repeat("m", 1000) + ": stderr: " + long
	if long != wantLong || bounds.ClipTo(msg, bounds.MaxLine) != msg {
		t.Errorf("long stderr line reported as %d bytes ending %q, want %d bytes ending %q", len(long), long[max(0, len(long)-40):], len(wantLong), wantLong[len(wantLong)-40:])
	}
	if string(events[1].Data) != "short" {
		t.Errorf("line after the long one = %.40q", events[1].Data)
	}
}

// A stderr line of 1 GiB says it lost 1 GiB, not what a buffer held; a
// rune is never cut in two.
func TestCutStderrLine(t *testing.T) {
	kept := []byte(strings.Repeat("e", keepLongLine-2) + "é")
	for _, c := range []struct {
		kept    []byte
		total   int
		newline bool
		want    string
	}{
		{kept, 1<<30 + 1, true, strings.Repeat("e", keepLongLine-2) + "é… (" + bounds.Size(1<<30-keepLongLine) + " more)"},
		{kept[:keepLongLine-1], 1 << 30, false, strings.Repeat("e", keepLongLine-2) + "… (" + bounds.Size(1<<30-(keepLongLine-2)) + " more)"},
	} {
		if got := cutStderrLine(c.kept, c.total, c.newline); got != c.want {
			t.Errorf("cutStderrLine(%d bytes, %d, %v) ends %q, want %q", len(c.kept), c.total, c.newline, got[len(got)-30:], c.want[len(c.want)-30:])
		}
	}
}

func TestStdioEnvAndDir(t *testing.T) {
	dir := t.TempDir()
	s := spawnHelper(t, "env", StdioOptions{Dir: dir, Env: []string{"HELPER_FOO=first", "HELPER_FOO=bar"}})
	var got struct{ Foo, Dir string }
	if err := json.Unmarshal([]byte(recvData(t, s)), &got); err != nil {
		t.Fatal(err)
	}
	if got.Foo != "bar" {
		t.Errorf("HELPER_FOO = %q, want the later entry %q", got.Foo, "bar")
	}
	wantDir, _ := filepath.EvalSymlinks(dir)
	gotDir, _ := filepath.EvalSymlinks(got.Dir)
	if gotDir != wantDir {
		t.Errorf("working directory = %q, want %q", got.Dir, dir)
	}
}

func TestStdioCloseEscalates(t *testing.T) {
	skipUnlessUnix(t)
	const grace = 200 * time.Millisecond
	tests := []struct {
		mode       string
		wantEvents []string // lifecycle texts, in order, after the spawn
		minElapsed time.Duration
		wantSignal string
	}{
		{
			mode: "deaf",
			wantEvents: []string{
				"server still running after stdin closed: sending SIGTERM",
				"killed by signal terminated",
			},
			minElapsed: grace,
			wantSignal: "terminated",
		},
		{
			mode: "stubborn",
			wantEvents: []string{
				"server still running after stdin closed: sending SIGTERM",
				"server ignored SIGTERM: sending SIGKILL",
				"killed by signal killed",
			},
			minElapsed: 2 * grace,
			wantSignal: "killed",
		},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			rec := newRecorder()
			s := spawnHelper(t, tt.mode, StdioOptions{Tap: rec, ShutdownGrace: grace})
			// The server has set up its signal handling once it speaks.
			if got := recvData(t, s); got != `{"ready":true}` {
				t.Fatalf("first frame = %q", got)
			}
			recvDone := make(chan error, 1)
			go func() {
				_, err := s.Recv()
				recvDone <- err
			}()

			start := time.Now()
			closeDone := make(chan struct{}, 2)
			for range 2 { // Close is idempotent and may be called concurrently
				go func() {
					s.Close()
					closeDone <- struct{}{}
				}()
			}
			wait(t, "Close", closeDone)
			wait(t, "the second Close", closeDone)
			if elapsed := time.Since(start); elapsed < tt.minElapsed {
				t.Errorf("Close returned after %v, before the grace periods of %v", elapsed, tt.minElapsed)
			}
			select {
			case <-s.Exited():
			default:
				t.Fatal("Close returned before the process ended")
			}
			if s.exitErr == nil || s.exitErr.Signal != tt.wantSignal || s.exitErr.ExitCode != -1 {
				t.Errorf("exit = %+v, want killed by %s", s.exitErr, tt.wantSignal)
			}
			if err := wait(t, "Recv to return", recvDone); !errors.Is(err, ErrClosed) {
				t.Errorf("blocked Recv returned %v, want ErrClosed", err)
			}
			var got []string
			for _, e := range rec.find(func(e Event) bool { return e.Kind == KindLifecycle }) {
				if !strings.HasPrefix(e.Text, "spawned") {
					got = append(got, e.Text)
				}
			}
			if strings.Join(got, "\n") != strings.Join(tt.wantEvents, "\n") {
				t.Errorf("lifecycle events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.wantEvents, "\n"))
			}
			if err := s.Close(); err != nil {
				t.Errorf("third Close = %v", err)
			}
		})
	}
}

func TestStdioCloseUnblocksSend(t *testing.T) {
	// A server that never reads its stdin: once the pipe is full, Send
	// blocks until its context ends or the connection closes.
	s := spawnHelper(t, "deaf", StdioOptions{ShutdownGrace: 100 * time.Millisecond})
	recvData(t, s)
	big := fmt.Appendf(nil, `{"pad":%q}`, strings.Repeat("p", 1<<20))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := s.Send(ctx, big); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Send to a server that does not read = %v, want DeadlineExceeded", err)
	}
	sendDone := make(chan error, 1)
	go func() { sendDone <- s.Send(context.Background(), big) }()
	s.Close()
	if err := wait(t, "Send to return", sendDone); err == nil {
		t.Error("Send during Close succeeded")
	}
}

func TestSpawnErrors(t *testing.T) {
	if _, err := Spawn(StdioOptions{}); err == nil {
		t.Error("Spawn with no command succeeded")
	}
	_, err := Spawn(StdioOptions{Command: filepath.Join(t.TempDir(), "no-such-server")})
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Spawn of a missing file = %v, want ErrNotExist", err)
	}
}

func TestCommandLine(t *testing.T) {
	tests := []struct {
		cmd  string
		args []string
		want string
	}{
		{"npx", []string{"-y", "server"}, "npx -y server"},
		{"/bin/sh", []string{"-c", "echo hi"}, `/bin/sh -c "echo hi"`},
		{"x", []string{"", "a'b", `$HOME`, `back\slash`}, `x "" "a'b" "$HOME" "back\\slash"`},
	}
	for _, tt := range tests {
		if got := commandLine(tt.cmd, tt.args); got != tt.want {
			t.Errorf("commandLine(%q, %q) = %s, want %s", tt.cmd, tt.args, got, tt.want)
		}
	}
}

// TestStdioSlowConsumer checks that a server's last frames are not lost when
// the consumer takes them long after the server exited.
func TestStdioSlowConsumer(t *testing.T) {
	skipUnlessUnix(t)
	// 80 frames of 4 KB: 65 fit in the frame channel and the reader, the
	// rest in the pipe, so the server can exit before anything is read.
	const n = 80
	s := spawnHelper(t, "many", StdioOptions{Env: []string{"HELPER_PAD=4000", fmt.Sprintf("HELPER_COUNT=%d", n)}})
	wait(t, "the server to exit", s.reaped)
	// The consumer is away for longer than the pipes may stay quiet.
	<-time.After(drainQuiet + 300*time.Millisecond)
	for i := range n {
		var m struct{ N int }
		if err := json.Unmarshal([]byte(recvData(t, s)), &m); err != nil || m.N != i {
			t.Fatalf("frame %d is number %d (%v)", i, m.N, err)
		}
	}
	var exit *ServerExitError
	if _, err := recv(t, s); !errors.As(err, &exit) || exit.ExitCode != 0 {
		t.Fatalf("Recv at the end = %v, want exit status 0", err)
	}
}

// TestStdioGrandchildHoldsPipes checks that the end of a server is reported
// even when a process it started keeps its stdout open.
func TestStdioGrandchildHoldsPipes(t *testing.T) {
	skipUnlessUnix(t)
	s := spawnHelper(t, "orphan", StdioOptions{})
	if got := recvData(t, s); got != `{"child":true}` {
		t.Fatalf("frame = %q", got)
	}
	var exit *ServerExitError
	if _, err := recv(t, s); !errors.As(err, &exit) || exit.ExitCode != 0 {
		t.Fatalf("Recv = %v, want exit status 0", err)
	}
	// Close ends the grandchild too: it reads the same stdin.
}

// skipUnlessUnix skips tests of signals, process groups and pipe deadlines.
func skipUnlessUnix(t *testing.T) {
	t.Helper()
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("needs Unix signals and pollable pipes")
	}
}

// TestStdioCutFrame: a server that dies while writing a frame leaves a
// cut frame, marked so (no answer), then its exit, which says why.
func TestStdioCutFrame(t *testing.T) {
	s := spawnHelper(t, "cut", StdioOptions{})
	f := recvFrame(t, s)
	if !errors.Is(f.Err, ErrCutFrame) || !strings.HasPrefix(string(f.Data), `{"jsonrpc":"2.0","id":1`) {
		t.Fatalf("frame %q, error %v: want the cut frame", f.Data, f.Err)
	}
	var exit *ServerExitError
	if _, err := recv(t, s); !errors.As(err, &exit) || exit.ExitCode != 1 || !strings.Contains(err.Error(), "crashed mid-frame") {
		t.Fatalf("Recv at the end = %v, want exit status 1 with the stderr", err)
	}
	// A whole bad frame is no cut one.
	g := spawnHelper(t, "garbage", StdioOptions{})
	if f := recvFrame(t, g); errors.Is(f.Err, ErrCutFrame) {
		t.Errorf("a bad line is taken for a cut frame: %v", f.Err)
	}
}
