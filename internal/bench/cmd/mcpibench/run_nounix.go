//go:build !unix

package main

import (
	"os/exec"
	"time"
)

// runTraced runs cmd to its end and measures its time; peak RSS is not
// measured here.
func runTraced(cmd *exec.Cmd, timeout time.Duration) (sample, error) {
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return sample{}, err
	}
	timer := time.AfterFunc(timeout, func() { cmd.Process.Kill() })
	defer timer.Stop()
	err := cmd.Wait()
	return sample{wall: time.Since(start)}, err
}
