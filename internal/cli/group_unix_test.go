//go:build unix

package cli

import (
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
)

// TestNoProcessOutlivesAOneShotCommand: a stdio server forks a child into
// its process group that ignores SIGTERM and holds its stdout and stderr,
// then exits on stdin's end. When the one-shot command returns, in process
// or as the binary, with -v or without, nothing of the group is left.
func TestNoProcessOutlivesAOneShotCommand(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		binary   bool
		extraArg []string
	}{
		{name: "in process"},
		{name: "in process -v", extraArg: []string{"-v"}},
		{name: "binary", binary: true},
		{name: "binary -v", binary: true, extraArg: []string{"-v"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			file := filepath.Join(t.TempDir(), "group")
			args := append([]string{"call", "echo", "--era", "legacy", "-e", mcptest.GroupFileEnv + "=" + file}, tc.extraArg...)
			args = with(peerArgs("hostile:"+mcptest.HostileOrphan), args...)
			var out string
			var ok bool
			if tc.binary {
				b, err := exec.Command(mcpiBinary(t), args...).CombinedOutput()
				out, ok = string(b), err == nil
			} else {
				code, stdout, stderr := runCLI(t, "", args...)
				out, ok = stdout+stderr, code == command.ExitOK
			}
			pgid, child, err := mcptest.ReadGroup(file)
			if err != nil {
				t.Fatalf("the server did not say its group: %v\n%s", err, out)
			}
			alive := syscall.Kill(-pgid, 0) == nil
			if alive {
				// The group is the server's this test started: end it.
				syscall.Kill(-pgid, syscall.SIGKILL)
			}
			if !ok {
				t.Errorf("the command failed:\n%s", out)
			}
			if alive {
				t.Errorf("the server's child %d (group %d) outlived the command:\n%s", child, pgid, out)
			}
		})
	}
}
