//go:build unix

package cli

import (
	"os"
	"syscall"
)

// openEraFile opens path for reading without following a symbolic link
// (ELOOP) and without waiting on a FIFO's writer or a device (O_NONBLOCK);
// readEraFile then refuses anything that is not a regular file.
func openEraFile(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}
