//go:build !unix

package proxyrun

import (
	"os"
)

// openTTY: without /dev/tty, the TUI is served for mcpi proxy attach.
func openTTY() (*os.File, string) {
	return nil, "a stdio proxy shows its TUI on /dev/tty, which this system has not"
}
