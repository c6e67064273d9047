package transport

import (
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

var adoptOnce sync.Once

// adoptOrphans makes mcpi the reaper of what its stdio servers leave
// behind: a process a server forked and did not wait for becomes mcpi's
// child when the server exits, instead of init's, so that Close can reap
// it once it ends and return when the server's group is truly gone rather
// than when init gets round to its zombies.
func adoptOrphans() {
	adoptOnce.Do(func() { _ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) })
}

// reapGroup reaps the ended processes of the process group pgid that are
// mcpi's children (adopted from a server that exited), without waiting.
func reapGroup(pgid int) {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-pgid, &ws, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}
