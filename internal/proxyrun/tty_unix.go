//go:build unix

package proxyrun

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// foreground reports whether this process is in the terminal's
// foreground process group: only then may it read the terminal's keys.
func foreground(tty *os.File) bool {
	pgrp, err := unix.IoctlGetInt(int(tty.Fd()), unix.TIOCGPGRP)
	return err == nil && pgrp == unix.Getpgrp()
}

// openTTY opens the terminal a stdio proxy's TUI may use, or says why
// there is none.
func openTTY() (*os.File, string) {
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Sprintf("there is no /dev/tty here: %v", err)
	}
	if !foreground(tty) {
		tty.Close()
		return nil, "the host started this proxy in the background of its terminal (a process group of its own), where a TUI could not read a key"
	}
	return tty, ""
}
