//go:build unix

package live

import (
	"errors"
	"os"
	"syscall"
)

const syscallNoFollow = syscall.O_NOFOLLOW

func flockExclusive(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EWOULDBLOCK):
			return ErrLocked
		}
		return err
	}
}

// Inherit returns the lock a daemon was handed as file descriptor fd,
// closed on exec: the server it starts must not hold the session's name
// once the daemon is gone.
func Inherit(fd uintptr) *os.File {
	syscall.CloseOnExec(int(fd))
	return os.NewFile(fd, "lock")
}
