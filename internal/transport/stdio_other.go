//go:build !unix

package transport

import (
	"os"
	"syscall"
)

func newProcAttr() *syscall.SysProcAttr { return nil }

func terminate(p *os.Process) { _ = p.Kill() }

func kill(p *os.Process) { _ = p.Kill() }

func signalName(*os.ProcessState) string { return "" }

func groupAlive(int) bool { return false }

func signalPgid(int, syscall.Signal) {}

// nonBlocking is nil: every write goes through os.File, off the sender's
// goroutine when the pipe is full.
func nonBlocking(*os.File) syscall.RawConn { return nil }

func writeNow(uintptr, []byte) (int, error) { return 0, nil }
