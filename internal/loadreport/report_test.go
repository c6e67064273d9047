package loadreport

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/load"
	"github.com/mcpi-dev/mcpi/internal/record"
)

func TestNumbers(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{Count(1234567), "1,234,567"}, {Count(-5), "-5"}, {Count(999), "999"},
		{Pct(0.125), "12.5%"}, {Pct(0), "0%"}, {Pct(1), "100%"},
		{MS(1500 * time.Microsecond), "1.50ms"}, {MS(15 * time.Millisecond), "15.0ms"}, {MS(150 * time.Millisecond), "150ms"},
		{Rate(12.34), "12.3"}, {Rate(1234.4), "1,234"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

// What the server said reaches the report through the redactor, and the
// text through the sanitiser: a secret and an escape sequence in an
// error's example are neither printed.
func TestReportCleansWhatTheServerSaid(t *testing.T) {
	res := &load.Result{Completed: 10, Calls: 10, Errors: 2,
		ByKind: []load.ErrorCount{{Kind: "tool error\x1b[2J", Count: 2, Example: "token s3cr3t-value \x1b]0;x\x07"}}}
	d := New(Run{What: "call add", Workers: 2, Connections: PerWorker, MaxErrors: 0.5}, res, 3, record.NewRedactor([]string{"s3cr3t-value"}))
	var b strings.Builder
	Print(&b, d, false)
	out := b.String()
	if strings.Contains(out, "s3cr3t-value") || strings.Contains(out, "\x1b") {
		t.Errorf("the report shows what it must not:\n%q", out)
	}
	if !d.OK || !strings.Contains(out, "call add: 2 workers on a connection each") || !strings.Contains(out, "notifications received: 3") {
		t.Errorf("report %+v:\n%s", d, out)
	}
}
