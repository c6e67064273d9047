package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestTwoUsersSessions runs live sessions as two real users (root and
// nobody, uid 65534: the test needs root to be both) and checks that each
// sees and drives only its own, that neither reaches the other's through
// the runtime directory, and that a daemon refuses a connection from
// another user even when its socket is opened to everyone.
func TestTwoUsersSessions(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root, to run commands as a second user")
	}
	const other = 65534
	python, err := exec.LookPath("/usr/bin/python3")
	if err != nil {
		t.Skip("needs /usr/bin/python3, to speak to the socket without mcpi's own checks")
	}
	bin := mcpiBinary(t)
	base, err := os.MkdirTemp("", "mcpi-users-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Chmod(base, 0o755))
	exe := filepath.Join(base, "mcpi")
	b, err := os.ReadFile(bin)
	must(err)
	must(os.WriteFile(exe, b, 0o755))
	homeA, homeB := filepath.Join(base, "a"), filepath.Join(base, "b")
	must(os.Mkdir(homeA, 0o755)) // the runtime directory under it is mcpi's, 0700
	must(os.Mkdir(homeB, 0o700))
	must(os.Chown(homeB, other, other))

	runAs := func(uid int, home string, args ...string) userRun {
		t.Helper()
		cmd := exec.Command(exe, args...)
		cmd.Dir = home
		cmd.Env = []string{"HOME=" + home, "XDG_RUNTIME_DIR=" + home, "PATH=/usr/bin:/bin", "NO_COLOR=1"}
		if uid != 0 {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
		}
		var out, errOut strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errOut
		done := make(chan error, 1)
		must(cmd.Start())
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Fatalf("mcpi %v as uid %d did not end", args, uid)
		}
		return userRun{cmd.ProcessState.ExitCode(), out.String(), errOut.String()}
	}
	start := func(uid int, home string) {
		t.Helper()
		if r := runAs(uid, home, "session", "start", "x", "--idle", "2m", "--", exe, "demo-server"); r.code != 0 {
			t.Fatalf("session start as uid %d: exit %d, %s%s", uid, r.code, r.stdout, r.stderr)
		}
		t.Cleanup(func() { runAs(uid, home, "session", "stop", "x") })
	}
	pidOf := func(uid int, home string) int {
		t.Helper()
		r := runAs(uid, home, "session", "list", "--json")
		var sts []struct {
			Name  string `json:"name"`
			PID   int    `json:"pid"`
			State string `json:"state"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &sts); err != nil || len(sts) != 1 || sts[0].Name != "x" {
			t.Fatalf("session list as uid %d: %v, %s%s", uid, err, r.stdout, r.stderr)
		}
		return sts[0].PID
	}

	// Each starts a session of the same name: two sessions, one each.
	start(0, homeA)
	start(other, homeB)
	pidA, pidB := pidOf(0, homeA), pidOf(other, homeB)
	if pidA == pidB {
		t.Fatalf("both users list the same daemon, pid %d", pidA)
	}
	for _, u := range []struct {
		uid  int
		home string
	}{{0, homeA}, {other, homeB}} {
		if r := runAs(u.uid, u.home, "call", "add", "a=20", "b=22", "--session", "x"); r.code != 0 || !strings.Contains(r.stdout, "42") {
			t.Errorf("call as uid %d in its own session: exit %d, %s%s", u.uid, r.code, r.stdout, r.stderr)
		}
	}

	// The second user pointed at the first one's runtime directory gets
	// nothing of it: not the list, not a command, not the TUI's relay.
	dirA := filepath.Join(homeA, "mcpi")
	for _, args := range [][]string{
		{"session", "list"}, {"session", "show", "x"}, {"call", "add", "a=1", "b=2", "--session", "x"}, {"pending", "--session", "x"},
	} {
		r := runAsDir(t, exe, other, homeB, dirA, args...)
		if r.code == 0 || strings.Contains(r.stdout, "demo") || strings.Contains(r.stdout, "42") {
			t.Errorf("uid %d ran %v in uid 0's runtime directory: exit %d, %s%s", other, args, r.code, r.stdout, r.stderr)
		}
	}

	// Opened to everyone, the directory and the socket still refuse: the
	// other user's mcpi will not use them, and the daemon does not answer
	// a peer of another uid.
	sock := filepath.Join(dirA, "x.sock")
	must(os.Chmod(dirA, 0o755))
	must(os.Chmod(sock, 0o666))
	r := runAsDir(t, exe, other, homeB, dirA, "session", "show", "x")
	if r.code == 0 || !strings.Contains(r.stderr, "not private") {
		t.Errorf("uid %d's mcpi used a runtime directory opened to it: exit %d, %s%s", other, r.code, r.stdout, r.stderr)
	}
	py := exec.Command(python, "-c", `
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(5)
s.connect(sys.argv[1])
try:
    s.sendall(b'{"op":"status"}\n')
    data = s.recv(4096)
except (ConnectionResetError, BrokenPipeError):
    data = b""  # closed unanswered, what it had been sent unread
except socket.timeout:
    data = b"(timeout)"
sys.stdout.write(repr(data))
`, sock)
	py.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: other, Gid: other}}
	out, err := py.CombinedOutput()
	if err != nil {
		t.Fatalf("the raw connection as uid %d: %v: %s", other, err, out)
	}
	if string(out) != "b''" {
		t.Errorf("uid 0's daemon answered a connection of uid %d: %s", other, out)
	}
	must(os.Chmod(sock, 0o600))
	must(os.Chmod(dirA, 0o700))

	// And the first user's session carried on.
	if r := runAs(0, homeA, "call", "add", "a=1", "b=1", "--session", "x"); r.code != 0 || !strings.Contains(r.stdout, "2") {
		t.Errorf("uid 0's session after the attempts: exit %d, %s%s", r.code, r.stdout, r.stderr)
	}
}

// userRun is how a command run as some user ended.
type userRun struct {
	code           int
	stdout, stderr string
}

// runAsDir runs mcpi as uid with the runtime directory dir (given as
// XDG_RUNTIME_DIR, its parent).
func runAsDir(t *testing.T, exe string, uid int, home, dir string, args ...string) (r userRun) {
	t.Helper()
	cmd := exec.Command(exe, args...)
	cmd.Dir = home
	cmd.Env = []string{"HOME=" + home, "XDG_RUNTIME_DIR=" + filepath.Dir(dir), "PATH=/usr/bin:/bin", "NO_COLOR=1"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	cmd.Run()
	r.code, r.stdout, r.stderr = cmd.ProcessState.ExitCode(), out.String(), errOut.String()
	return r
}
