package cli

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/check"
	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
	"github.com/mcpi-dev/mcpi/internal/session"
)

// TestCheckPaneBorrowsAStdioSession: the TUI's Check pane runs on the
// TUI's own session of a stdio server rather than starting a second
// instance, which a server of one instance (a lock file here) refuses;
// what needs a second connection, and logging/setLevel, are said not
// checked, and the session goes on.
func TestCheckPaneBorrowsAStdioSession(t *testing.T) {
	lock := filepath.Join(t.TempDir(), "lock")
	target := command.TargetOptions{Command: []string{os.Args[0], "-test.run=^$"},
		Env: []string{mcptest.PeerEnv + "=demo", mcptest.SingleLockEnv + "=" + lock}, Timeout: 10 * time.Second}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	live, err := target.Connect(ctx, session.Options{Handler: session.DeclineHandler{}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	rep, err := checkFunc(target)(ctx, live, func(string) {})
	if err != nil {
		t.Fatalf("the check did not run: %v", err)
	}
	if len(rep.Rules) == 0 || !slices.Contains(rep.Skipped, check.SkippedSecond) {
		t.Errorf("rules %d, skipped %q", len(rep.Rules), rep.Skipped)
	}
	for _, f := range rep.Findings {
		if f.Severity == check.Error {
			t.Errorf("a finding on the demo server: %s %s", f.Rule, f.Message)
		}
	}
	if _, err := live.ListTools(ctx, ""); err != nil {
		t.Errorf("the TUI's session did not go on: %v", err)
	}
	// Without the session (the TUI is not connected), a connection of the
	// check's own, as mcpi check makes, once the lock is free.
	live.Close()
	rep, err = checkFunc(target)(ctx, nil, func(string) {})
	if err != nil || slices.Contains(rep.Skipped, check.SkippedSecond) {
		t.Errorf("a check of its own: %v %q", err, rep.Skipped)
	}
}
