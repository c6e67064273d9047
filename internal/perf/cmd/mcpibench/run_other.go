//go:build !linux

package main

import (
	"os/exec"
	"time"
)

// runTraced runs cmd to its end and measures it. Without Linux's ptrace
// and /proc, peak RSS is the rusage of the client, which may be its
// server's when the server was the larger (none where there is no rusage).
func runTraced(cmd *exec.Cmd, timeout time.Duration) (sample, error) {
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return sample{}, err
	}
	timer := time.AfterFunc(timeout, func() { cmd.Process.Kill() })
	defer timer.Stop()
	err := cmd.Wait()
	return sample{wall: time.Since(start), rssKB: maxRSSKB(cmd)}, err
}
