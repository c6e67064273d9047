//go:build linux

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/command"
)

// A restart keeps the session's trace: what was recorded before the server
// ended is still in it.
func TestSessionRestartKeepsTheTrace(t *testing.T) {
	dir := liveDir(t)
	trace := filepath.Join(t.TempDir(), "t.jsonl")
	code, _, errOut := runLive(t, dir, nil, append([]string{"session", "start", "rr", "--idle", "2m", "--restart=2", "--record", trace}, peerArgs("demo")...)...)
	if code != command.ExitOK {
		t.Fatalf("session start: exit %d, %q", code, errOut)
	}
	t.Cleanup(func() { runLive(t, dir, nil, "session", "stop", "rr") })
	runLiveOK(t, dir, "call", "echo", "text=before-the-crash", "--session", "rr")
	// The trace is flushed in the background.
	var b []byte
	if !poll(5*time.Second, func() bool { b, _ = os.ReadFile(trace); return strings.Contains(string(b), "before-the-crash") }) {
		t.Fatalf("not recorded before the crash: %d bytes", len(b))
	}
	inits := strings.Count(string(b), `"initialize"`)
	st := showStatus(t, dir, "rr")
	pids := serverPids(t, st.PID)
	syscall.Kill(pids[0], syscall.SIGKILL)
	if !poll(20*time.Second, func() bool { st = showStatus(t, dir, "rr"); return st.Restarts > 0 }) {
		t.Fatalf("the server was not started again: %+v", st)
	}
	// The restarted server's handshake reaches the trace.
	if !poll(5*time.Second, func() bool { b, _ = os.ReadFile(trace); return strings.Count(string(b), `"initialize"`) > inits }) {
		t.Fatalf("the restarted server's handshake is not in the trace (%d bytes)", len(b))
	}
	if !strings.Contains(string(b), "before-the-crash") {
		t.Fatalf("after the restart the trace lost what came before it (%d bytes now): %.300s", len(b), b)
	}
}
