package daemon

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDaemonLogFileRestarts: the daemon's log past its budget starts
// again, saying so; a write larger than the whole log is clipped.
func TestDaemonLogFileRestarts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.log")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const maxBytes = 4096
	l := NewLogFile(f, maxBytes)
	line := strings.Repeat("y", 99) + "\n"
	for range 1000 {
		if n, err := l.Write([]byte(line)); n != len(line) || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	b, _ := os.ReadFile(path)
	if len(b) > maxBytes || !strings.Contains(string(b), "this log reached its cap of 4.0 KiB") {
		t.Errorf("the log holds %d bytes (at most %d):\n%s", len(b), maxBytes, b)
	}
	big := strings.Repeat("z", 3*maxBytes)
	if n, err := l.Write([]byte(big)); n != len(big) || err != nil {
		t.Fatalf("Write = %d, %v", n, err)
	}
	b, _ = os.ReadFile(path)
	if len(b) > maxBytes || !strings.Contains(string(b), "clipped") {
		t.Errorf("after a write of %d bytes the log holds %d bytes (at most %d)", len(big), len(b), maxBytes)
	}
	if u := l.budget.Usage(); u.Bytes != int64(len(b)) {
		t.Errorf("the budget accounts %d bytes, the log holds %d", u.Bytes, len(b))
	}
}
