package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/live"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
)

// runLive runs mcpi in-process with test streams and the runtime
// directory dir; session start re-executes the test binary as the daemon
// (see TestMain).
func runLive(t *testing.T, dir string, ctx context.Context, args ...string) (code command.ExitCode, stdout, stderr string) {
	t.Helper()
	ios, _, out, errOut := command.Test()
	f := &command.Factory{IO: ios, Executable: func() (string, error) { return os.Args[0], nil }, RuntimeDir: dir}
	if ctx == nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
	}
	code = run(ctx, f, args)
	return code, out.String(), errOut.String()
}

// runLiveOK is runLive for a command that must succeed: any other exit
// stops the test, with what the command wrote.
func runLiveOK(t *testing.T, dir string, args ...string) {
	t.Helper()
	if code, out, errOut := runLive(t, dir, nil, args...); code != command.ExitOK {
		t.Fatalf("mcpi %s: exit %d, stdout %q, stderr %q", strings.Join(args, " "), code, out, errOut)
	}
}

// within runs fn, and fails the test when fn has not ended within d: a
// hang fails on its own, and how long fn took is not what is tested.
func within(t *testing.T, d time.Duration, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s has not ended within %v", what, d)
	}
}

// liveDir returns a runtime directory of the test's own.
func liveDir(t *testing.T) string {
	return filepath.Join(t.TempDir(), "run")
}

// demoSession starts the session name on the demo server, in a runtime
// directory of the test's own, and returns that directory.
func demoSession(t *testing.T, name string) string {
	t.Helper()
	dir := liveDir(t)
	startSession(t, dir, name, peerArgs("demo")...)
	return dir
}

// startSession starts a session and stops it when the test ends, killing
// its daemon if stopping does not end it; should the test binary die
// first, the idle timeout ends the daemon.
func startSession(t *testing.T, dir, name string, target ...string) *live.Status {
	t.Helper()
	code, out, errOut := runLive(t, dir, nil, append([]string{"session", "start", name, "--idle", "2m"}, target...)...)
	if code != command.ExitOK || strings.TrimSpace(out) != name {
		t.Fatalf("session start: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	rec, err := live.ReadRecord(dir, name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		runLive(t, dir, nil, "session", "stop", name)
		if syscall.Kill(rec.PID, 0) == nil {
			// Not ended yet (or a zombie, reaped by session start's Wait).
			poll(5*time.Second, func() bool { return syscall.Kill(rec.PID, 0) != nil })
			syscall.Kill(rec.PID, syscall.SIGKILL)
		}
	})
	return rec
}

func TestSessionParityWithOneShot(t *testing.T) {
	t.Parallel()
	dir := liveDir(t)
	demo := peerArgs("demo")
	startSession(t, dir, "demo", demo...)
	for _, args := range [][]string{
		{"call", "add", "a=2", "b=3"},
		{"call", "add", "a=2", "b=3", "--json"},
		{"call", "fail"},
		{"call", "fail", "--json"},
		{"call", "nope"},
		{"call", "nope", "--json"},
		{"call", "add", "a=x", "b=1"},
		{"call", "echo", "--args=-"},
		{"call", "sample", "prompt=hi", "--sampling-reply", "I am a model"},
		{"call", "elicit", "--elicit-field", "name=Bob"},
		{"tools"},
		{"tools", "--json"},
		{"resources"},
		{"templates", "--json"},
		{"prompts"},
		{"read", "demo://text/hello"},
		{"read", "demo://nope", "--json"},
		{"prompt", "greet", "name=Ada", "style=pirate"},
		{"complete", "--prompt", "greet", "style=p"},
		{"info"},
		{"info", "--json"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			oneCode, oneOut, oneErr := runCLI(t, `{"text":"from stdin"}`, append(append([]string{}, args...), demo...)...)
			ios, in, out, errOut := command.Test()
			in.WriteString(`{"text":"from stdin"}`)
			f := &command.Factory{IO: ios, Executable: func() (string, error) { return os.Args[0], nil }, RuntimeDir: dir}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			code := run(ctx, f, append(append([]string{}, args...), "--session", "demo"))
			if code != oneCode || out.String() != oneOut || errOut.String() != oneErr {
				t.Errorf("in the session: exit %d\nstdout %q\nstderr %q\none-shot: exit %d\nstdout %q\nstderr %q",
					code, out, errOut, oneCode, oneOut, oneErr)
			}
		})
	}
}

