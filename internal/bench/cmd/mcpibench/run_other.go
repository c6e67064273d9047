//go:build unix && !linux

package main

import (
	"os/exec"
	"syscall"
	"time"
)

// runTraced runs cmd to its end and measures it. Without Linux's ptrace
// and /proc, peak RSS is the rusage of the client, which may be its
// server's when the server was the larger.
func runTraced(cmd *exec.Cmd, timeout time.Duration) (sample, error) {
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return sample{}, err
	}
	timer := time.AfterFunc(timeout, func() { cmd.Process.Kill() })
	defer timer.Stop()
	err := cmd.Wait()
	s := sample{wall: time.Since(start)}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		s.rssKB = int64(ru.Maxrss)
	}
	return s, err
}
