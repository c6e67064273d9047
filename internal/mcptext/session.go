package mcptext

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/mcpi-dev/mcpi/internal/live"
	"github.com/mcpi-dev/mcpi/internal/safetext"
)

// Since is how long ago t was, to the second ("-" for never).
func Since(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return time.Since(t).Round(time.Second).String()
}

// PrintSessions is mcpi session list's table: a live session's uptime,
// an ended one's end and why.
func PrintSessions(w io.Writer, sts []*live.Status) error {
	tw := Table(w, "NAME", "TARGET", "ERA", "STATE", "UPTIME", "PID", "NOTE")
	for _, st := range sts {
		up, note := Since(st.Started), ""
		if !st.Live() {
			up = "-"
			note = fmt.Sprintf("%s ago: %s", Since(st.Ended), st.Reason)
		}
		Row(tw, st.Name, st.Target, st.Era, st.State, up, fmt.Sprint(st.PID), note)
	}
	return tw.Flush()
}

// PrintSession is mcpi session show's: one line a fact, what the session
// has not (a restart, a last use) left out, and the tail of the server's
// stderr.
func PrintSession(w io.Writer, st *live.Status) {
	line := func(k, v string) {
		if v != "" {
			fmt.Fprintf(w, "%-11s %s\n", k+":", safetext.OneLine(v))
		}
	}
	line("Session", st.Name)
	line("Target", st.Target)
	line("State", st.State)
	if !st.Live() {
		line("Ended", fmt.Sprintf("%s ago: %s", Since(st.Ended), st.Reason))
	}
	line("PID", fmt.Sprint(st.PID))
	line("Started", st.Started.Format(time.RFC3339)+" ("+Since(st.Started)+" ago)")
	line("Server", strings.TrimSpace(st.ServerName+" "+st.ServerVersion))
	line("Protocol", fmt.Sprintf("%s (%s era)", st.ProtocolVersion, st.Era))
	line("Transport", st.Transport)
	line("Session id", st.SessionID)
	line("Commands", fmt.Sprintf("%d run, %d running, %d failed", st.Commands, st.Active, st.Failed))
	if st.Restarts > 0 {
		line("Restarts", fmt.Sprintf("%d, last %s", st.Restarts, st.LastRestart))
	}
	if !st.LastUsed.IsZero() {
		line("Last used", Since(st.LastUsed)+" ago")
	}
	line("Idle", st.Idle)
	if len(st.StderrTail) > 0 {
		fmt.Fprintln(w, "Server stderr (last lines):")
		for _, l := range st.StderrTail {
			fmt.Fprintf(w, "  %s\n", safetext.Sanitize(l, false))
		}
	}
}
