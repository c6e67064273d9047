//go:build unix

package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/live"
)

// buildWith builds mcpi with -ldflags -X settings of internal/live.
func buildWith(t *testing.T, name string, sets ...string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), name)
	var flags []string
	for _, s := range sets {
		flags = append(flags, "-X", "github.com/mcpi-dev/mcpi/internal/live."+s)
	}
	if b, err := exec.Command("go", "build", "-ldflags", strings.Join(flags, " "), "-o", out, "github.com/mcpi-dev/mcpi/cmd/mcpi").CombinedOutput(); err != nil {
		t.Fatalf("building %s: %v\n%s", name, err, b)
	}
	return out
}

// Two builds against one daemon: one of the same protocol runs its
// command with a warning; one of another protocol is refused, with the
// way out, which works.
func TestSessionSocketVersion(t *testing.T) {
	t.Parallel()
	a := buildWith(t, "mcpi-a", "buildID=build-a")
	b := buildWith(t, "mcpi-b", "buildID=build-b")
	p3 := buildWith(t, "mcpi-p3", "buildID=build-c", "protocolVersion=3")
	rt := t.TempDir()
	env := append(os.Environ(), "XDG_RUNTIME_DIR="+rt)
	run := func(bin string, args ...string) (int, string, string) { return runBinary(t, bin, env, args...) }
	if code, _, errOut := run(a, append([]string{"session", "start", "v", "--idle", "2m"}, peerArgs("demo")...)...); code != 0 {
		t.Fatalf("start: %d %s", code, errOut)
	}
	t.Cleanup(func() { run(a, "session", "stop", "v") })
	if code, _, errOut := run(a, "ping", "--session", "v"); code != 0 || errOut != "" {
		t.Errorf("the same build: exit %d, %q", code, errOut)
	}
	if code, _, errOut := run(b, "ping", "--session", "v"); code != 0 || !strings.Contains(errOut, "warning: session v runs mcpi build build-a, and this is build build-b") {
		t.Errorf("another build: exit %d, %q", code, errOut)
	}
	code, _, errOut := run(p3, "ping", "--session", "v")
	if code != int(command.ExitConnect) || !strings.Contains(errOut, "session v was started by an mcpi that speaks socket protocol 2, and this mcpi speaks 3: stop it (mcpi session stop v) and start it again") {
		t.Errorf("another protocol: exit %d, %q", code, errOut)
	}
	if code, _, errOut := run(p3, "session", "stop", "v"); code != 0 {
		t.Errorf("the way out, session stop, from the other protocol: exit %d, %q", code, errOut)
	}
}

// A daemon of before the version (its record says no protocol) is never
// sent a command: the client refuses with the same sentence.
func TestSessionUnversionedDaemon(t *testing.T) {
	t.Parallel()
	dir := liveDir(t)
	if err := live.EnsureDir(dir); err != nil {
		t.Fatal(err)
	}
	ln, err := live.Listen(dir, "old")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var got atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			got.Add(1)
			c.Close()
		}
	}()
	rec, _ := json.Marshal(map[string]any{"name": "old", "target": "-- old", "pid": os.Getpid(), "state": "running", "started": time.Now()})
	if err := os.WriteFile(live.RecordPath(dir, "old"), rec, 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runLive(t, dir, nil, "ping", "--session", "old")
	if code != command.ExitConnect || !strings.Contains(errOut, "session old was started by an mcpi that speaks socket protocol 1, and this mcpi speaks 2: stop it (mcpi session stop old) and start it again") {
		t.Errorf("an unversioned daemon: exit %d, %q", code, errOut)
	}
	if n := got.Load(); n != 0 {
		t.Errorf("the unversioned daemon was sent %d connection(s)", n)
	}
}
