package live

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"
)

func TestLiveDirRefusesOthers(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "run")
	if err := EnsureDir(dir); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
		t.Fatalf("mode %v", fi.Mode())
	}
	open := filepath.Join(base, "open")
	os.Mkdir(open, 0o700)
	os.Chmod(open, 0o755)
	if err := EnsureDir(open); !errors.Is(err, ErrUnsafeDir) {
		t.Errorf("a 0755 directory: %v", err)
	}
	link := filepath.Join(base, "link")
	os.Symlink(dir, link)
	if err := EnsureDir(link); !errors.Is(err, ErrUnsafeDir) {
		t.Errorf("a symbolic link: %v", err)
	}
	if os.Getuid() == 0 {
		other := filepath.Join(base, "other")
		os.Mkdir(other, 0o700)
		if err := os.Chown(other, 12345, 12345); err != nil {
			t.Fatal(err)
		}
		if err := EnsureDir(other); !errors.Is(err, ErrUnsafeDir) {
			t.Errorf("a directory of uid 12345: %v", err)
		}
	}
}

func TestLiveSocketRefusesOthers(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	ln, err := Listen(dir, "s")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	fi, err := os.Lstat(SocketPath(dir, "s"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket: %v %v", fi.Mode(), err)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if checkPeer(c) != nil {
				t.Error("our own connection refused")
			}
			c.Close()
		}
	}()
	c, err := Dial(dir, "s")
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	os.Chmod(SocketPath(dir, "s"), 0o666)
	if _, err := Dial(dir, "s"); !errors.Is(err, ErrUnsafeDir) {
		t.Errorf("a 0666 socket: %v", err)
	}
	if os.Getuid() == 0 {
		os.Chmod(SocketPath(dir, "s"), 0o600)
		os.Chown(SocketPath(dir, "s"), 12345, 12345)
		if _, err := Dial(dir, "s"); !errors.Is(err, ErrUnsafeDir) {
			t.Errorf("a socket of uid 12345: %v", err)
		}
	}
	if _, err := Listen(dir, "s"); err == nil {
		t.Error("a second daemon took a running session's name")
	}
}

func TestLiveStaleSocketRemoved(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	if err := EnsureDir(dir); err != nil {
		t.Fatal(err)
	}
	// A socket whose listener is gone without unlinking it.
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: SocketPath(dir, "dead"), Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close()
	os.Chmod(SocketPath(dir, "dead"), 0o600)
	if _, err := Dial(dir, "dead"); !errors.Is(err, ErrNoDaemon) {
		t.Fatalf("dial: %v", err)
	}
	if _, err := os.Lstat(SocketPath(dir, "dead")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the stale socket is still there: %v", err)
	}
}

// The lock file goes with the session's files. A start that opened it
// before it went, and locks it after, holds a file no longer the name's:
// Lock sees it and takes the one at the path, so two never both own a
// name.
func TestLockRemovedWithTheSession(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	held, err := Lock(dir, "s")
	if err != nil {
		t.Fatal(err)
	}
	// Another start has opened the lock file, not locked it yet.
	early, err := os.OpenFile(LockPath(dir, "s"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer early.Close()
	if !RemoveUnowned(dir, "t") || !isAt(held, LockPath(dir, "s")) {
		t.Fatal("another name's removal touched this one's lock")
	}
	Remove(dir, "s")
	held.Close()
	if _, err := os.Lstat(LockPath(dir, "s")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the lock file is still there: %v", err)
	}
	if isAt(early, LockPath(dir, "s")) {
		t.Error("a removed lock file is taken for the name's")
	}
	again, err := Lock(dir, "s")
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if !isAt(again, LockPath(dir, "s")) {
		t.Error("Lock holds a file that is not at the lock's path")
	}
	if _, err := Lock(dir, "s"); !errors.Is(err, ErrLocked) {
		t.Errorf("a second Lock: %v, want ErrLocked", err)
	}
}

// A lock file with no session beside it (an older mcpi's) goes; one held
// by a start under way, or beside a session's record, stays.
func TestRemoveStrayLocks(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	if err := EnsureDir(dir); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"old", "starting", "ended"} {
		l, err := Lock(dir, n)
		if err != nil {
			t.Fatal(err)
		}
		if n == "starting" {
			defer l.Close()
			continue
		}
		l.Close()
	}
	if err := WriteRecord(dir, &Status{Name: "ended", State: StateStopped}); err != nil {
		t.Fatal(err)
	}
	RemoveStrayLocks(dir)
	for n, want := range map[string]bool{"old": false, "starting": true, "ended": true} {
		if _, err := os.Lstat(LockPath(dir, n)); (err == nil) != want {
			t.Errorf("%s.lock there: %v, want %v", n, err == nil, want)
		}
	}
}
