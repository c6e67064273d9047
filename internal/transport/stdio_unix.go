//go:build unix

package transport

import (
	"os"
	"syscall"
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
