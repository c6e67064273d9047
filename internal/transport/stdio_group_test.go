//go:build linux

package transport

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// alive reports whether pid is a process that has not ended (a zombie,
// waiting for its new parent to reap it, has ended).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// A server that forks a child into its process group and exits cleanly
// when its stdin closes leaves nothing running: Close signals the group.
func TestCloseEndsTheProcessGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	script := `sleep 300 >/dev/null 2>&1 </dev/null & echo $! > "$1"; read line; exit 0`
	tap := &eventLog{}
	s, err := Spawn(StdioOptions{Command: "/bin/sh", Args: []string{"-c", script, "sh", pidFile}, Tap: tap, ShutdownGrace: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var child int
	for range 200 {
		if b, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(b), "\n") {
			child, _ = strconv.Atoi(strings.TrimSpace(string(b)))
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if child == 0 || !alive(child) {
		t.Fatalf("the server's child did not start (pid %d)", child)
	}
	defer func() {
		if alive(child) {
			p, _ := os.FindProcess(child)
			p.Kill()
		}
	}()
	s.Close()
	for range 100 {
		if !alive(child) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if alive(child) {
		t.Fatalf("the child %d of the server is still running after Close", child)
	}
	if tap.find("sending SIGTERM to the group") == nil {
		t.Error("no tap event for the signal to the group")
	}
}
