//go:build unix

package live

import (
	"fmt"
	"net"
	"os"
	"syscall"
)

// private checks fi is owned by this user and has no group or other
// permission bits.
func private(fi os.FileInfo, path, what string) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("the runtime %s %s: cannot read its owner", what, path)
	}
	if int(st.Uid) != os.Getuid() {
		return fmt.Errorf("the runtime %s %s belongs to uid %d, not to uid %d: %w", what, path, st.Uid, os.Getuid(), ErrUnsafeDir)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("the runtime %s %s has mode %04o: others may use it: %w", what, path, fi.Mode().Perm(), ErrUnsafeDir)
	}
	return nil
}

// listenPrivate listens on a Unix socket at path that is 0600 from its
// first instant (the umask, not a chmod after).
func listenPrivate(path string) (*net.UnixListener, error) {
	old := syscall.Umask(0o177)
	defer syscall.Umask(old)
	return net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
}

// Alive reports whether the process pid exists.
func Alive(pid int) bool { return pid > 0 && syscall.Kill(pid, 0) == nil }