func TestSessionStatePersists(t *testing.T) {
	dir := demoSession(t, "counter")
	for i := 1; i <= 3; i++ {
		code, out, errOut := runLive(t, dir, nil, "call", "bump_counter", "--session", "counter")
		if want := fmt.Sprintf("is now %d.", i); code != 0 || !strings.Contains(out, want) {
			t.Fatalf("bump %d: exit %d, stdout %q (want %q), stderr %q", i, code, out, want, errOut)
		}
	}
	// MCPI_SESSION names the session when no TARGET is given.
	t.Setenv(command.SessionEnv, "counter")
	if code, out, errOut := runLive(t, dir, nil, "call", "bump_counter"); code != 0 || !strings.Contains(out, "is now 4.") {
		t.Fatalf("with %s: exit %d, stdout %q, stderr %q", command.SessionEnv, code, out, errOut)
	}
}

func TestSessionConcurrentCommands(t *testing.T) {
	t.Parallel()
	dir := demoSession(t, "many")
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, out, errOut := runLive(t, dir, nil, "call", "add", fmt.Sprintf("a=%d", i), "b=1000", "--session", "many")
			if want := fmt.Sprintf(`{"sum":%d}`, i+1000); code != 0 || strings.TrimSpace(out) != want {
				t.Errorf("call %d: exit %d, stdout %q (want %q), stderr %q", i, code, out, want, errOut)
			}
		}()
	}
	wg.Wait()
	code, out, _ := runLive(t, dir, nil, "session", "show", "many", "--json")
	var st live.Status
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil || st.Commands != 10 || st.Active != 0 {
		t.Errorf("session show: exit %d, %s", code, out)
	}
}

