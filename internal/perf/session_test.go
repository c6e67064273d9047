package perf_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/live"
	"github.com/mcpi-dev/mcpi/internal/perf"
)

// mcpiSession starts a live session (mcpi session start, this test binary
// serving as mcpi: see TestMain) on target and returns a caller that runs
// `mcpi call echo text=hi --session` through the session's socket: what a
// command in a session costs once its process has started and parsed its
// arguments (the socket, the verb run in the daemon, the call, the output
// back).
func mcpiSession(b *testing.B, era string, target ...string) caller {
	b.Helper()
	runtime := filepath.Join(b.TempDir(), "run")
	if err := os.Mkdir(runtime, 0o700); err != nil {
		b.Fatal(err)
	}
	mcpi := func(args ...string) {
		b.Helper()
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+runtime)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("mcpi %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	mcpi(append([]string{"session", "start", "bench", "--era", era, "--idle", "10m"}, target...)...)
	b.Cleanup(func() { mcpi("session", "stop", "bench") })
	dir := filepath.Join(runtime, "mcpi")
	return func(ctx context.Context) error {
		var out, errOut bytes.Buffer
		req := &live.Request{Args: []string{"call", "echo", "text=hi", "--session", "bench"}}
		code, err := live.Run(ctx, dir, "bench", req, &out, &errOut)
		switch {
		case err != nil:
			return err
		case code != 0 || strings.TrimSpace(out.String()) != "hi":
			return fmt.Errorf("exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
		}
		return nil
	}
}

// stdioTarget runs this test binary as the demo server.
func stdioTarget() []string {
	return []string{"-e", perf.PeerEnv + "=" + perf.ModeDemo, "--", os.Args[0]}
}
