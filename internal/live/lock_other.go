//go:build !unix

package live

import "os"

const syscallNoFollow = 0

func flockExclusive(*os.File) error { return errNoUnix }

// Inherit returns the lock a daemon was handed as file descriptor fd.
func Inherit(fd uintptr) *os.File { return os.NewFile(fd, "lock") }
