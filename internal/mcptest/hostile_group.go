package mcptest

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// HostileOrphan is a stdio server (legacy era, the tool "echo") that
// forks a child into its own process group before it serves: the child
// ignores SIGTERM, holds the server's stdout and stderr, and sleeps for a
// minute. The server itself exits as soon as its stdin ends, so what is
// left of the group once it has gone must be ended by the client.
//
// With GroupFileEnv set, the server writes "PGID CHILDPID" to that file
// once the child ignores SIGTERM, and only then answers: a test reads the
// group it must find gone (and may kill it, being its creator's).
const HostileOrphan = "orphan"

// GroupFileEnv names the file HostileOrphan writes its group to.
const GroupFileEnv = "MCPI_TEST_GROUP_FILE"

// hostileOrphanChild is the child HostileOrphan forks.
const hostileOrphanChild = "orphan-child"

// orphanLife is how long HostileOrphan's child lives if nobody ends it.
const orphanLife = time.Minute

// startOrphan forks HostileOrphan's child and waits until it ignores
// SIGTERM.
func startOrphan() {
	ready, w, err := os.Pipe()
	if err != nil {
		fmt.Fprintf(os.Stderr, "hostile: pipe: %v\n", err)
		os.Exit(2)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), PeerEnv+"=hostile:"+hostileOrphanChild)
	// The server's own stdout and stderr: the child holds them open.
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, os.Stdout, os.Stderr
	cmd.ExtraFiles = []*os.File{w}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "hostile: starting the child: %v\n", err)
		os.Exit(2)
	}
	w.Close()
	var b [1]byte
	ready.Read(b[:]) // the child ignores SIGTERM (or died: EOF)
	ready.Close()
	if f := os.Getenv(GroupFileEnv); f != "" {
		// mcpi starts a stdio server as the leader of a group of its own.
		os.WriteFile(f, []byte(fmt.Sprintf("%d %d", os.Getpid(), cmd.Process.Pid)), 0o600)
	}
	// The child is not waited for: the server exits on stdin's end and
	// leaves it behind.
}

// runOrphanChild is HostileOrphan's child: it ignores SIGTERM, says so on
// file descriptor 3, and sleeps.
func runOrphanChild() {
	signal.Ignore(syscall.SIGTERM)
	if f := os.NewFile(3, "ready"); f != nil {
		f.Write([]byte{1})
		f.Close()
	}
	time.Sleep(orphanLife)
}

// ReadGroup reads what HostileOrphan wrote to its GroupFileEnv file: the
// server's process group and its child's pid.
func ReadGroup(path string) (pgid, child int, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, err
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 0, 0, fmt.Errorf("%s: %q is not \"PGID PID\"", path, b)
	}
	if pgid, err = strconv.Atoi(f[0]); err == nil {
		child, err = strconv.Atoi(f[1])
	}
	return pgid, child, err
}
