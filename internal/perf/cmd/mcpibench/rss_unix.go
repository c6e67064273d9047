//go:build unix && !linux

package main

import (
	"os/exec"
	"syscall"
)

// maxRSSKB is the rusage's peak RSS of the process cmd ran.
func maxRSSKB(cmd *exec.Cmd) int64 {
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		return int64(ru.Maxrss)
	}
	return 0
}
