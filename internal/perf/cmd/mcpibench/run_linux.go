package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// runTraced runs cmd to its end and measures it. The client is traced
// (ptrace) only to be stopped as it exits, when its memory is still there:
// its VmHWM is then its own peak RSS. The rusage that wait4 reports would
// be the larger of the client's and the server's, which the client has
// reaped. Apart from that stop, a traced process stops only when a signal
// is delivered to its main thread, and is resumed with the signal at once.
//
// The caller must have locked its OS thread: ptrace requests must come
// from the thread that started the tracee.
func runTraced(cmd *exec.Cmd, timeout time.Duration) (sample, error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Ptrace: true, Setpgid: true}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return sample{}, err
	}
	defer cmd.Process.Release()
	pid := cmd.Process.Pid
	timer := time.AfterFunc(timeout, func() { syscall.Kill(-pid, syscall.SIGKILL) })
	defer timer.Stop()

	var ws syscall.WaitStatus
	var ru syscall.Rusage
	// The tracee stops at its exec.
	if _, err := syscall.Wait4(pid, &ws, syscall.WALL, nil); err != nil {
		return sample{}, fmt.Errorf("wait4: %w", err)
	}
	const exitKill = 0x100000 // PTRACE_O_EXITKILL: the tracee dies with us
	if err := syscall.PtraceSetOptions(pid, syscall.PTRACE_O_TRACEEXIT|exitKill); err != nil {
		syscall.Kill(pid, syscall.SIGKILL)
		return sample{}, fmt.Errorf("ptrace: %w", err)
	}
	if err := syscall.PtraceCont(pid, 0); err != nil {
		return sample{}, fmt.Errorf("ptrace: %w", err)
	}
	var hwm int64
	for {
		if _, err := syscall.Wait4(pid, &ws, syscall.WALL, &ru); err != nil {
			return sample{}, fmt.Errorf("wait4: %w", err)
		}
		if ws.Exited() || ws.Signaled() {
			break
		}
		if !ws.Stopped() {
			continue
		}
		sig := ws.StopSignal()
		if sig == syscall.SIGTRAP {
			if ws.TrapCause() == syscall.PTRACE_EVENT_EXIT {
				hwm = vmHWM(pid)
			}
			sig = 0
		}
		if err := syscall.PtraceCont(pid, int(sig)); err != nil && !errors.Is(err, syscall.ESRCH) {
			return sample{}, fmt.Errorf("ptrace: %w", err)
		}
	}
	wall := time.Since(start)
	if hwm == 0 {
		hwm = int64(ru.Maxrss) // not stopped at exit: the larger of client and server
	}
	s := sample{wall: wall, rssKB: hwm}
	switch {
	case ws.Signaled():
		return s, fmt.Errorf("killed by %v", ws.Signal())
	case ws.ExitStatus() != 0:
		return s, fmt.Errorf("exit status %d", ws.ExitStatus())
	}
	return s, nil
}

// vmHWM returns a process's peak resident set size in KiB, 0 if unknown.
func vmHWM(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for l := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			f := strings.Fields(v)
			if len(f) > 0 {
				n, _ := strconv.ParseInt(f[0], 10, 64)
				return n
			}
		}
	}
	return 0
}
