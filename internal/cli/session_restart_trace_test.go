//go:build linux

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A restart keeps the session's trace: what was recorded before the server
// ended is still in it.
func TestSessionRestartKeepsTheTrace(t *testing.T) {
	dir := liveDir(t)
	trace := filepath.Join(t.TempDir(), "t.jsonl")
	code, _, errOut := runLive(t, dir, nil, append([]string{"session", "start", "rr", "--idle", "2m", "--restart=2", "--record", trace}, peerArgs("demo")...)...)
	if code != ExitOK {
		t.Fatalf("session start: exit %d, %q", code, errOut)
	}
	t.Cleanup(func() { runLive(t, dir, nil, "session", "stop", "rr") })
	if code, _, errOut := runLive(t, dir, nil, "call", "echo", "text=before-the-crash", "--session", "rr"); code != ExitOK {
		t.Fatalf("call: %d %s", code, errOut)
	}
	time.Sleep(300 * time.Millisecond) // the trace's flush
	b, _ := os.ReadFile(trace)
	if !strings.Contains(string(b), "before-the-crash") {
		t.Fatalf("not recorded before the crash: %d bytes", len(b))
	}
	st := showStatus(t, dir, "rr")
	pids := serverPids(t, st.PID)
	syscall.Kill(pids[0], syscall.SIGKILL)
	deadline := time.Now().Add(20 * time.Second)
	for st.Restarts == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		st = showStatus(t, dir, "rr")
	}
	time.Sleep(300 * time.Millisecond)
	b, _ = os.ReadFile(trace)
	if !strings.Contains(string(b), "before-the-crash") {
		t.Fatalf("after the restart the trace lost what came before it (%d bytes now): %.300s", len(b), b)
	}
}
