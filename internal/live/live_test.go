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