func TestSessionCancel(t *testing.T) {
	t.Parallel()
	dir := demoSession(t, "slow")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	var code command.ExitCode
	var errOut string
	within(t, 10*time.Second, "the cancelled call", func() {
		code, _, errOut = runLive(t, dir, ctx, "call", "slow", "ms=60000", "--session", "slow")
	})
	if code != command.ExitInterrupted {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	// The session goes on.
	if code, out, errOut := runLive(t, dir, nil, "call", "add", "a=1", "b=1", "--session", "slow"); code != 0 || !strings.Contains(out, "2") {
		t.Fatalf("after the cancel: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

func TestSessionServerCrash(t *testing.T) {
	t.Parallel()
	dir := liveDir(t)
	startSession(t, dir, "crash", peerArgs("hostile:"+mcptest.HostileCrash)...)
	oneCode, _, _ := runCLI(t, "", append([]string{"call", "echo"}, peerArgs("hostile:"+mcptest.HostileCrash)...)...)
	code, _, errOut := runLive(t, dir, nil, "call", "echo", "--session", "crash")
	if code != oneCode || code != command.ExitConnect || !strings.Contains(errOut, "status 3") {
		t.Fatalf("exit %d (one-shot %d), stderr %q", code, oneCode, errOut)
	}
	// The daemon records why, and ends.
	var st live.Status
	var listed string
	if !poll(10*time.Second, func() bool {
		code, out, _ := runLive(t, dir, nil, "session", "list", "--json")
		listed = out
		var sts []live.Status
		if code == 0 && json.Unmarshal([]byte(out), &sts) == nil && len(sts) == 1 && !sts[0].Live() {
			st = sts[0]
			return true
		}
		return false
	}) {
		t.Fatalf("the session did not end: %s", listed)
	}
	if st.State != live.StateExited || !strings.Contains(st.Reason, "status 3") || !strings.Contains(strings.Join(st.StderrTail, "\n"), "something broke") {
		t.Errorf("record: %+v", st)
	}
	_, out, _ := runLive(t, dir, nil, "session", "list")
	if !strings.Contains(out, "exited") || !strings.Contains(out, "status 3") {
		t.Errorf("session list does not say why:\n%s", out)
	}
	code, _, errOut = runLive(t, dir, nil, "ping", "--session", "crash")
	if code != command.ExitConnect || !strings.Contains(errOut, "has ended") {
		t.Errorf("ping after the end: exit %d, stderr %q", code, errOut)
	}
}

func TestSessionStaleSocketAfterKill(t *testing.T) {
	t.Parallel()
	dir := liveDir(t)
	rec := startSession(t, dir, "killed", peerArgs("demo")...)
	if err := syscall.Kill(rec.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// session start's goroutine reaps it; wait until it is gone.
	poll(10*time.Second, func() bool { return syscall.Kill(rec.PID, 0) != nil })
	if _, err := os.Lstat(live.SocketPath(dir, "killed")); err != nil {
		t.Fatalf("the socket should still be there: %v", err)
	}
	code, out, errOut := runLive(t, dir, nil, "session", "list")
	if code != 0 || !strings.Contains(out, live.StateLost) {
		t.Fatalf("session list: exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Lstat(live.SocketPath(dir, "killed")); err == nil {
		t.Fatal("the stale socket was not removed")
	}
	// The name can be used again.
	startSession(t, dir, "killed", peerArgs("demo")...)
	if code, out, _ := runLive(t, dir, nil, "call", "add", "a=1", "b=2", "--session", "killed"); code != 0 || !strings.Contains(out, "3") {
		t.Fatalf("after restart: exit %d %q", code, out)
	}
}

// sessionFiles returns the files of session name in dir: its socket,
// record, log and lock.
func sessionFiles(t *testing.T, dir, name string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, name+".*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// A session whose daemon was killed: stop says the daemon was gone and
// removes every file of the session, its lock included; the name is free.
func TestSessionStopAfterKill(t *testing.T) {
	t.Parallel()
	dir := liveDir(t)
	rec := startSession(t, dir, "gone", peerArgs("demo")...)
	if err := syscall.Kill(rec.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	poll(10*time.Second, func() bool { return syscall.Kill(rec.PID, 0) != nil })
	code, _, errOut := runLive(t, dir, nil, "session", "stop", "gone")
	if code != command.ExitOK || !strings.Contains(errOut, fmt.Sprintf("session gone's daemon (pid %d) was gone already", rec.PID)) {
		t.Errorf("session stop: exit %d, stderr %q", code, errOut)
	}
	if left := sessionFiles(t, dir, "gone"); len(left) != 0 {
		t.Errorf("session stop left %v", left)
	}
	startSession(t, dir, "gone", peerArgs("demo")...)
	if code, out, _ := runLive(t, dir, nil, "call", "add", "a=1", "b=2", "--session", "gone"); code != 0 || !strings.Contains(out, "3") {
		t.Fatalf("the name used again: exit %d %q", code, out)
	}
}

// A start against a server that never answers leaves no file behind, its
// lock included.
func TestSessionStartOnASilentServerLeavesNothing(t *testing.T) {
	t.Parallel()
	dir := liveDir(t)
	code, _, errOut := runLive(t, dir, nil, append([]string{"session", "start", "mute", "--timeout", "1s"}, peerArgs("hostile:"+mcptest.HostileSilent)...)...)
	if code != command.ExitTimeout {
		t.Errorf("session start: exit %d, stderr %q", code, errOut)
	}
	if left := sessionFiles(t, dir, "mute"); len(left) != 0 {
		t.Errorf("a failed start left %v", left)
	}
}

func TestSessionStartFailsLikeOneShot(t *testing.T) {
	t.Parallel()
	dir := liveDir(t)
	target := peerArgs("hostile:" + mcptest.HostileStderrExit)
	oneCode, _, oneErr := runCLI(t, "", append([]string{"ping"}, target...)...)
	code, out, errOut := runLive(t, dir, nil, append([]string{"session", "start", "broken"}, target...)...)
	if code != oneCode || errOut != oneErr || out != "" {
		t.Errorf("session start: exit %d, stdout %q, stderr %q; one-shot: exit %d, stderr %q", code, out, errOut, oneCode, oneErr)
	}
	if names, _ := live.Names(dir); len(names) != 0 {
		t.Errorf("a failed start left %v", names)
	}
}

func TestSessionFlagsAndNames(t *testing.T) {
	t.Parallel()
	dir := liveDir(t)
	for _, tc := range []cliCase{
		{name: "target and session", args: append([]string{"call", "add", "--session", "x"}, peerArgs("demo")...), code: command.ExitUsage, stderr: []string{"either --session or"}},
		{name: "connection flag", args: []string{"ping", "--session", "x", "-H", "A: b"}, code: command.ExitUsage, stderr: []string{"--header belongs to the connection"}},
		{name: "bad name", args: []string{"ping", "--session", "../x"}, code: command.ExitUsage, stderr: []string{"invalid session name"}},
		{name: "no such session", args: []string{"ping", "--session", "nobody"}, code: command.ExitConnect, stderr: []string{"no session named nobody"}},
		{name: "no such session json", args: []string{"ping", "--session", "nobody", "--json"}, code: command.ExitConnect, jsonStdout: true, stdout: []string{`"exitCode":3`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runLive(t, dir, nil, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\n%s%s", code, tc.code, out, errOut)
			}
			for _, s := range tc.stderr {
				if !strings.Contains(errOut, s) {
					t.Errorf("stderr lacks %q: %s", s, errOut)
				}
			}
			for _, s := range tc.stdout {
				if !strings.Contains(out, s) {
					t.Errorf("stdout lacks %q: %s", s, out)
				}
			}
		})
	}
	for target, want := range map[string]string{
		"-- npx -y @modelcontextprotocol/server-everything@2.0": "server-everything",
		"-- node dist/server.js stdio":                          "server",
		"-- /usr/bin/mcpi demo-server":                          "mcpi",
		"--url http://127.0.0.1:8080/mcp":                       "127.0.0.1-8080",
		"--server my.server":                                    "my.server",
	} {
		var o command.TargetOptions
		f := strings.Fields(target)
		switch f[0] {
		case "--":
			o.Command = f[1:]
		case "--url":
			o.URL = f[1]
		default:
			o.Server = f[1]
		}
		if got := live.DefaultName(o.Server, o.URL, o.Command); got != want {
			t.Errorf("defaultName(%s) = %q, want %q", target, got, want)
		}
	}
}

// TestSessionLatency logs what a call costs in a session and one-shot
// (no timed assertion: the machine is shared).
func TestSessionLatency(t *testing.T) {
	dir := liveDir(t)
	demo := peerArgs("demo")
	startSession(t, dir, "bench", demo...)
	const n = 20
	measure := func(args ...string) time.Duration {
		start := time.Now()
		for range n {
			runLiveOK(t, dir, args...)
		}
		return time.Since(start) / n
	}
	oneShot := measure(append([]string{"call", "add", "a=1", "b=2"}, demo...)...)
	inSession := measure("call", "add", "a=1", "b=2", "--session", "bench")
	t.Logf("call add, mean of %d: one-shot %v, --session %v (%.0fx)", n, oneShot, inSession, float64(oneShot)/float64(inSession))
}

// A command that dies with its session's server is counted as failed.
func TestSessionCountsACommandThatDiedWithItsServer(t *testing.T) {
	t.Parallel()
	dir := liveDir(t)
	startSession(t, dir, "crash", peerArgs("hostile:"+mcptest.HostileCrash)...)
	if code, _, errOut := runLive(t, dir, nil, "call", "echo", "--session", "crash"); code != command.ExitConnect {
		t.Fatalf("call: exit %d, stderr %q", code, errOut)
	}
	code, out, errOut := runLive(t, dir, nil, "session", "show", "crash", "--json")
	if code != command.ExitOK {
		t.Fatalf("show: exit %d, %q", code, errOut)
	}
	var st live.Status
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatal(err)
	}
	if st.Commands != 1 || st.Failed != 1 {
		t.Errorf("after a call that died with the server: %d run, %d failed; want 1 and 1", st.Commands, st.Failed)
	}
}
