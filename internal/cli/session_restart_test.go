//go:build linux

package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/live"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
)

// showStatus is the session's status as session show --json gives it.
func showStatus(t *testing.T, dir, name string) live.Status {
	t.Helper()
	_, out, _ := runLive(t, dir, nil, "session", "show", name, "--json")
	var st live.Status
	json.Unmarshal([]byte(out), &st)
	return st
}

// serverPids are the children of the session's daemon: its server.
func serverPids(t *testing.T, daemon int) []int {
	t.Helper()
	paths, _ := filepath.Glob("/proc/" + strconv.Itoa(daemon) + "/task/*/children")
	var pids []int
	for _, p := range paths {
		b, _ := os.ReadFile(p)
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				pids = append(pids, n)
			}
		}
	}
	return pids
}

// With --restart a session whose server exits starts it again, applies
// again what the session held (log level, subscriptions), and every later
// command says so; a server that crashes in a loop ends the session after
// the bound.
func TestSessionRestart(t *testing.T) {
	t.Parallel()
	dir := liveDir(t)
	code, out, errOut := runLive(t, dir, nil, append([]string{"session", "start", "rs", "--idle", "2m", "--restart=2"}, peerArgs("demo")...)...)
	if code != command.ExitOK || strings.TrimSpace(out) != "rs" {
		t.Fatalf("session start: exit %d, %q", code, errOut)
	}
	t.Cleanup(func() { runLive(t, dir, nil, "session", "stop", "rs") })
	runLiveOK(t, dir, "log-level", "debug", "--session", "rs")
	runLiveOK(t, dir, "subscribe", "demo://counter", "--session", "rs")
	st := showStatus(t, dir, "rs")
	pids := serverPids(t, st.PID)
	if len(pids) != 1 {
		t.Fatalf("the daemon's children: %v", pids)
	}
	syscall.Kill(pids[0], syscall.SIGKILL)
	poll(20*time.Second, func() bool { st = showStatus(t, dir, "rs"); return st.Restarts > 0 })
	if st.Restarts != 1 || st.State != live.StateRunning || !strings.Contains(st.LastRestart, "applied again: the log level and 1 subscription(s)") {
		t.Fatalf("after the server was killed: %+v", st)
	}
	code, _, errOut = runLive(t, dir, nil, "ping", "--session", "rs")
	if code != command.ExitOK || !strings.Contains(errOut, "note: session rs's server was restarted 1 time(s)") {
		t.Errorf("a command after the restart: exit %d, stderr %q", code, errOut)
	}
}

// A server that crashes every time is started again at most --restart
// times in a row; then the session ends, saying why.
func TestSessionRestartIsBounded(t *testing.T) {
	t.Parallel()
	dir := liveDir(t)
	code, _, errOut := runLive(t, dir, nil, append([]string{"session", "start", "rb", "--idle", "2m", "--restart=1"}, peerArgs("hostile:"+mcptest.HostileCrash)...)...)
	if code != command.ExitOK {
		t.Fatalf("session start: exit %d, %q", code, errOut)
	}
	t.Cleanup(func() { runLive(t, dir, nil, "session", "stop", "rb") })
	for i := range 2 {
		if code, _, errOut := runLive(t, dir, nil, "call", "echo", "--session", "rb"); code != command.ExitConnect {
			t.Fatalf("call %d: exit %d, %q", i, code, errOut)
		}
		var st live.Status
		poll(20*time.Second, func() bool { st = showStatus(t, dir, "rb"); return st.Restarts != i || !st.Live() })
		switch {
		case i == 0 && (st.Restarts != 1 || !st.Live()):
			t.Fatalf("after the first crash: %+v", st)
		case i == 1 && st.Live():
			t.Fatalf("after the second crash the session goes on: %+v", st)
		}
	}
	if code, _, errOut := runLive(t, dir, nil, "ping", "--session", "rb"); code != command.ExitConnect || !strings.Contains(errOut, "has ended") {
		t.Errorf("a command after the last crash: exit %d, %q", code, errOut)
	}
}
