//go:build unix

package transport

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// newProcAttr puts the server in a process group of its own, so that signals
// reach the processes it starts too (npx, shells) and the terminal's Ctrl-C
// reaches mcpi alone, which then shuts the server down in order.
func newProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

func terminate(p *os.Process) { signalGroup(p, syscall.SIGTERM) }

func kill(p *os.Process) { signalGroup(p, syscall.SIGKILL) }

func signalGroup(p *os.Process, sig syscall.Signal) {
	if err := syscall.Kill(-p.Pid, sig); err != nil {
		_ = p.Signal(sig)
	}
}

func signalName(st *os.ProcessState) string {
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return ws.Signal().String()
	}
	return ""
}

// groupAlive reports whether the process group pgid has a member left.
func groupAlive(pgid int) bool { return syscall.Kill(-pgid, 0) == nil }

// signalPgid sends sig to the process group pgid.
func signalPgid(pgid int, sig syscall.Signal) { _ = syscall.Kill(-pgid, sig) }

// nonBlocking returns what writes to f without waiting, or nil when f's
// descriptor is blocking (a write to it could not be left when the pipe
// is full).
func nonBlocking(f *os.File) syscall.RawConn {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	var flags int
	var ferr error
	if err := rc.Control(func(fd uintptr) { flags, ferr = unix.FcntlInt(fd, unix.F_GETFL, 0) }); err != nil || ferr != nil || flags&unix.O_NONBLOCK == 0 {
		return nil
	}
	return rc
}

// writeNow writes what the descriptor takes of b at once. A full pipe is
// no error: n says how much went.
func writeNow(fd uintptr, b []byte) (n int, err error) {
	for n < len(b) {
		m, err := syscall.Write(int(fd), b[n:])
		if m > 0 {
			n += m
		}
		switch {
		case err == syscall.EINTR:
		case err == syscall.EAGAIN:
			return n, nil
		case err != nil:
			return n, err
		case m == 0:
			return n, nil
		}
	}
	return n, nil
}
