package mcptest

import (
	"fmt"
	"os"
)

// SingleLockEnv, set to a file's path beside PeerEnv, makes the peer a
// single-instance server (as @browsermcp/mcp is): it takes the file as its
// lock when it starts, and when another instance holds it, it says so on
// stderr and exits 1 before reading anything. The lock is removed when
// the peer's stdin ends.
const SingleLockEnv = "MCPTEST_SINGLE_LOCK"

// singleInstance takes the lock SingleLockEnv names, if any, and returns
// what releases it.
func singleInstance() func() {
	path := os.Getenv(SingleLockEnv)
	if path == "" {
		return func() {}
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		fmt.Fprintf(os.Stderr, "another instance is running (%s is held): exiting\n", path)
		os.Exit(1)
	}
	fmt.Fprintf(f, "%d\n", os.Getpid())
	f.Close()
	return func() { os.Remove(path) }
}
