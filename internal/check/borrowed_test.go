package check

import (
	"os"
	"slices"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/mcptest"
	"github.com/mcpi-dev/mcpi/internal/session"
)

// TestBorrowedSession: on a borrowed session (the TUI's) nothing that
// changes its state is sent and no connection of the check's own is
// opened; the report says what that left unchecked.
func TestBorrowedSession(t *testing.T) {
	t.Parallel()
	env := []string{mcptest.PeerEnv + "=demo"}
	rep := checkStdio(t, []string{os.Args[0], "-test.run=^$"}, env, session.EraLegacy, 10*time.Second, Options{Borrowed: true})
	if !slices.Contains(rep.Skipped, SkippedSetLevel) || !slices.Contains(rep.Skipped, SkippedSecond) {
		t.Errorf("skipped %q", rep.Skipped)
	}
	for _, r := range rep.Rules {
		if r.ID == ruleLoggingSetLevel.ID || r.ID == ruleHandshakeUnknownVersion.ID {
			t.Errorf("%s was checked on a borrowed session", r.ID)
		}
	}
	own := checkStdio(t, []string{os.Args[0], "-test.run=^$"}, env, session.EraLegacy, 10*time.Second, Options{})
	if len(own.Skipped) != 0 || !slices.ContainsFunc(own.Rules, func(r Rule) bool { return r.ID == ruleLoggingSetLevel.ID }) {
		t.Errorf("a session of the check's own: skipped %q", own.Skipped)
	}
}
