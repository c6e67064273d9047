//go:build !unix

package live

import "os/exec"

// Detach does nothing here.
func Detach(*exec.Cmd) {}
