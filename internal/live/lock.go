package live

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// A session's name is owned by whoever holds its lock, NAME.lock in the
// runtime directory (an exclusive flock): session start takes it before it
// touches any file of the session and hands it to the daemon, which holds
// it as long as it lives (the system lets it go when the daemon ends, by
// whatever means). Two starts of one name so never both start: the second
// finds the lock held and leaves every file alone. The lock file is removed
// with the session's other files, by whoever holds it: a start that opened
// it meanwhile finds, once it has the lock, that the file it locked is no
// longer the one at its path, and opens it again (Lock), so no two ever
// hold locks of one name on two files.

// LockPath is a session's lock file.
func LockPath(dir, name string) string { return filepath.Join(dir, name+".lock") }

// ErrLocked says another mcpi owns a session's name: its daemon runs, or
// it is starting.
var ErrLocked = errors.New("the session's name is taken")

// Lock takes the named session's lock, without waiting: ErrLocked when
// another holds it. The lock is held until the file returned (or a copy of
// it in a child process) is closed.
func Lock(dir, name string) (*os.File, error) {
	if err := EnsureDir(dir); err != nil {
		return nil, err
	}
	for range 100 {
		f, err := lockFile(LockPath(dir, name), name)
		if err != nil {
			return nil, err
		}
		if isAt(f, LockPath(dir, name)) {
			return f, nil
		}
		f.Close()
	}
	return nil, fmt.Errorf("the lock of session %s: %w", name, ErrLocked)
}

// isAt reports whether f is still the file at path: a lock file that its
// holder removed (and another made anew) since f was opened is not.
func isAt(f *os.File, path string) bool {
	fi, ferr := f.Stat()
	pi, perr := os.Lstat(path)
	return ferr == nil && perr == nil && os.SameFile(fi, pi)
}

// lockFile opens and locks path, a session's lock file.
func lockFile(path, name string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscallNoFollow, 0o600)
	if err != nil {
		return nil, fmt.Errorf("the lock of session %s: %w", name, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s is not a file: %w", path, ErrUnsafeDir)
	}
	if err := private(fi, path, "lock"); err != nil {
		f.Close()
		return nil, err
	}
	if err := flockExclusive(f); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// RemoveUnowned deletes the files of a session whose name nobody owns (it
// ended, or its daemon is gone), its lock file included, and reports
// whether it did: a session whose daemon runs or starts under that name
// is left alone.
func RemoveUnowned(dir, name string) bool {
	l, err := Lock(dir, name)
	if err != nil {
		return false
	}
	defer l.Close()
	Remove(dir, name)
	return true
}

// RemoveStrayLocks removes the lock files of names that have no other file
// (no record, no socket) and that nobody holds: what an mcpi that kept its
// lock files left behind. A start under way holds its name's lock, and is
// left alone.
func RemoveStrayLocks(dir string) {
	locks, _ := filepath.Glob(filepath.Join(dir, "*.lock"))
	for _, l := range locks {
		name := strings.TrimSuffix(filepath.Base(l), ".lock")
		if ValidName(name) != nil {
			continue
		}
		if _, err := os.Lstat(RecordPath(dir, name)); err == nil {
			continue
		}
		if _, err := os.Lstat(SocketPath(dir, name)); err == nil {
			continue
		}
		RemoveUnowned(dir, name)
	}
}
