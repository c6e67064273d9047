//go:build unix

package eras

import (
	"os"
	"syscall"
)

// openFile opens path for reading without following a symbolic link
// (ELOOP) and without waiting on a FIFO's writer or a device (O_NONBLOCK);
// readFile then refuses anything that is not a regular file.
func openFile(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}
