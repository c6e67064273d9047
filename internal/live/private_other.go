//go:build !unix

package live

import (
	"errors"
	"fmt"
	"net"
	"os"
)

// errNoUnix says live sessions need what only Unix systems give here: file
// ownership to check and peer credentials.
var errNoUnix = errors.New("live sessions need a Unix system (Linux, macOS, BSD): the socket's owner and its peer cannot be checked here")

func private(_ os.FileInfo, path, what string) error {
	return fmt.Errorf("the runtime %s %s: %w", what, path, errNoUnix)
}

func listenPrivate(string) (*net.UnixListener, error) { return nil, errNoUnix }

// Alive reports whether the process pid exists: not known here.
func Alive(int) bool { return false }
