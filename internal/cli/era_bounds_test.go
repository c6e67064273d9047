//go:build unix

package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/eras"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
)

// eraEnv is the environment of the real binary with a cache of its own and
// no MCPI_ERA, so that it reads and writes the era memory in cache.
func eraEnv(cache string) []string {
	env := []string{}
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "MCPI_ERA=") && !strings.HasPrefix(e, "XDG_CACHE_HOME=") {
			env = append(env, e)
		}
	}
	return append(env, "XDG_CACHE_HOME="+cache)
}

// runGuarded runs the real binary under a deadline that is a guard against
// a hang, not a measure.
func runGuarded(t *testing.T, env []string, args ...string) (string, error) {
	t.Helper()
	bin := mcpiBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("mcpi %v still ran after 30s: %s", args, out)
	}
	return string(out), err
}

// TestEraMemoryIsReadWithCare: a FIFO or a symbolic link to /dev/zero at
// eras.json neither hangs a command nor grows it: the memory is opened only
// when it is a regular file, read up to its bound, and ignored otherwise
// (-v says why); the command detects the era as if nothing were
// remembered.
func TestEraMemoryIsReadWithCare(t *testing.T) {
	t.Parallel()
	for name, make := range map[string]func(path string) error{
		"fifo":     func(p string) error { return syscall.Mkfifo(p, 0o600) },
		"dev-zero": func(p string) error { return os.Symlink("/dev/zero", p) },
		"too-big": func(p string) error {
			return os.WriteFile(p, append([]byte(`{"x":{"era":"legacy"},"pad":"`), make([]byte, eras.MaxFile)...), 0o600)
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cache := t.TempDir()
			if err := os.MkdirAll(filepath.Join(cache, "mcpi"), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := make(filepath.Join(cache, "mcpi", "eras.json")); err != nil {
				t.Fatal(err)
			}
			out, err := runGuarded(t, eraEnv(cache), with(peerArgs("demo"), "info", "-v", "--timeout", "10s")...)
			if err != nil || !strings.Contains(out, "the era memory") || !strings.Contains(out, "is ignored") || !strings.Contains(out, "detected:") {
				t.Errorf("%v:\n%s", err, out)
			}
		})
	}
}

// TestRememberedEraKeepsTheStartClock: a remembered modern era whose server
// now ignores server/discover falls back to initialize within --timeout,
// the bound of the whole start, not after a full timeout and a new probe.
func TestRememberedEraKeepsTheStartClock(t *testing.T) {
	t.Parallel()
	cache := t.TempDir()
	env := eraEnv(cache)
	peer := peerArgs(mcptest.GarbledPrefix + "ignore-unknown")
	args := with(peer, "info", "--timeout", "4s")
	// The server "was" modern last time. (An era guessed from a time-out is
	// never remembered: the memory is written as a modern run would.)
	parsed, err := parseArgs(NewCmdInfo, args[1:])
	if err != nil {
		t.Fatal(err)
	}
	key := parsed.Target.EraKey()
	path := filepath.Join(cache, "mcpi", "eras.json")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(`{"`+key+`":{"era":"modern","at":"2026-11-01T00:00:00Z"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	// --timeout 4s bounds the whole start, and mcpi keeps that clock: a
	// start that ran past it would fail the command. The remembered era's
	// probe takes half of it, and initialize the rest.
	out, err := runGuarded(t, env, args...)
	if err != nil || !strings.Contains(out, "remembered: this server spoke it last time") || !strings.Contains(out, "got no answer within 2s, so initialize") {
		t.Errorf("--timeout 4s: %v:\n%s", err, out)
	}
	if b, _ := os.ReadFile(path); strings.Contains(string(b), `"era"`) {
		t.Errorf("the remembered era that failed is still remembered, or the guess after it was: %s", b)
	}
}
