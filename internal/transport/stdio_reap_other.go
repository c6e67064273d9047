//go:build !linux

package transport

// adoptOrphans does nothing here: a process a server leaves behind goes to
// init, which reaps it.
func adoptOrphans() {}

// reapGroup does nothing here (see adoptOrphans).
func reapGroup(int) {}
