//go:build linux

package transport

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
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
	// The child writes its pid to one FIFO and holds the other open for
	// writing: its pid arrives when written, its end as that FIFO's EOF.
	dir := t.TempDir()
	pidFile, holdFile := filepath.Join(dir, "child.pid"), filepath.Join(dir, "child.hold")
	for _, f := range []string{pidFile, holdFile} {
		if err := syscall.Mkfifo(f, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	script := `sleep 300 >/dev/null 2>&1 </dev/null 3>"$2" & echo $! > "$1"; read line; exit 0`
	tap := &eventLog{}
	s, err := Spawn(StdioOptions{Command: "/bin/sh", Args: []string{"-c", script, "sh", pidFile, holdFile}, Tap: tap, ShutdownGrace: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	pid := make(chan int, 1)
	go func() {
		b, _ := os.ReadFile(pidFile) // until the shell closes it
		n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		pid <- n
	}()
	ended := make(chan struct{})
	go func() {
		os.ReadFile(holdFile) // EOF once the child, its one writer, is gone
		close(ended)
	}()
	var child int
	select {
	case child = <-pid:
	case <-time.After(10 * time.Second):
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
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatalf("the child %d of the server is still running after Close", child)
	}
	if tap.find("sending SIGTERM to the group") == nil {
		t.Error("no tap event for the signal to the group")
	}
}
