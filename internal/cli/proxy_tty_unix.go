//go:build unix

package cli

import (
	"os"

	"golang.org/x/sys/unix"
)

// foreground reports whether this process is in the terminal's
// foreground process group: only then may it read the terminal's keys.
func foreground(tty *os.File) bool {
	pgrp, err := unix.IoctlGetInt(int(tty.Fd()), unix.TIOCGPGRP)
	return err == nil && pgrp == unix.Getpgrp()
}
