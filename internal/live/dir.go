package live

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
)

// DefaultDir returns the per-user runtime directory: $XDG_RUNTIME_DIR/mcpi,
// else mcpi-UID under the temporary directory. It is not created.
func DefaultDir() string {
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "mcpi")
	}
	return filepath.Join(os.TempDir(), "mcpi-"+strconv.Itoa(os.Getuid()))
}

// ErrUnsafeDir says a runtime directory or socket is not ours alone.
var ErrUnsafeDir = errors.New("not private to this user")

// EnsureDir creates dir (0700) when missing and checks that it is a real
// directory (not a symbolic link), owned by this user and closed to
// everyone else: another user who could write there could put a socket of
// their own in a session's place, or read what sessions leave behind.
func EnsureDir(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("the runtime directory %s: %w", dir, err)
	}
	return CheckDir(dir)
}

// CheckDir checks dir as EnsureDir does, without creating it.
func CheckDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("the runtime directory %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("the runtime directory %s is not a directory (a symbolic link?): %w", dir, ErrUnsafeDir)
	}
	if err := private(fi, dir, "directory"); err != nil {
		return err
	}
	return nil
}

var nameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`) })

// ValidName reports whether name may name a session: it becomes a file
// name in the runtime directory.
func ValidName(name string) error {
	if !nameRE().MatchString(name) {
		return fmt.Errorf("invalid session name %q: letters, digits, '.', '_' and '-', at most 64, not starting with a punctuation mark", name)
	}
	return nil
}

// SocketPath, RecordPath and LogPath are a session's files.
func SocketPath(dir, name string) string { return filepath.Join(dir, name+".sock") }
func RecordPath(dir, name string) string { return filepath.Join(dir, name+".json") }
func LogPath(dir, name string) string    { return filepath.Join(dir, name+".log") }
