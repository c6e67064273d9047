//go:build unix

package live

import (
	"os/exec"
	"syscall"
)

// Detach makes cmd start in a session of its own, so that the terminal's
// signals (ctrl+c, the terminal closing) do not reach it.
func Detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
}
